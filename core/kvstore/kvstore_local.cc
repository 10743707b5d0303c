// weft core — KVStoreLocal (see kvstore_local.h).
#include "kvstore/kvstore_local.h"

#include "ndarray/sparse_rows.h"

namespace weft::kv {

KVStoreLocal::KVStoreLocal(std::string type, std::unique_ptr<Comm> comm)
    : KVStore::Impl(std::move(type)), comm_(std::move(comm)) {
  WEFT_CHECK(comm_ != nullptr, "KVStore({}): no Comm given", this->type());
}

KVStoreLocal::~KVStoreLocal() = default;

NDArray& KVStoreLocal::Stored(const Key& key) {
  auto it = stored_.find(key.id());
  WEFT_CHECK(it != stored_.end(), "KVStore({}): key {} has no stored value", type(), key.display());
  return it->second;
}

void KVStoreLocal::InitImpl(const Key& key, const NDArray& value) {
  stored_[key.id()] = value.Copy(comm_->InitContext(value));
}

bool KVStoreLocal::InitSharedImpl(const Key& key, const NDArray& value) {
  if (comm_->InitContext(value) != value.GetContext()) return false;
  stored_[key.id()] = value;
  return true;
}

void KVStoreLocal::PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (!values.empty() && values[0].storage_type() == StorageType::kRowSparse) {  // see RowSparsePushes
    NDArray& stored = Stored(key);
    ApplyUpdate(key, SumRowSparse(values, stored.GetContext()), &stored);
    return;
  }
  UpdateStored(key, comm_->Reduce(key.id(), values, priority), priority);
}

void KVStoreLocal::UpdateStored(const Key& key, const NDArray& sum, int priority) {
  NDArray& stored = Stored(key);
  if (has_updater()) {
    // The update runs where the sum is (MXNet's KVStoreLocal moves the stored value there too).
    if (stored.GetContext() != sum.GetContext()) stored = stored.Copy(sum.GetContext());
    ApplyUpdate(key, sum, &stored);
  } else if (!(sum.SharesChunkWith(stored) && sum.offset() == stored.offset())) {
    NDArray::CopyFromTo(sum, stored, priority);
  }
}

void KVStoreLocal::PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) {
  comm_->Broadcast(Stored(key), outs, priority);
}

void KVStoreLocal::PullRowSparseImpl(const Key& key, const std::vector<NDArray>& outs,
                                     const std::vector<std::vector<int64_t>>& rows, int) {
  FlushPending();
  const NDArray& value = Stored(key);
  const int64_t num_rows = value.GetShape()[0];
  const size_t row_len = num_rows == 0 ? 0 : value.Size() / static_cast<size_t>(num_rows);
  // Host values are read in place; a device's are copied to the host once.
  std::vector<float> copy;
  const float* base = nullptr;
  if (value.GetContext().GetDeviceType() == "cpu") {
    value.WaitToRead();
    base = static_cast<const float*>(value.GetRawData());
  } else {
    value.SyncCopyToCPU(&copy);
    base = copy.data();
  }
  for (size_t i = 0; i < outs.size(); ++i) SetRowSparseFromDense(outs[i], rows[i], base, row_len * sizeof(float));
}

void KVStoreLocal::OnGradientCompressionChanged() { comm_->SetGradientCompression(compression()); }

}  // namespace weft::kv

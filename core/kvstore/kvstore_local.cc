// weft core — KVStoreLocal (see kvstore_local.h).
#include "kvstore/kvstore_local.h"

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

void KVStoreLocal::OnGradientCompressionChanged() { comm_->SetGradientCompression(compression()); }

}  // namespace weft::kv

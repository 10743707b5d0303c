// weft core — KVStoreLocal (see kvstore_local.h).
#include "kvstore/kvstore_local.h"

#include "ndarray/sparse_rows.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "weft/engine.h"
#include "weft/storage_type.h"

namespace weft::kv {
namespace {

// Lazy writes kept per key: an out more pushes behind than this gets the whole value.
constexpr size_t kMaxLazyWrites = 8;
// Outs remembered per key, the latest pulled into (kept alive by the record, so one: a loop of
// pulls into new arrays must not hold on to them): any other gets the whole value.
constexpr size_t kMaxOuts = 1;

bool SameView(const NDArray& a, const NDArray& b) {
  return a.SharesChunkWith(b) && a.offset() == b.offset() && a.GetShape() == b.GetShape() &&
         a.GetDType() == b.GetDType();
}

bool HostDense(const NDArray& a) {
  return a.storage_type() == StorageType::kDefault && a.GetContext().GetDeviceType() == "cpu" &&
         a.GetShape().ndim() >= 1 && a.GetShape()[0] > 0;
}

// In an engine operation: copies the rows the gradients store from `from` into `to` (dense host
// arrays of one shape), or all of `from` when the rows are many (one memcpy is faster then) or
// an index lies outside the rows (a gradient the update refused; the whole copy is right anyway).
void CopyStoredRows(const NDArray& from, const NDArray& to, const std::vector<NDArray>& grads) {
  const auto* src = static_cast<const char*>(from.GetRawData());
  auto* dst = static_cast<char*>(const_cast<void*>(to.GetRawData()));
  const int64_t rows = from.GetShape()[0];
  const size_t row_bytes = from.Bytes() / static_cast<size_t>(rows);
  std::vector<NDArray> indices;
  int64_t total = 0;
  for (const NDArray& g : grads) {
    indices.push_back(g.aux_ndarray(kRowSparseIndices));
    total += static_cast<int64_t>(indices.back().Size());
  }
  const auto whole = [&] { std::memcpy(dst, src, from.Bytes()); };
  if (total > rows / 4) return whole();
  const auto copy = [&](const auto* idx, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const auto r = static_cast<int64_t>(idx[k]);
      if (r < 0 || r >= rows) return false;
      const size_t at = static_cast<size_t>(r) * row_bytes;
      if (row_bytes == sizeof(float))  // the common k = 1 weight: no call per row
        *reinterpret_cast<float*>(dst + at) = *reinterpret_cast<const float*>(src + at);
      else
        std::memcpy(dst + at, src + at, row_bytes);
    }
    return true;
  };
  for (const NDArray& idx : indices) {
    if (idx.Size() == 0) continue;
    const bool ok = idx.GetDType() == DType::kInt32 ? copy(static_cast<const int32_t*>(idx.GetRawData()), idx.Size())
                                                    : copy(static_cast<const int64_t*>(idx.GetRawData()), idx.Size());
    if (!ok) return whole();
  }
}

}  // namespace

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
    const uint64_t before = stored.write_count();
    LazyWriteObserver observer;
    ApplyUpdate(key, SumRowSparse(values, stored.GetContext()), &stored);
    LogLazyWrites(key, stored, before, observer.writes());
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

void KVStoreLocal::LogLazyWrites(const Key& key, const NDArray& stored, uint64_t before,
                                 const std::vector<LazyWriteObserver::Write>& reported) {
  RowLog& log = row_logs_[key.id()];
  if (!SameView(log.stored, stored) || (!log.writes.empty() && log.writes.back().stored_writes != before)) {
    log.stored = stored;  // another stored array, or a write that was not logged since
    log.writes.clear();
  }
  // Every write of the stored value during the update must be a reported lazy write of it, in turn.
  uint64_t count = before;
  std::vector<LazyWrite> mine;
  for (const LazyWriteObserver::Write& w : reported) {
    if (!w.weight.SharesChunkWith(stored)) continue;  // the update wrote another array lazily
    if (!SameView(w.weight, stored) || w.weight_writes != count + 1) {
      log.writes.clear();
      return;
    }
    count = w.weight_writes;
    mine.push_back({count, w.grad, w.grad.write_count()});
  }
  if (stored.write_count() != count) {
    log.writes.clear();
    return;
  }
  for (LazyWrite& w : mine) log.writes.push_back(std::move(w));
  while (log.writes.size() > kMaxLazyWrites) log.writes.pop_front();
}

bool KVStoreLocal::PullChangedRows(const Key& key, const NDArray& stored, const NDArray& out, const Pulled* p,
                                   int priority) {
  if (p == nullptr || !HostDense(stored) || !HostDense(out) || out.GetContext() != stored.GetContext() ||
      !out.WritesCounted() || !stored.WritesCounted())
    return false;
  const Pulled& last = *p;
  if (last.out_writes != out.write_count() || !SameView(last.stored, stored)) return false;
  const uint64_t now = stored.write_count();
  if (now == last.stored_writes) return true;  // the out holds the stored value already
  auto l = row_logs_.find(key.id());
  if (l == row_logs_.end() || !SameView(l->second.stored, stored)) return false;
  const std::deque<LazyWrite>& log = l->second.writes;
  // The log must hold every write after the out's pull: last.stored_writes + 1 .. now.
  if (log.empty() || log.back().stored_writes != now || log.front().stored_writes > last.stored_writes + 1)
    return false;
  std::vector<NDArray> grads;
  std::vector<VarHandle> reads{stored.var()};
  for (const LazyWrite& w : log) {
    if (w.stored_writes <= last.stored_writes) continue;
    if (w.grad.write_count() != w.grad_writes) return false;  // its rows may differ now
    grads.push_back(w.grad);
    reads.push_back(w.grad.var());
  }
  out.NoteWrite();
  Engine::Get()->PushSync([stored, out, grads](RunContext) { CopyStoredRows(stored, out, grads); }, stored.GetContext(),
                          reads, {out.var()}, FnProperty::kNormal, priority, "kvstore_pull_rows");
  return true;
}

void KVStoreLocal::PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) {
  const NDArray& stored = Stored(key);
  if (row_logs_.count(key.id()) == 0) {  // no row_sparse push yet: no rows to pick
    comm_->Broadcast(stored, outs, priority);
    return;
  }
  std::deque<Pulled>& pulled = pulled_[key.id()];
  for (const NDArray& out : outs) {
    auto last = std::find_if(pulled.begin(), pulled.end(), [&](const Pulled& p) { return SameView(p.out, out); });
    const bool found = last != pulled.end();
    if (!PullChangedRows(key, stored, out, found ? &*last : nullptr, priority))
      comm_->Broadcast(stored, {out}, priority);
    if (found) pulled.erase(last);
    pulled.push_back({out, out.write_count(), stored, stored.write_count()});
    if (pulled.size() > kMaxOuts) pulled.pop_front();
  }
  // Writes every remembered out has seen are not needed again: drop them with their gradients
  // (a factorization machine's hold megabytes each).
  uint64_t seen = UINT64_MAX;
  for (const Pulled& p : pulled) seen = std::min(seen, p.stored_writes);
  std::deque<LazyWrite>& log = row_logs_[key.id()].writes;
  while (!log.empty() && log.front().stored_writes <= seen) log.pop_front();
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

// weft core — KVStoreDist (see kvstore_dist.h).
#include "kvstore/kvstore_dist.h"

#include "ndarray/sparse_rows.h"
#include "weft/sparse.h"

#include <signal.h>

#include <algorithm>
#include <atomic>

#include "weft/engine.h"
#include "weft/internal/rendezvous.h"
#include "weft/logging.h"

namespace weft::kv {

namespace {

bool IsHost(const NDArray& a) { return a.GetContext().GetDeviceType() == "cpu"; }

// Communicators of one process get distinct store prefixes; every rank creates its stores in the
// same order, so the n-th store of each rank meets the n-th of the others.
std::string NextPrefix() {
  static std::atomic<int> count{0};
  return "weft/kvstore" + std::to_string(count++);
}

}  // namespace

KVStoreDist::KVStoreDist(std::string type, std::unique_ptr<Comm> comm)
    : KVStoreLocal(std::move(type), std::move(comm)), config_(DistConfig::FromEnv()) {
  const std::string prefix = NextPrefix();
  if (config_.num_workers > 1) {
    // A peer that dies leaves sockets whose next write raises SIGPIPE, which would kill this
    // process before the transport can report which peer died: ignore it (writes then fail with
    // EPIPE), unless the program installed its own handler.
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  }
  if (!JoinRendezvous(this->type(), config_)) return;
  coll_ = std::make_shared<Collectives>(this->type(), config_, prefix);
  LogInfo("KVStore({}): rank {} of {} joined through the '{}' transport", this->type(), config_.rank,
          config_.num_workers, coll_->transport_name());
}

KVStoreDist::~KVStoreDist() {
  try {
    FlushPendingLocked();
    Engine::Get()->WaitForAll();
  } catch (const std::exception& e) {
    LogWarning("KVStore({}) rank {}: pending work failed while closing: {}", type(), config_.rank, e.what());
  }
  coll_.reset();
}

void KVStoreDist::Barrier() {
  if (!coll_) return;
  FlushPendingLocked();
  Collectives::Op op;
  op.kind = Collectives::Kind::kBarrier;
  op.key = "(barrier)";
  coll_->Run(std::move(op));
}

NDArray KVStoreDist::OnHost(const NDArray& a, NDArray* staging, int priority) {
  if (IsHost(a)) return a;
  if (staging->is_none()) *staging = NDArray(a.GetShape(), Context::cpu(0), false, a.GetDType());
  NDArray::CopyFromTo(a, *staging, priority);
  return *staging;
}

static_assert(static_cast<int32_t>(DType::kFloat32) == WEFT_DTYPE_FLOAT32 &&
                  static_cast<int32_t>(DType::kFloat64) == WEFT_DTYPE_FLOAT64 &&
                  static_cast<int32_t>(DType::kInt64) == WEFT_DTYPE_INT64,
              "Issue passes weft::DType values as the SDK's dtypes");

void KVStoreDist::Issue(Collectives::Kind kind, const Key& key, const NDArray& send, const NDArray& recv,
                        int priority) {
  send.CheckAndAlloc();
  recv.CheckAndAlloc();
  const uint64_t seq = coll_->Reserve();
  std::shared_ptr<Collectives> coll = coll_;
  const bool same = send.var() == recv.var();
  std::vector<VarHandle> reads;
  if (!same) reads.push_back(send.var());
  Engine::Get()->PushAsync(
      [coll, seq, kind, key = key.display(), send, recv](RunContext, CallbackOnComplete on_complete) {
        Collectives::Op op;
        op.kind = kind;
        op.key = key;
        op.send = send.GetRawData();
        op.recv = const_cast<void*>(recv.GetRawData());
        op.count = recv.Size();
        op.dtype = static_cast<int32_t>(recv.GetDType());  // weft::DType uses the SDK's numbering
        op.root = 0;
        op.done = [on_complete](std::exception_ptr e) { on_complete(e); };
        coll->Submit(seq, std::move(op));
      },
      Context::cpu(0), reads, {recv.var()}, FnProperty::kAsync, priority,
      kind == Collectives::Kind::kAllreduce ? "KVStoreDist::allreduce" : "KVStoreDist::broadcast");
}

void KVStoreDist::InitImpl(const Key& key, const NDArray& value) {
  KVStoreLocal::InitImpl(key, value);
  if (!coll_) return;
  // Rank 0's value wins: broadcast it into every worker's copy (through cpu(0) for device copies).
  NDArray& stored = Stored(key);
  Buffers& b = buf_[key.id()];
  NDArray host = OnHost(stored, &b.send_host, 0);
  Issue(Collectives::Kind::kBroadcast, key, host, host, 0);
  if (!IsHost(stored)) NDArray::CopyFromTo(host, stored, 0);
}

void KVStoreDist::Finish(const Key& key, const NDArray& reduced_host, const Context& merge_ctx, int priority) {
  Buffers& b = buf_[key.id()];
  NDArray reduced = reduced_host;
  if (merge_ctx.GetDeviceType() != "cpu") {
    if (b.recv_dev.is_none() || b.recv_dev.GetContext() != merge_ctx)
      b.recv_dev = NDArray(reduced.GetShape(), merge_ctx, false, reduced.GetDType());
    NDArray::CopyFromTo(reduced_host, b.recv_dev, priority);
    reduced = b.recv_dev;
  }
  UpdateStored(key, reduced, priority);
}

void KVStoreDist::PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (!coll_) {
    KVStoreLocal::PushImpl(key, values, priority);
    return;
  }
  if (values[0].storage_type() == StorageType::kRowSparse) {  // see RowSparsePushes
    PushRowSparse(key, values, priority);
    return;
  }
  Unalias(key);
  NDArray& stored = Stored(key);
  const NDArray merged = comm().Reduce(key.id(), values, priority);
  const uint64_t n = merged.Size();
  // Keys of a quarter of a bucket or more travel alone: their transfer dwarfs the per-op latency
  // fusion saves, and the two copies into and out of the bucket would cost more.
  if (Fuses(n)) {
    // Fused: the sum is copied into the open bucket now (see the top of kvstore_dist.h).
    if (InBucket(key)) Flush();  // a second push of a key: the first one goes out first
    const uint64_t capacity = config_.bucket_bytes / sizeof(float);
    if (bucket_elems_ + n > capacity) Flush();
    NDArray& buf = bucket_buf_[bucket_turn_];
    if (buf.is_none()) buf = NDArray(Shape(static_cast<int64_t>(capacity)), Context::cpu(0), false, DType::kFloat32);
    NDArray::CopyFromTo(merged, buf.Slice(bucket_elems_, bucket_elems_ + n).Reshape(merged.GetShape()), priority);
    bucket_.push_back(Member{key, merged.GetContext(), bucket_elems_, merged.GetShape(), priority});
    bucket_elems_ += n;
    return;
  }
  Buffers& b = buf_[key.id()];
  const NDArray send = OnHost(merged, &b.send_host, priority);
  if (!has_updater() && IsHost(stored) && !send.SharesChunkWith(stored)) {
    // The sum replaces the stored value: allreduce straight into it (no copy).
    Issue(Collectives::Kind::kAllreduce, key, send, stored, priority);
    return;
  }
  if (b.recv_host.is_none()) b.recv_host = NDArray(merged.GetShape(), Context::cpu(0), false, merged.GetDType());
  Issue(Collectives::Kind::kAllreduce, key, send, b.recv_host, priority);
  Finish(key, b.recv_host, merged.GetContext(), priority);
}

void KVStoreDist::PushRowSparse(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (InBucket(key)) Flush();
  Unalias(key);
  const NDArray merged = SumRowSparse(values, Context::cpu(0));
  const Shape shape = merged.GetShape();
  const int64_t rows = shape[0];
  const size_t row_len = rows == 0 ? 0 : shape.Size() / static_cast<size_t>(rows);
  // Only the pushed rows travel: an allgather built from allreduces (the transports' collectives
  // are allreduce, broadcast and barrier) over one slot per rank, zeros in the others' slots.
  // First every rank's row count, then the row ids and the rows, each rank writing its own slot;
  // the sum of the gathered parts is the pushed gradient, row_sparse over the union of the rows.
  const NDArray idx_array = merged.aux_ndarray(kRowSparseIndices);
  std::vector<int64_t> mine(idx_array.Size());
  if (!mine.empty()) idx_array.SyncCopyToCPUBytes(mine.data(), mine.size() * sizeof(int64_t));
  const auto world = static_cast<size_t>(num_workers()), me = static_cast<size_t>(rank());
  std::vector<int64_t> counts(world, 0);
  counts[me] = static_cast<int64_t>(mine.size());
  NDArray counts_array(Shape(static_cast<int64_t>(world)), Context::cpu(0), false, DType::kInt64);
  counts_array.SyncCopyFromCPUBytes(counts.data(), counts.size() * sizeof(int64_t));
  Issue(Collectives::Kind::kAllreduce, key, counts_array, counts_array, priority);
  counts_array.SyncCopyToCPUBytes(counts.data(), counts.size() * sizeof(int64_t));
  size_t total = 0, before = 0;
  for (size_t r = 0; r < world; ++r) (r < me ? before : total) += static_cast<size_t>(counts[r]);
  total += before;
  std::vector<int64_t> all_ids(total, 0);
  std::vector<float> all_rows(total * row_len, 0.0f);
  if (total > 0) {
    std::copy(mine.begin(), mine.end(), all_ids.begin() + static_cast<std::ptrdiff_t>(before));
    std::vector<float> my_rows;
    if (!mine.empty()) merged.data_ndarray().SyncCopyToCPU(&my_rows);
    std::copy(my_rows.begin(), my_rows.end(), all_rows.begin() + static_cast<std::ptrdiff_t>(before * row_len));
    NDArray ids_array(Shape(static_cast<int64_t>(total)), Context::cpu(0), false, DType::kInt64);
    ids_array.SyncCopyFromCPUBytes(all_ids.data(), total * sizeof(int64_t));
    NDArray rows_array(all_rows, Shape(static_cast<int64_t>(total * row_len)), Context::cpu(0));
    Issue(Collectives::Kind::kAllreduce, key, ids_array, ids_array, priority);
    Issue(Collectives::Kind::kAllreduce, key, rows_array, rows_array, priority);
    ids_array.SyncCopyToCPUBytes(all_ids.data(), total * sizeof(int64_t));
    rows_array.SyncCopyToCPU(&all_rows);
  }
  // Each worker's slot as a row_sparse part.
  std::vector<NDArray> parts;
  size_t at = 0;
  for (size_t r = 0; r < world; ++r) {
    const auto n = static_cast<size_t>(counts[r]);
    const std::vector<int64_t> rows(all_ids.begin() + static_cast<std::ptrdiff_t>(at),
                                    all_ids.begin() + static_cast<std::ptrdiff_t>(at + n));
    parts.push_back(NDArray::CreateSparse(StorageType::kRowSparse, shape, Context::cpu(0)));
    SetRowSparseRows(parts.back(), rows, all_rows.data() + at * row_len, n * row_len * sizeof(float));
    at += n;
  }
  NDArray& stored = Stored(key);
  ApplyUpdate(key, SumRowSparse(parts, stored.GetContext()), &stored);
}

void KVStoreDist::Flush() {
  if (bucket_.empty()) return;
  std::vector<Member> members;
  members.swap(bucket_);
  const uint64_t elems = bucket_elems_;
  bucket_elems_ = 0;
  const NDArray buf = bucket_buf_[bucket_turn_];
  bucket_turn_ = (bucket_turn_ + 1) % kBucketBuffers;
  // Named by its keys in messages (a failure names every key it carried).
  std::string name = "bucket of " + std::to_string(members.size()) + " keys [";
  for (size_t i = 0; i < members.size() && i < 8; ++i) name += (i ? ", " : "") + members[i].key.display();
  name += members.size() > 8 ? ", ...]" : "]";
  const NDArray all = buf.Slice(0, elems);
  Issue(Collectives::Kind::kAllreduce, StrKey(name), all, all, members.front().priority);
  for (const Member& m : members)
    Finish(m.key, buf.Slice(m.offset, m.offset + m.shape.Size()).Reshape(m.shape), m.merge_ctx, m.priority);
}

bool KVStoreDist::InBucket(const Key& key) const {
  return std::any_of(bucket_.begin(), bucket_.end(), [&](const Member& m) { return m.key.id() == key.id(); });
}

void KVStoreDist::PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) {
  if (InBucket(key)) Flush();
  KVStoreLocal::PullImpl(key, outs, priority);
}

void KVStoreDist::PushPullImpl(const Key& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                               int priority) {
  NDArray& stored = Stored(key);
  if (!coll_ || has_updater() || outs.size() != 1 || !IsHost(outs[0]) || !IsHost(stored) || Fuses(stored.Size())) {
    PushImpl(key, values, priority);
    PullImpl(key, outs, priority);
    return;
  }
  // The sum goes straight into the out, which then is the stored value: no copy out of the store
  // (dist3 measured the Pull's copy at ~9 % of a 64 MB Push+Pull).
  const NDArray merged = comm().Reduce(key.id(), values, priority);
  Buffers& b = buf_[key.id()];
  const NDArray send = OnHost(merged, &b.send_host, priority);
  Issue(Collectives::Kind::kAllreduce, key, send, outs[0], priority);
  stored = outs[0];
  aliased_.insert(key.id());
}

void KVStoreDist::Unalias(const Key& key) {
  if (aliased_.erase(key.id()) == 0) return;
  NDArray& stored = Stored(key);
  stored = stored.Copy(stored.GetContext());  // an engine copy, ordered after the allreduce into the out
}

void KVStoreDist::FlushPending() {
  if (coll_) Flush();
}

}  // namespace weft::kv

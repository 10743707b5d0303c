// weft core — KVStoreDist: "dist_sync" and "dist_device_sync" on a collective transport (Gloo),
// as MXNet's KVStoreDist derives from KVStoreLocal (see kvstore_impl.h for the hooks).
//
// Semantics chosen (MXNet's, with the optimizer on the workers, as Horovod and MXNet's
// dist_device_sync-with-NCCL do; there are no servers on a collective transport):
//   Init   the local copy is made, then rank 0's value is broadcast into every worker's copy
//          (rank 0's value wins).
//   Push   the values of this worker's devices are summed first (comm(): CommCPU for dist_sync,
//          CommDevice for dist_device_sync; with 2-bit compression each value is quantised with
//          its residual there), then the sum is allreduced across workers (Gloo's ring: every
//          rank gets bit-identical sums), then every worker applies the optimizer / updater to its
//          copy with that sum (without one the copy is replaced by the sum). Copies therefore stay
//          identical on every worker. Device data is staged through cpu(0) for the transport.
//   Pull   local: the worker's copy is broadcast to the outs.
//   Fusion keys smaller than a quarter of WEFT_KVSTORE_BUCKET_BYTES (default 4 MiB, so keys below
//          1 MiB; 0 = off) are not allreduced one by one: their local sums are copied (at Push, so later writes to the
//          pushed arrays do not matter) into a bucket buffer in push order, and one allreduce
//          of the bucket carries them all, followed by each key's update. A bucket is issued when
//          the next key would overflow it, when a key already in it is pushed again, when a key in
//          it is pulled, and before Barrier, SetOptimizer / SetUpdater, Save/LoadOptimizerStates
//          and the store's end. Every rank must therefore make the same pushes and the same pulls
//          of just-pushed keys in the same order (pushes must be the same anyway for dist_sync); a
//          rank that pulls where another does not would fuse different buckets, and the allreduce
//          fails on the size mismatch or at the deadline. Results equal the unfused ones (with two
//          workers bit for bit; with more, a sum may add the workers' values in another order).
//   PushPull  Push then Pull, fused when no updater is set, there is one out in host memory and
//          the key travels alone (not fused into a bucket): the allreduce writes the sum straight
//          into the out, and the store keeps that out as the key's value instead of a copy (as
//          MXNet's local store keeps the merged array). Writing to the out afterwards changes what
//          a later Pull of the key returns until the key's next Push or PushPull (a Push first
//          gives the store its own copy back). Otherwise Push then Pull.
//   Barrier  a collective barrier, after every collective issued before it.
//   rank(), num_workers()  from the job (collectives.h DistConfig).
// Optimizer states live on every worker (identical); SaveOptimizerStates writes this worker's.
// Compression note: the allreduce moves the decoded float sums (Gloo cannot sum 2-bit words), so
// 2-bit compression here gives MXNet's numbers but not its bandwidth saving.
//
// Failures: a collective that fails (a peer died: within milliseconds; a peer stalled: at
// WEFT_KVSTORE_TIMEOUT) stores a weft::Error naming the peer rank, the op and the key on the
// arrays it writes, so the next read of a pulled value (or Barrier) throws it; it is also logged
// at once. Later collectives fail at once.
//
// One worker (num_workers 1, e.g. no launcher) needs no transport: it behaves as the local store.
// With several workers the store sets SIGPIPE to ignored (when it is at its default), so that a
// write to a dead peer's socket fails with an error naming the peer instead of killing the process.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "kvstore/collectives.h"
#include "kvstore/kvstore_local.h"

namespace weft::kv {

class KVStoreDist final : public KVStoreLocal {
 public:
  /// Joins the job (DistConfig::FromEnv, the rendezvous store from WEFT_RENDEZVOUS). Throws
  /// weft::Error when the environment is incomplete or the rendezvous fails.
  KVStoreDist(std::string type, std::unique_ptr<Comm> comm);
  /// Waits for this store's pending work (errors are logged), then leaves the job.
  ~KVStoreDist() override;

  int rank() const override { return config_.rank; }
  int num_workers() const override { return config_.num_workers; }
  void Barrier() override;

 protected:
  void InitImpl(const Key& key, const NDArray& value) override;
  /// Row_sparse values (every one, with an updater): only the pushed rows travel, gathered with
  /// allreduces over one slot per worker (the row counts, then the row ids and the rows: an
  /// allgather the collectives' allreduce can make), and the updater gets their sum as row_sparse
  /// over the union of every worker's rows, so the optimizer updates those rows lazily, as MXNet's
  /// dist_sync does. The push then waits for the allreduces (every worker pushes the same keys in
  /// the same order, as dist_sync requires anyway).
  bool RowSparsePushes() const override { return true; }
  void PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) override;
  void PushRowSparse(const Key& key, const std::vector<NDArray>& values, int priority);
  void PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) override;
  void PushPullImpl(const Key& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                    int priority) override;
  void FlushPending() override;

 private:
  // Pushes an engine op that runs collective `kind` of `key` from `send` into `recv` (host
  // arrays; they may be the same array) once the engine has `send` ready.
  void Issue(Collectives::Kind kind, const Key& key, const NDArray& send, const NDArray& recv, int priority);
  // `a` itself when it is host memory, else its host staging copy (pushed).
  NDArray OnHost(const NDArray& a, NDArray* staging, int priority);
  // After the allreduce of `key` into `reduced` (host): the update, or the replacement, of the
  // stored value; `merge_ctx` is where the local sum was made (device sums are updated there).
  void Finish(const Key& key, const NDArray& reduced, const Context& merge_ctx, int priority);
  // Issues the open bucket (one allreduce, then each member's Finish); nothing when it is empty.
  void Flush();
  // True when `key` has a push waiting in the open bucket.
  bool InBucket(const Key& key) const;
  // True when a push of `elements` goes into a bucket.
  bool Fuses(uint64_t elements) const { return elements * sizeof(float) * 4 < config_.bucket_bytes; }
  // Gives `key` its own stored array again (a copy of the out a fused PushPull left it in).
  void Unalias(const Key& key);

  struct Buffers {
    NDArray send_host;  // staging of a device sum
    NDArray recv_host;  // allreduce result
    NDArray recv_dev;   // the result on the sum's device
  };
  struct Member {
    Key key;
    Context merge_ctx;
    uint64_t offset;  // elements into the bucket
    Shape shape;
    int priority;
  };
  DistConfig config_;
  std::shared_ptr<Collectives> coll_;  // null for one worker
  std::map<std::string, Buffers> buf_;
  std::set<std::string> aliased_;  // keys whose stored value is a PushPull's out
  // The open bucket: its members in push order, the elements they fill, the buffer they are in
  // (one of kBucketBuffers reused in turn, so that packing the next bucket overlaps the allreduce
  // of the previous ones; the engine orders reuse through the buffer's variable).
  static constexpr int kBucketBuffers = 3;
  std::vector<Member> bucket_;
  uint64_t bucket_elems_ = 0;
  NDArray bucket_buf_[kBucketBuffers];
  int bucket_turn_ = 0;
};

}  // namespace weft::kv

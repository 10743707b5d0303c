// weft — KVStore: keeps parameters and aggregates gradients across devices (MXNet 1.9's KVStore,
// include/mxnet/kvstore.h and python/mxnet/kvstore.py; docs/architecture.md says where the
// stores and transports live).
//
//   auto kv = KVStore::Create("local");
//   kv->Init(3, weight);                       // once per key
//   kv->SetOptimizer(OptimizerRegistry::Create("sgd"));
//   kv->Push(3, {grad_on_cpu0, grad_on_cpu1});  // summed, then the optimizer updates the stored value
//   kv->Pull(3, {weight_on_cpu0, weight_on_cpu1});
//
// Types: "local" sums on the host (values not on cpu(0) are copied there and added; values are
// kept there; MXNet's CommCPU); "device" sums on a device where the values live (for each key the
// pushing device with the fewest merged bytes assigned so far; the stored value moves there at the
// first push; MXNet's CommDevice) — both in this process. Sums, 2-bit compression and optimizer
// updates are operators (add_n, _quantize_2bit / _dequantize_2bit, sgd_update, ...) run by the
// device plugin where the data is, so a "device" store on a GPU-class device never stages data
// through the host. The dist types span several processes (one worker each, started by
// weft-launch):
//   "dist_sync", "dist_device_sync"  on the collective transport plugin (Gloo): pushes are summed
//        on the worker's devices, allreduced across workers, and every worker applies the
//        optimizer to its copy (core/kvstore/kvstore_dist.h has the details and failures);
//   "dist_async"  on a parameter-server transport plugin (ZeroMQ, weft-launch -s S servers): keys
//        sharded over the servers, big arrays sliced (MXNET_KVSTORE_BIGARRAY_BOUND), the servers
//        apply the optimizer to each push as it arrives (core/kvstore/kvstore_ps.h);
//   "dist_sync" with WEFT_KVSTORE_TRANSPORT=zmq  on the parameter servers too: each server sums
//        every worker's push of a key, then applies the optimizer once (MXNet's dist_sync).
//   "nccl", and "dist_device_sync" when a device transport plugin (NCCL) reports devices  on a
//        device communicator: the worker's sum is allreduced on a device (WEFT_KVSTORE_DEVICE,
//        default 0, of the transport's device type, e.g. cuda(0)) in engine operations on its
//        streams, issued in push order on every rank (core/kvstore/kvstore_nccl.h). "nccl" is
//        refused, naming each device transport's reason, when none reports a device (e.g. no GPU).
// Type names are matched lower-cased; type() returns the name as given.
//
// Keys: ints or strings; one store takes one kind (weft::Error on mixing them).
//
// Semantics (MXNet's):
//   Init      stores a copy of the value; a key may be initialised once.
//   Push      values (any devices, same shape and dtype as the key's) are summed; with an updater
//             (SetUpdater / SetOptimizer) it is called as updater(key, merged, &stored), without
//             one the stored value is replaced by the sum. With 2-bit gradient compression each
//             pushed value is quantised first (see SetGradientCompression).
//   Pull      copies the stored value into every out (any devices).
//   PushPull  Push then Pull (fused by the Gloo stores: see PushPull below).
// Ordering: Push and Pull return at once; the copies, sums and updates are engine operations
// ordered by the arrays they touch, so a Pull of a key runs after every earlier Push to it, and
// reading an out (WaitToRead, SyncCopyToCPU) waits for the Pull. `priority` is passed to the
// copies and sums (higher runs first among ready operations). A user updater is called in the
// thread that pushes, with `merged` not necessarily computed yet: it must use NDArray operations
// (which the engine orders), or wait on `merged` before reading it on the host. It runs under the
// store's lock, so it must not call the store itself.
//
// Errors (weft::Error, naming the key): Init of a key twice ("duplicate init"), Push/Pull of a
// key never initialised ("has not been initialized"), mixing int and string keys, a value or
// out whose shape or dtype differs from the key's, an empty value list, a none array, keys and
// values of different counts. Errors inside engine operations surface when the outs are read.
//
// Thread-safety: the methods may be called from several threads; each call is atomic with
// respect to the others (one lock), and the engine orders the data.
#pragma once

#include "weft/export.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/ndarray.h"
#include "weft/optimizer.h"

namespace weft {

class WEFT_API KVStore {
 public:
  /// updater(key, merged gradient, stored value): stored is updated in place. The merged
  /// gradient is row_sparse when a push's values all were (see Push).
  using Updater = std::function<void(int key, const NDArray& recv, NDArray* local)>;
  using StrUpdater = std::function<void(const std::string& key, const NDArray& recv, NDArray* local)>;

  /// A store of `type` ("local", "device", "dist_sync", "dist_device_sync", "dist_async", "nccl";
  /// see the top of this file). The dist types and "nccl" join the job described by the
  /// environment (WEFT_RANK, WEFT_NUM_WORKERS, WEFT_RENDEZVOUS, set by weft-launch) and block until
  /// every worker has joined (WEFT_RENDEZVOUS_TIMEOUT, default 300 s). Throws weft::Error for
  /// "nccl" when no device transport reports a device (naming why), for unknown names (listing
  /// the known ones), and when the job cannot be
  /// joined (no transport plugin, no servers for dist_async with several workers, rendezvous
  /// deadline passed).
  static std::unique_ptr<KVStore> Create(const std::string& type = "local");

  /// Runs this process as a parameter server of the job in the environment (WEFT_ROLE=server,
  /// WEFT_RANK = the server's rank, WEFT_NUM_SERVERS, WEFT_NUM_WORKERS, WEFT_RENDEZVOUS; MXNet's
  /// DMLC_* names are read too), serving the workers' dist_async (and zmq dist_sync) stores one
  /// after the other, until `stop_requested()` returns true (polled about every 200 ms; may be
  /// empty) or no further store is created within WEFT_RENDEZVOUS_TIMEOUT. `weft-launch -s S`
  /// runs S of these (as `weft-launch --serve`). Throws weft::Error naming the worker when a
  /// worker dies or a sync round / Barrier waits longer than WEFT_KVSTORE_TIMEOUT for one, and for
  /// an incomplete environment. Blocks the calling thread.
  static void RunServer(const std::function<bool()>& stop_requested = {});
  virtual ~KVStore();

  /// The type name as given to Create.
  const std::string& type() const;
  /// This worker's rank and the number of workers (0 and 1 for single-process stores).
  /// Barrier of the dist stores blocks until every worker has reached it (after every collective
  /// issued before it), bounded by WEFT_KVSTORE_TIMEOUT; it throws weft::Error naming the peer
  /// when one died or stalled.
  int rank() const;
  int num_workers() const;
  /// Workers barrier; a no-op for single-process stores (mxnet-cpp's Barrier).
  void Barrier() const;

  /// Initialises keys (a copy of each value is stored). Throws as described at the top.
  void Init(int key, const NDArray& value);
  void Init(const std::string& key, const NDArray& value);
  void Init(const std::vector<int>& keys, const std::vector<NDArray>& values);
  void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values);
  /// Init keeping `value` itself as the stored value where the store can (local stores, value on
  /// the device the store would copy it to; others copy as Init): pushes then update `value` in
  /// place, a Pull into `value` copies nothing, and writing `value` changes the stored value.
  /// What MXNet's Module does for one device with a local store, where no KVStore is made and
  /// the updater runs on the executor's weights; weft's Module calls it then. Throws as Init.
  void InitInPlace(int key, const NDArray& value);

  /// Pushes the values of one key (summed; from any devices). Values may be row_sparse (csr ones
  /// are made dense). When every value of the push is row_sparse and an updater is set, the
  /// updater gets their row_sparse sum (MXNet's behaviour), and an optimizer then updates only
  /// those rows where MXNet's update op does it lazily (sgd, sgd with momentum, adam:
  /// lazy_update; the rows absent keep their values and states), every row otherwise:
  ///   local, device: the sum of this process's values (computed on the host, synchronously);
  ///   dist_sync on Gloo: the rows any worker pushed (the dense sum and a row mask are
  ///     allreduced; the push waits for them);
  ///   parameter servers: each server gets only the pushed rows of its parts and applies a round
  ///     (dist_sync) or each push (dist_async) as a row_sparse gradient;
  ///   nccl: made dense (every row updated).
  /// Without an updater, or with dense and sparse values mixed, the values are made dense first.
  void Push(int key, const std::vector<NDArray>& values, int priority = 0);
  void Push(const std::string& key, const std::vector<NDArray>& values, int priority = 0);
  /// Pushes several keys; `values[i]` are the values of `keys[i]`. A key may appear several
  /// times (its values are then pushed together, as MXNet groups them).
  void Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values, int priority = 0);
  void Push(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& values, int priority = 0);

  /// Copies the key's value into every out (the arrays' memory is written; the objects are
  /// NDArray views, so copies of the handles work as outputs).
  void Pull(int key, const std::vector<NDArray>& outs, int priority = 0);
  void Pull(const std::string& key, const std::vector<NDArray>& outs, int priority = 0);
  void Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs, int priority = 0);
  void Pull(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& outs, int priority = 0);

  /// MXNet's row_sparse_pull: each outs[i] (row_sparse, of the key's shape and dtype, on any
  /// device) receives the rows of the key's value that row_ids[i] names (a dense array of any
  /// shape, read flat, any numeric dtype; ids may repeat and come in any order: the out holds them
  /// sorted and unique). Sees every earlier Push of the key, as Pull does. Synchronous: the outs
  /// hold the rows when it returns. On the parameter-server stores only those rows travel (the
  /// request carries the row ids, 8 bytes each; the reply the rows' values); the other stores
  /// hold the whole value in this process and gather from it. Throws weft::Error for an
  /// uninitialized key, outs and row_ids of different counts, an out that is not row_sparse or
  /// does not match the key, or a row id outside [0, rows) (naming its position).
  void PullRowSparse(int key, const std::vector<NDArray>& outs, const std::vector<NDArray>& row_ids, int priority = 0);
  void PullRowSparse(const std::string& key, const std::vector<NDArray>& outs, const std::vector<NDArray>& row_ids,
                     int priority = 0);

  /// Push then Pull (MXNet's KVStore::PushPull; checks and errors as both). Empty `outs` pulls
  /// into `values`. The Gloo stores (dist_sync, dist_device_sync) fuse it when no updater is set,
  /// there is one out in host memory and the key is not fused into a bucket: the allreduce writes
  /// the sum straight into the out, and the store keeps that out as the key's value (no copy), as
  /// MXNet's local store keeps the merged array: writing to the out afterwards changes what a later
  /// Pull of the key returns, until its next Push or PushPull. Results equal Push then Pull bit for
  /// bit.
  void PushPull(int key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs, int priority = 0);
  void PushPull(const std::string& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                int priority = 0);

  /// Installs an optimizer as the updater (the store owns it). Int keys are the optimizer's
  /// indices; string keys get indices 0, 1, ... in the order they were initialised.
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer);
  /// The installed optimizer, or nullptr.
  Optimizer* optimizer() const;
  /// Installs a custom updater (replacing the optimizer, if any). Pushes to int keys need an
  /// Updater, to string keys a StrUpdater; pushing to a key whose kind has none while the other
  /// kind is set raises weft::Error.
  void SetUpdater(Updater updater);
  void SetUpdater(StrUpdater updater);

  /// 2-bit compression of pushed values, `params` as MXNet's dict: {"type": "2bit",
  /// "threshold": "0.5"} (threshold > 0, default 0.5). Per element of each pushed value (and per
  /// pushing device slot) a residual r is kept: r += g; r >= t sends +t (code 11) and r -= t;
  /// r <= -t sends -t (code 10) and r += t; else 0 (code 00); 16 codes per 32-bit word. The
  /// receiver decodes and sums. Init and Pull are not compressed. {"type": "none"} turns it off.
  /// Each value is quantised on its own device and only the words travel to the summing device
  /// (MXNet 1.9 offers this for "device" only; weft also for "local").
  /// Throws weft::Error for another type, a bad threshold, or when called after the first push.
  void SetGradientCompression(const std::map<std::string, std::string>& params);

  /// Writes the optimizer's states (NDArray list format, names "<index>:<k>", plus a record
  /// "__meta__" holding counts and, with dump_optimizer, the optimizer's type and parameters as
  /// JSON in uint8), atomically (a temporary file renamed). Waits for pending updates. Parameter-
  /// server stores (dist_async; dist_sync on zmq) fetch the states from the servers, which run the
  /// optimizer, and write the same format (any worker may call it; see core/kvstore/kvstore_ps.h);
  /// the Gloo stores write this worker's (identical on every worker). Throws weft::Error when no
  /// optimizer is set, the file cannot be written, or a server is dead or misses the op deadline
  /// (naming it).
  void SaveOptimizerStates(const std::string& file_name, bool dump_optimizer = false) const;
  /// Reads such a file into the installed optimizer (parameter servers: sends each server its
  /// keys' parts; Init the keys first). A file of one store type loads into another when the
  /// optimizer type matches. Throws weft::Error when no optimizer is set, the file is unreadable,
  /// it was dumped from another optimizer type, or (servers) a state belongs to no key of the
  /// store or a server fails.
  void LoadOptimizerStates(const std::string& file_name);

  /// The implementation interface (core/kvstore/kvstore_impl.h): KVStoreLocal for "local" and
  /// "device"; the distributed stores plug in there.
  class Impl;

 private:
  explicit KVStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

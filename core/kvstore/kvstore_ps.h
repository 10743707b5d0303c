// weft core — the parameter-server KVStore (MXNet's KVStoreDist on ps-lite, here on a transport
// plugin offering ps_call / ps_poll / ps_respond: the "zmq" plugin).
//
// Which transport a type uses:
//   dist_async   always the parameter server (servers apply the optimizer per push);
//   dist_sync    Gloo collectives (kvstore_dist.h), unless WEFT_KVSTORE_TRANSPORT names a
//                parameter-server transport (WEFT_KVSTORE_TRANSPORT=zmq): then the servers sum
//                every worker's push of a key and apply the optimizer once per round (MXNet);
//   one worker and no servers (no launcher): the local store.
//
// Workers (KVStorePS): keys are sharded over the S servers — an int key k to server
// (k·9973) mod S, a string key by its FNV-1a hash mod S — and a key of at least bigarray_bound
// elements (MXNET_KVSTORE_BIGARRAY_BOUND, default 1e6) is sliced into S contiguous parts, part i
// on server i. Init sends each part to its server (rank 0's value wins: the servers keep rank
// 0's and answer the others'); Push sums this worker's devices first (Comm, as the local store;
// 2-bit compression there), then sends each part; Pull receives every part into the worker's
// copy, then copies it to the outs. Push and Pull are engine operations (asynchronous); a Pull
// runs after the earlier Pushes of the key (PullRowSparse fetches only the rows asked for, see
// PullRowSparseImpl), and in dist_sync a Push completes when the server's
// round is complete. Barrier waits for this worker's earlier operations, then for every worker
// (a command to server 0). SetOptimizer sends the optimizer (its Serialize(): type, parameters,
// multipliers, counts; the LR scheduler is not sent) from rank 0 to every server, then a
// Barrier: every worker must call it. SetUpdater is refused (a C++ function cannot run on a
// server).
//
// Optimizer states live on the servers (each server's optimizer holds the states of its key
// parts). SaveOptimizerStates (any worker; not collective): waits for this worker's pending
// operations, asks every server for a snapshot of its optimizer (Serialize() and states), puts
// the parts of sliced keys back together in the key's shape, merges the update counts (each
// index's count from the servers holding it; num_update the highest), and writes the same file
// the local store writes (atomically), so that the file loads into a local store, and a local
// store's file loads here, when the optimizer type matches. In dist_sync the snapshot is the state
// after this worker's last round; in dist_async it holds whatever the servers have applied (call
// Barrier on every worker first for a defined point). LoadOptimizerStates (any worker; loading the
// same file on several workers is harmless): sends each server its keys' parts of the states and
// the counts; every key of the file's states must be initialised first; call it before pushing
// again, and Barrier afterwards when other workers push. Every request has the op deadline; a dead
// or silent server fails the call naming its rank.
//
// Servers (RunServer): a loop on ps_poll; see ps_server.cc. They serve the stores the workers
// create one after the other (store n of every worker meets store n of the servers).
//
// Failures: a request that fails (server died: at once; server silent: WEFT_KVSTORE_TIMEOUT)
// stores a weft::Error naming the server, the request and the key on the arrays it writes, so
// the next read of a pulled value throws it. A server ends with an error naming the worker when
// a worker dies or a sync round waits longer than WEFT_KVSTORE_TIMEOUT for a worker.
//
// Thread-safety: as KVStore::Impl (the store's lock); the client may be called from any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kvstore/collectives.h"
#include "kvstore/kvstore_local.h"

namespace weft::kv {

/// The elements [lo, hi) of row `row` (of `row_len` elements) that lie in the part holding
/// elements [begin, end) of the flat value; lo >= hi when none do. Row requests and row pushes
/// (WEFT_PS_PULL_ROWS, WEFT_PS_PUSH_ROWS) carry, per row, exactly these elements.
struct ElementRange {
  int64_t lo, hi;
};
inline ElementRange RowInPart(int64_t row, int64_t row_len, int64_t begin, int64_t end) {
  return {std::max(row * row_len, begin), std::min((row + 1) * row_len, end)};
}

/// A parameter-server communicator of a worker: requests to servers with completions.
class PsClient {
 public:
  PsClient(const DistConfig& config, const std::string& prefix);
  /// Finalizes the communicator (aborts it first after a failure).
  ~PsClient();
  PsClient(const PsClient&) = delete;
  PsClient& operator=(const PsClient&) = delete;

  using Done = std::function<void(std::exception_ptr)>;
  /// Sends one request (WEFT_PS_*) of `key` to `server`: `send_count` floats from `send`, the
  /// reply (`recv_count` floats) into `recv`. `done` is called once, from any thread, with the
  /// failure (weft::Error naming the server and key) or nullptr. Buffers stay valid until then.
  void Call(int kind, int server, const std::string& key, const float* send, uint64_t send_count, float* recv,
            uint64_t recv_count, Done done);
  /// Call and wait (a command's JSON text as payload, an empty reply).
  void Command(int server, const std::string& json);
  /// Call of a command and wait: `payload` as is (see PackStates), the reply of exactly
  /// `reply_floats` elements returned; `what` names the request in errors.
  std::vector<float> Request(int server, const std::vector<float>& payload, uint64_t reply_floats,
                             const std::string& what);
  const std::string& transport_name() const { return name_; }
  /// True after any request failed (the job is broken: no goodbye is sent).
  bool failed() const { return failed_.load(); }

 private:
  DistConfig config_;
  Transport t_;
  weft_comm comm_ = nullptr;
  std::string name_;
  std::atomic<bool> failed_{false};
};

class KVStorePS final : public KVStoreLocal {
 public:
  /// Joins the job as a worker (DistConfig::FromEnv; `sync`: dist_sync semantics on the servers).
  /// Throws weft::Error when the environment is incomplete, no server is configured for several
  /// workers, or the rendezvous fails.
  KVStorePS(std::string type, bool sync);
  /// Waits for this store's pending work (errors are logged), says goodbye to the servers and
  /// leaves the job.
  ~KVStorePS() override;

  int rank() const override { return config_.rank; }
  int num_workers() const override { return config_.num_workers; }
  void Barrier() override;

  struct Part {
    int server = 0;
    uint64_t begin = 0, count = 0;  // elements
    std::string wire;               // the key on the wire: "<opt index>:<key>[#<part>]"
  };
  /// The parts of a key of `size` elements (MXNet's sharding; see the top of the file).
  static std::vector<Part> Shard(const Key& key, int opt_index, uint64_t size, int num_servers, uint64_t bound);

 protected:
  void InitImpl(const Key& key, const NDArray& value) override;
  /// Row_sparse pushes (with the optimizer set on the servers) send each server only the rows
  /// with elements in its parts (WEFT_PS_PUSH_ROWS), and the servers apply a round's rows as a
  /// row_sparse gradient: the optimizer's lazy update. With no server, the local store's.
  bool RowSparsePushes() const override { return true; }
  void PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) override;
  void PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) override;
  /// With servers: waits for this worker's earlier operations on the key, then asks each server
  /// holding a part of a requested row for those rows only (WEFT_PS_PULL_ROWS: int64 row length,
  /// the part's first element and the row ids; the reply is the rows' elements in that part).
  void PullRowSparseImpl(const Key& key, const std::vector<NDArray>& outs,
                         const std::vector<std::vector<int64_t>>& rows, int priority) override;
  void OnUpdaterChanged() override;
  std::map<std::string, NDArray> GatherOptimizerStates(std::string* meta_json) override;
  void ScatterOptimizerStates(const std::string& meta_json, const std::map<std::string, NDArray>& states) override;

 private:
  // An engine op sending request `kind` for every part of `key`: from `data` (reads) or into it
  // (WEFT_PS_PULL, writes); `order` is written too, so Pulls follow Pushes of the key.
  void Issue(int kind, const Key& key, const NDArray& data, const NDArray& order, int priority);
  void BarrierLocked();
  // An engine op sending the rows of `merged` (row_sparse, on cpu) to the servers of key's parts.
  void PushRows(const Key& key, const NDArray& merged, int priority);

  DistConfig config_;
  std::shared_ptr<PsClient> ps_;  // null: one worker without servers (local store)
  struct KeyPlan {
    std::string display;  // the key, for messages
    int opt_index = 0;
    Shape shape;
    std::vector<Part> parts;
  };
  std::map<std::string, KeyPlan> plans_;  // by Key::id()
};

/// Optimizer states on the wire (the servers' "states" replies, the workers' "set_states"
/// commands): JSON text (`header` plus "states": [[name, elements], ...]), a NUL, zero bytes up to
/// a multiple of 4, then the float32 elements of every state in the header's order.
std::vector<float> PackStates(nlohmann::json header,
                              const std::vector<std::pair<std::string, std::vector<float>>>& states);
struct PackedStates {
  nlohmann::json header;
  std::map<std::string, std::vector<float>> states;
};
/// Reverses PackStates; throws weft::Error naming `what` when the bytes are malformed.
PackedStates UnpackStates(const void* data, size_t bytes, const std::string& what);

/// Runs this process as parameter server WEFT_RANK of the job in the environment until
/// `stop_requested()` returns true (checked about every 200 ms; may be empty), or every store the
/// workers created is closed and no further one joins within WEFT_RENDEZVOUS_TIMEOUT. Throws
/// weft::Error when a worker dies, a sync round or barrier misses WEFT_KVSTORE_TIMEOUT, or the
/// environment is incomplete.
void RunServer(const std::function<bool()>& stop_requested);

}  // namespace weft::kv

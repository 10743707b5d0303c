// weft core — Collectives: one communicator of a transport plugin (sdk/transport.h) with the
// ordering rule collectives need: every rank issues the same collectives in the same order.
//
// The distributed KVStore reserves a sequence number for each collective when the user calls
// Push / Init / Barrier (under the store's lock, so the order is the program's order, the same on
// every rank), and submits the collective when the engine has its input ready (the engine may
// make inputs ready in any order). A dispatcher thread issues them to the transport strictly in
// sequence order, one at a time, and calls each op's `done`.
//
// Deadlines: the transport bounds each op (WEFT_KVSTORE_TIMEOUT). When a later op is waiting but
// the next one in sequence is never submitted for a whole op deadline (an earlier error on this
// rank skipped it), the waiting ops fail naming the missing one. After the first failure the
// communicator is aborted and every later op fails at once with that error.
//
// DistConfig::FromEnv reads the process's place in the job: rank and number of workers from
// WEFT_RANK / WEFT_NUM_WORKERS, else MXNet's DMLC_RANK / DMLC_NUM_WORKER, else Open MPI's
// OMPI_COMM_WORLD_RANK / _SIZE, else SLURM's SLURM_PROCID / SLURM_NTASKS; none set means one
// worker. WEFT_KVSTORE_TIMEOUT (s, default 120) bounds each collective, WEFT_RENDEZVOUS_TIMEOUT
// (s, default 300) the rendezvous; WEFT_KVSTORE_TRANSPORT names a transport plugin to use.
// Parameter servers (dist_async): WEFT_NUM_SERVERS / DMLC_NUM_SERVER servers (default 0), the
// process's role from WEFT_ROLE / DMLC_ROLE ("worker" default, or "server": then WEFT_RANK /
// DMLC_SERVER_ID is the server rank), arrays of at least WEFT_KVSTORE_BIGARRAY_BOUND /
// MXNET_KVSTORE_BIGARRAY_BOUND elements (default 1 000 000) sliced across all servers.
// WEFT_KVSTORE_BUCKET_BYTES (bytes, default 4 MiB, 0 = off): collective stores fuse pushes of
// keys smaller than a quarter of it into buckets of at most that size (kvstore_dist.h).
//
// Thread-safety: Reserve, Submit and Run may be called from any thread.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "weft/sdk/transport.h"

namespace weft {
class Plugin;
}

namespace weft::kv {

struct DistConfig {
  int rank = 0;
  int num_workers = 1;
  int64_t op_timeout_ms = 120000;
  int64_t rendezvous_timeout_ms = 300000;
  std::string transport;  // plugin name, "" = the first that serves the type
  int num_servers = 0;
  std::string role = "worker";  // "worker" or "server"
  uint64_t bigarray_bound = 1000000;
  uint64_t bucket_bytes = 4 << 20;  // collectives: fusion bucket size (0 = no fusion)
  /// From the environment (see the top). Throws weft::Error for malformed values.
  static DistConfig FromEnv();
};

/// A loaded transport plugin's table.
struct Transport {
  const Plugin* plugin = nullptr;
  const weft_transport_api* api = nullptr;
  void* state = nullptr;
};
/// The first loaded transport serving `kvstore_type` (named `name` unless empty) that is a
/// parameter server (offers ps_call) when `parameter_server`, else one offering collectives
/// (no ps_call). Throws weft::Error naming the loaded transports and the types they serve.
Transport FindTransport(const std::string& kvstore_type, const std::string& name, bool parameter_server);
/// True when transport `t` lists `kvstore_type` among the types it serves (kvstore_types).
bool ServesType(const weft_transport_api& t, const std::string& kvstore_type);
/// Joins the job through `t` (comm_init) as `role` (WEFT_ROLE_WORKER or WEFT_ROLE_SERVER) with the
/// rank, sizes and deadlines of `config` under the store key `prefix`; returns the communicator.
/// `device_type` / `device`: the device a device communicator works on (NULL: host buffers).
/// Throws weft::Error starting with `what` when the plugin fails.
weft_comm InitComm(const Transport& t, const DistConfig& config, const char* role, const std::string& prefix,
                   const std::string& what, const char* device_type = nullptr, int device = 0);
/// The state of the nccl transport plugin in this process, for messages: not loaded, or reports
/// 0 usable devices (with its reason), or the number of devices it reports.
std::string NcclStatus();
/// A collective store's join, before its communicator: for a job of more than one worker installs
/// the rendezvous store from WEFT_RENDEZVOUS for the transports (SetRendezvousStore) and returns
/// true; for one worker logs that no transport is needed and returns false. Throws weft::Error
/// naming the fix when several workers have no rendezvous.
bool JoinRendezvous(const std::string& kvstore_type, const DistConfig& config);
/// True when a loaded transport named `name` offers ps_call (WEFT_KVSTORE_TRANSPORT=zmq makes
/// dist_sync run on the parameter servers).
bool IsParameterServerTransport(const std::string& name);

class Collectives {
 public:
  enum class Kind { kAllreduce, kBroadcast, kBarrier };
  struct Op {
    Kind kind = Kind::kBarrier;
    std::string key;  // for messages
    const void* send = nullptr;
    void* recv = nullptr;
    uint64_t count = 0;                  // elements of `dtype`
    int32_t dtype = WEFT_DTYPE_FLOAT32;  // WEFT_DTYPE_* of send and recv (weft::DType's values)
    int root = 0;
    /// Called once from the dispatcher thread with nullptr or the failure (weft::Error naming
    /// the peer rank, the op and the key). Must not throw.
    std::function<void(std::exception_ptr)> done;
  };

  /// Finds the transport plugin serving `kvstore_type` and joins the job's communicator (the
  /// rendezvous store must be set up). Throws weft::Error when no loaded plugin serves the type
  /// (naming the types the loaded transports serve) or the rendezvous fails.
  Collectives(const std::string& kvstore_type, const DistConfig& config, const std::string& prefix);
  /// Stops the dispatcher (pending submitted ops are run first) and finalizes the communicator
  /// (a last barrier, bounded by the op deadline).
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return config_.rank; }
  int size() const { return config_.num_workers; }
  const std::string& transport_name() const;

  /// The sequence number of the next collective.
  uint64_t Reserve();
  /// Hands over the op reserved as `seq`.
  void Submit(uint64_t seq, Op op);
  /// Reserve + Submit, then waits for it (rethrows its failure).
  void Run(Op op);

  struct State;

 private:
  DistConfig config_;
  std::shared_ptr<State> state_;
};

}  // namespace weft::kv

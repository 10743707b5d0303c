/* weft SDK — KVStore transports: moving KVStore data between processes (and, for device
 * communicators, between GPUs).
 *
 * A transport plugin is a message layer on an existing engine (Gloo, ZeroMQ, NCCL, MPI). Core
 * owns the KVStore's semantics: which keys go where (sharding, slicing of big arrays), summation
 * on servers, optimizers, fusion of small tensors into buckets, the order of collectives. A
 * transport moves bytes with deadlines and reports failures by rank.
 *
 * Two families of calls, on one communicator (weft_comm):
 *   collectives  allreduce, broadcast, barrier: every rank of the communicator issues the same
 *                collectives in the same order (core guarantees it); the transport may match
 *                them by order (NCCL) or by tag (Gloo: tag = the sequence number of the call);
 *   parameter server (optional)  ps_call from workers (init / push / pull / command of a key on
 *                one server), ps_poll + ps_respond on servers: the server loop lives in core
 *                (it sums pushes and applies the optimizer, MXNet's KVStoreDistServer); the
 *                transport delivers requests and replies.
 *
 * How the engines map (reviewed against their real calls):
 *   NCCL  comm_init: ncclGetUniqueId on rank 0, published with the host's kv_set, read with kv_get
 *         by the others, then ncclCommInitRankConfig(blocking = 0) and a poll of
 *         ncclCommGetAsyncError until ready or the deadline. allreduce / broadcast: ncclAllReduce /
 *         ncclBroadcast(send, recv, count, type, op|root, comm, stream) with the cudaStream_t and
 *         device addresses obtained through the host's native_handle; group_start / group_end:
 *         ncclGroupStart / ncclGroupEnd. Deadline: a watchdog thread polls
 *         ncclCommGetAsyncError and calls ncclCommAbort when a call is overdue; abort ->
 *         ncclCommAbort; finalize -> ncclCommFinalize + ncclCommDestroy.
 *   Gloo  comm_init: gloo::rendezvous::Context(rank, size).connectFullMesh(store, tcp device), the
 *         store adapting the host's kv_set / kv_get. allreduce: a ring (reduce-scatter, then
 *         allgather) over Gloo's unbound buffers reading the input in place, tag = sequence,
 *         every wait bounded by the deadline (host buffers: stream is NULL, completion
 *         through `done`); broadcast: gloo::BroadcastOptions + setRoot; barrier:
 *         gloo::BarrierOptions. group_start / group_end: the calls are queued and run, in
 *         order, at group_end. abort: closes the pairs so pending calls fail at once.
 *   ZeroMQ  parameter server (plugins/zmq): a DEALER per server on each worker, a ROUTER on each
 *         server, one I/O thread per communicator; every request carries a deadline; a socket
 *         monitor's DISCONNECTED event marks a server dead at once (workers) or triggers checks of
 *         the workers' processes (servers). A parameter-server transport (ps_call set) offers no
 *         collectives: its allreduce / broadcast / barrier return WEFT_ERR_UNSUPPORTED, and core
 *         never picks it for collectives.
 *
 * Deadlines and failures: every blocking point honours a deadline (args timeout_ms, else the
 * communicator's). When a peer dies or misses the deadline the call fails with
 * WEFT_ERR_UNAVAILABLE (peer gone) or WEFT_ERR_TIMEOUT (peer silent), stores the peer's rank in
 * failed_rank (-1 when unknown) and names the peer, the operation and the key in the message.
 * A transport may warn (host log) halfway to a deadline, naming the ranks it still waits for.
 *
 * Thread-safety: every function may be called from any thread, including the engine's worker
 * threads and several at once on one communicator; the transport serialises what its engine
 * needs serialised. Core issues collectives of one communicator in the same order on every rank
 * (from one thread at a time). abort may be called from any thread at any time, also while other
 * calls on the communicator block.
 */
#ifndef WEFT_SDK_TRANSPORT_H_
#define WEFT_SDK_TRANSPORT_H_

#include "weft/sdk/device.h"
#include "weft/sdk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_comm_s* weft_comm; /* opaque, plugin-owned communicator */

/* Reductions (weft_collective_args.reduce_op). */
#define WEFT_REDUCE_SUM 0
#define WEFT_REDUCE_PROD 1
#define WEFT_REDUCE_MIN 2
#define WEFT_REDUCE_MAX 3

/* Roles (weft_comm_init_args.role), MXNet's DMLC_ROLE names. */
#define WEFT_ROLE_WORKER "worker"
#define WEFT_ROLE_SERVER "server"
#define WEFT_ROLE_SCHEDULER "scheduler"

typedef struct weft_comm_init_args {
  size_t struct_size;
  int32_t rank;        /* this process's rank within its role, 0..world_size-1 */
  int32_t world_size;  /* number of workers (collectives: number of ranks) */
  int32_t num_servers; /* parameter-server transports: servers in the job (0 otherwise) */
  const char* role;    /* WEFT_ROLE_*; collectives: always "worker" */
  const char* prefix;  /* namespace for the host's rendezvous store keys (host.h kv_set/kv_get);
                          distinct per communicator */
  int64_t timeout_ms;  /* deadline for rendezvous and, by default, for every later call */
  int32_t num_attrs;
  const weft_kv* attrs;    /* transport options, e.g. {"iface", "lo"}; unknown keys are an error */
  const char* device_type; /* NULL or "cpu": buffers are host memory. Otherwise the device plugin
                              whose memory and streams the communicator works on ("cuda"). */
  int32_t device;          /* device index for device communicators, else 0 */
  weft_comm comm;          /* out */
} weft_comm_init_args;

/* A buffer: host memory (host communicators) or memory of the communicator's device. */
typedef struct weft_buffer {
  size_t struct_size;
  void* host;           /* host communicators: the data */
  weft_device_ptr data; /* device communicators: the allocation */
  uint64_t offset;      /* bytes from host / data */
  uint64_t count;       /* elements */
  int32_t dtype;        /* WEFT_DTYPE_* */
} weft_buffer;

/* Completion of a call that returned before finishing: called exactly once, from any thread
 * (possibly before the call returns), with NULL on success or an error the callee hands over
 * (the receiver releases it with the host's error_release). failed_rank as in the args. */
typedef void (*weft_completion_fn)(void* user_data, weft_error* error, int32_t failed_rank);

typedef struct weft_collective_args {
  size_t struct_size;
  weft_comm comm;
  const char* key;    /* the KVStore key or bucket name, for messages */
  weft_buffer send;   /* allreduce input / broadcast source (read on the root only) */
  weft_buffer recv;   /* result; may equal send (in place); ignored by barrier */
  int32_t reduce_op;  /* WEFT_REDUCE_* (allreduce) */
  int32_t root;       /* broadcast root */
  int32_t priority;   /* higher first, where the transport queues work */
  int64_t timeout_ms; /* <= 0: the communicator's default */
  /* Device communicators: a stream of the communicator's device plugin; the call queues the
   * collective on it and returns (completion follows stream order: core records an event after
   * it). Must be NULL for host communicators. */
  weft_stream stream;
  /* Host communicators: NULL = the call blocks until done (or the deadline). Otherwise the call
   * may return before the work is done; the transport then calls done(done_data, ...) exactly
   * once and the buffers must stay valid until it has. A call that returns an error never calls
   * done. */
  weft_completion_fn done;
  void* done_data;
  int32_t failed_rank; /* out (blocking calls): the peer that failed, -1 if none */
} weft_collective_args;

/* Parameter-server request kinds (weft_ps_call.kind). The transport does not interpret them. */
#define WEFT_PS_INIT 1      /* payload = the initial value; reply empty */
#define WEFT_PS_PUSH 2      /* payload = a gradient (or a compressed one); reply empty */
#define WEFT_PS_PULL 3      /* payload empty; reply = the value */
#define WEFT_PS_COMMAND 4   /* payload = a command (e.g. optimizer settings as JSON); reply any bytes */
#define WEFT_PS_PULL_ROWS 5 /* payload = int64 row request; reply = those rows (row_sparse_pull) */
#define WEFT_PS_PUSH_ROWS 6 /* payload = int64 row ids then their values (row_sparse push); reply empty */

typedef struct weft_ps_call {
  size_t struct_size;
  weft_comm comm;
  int32_t kind;            /* WEFT_PS_* */
  int32_t server;          /* destination server rank (core shards keys) */
  const char* key;         /* key (or key slice, "name:part") */
  weft_buffer send;        /* payload (host memory); count 0 for none */
  weft_buffer recv;        /* where the reply goes (host memory); its count must match the reply's */
  int64_t timeout_ms;      /* <= 0: the communicator's default */
  weft_completion_fn done; /* as weft_collective_args.done */
  void* done_data;
  int32_t failed_rank; /* out (blocking calls) */
} weft_ps_call;

/* What a server receives (ps_poll). */
typedef struct weft_ps_request {
  size_t struct_size;
  uint64_t request_id; /* out: pass to ps_respond */
  int32_t kind;        /* out: WEFT_PS_* */
  int32_t sender;      /* out: worker rank */
  const char* key;     /* out: NUL-terminated, valid until ps_respond */
  const void* payload; /* out: valid until ps_respond */
  uint64_t payload_bytes;
  int32_t dtype; /* out: the sender's send.dtype */
} weft_ps_request;

typedef struct weft_transport_api {
  size_t struct_size;
  const char* name; /* "gloo", "zmq", "nccl": the transport name KVStore::Create selects */
  /* Which KVStore types it serves, comma-separated: "dist_sync,dist_device_sync" (Gloo),
   * "dist_sync,dist_async" (a parameter server), "nccl,dist_device_sync" (NCCL). */
  const char* kvstore_types;

  weft_error* (*comm_init)(void* plugin_state, weft_comm_init_args* args);
  /* Waits (up to the communicator's deadline) for peers to finish, then frees comm. */
  weft_error* (*comm_finalize)(void* plugin_state, weft_comm comm);
  /* Makes every pending and future call on comm fail fast with WEFT_ERR_ABORTED (pending
   * completions are called with that error). Any thread, any time; then comm_finalize frees it. */
  weft_error* (*comm_abort)(void* plugin_state, weft_comm comm);

  /* Collectives (see weft_collective_args). */
  weft_error* (*allreduce)(void* plugin_state, weft_collective_args* args);
  weft_error* (*broadcast)(void* plugin_state, weft_collective_args* args);
  weft_error* (*barrier)(void* plugin_state, weft_collective_args* args);
  /* Calls made by this thread between group_start and group_end, on communicators of this
   * transport, form one group (ncclGroupStart/End): the transport may fuse or launch them
   * together. Groups nest; the outermost group_end issues them and returns the first error of
   * issuing; completion is per call as usual. */
  weft_error* (*group_start)(void* plugin_state);
  weft_error* (*group_end)(void* plugin_state);

  /* ----- optional entries: NULL = unsupported ----- */

  /* Parameter server, worker side: one request to one server (see weft_ps_call). */
  weft_error* (*ps_call)(void* plugin_state, weft_ps_call* call);
  /* Server side: waits up to timeout_ms for the next request (WEFT_ERR_TIMEOUT when none came,
   * WEFT_ERR_ABORTED after comm_abort, WEFT_ERR_UNAVAILABLE naming the rank when a worker died). */
  weft_error* (*ps_poll)(void* plugin_state, weft_comm comm, weft_ps_request* request, int64_t timeout_ms);
  /* Replies to request_id (from any thread, in any order; a pull may be answered later, when
   * the value is ready). `reply` may be NULL when reply_bytes is 0. */
  weft_error* (*ps_respond)(void* plugin_state, weft_comm comm, uint64_t request_id, const void* reply,
                            uint64_t reply_bytes);

  /* The first asynchronous failure of comm, or NULL while it is healthy (NCCL's
   * ncclCommGetAsyncError). Core's watchdog polls it for device communicators. */
  weft_error* (*comm_status)(void* plugin_state, weft_comm comm);

  /* ----- added in SDK 2.x: optional, NULL = unsupported (older plugins' tables end above) ----- */

  /* Server side: answers request_id with a failure instead of a reply: the worker's ps_call
   * fails with `code` (WEFT_ERR_*) and `message` (NUL-terminated; e.g. a sync round that waited
   * too long, naming the missing workers). Any thread, like ps_respond. */
  weft_error* (*ps_respond_error)(void* plugin_state, weft_comm comm, uint64_t request_id, int32_t code,
                                  const char* message);

  /* Device transports (NCCL): how many devices of their device type this process can communicate
   * on; 0 when the driver or the devices are missing, and `reason` (may be NULL) then receives a
   * one-line explanation (plugin-owned, valid until shutdown). NULL for host transports (Gloo,
   * ZeroMQ). Core picks a device transport for a KVStore type only when this is > 0. */
  int32_t (*device_count)(void* plugin_state, const char** reason);

  /* Device transports: the device plugin type ("cuda") whose memory and streams their
   * communicators work on (weft_comm_init_args.device_type must name it). Plugin-owned, valid
   * until shutdown. NULL for host transports; a device transport built before this field (its
   * table ends above) is taken to work on "cuda". Core drives a device transport only for arrays
   * of this type's devices (it copies sums from elsewhere onto the communicator's device). */
  const char* device_type;
} weft_transport_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_TRANSPORT_H_ */

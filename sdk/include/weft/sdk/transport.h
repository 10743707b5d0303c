/* weft SDK — KVStore transports: moving KVStore data between processes.
 *
 * Declared in SDK 1.0; the first implementations (Gloo, ZeroMQ, NCCL) come with the distributed
 * KVStore. A transport serves one communicator per KVStore. Collectives (allreduce, broadcast,
 * barrier) must be issued by every rank in the same order; push/pull are point-to-point to
 * parameter servers.
 *
 * Every blocking call honours a deadline (timeout_ms). When a peer dies or misses the deadline,
 * the call fails with WEFT_ERR_UNAVAILABLE or WEFT_ERR_TIMEOUT, stores the peer's rank in
 * *failed_rank and names the peer, the operation and the key in the error message.
 * Thread-safety: one communicator is used by one thread at a time.
 */
#ifndef WEFT_SDK_TRANSPORT_H_
#define WEFT_SDK_TRANSPORT_H_

#include "weft/sdk/device.h"
#include "weft/sdk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_comm_s* weft_comm; /* opaque, plugin-owned communicator */

#define WEFT_REDUCE_SUM 0

typedef struct weft_transport_init_args {
  size_t struct_size;
  int32_t rank; /* this process's rank, 0..world_size-1 */
  int32_t world_size;
  const char* role;   /* "worker", "server" or "scheduler" (parameter-server transports) */
  const char* prefix; /* namespace for the host's rendezvous store keys (host.h kv_set/kv_get) */
  int64_t timeout_ms; /* deadline for rendezvous and, by default, every later call */
  int32_t num_attrs;
  const weft_kv* attrs; /* transport options, e.g. {"iface", "lo"} */
  weft_comm comm;       /* out */
} weft_transport_init_args;

/* A buffer in host memory or in a device plugin's memory. */
typedef struct weft_buffer {
  size_t struct_size;
  const char* device_type; /* NULL or "cpu" = host memory in `host`; otherwise a device type */
  int32_t device;
  void* host;
  weft_device_ptr data;
  uint64_t offset; /* bytes */
  uint64_t count;  /* elements */
  int32_t dtype;   /* WEFT_DTYPE_* */
} weft_buffer;

typedef struct weft_collective_args {
  size_t struct_size;
  weft_comm comm;
  const char* key;     /* the KVStore key (for error messages and parameter-server routing) */
  weft_buffer send;    /* allreduce/broadcast source (root's for broadcast); push payload */
  weft_buffer recv;    /* result; may equal send for in-place; pull destination */
  int32_t reduce_op;   /* WEFT_REDUCE_* */
  int32_t root;        /* broadcast root */
  int32_t priority;    /* higher first, where the transport queues work */
  int64_t timeout_ms;  /* <= 0: the communicator's default */
  int32_t failed_rank; /* out: the peer that failed, -1 if none */
} weft_collective_args;

typedef struct weft_transport_api {
  size_t struct_size;
  const char* name; /* "gloo", "zmq", "nccl"; the KVStore type prefix it serves */
  weft_error* (*init)(void* plugin_state, weft_transport_init_args* args);
  weft_error* (*allreduce)(void* plugin_state, weft_collective_args* args);
  weft_error* (*broadcast)(void* plugin_state, weft_collective_args* args);
  weft_error* (*barrier)(void* plugin_state, weft_collective_args* args);
  weft_error* (*push)(void* plugin_state, weft_collective_args* args);
  weft_error* (*pull)(void* plugin_state, weft_collective_args* args);
  /* Makes every pending and future call on comm fail fast with WEFT_ERR_ABORTED. */
  weft_error* (*abort)(void* plugin_state, weft_comm comm);
  /* Waits (up to the default deadline) for peers to finish, then frees comm. */
  weft_error* (*finalize)(void* plugin_state, weft_comm comm);
} weft_transport_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_TRANSPORT_H_ */

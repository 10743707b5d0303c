/* weft SDK — the device interface a backend plugin implements (cpu, cuda, hip, vulkan, ...).
 *
 * A device plugin owns mechanics: memory, copies, streams and events. Core owns semantics and
 * never dereferences a weft_device_ptr unless the device sets WEFT_DEVICE_CAP_HOST_ADDRESSABLE.
 *
 * Devices are numbered 0..device_count-1 within the plugin; core calls them `<device_type>(i)`
 * (a Context, as in MXNet: cpu(0), cuda(1)).
 *
 * Streams: every asynchronous call takes a weft_stream. The NULL stream means "synchronous": the
 * call's work has completed when it returns (on every device). Work queued on one non-NULL stream
 * runs in queue order; work on different streams is unordered unless an event orders it.
 *
 * Thread-safety: every function may be called concurrently from several threads, except that
 * one stream must not be used by two threads at the same time.
 *
 * Errors (returned weft_error*, NULL on success): WEFT_ERR_INVALID_ARGUMENT for a bad device
 * index, pointer, offset or size; WEFT_ERR_OUT_OF_MEMORY when memory runs out (never a crash);
 * WEFT_ERR_UNAVAILABLE when the device was lost.
 */
#ifndef WEFT_SDK_DEVICE_H_
#define WEFT_SDK_DEVICE_H_

#include "weft/sdk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_stream_s* weft_stream; /* opaque, plugin-owned; NULL = synchronous */
typedef struct weft_event_s* weft_event;   /* opaque, plugin-owned */

/* Capability bits (weft_device_props.capabilities). */
#define WEFT_DEVICE_CAP_HOST_ADDRESSABLE (1ull << 0) /* weft_device_ptr is a host pointer */
#define WEFT_DEVICE_CAP_ASYNC_COPY (1ull << 1)       /* non-NULL streams run copies asynchronously */
#define WEFT_DEVICE_CAP_PEER_COPY (1ull << 2)        /* copy between two devices of this plugin */
#define WEFT_DEVICE_CAP_PINNED_HOST (1ull << 3)      /* pinned_alloc/pinned_free are provided */
#define WEFT_DEVICE_CAP_TIMESTAMPS (1ull << 4)       /* events can measure elapsed time */
#define WEFT_DEVICE_CAP_UNIFIED_MEMORY (1ull << 5)   /* device and host share physical memory */

typedef struct weft_device_props {
  size_t struct_size;
  char name[128];            /* e.g. "AMD EPYC 7B13 (virtual cpu 0)"; NUL-terminated */
  char vendor[64];           /* NUL-terminated */
  uint64_t total_memory;     /* bytes the device can hold in total (0 = unknown) */
  uint64_t free_memory;      /* bytes free now (0 = unknown) */
  uint64_t capabilities;     /* WEFT_DEVICE_CAP_* bits */
  uint64_t min_alignment;    /* bytes; every allocation is aligned to at least this (power of 2) */
  int32_t compute_units;     /* cores, SMs, CUs; 0 = unknown */
  int32_t num_attributes;    /* entries in `attributes` */
  const weft_kv* attributes; /* extra key/value facts (driver version, ISA, ...); plugin-owned,
                                valid until shutdown */
} weft_device_props;

typedef struct weft_alloc_args {
  size_t struct_size;
  int32_t device;      /* in: device index */
  uint64_t bytes;      /* in: size in bytes; 0 returns ptr 0 and no error */
  uint64_t alignment;  /* in: bytes, power of two; 0 = the device's min_alignment */
  weft_device_ptr ptr; /* out: the allocation (0 when bytes == 0) */
} weft_alloc_args;

/* Direction of a copy. */
#define WEFT_COPY_HOST_TO_DEVICE 1
#define WEFT_COPY_DEVICE_TO_HOST 2
#define WEFT_COPY_DEVICE_TO_DEVICE 3 /* same device, or peer devices of the same plugin */

typedef struct weft_copy_args {
  size_t struct_size;
  int32_t kind;         /* WEFT_COPY_* */
  int32_t src_device;   /* device index of the source (ignored for HOST_TO_DEVICE) */
  int32_t dst_device;   /* device index of the destination (ignored for DEVICE_TO_HOST) */
  const void* src_host; /* source when kind == HOST_TO_DEVICE */
  weft_device_ptr src;  /* source allocation otherwise */
  uint64_t src_offset;  /* bytes from src / src_host */
  void* dst_host;       /* destination when kind == DEVICE_TO_HOST */
  weft_device_ptr dst;  /* destination allocation otherwise */
  uint64_t dst_offset;  /* bytes from dst / dst_host */
  uint64_t bytes;       /* bytes to copy; 0 is a no-op */
  weft_stream stream;   /* NULL = synchronous. Otherwise the host buffer must stay valid
                           until the stream has passed this copy. */
} weft_copy_args;

typedef struct weft_memset_args {
  size_t struct_size;
  int32_t device;
  weft_device_ptr dst;
  uint64_t offset; /* bytes */
  uint64_t bytes;
  uint8_t value; /* every byte is set to this */
  weft_stream stream;
} weft_memset_args;

typedef struct weft_device_api {
  size_t struct_size;
  /* The Context name of this plugin's devices: "cpu", "cuda", "simdev". Lower-case letters,
   * digits and '_'; unique among loaded plugins. Plugin-owned, valid until shutdown. */
  const char* device_type;

  /* Number of devices present. Returns 0 (never an error) when the driver or hardware is absent. */
  int32_t (*device_count)(void* plugin_state);
  /* Fills *props; the host sets props->struct_size before the call. */
  weft_error* (*get_properties)(void* plugin_state, int32_t device, weft_device_props* props);

  /* Device memory. free of ptr 0 is a no-op. */
  weft_error* (*allocate)(void* plugin_state, weft_alloc_args* args);
  weft_error* (*free)(void* plugin_state, int32_t device, weft_device_ptr ptr);

  /* Copies and fills; both honour args->stream (NULL = synchronous). */
  weft_error* (*copy)(void* plugin_state, const weft_copy_args* args);
  weft_error* (*memset)(void* plugin_state, const weft_memset_args* args);

  /* Streams (queues). stream_synchronize blocks until all work queued so far has completed and
   * returns the first error an asynchronous operation on it hit (then clears it). */
  weft_error* (*stream_create)(void* plugin_state, int32_t device, weft_stream* out);
  weft_error* (*stream_destroy)(void* plugin_state, weft_stream stream);
  weft_error* (*stream_synchronize)(void* plugin_state, weft_stream stream);

  /* Events. event_record captures the work queued on `stream` so far; stream_wait_event makes
   * work queued later on `stream` wait until `event` has completed (it does not block the host);
   * event_query stores 1 in *done when completed, else 0; event_synchronize blocks the host.
   * An event never recorded counts as completed. */
  weft_error* (*event_create)(void* plugin_state, int32_t device, weft_event* out);
  weft_error* (*event_destroy)(void* plugin_state, weft_event event);
  weft_error* (*event_record)(void* plugin_state, weft_event event, weft_stream stream);
  weft_error* (*stream_wait_event)(void* plugin_state, weft_stream stream, weft_event event);
  weft_error* (*event_query)(void* plugin_state, weft_event event, int32_t* done);
  weft_error* (*event_synchronize)(void* plugin_state, weft_event event);

  /* Optional (NULL = unsupported). Page-locked host memory for fast transfers
   * (WEFT_DEVICE_CAP_PINNED_HOST). */
  weft_error* (*pinned_alloc)(void* plugin_state, uint64_t bytes, void** out);
  weft_error* (*pinned_free)(void* plugin_state, void* ptr);

  /* Optional (NULL = unsupported). Stores the native handle of a stream (cudaStream_t, VkQueue,
   * ...) in *out so that callers can interoperate with the vendor library. */
  weft_error* (*stream_native_handle)(void* plugin_state, weft_stream stream, void** out);
} weft_device_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_DEVICE_H_ */

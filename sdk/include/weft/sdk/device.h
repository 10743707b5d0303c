/* weft SDK — the device interface a backend plugin implements (cpu, cuda, hip, vulkan, ...).
 *
 * A device plugin owns mechanics: memory, copies, streams and events. Core owns semantics and
 * never dereferences a weft_device_ptr unless the device sets WEFT_DEVICE_CAP_HOST_ADDRESSABLE.
 *
 * Devices are numbered 0..device_count-1 within the plugin; core calls them `<device_type>(i)`
 * (a Context, as in MXNet: cpu(0), cuda(1)).
 *
 * ---------------------------------------------------------------------------------------------
 * Execution model (SDK 2.0): stream-ordered work, completion by events
 * ---------------------------------------------------------------------------------------------
 * Every asynchronous call takes a weft_stream. Work queued on one stream runs in queue order;
 * work on different streams is unordered unless an event orders it. The NULL stream means
 * "synchronous": the call's work has completed when it returns (on every device); core uses it
 * only on host-addressable devices and in the naive engine.
 *
 * How core drives a device that is not host-addressable (the asynchronous engine, after MXNet's
 * "async GPU dependency engine", apache/mxnet#18951 / #20331):
 *   1. an operation queues its kernels and copies on its worker's stream and returns at once;
 *   2. core records an event on that stream; the arrays the operation wrote carry the event;
 *   3. a later operation on the same stream needs nothing (queue order); one on another stream of
 *      the same plugin calls stream_wait_event (no host wait); host code that must see the data
 *      (WaitToRead, a copy to host memory that is not stream-ordered, a host operation, another
 *      plugin) calls event_synchronize.
 * So a plugin must make stream_wait_event cheap and never block the host in it, and must never
 * block the host in a call that takes a non-NULL stream (except when a bounded resource, such as
 * a command buffer pool, is exhausted; say so in the plugin's documentation).
 *
 * Errors of asynchronous work: an argument the plugin can check when the work is queued (bad
 * pointer, offset, size, handle) is reported by the queuing call itself. A failure while the
 * work runs is kept by the stream (sticky until reported) and returned by the next
 * stream_synchronize of that stream, and by event_synchronize / event_query of every event
 * recorded on that stream after the failed work, each time with a new error object of the same
 * code and message. After such a failure, work queued later on the stream may be skipped. A
 * stream that waits (stream_wait_event) on an event whose captured work failed takes that
 * failure as its own sticky error, so a failure follows the data that depends on it.
 *
 * How the SDK's concepts map onto the vendor APIs (a device plugin chooses; these are the
 * natural choices, and the native handles below name them):
 *
 *   SDK                  CUDA                     HIP                     Vulkan
 *   stream               cudaStream_t (non-       hipStream_t             VkQueue + command buffers
 *                        blocking)                                        recorded in batches
 *   event                cudaEvent_t (timing off  hipEvent_t              timeline semaphore value
 *                        unless WEFT_EVENT_TIMING)                        (Vulkan 1.2 core)
 *   event_record         cudaEventRecord          hipEventRecord          signal value N at the end
 *                                                                         of the current batch
 *   stream_wait_event    cudaStreamWaitEvent      hipStreamWaitEvent      semaphore wait on the next
 *                                                                         submit (same queue: a
 *                                                                         pipeline barrier)
 *   event_synchronize    cudaEventSynchronize     hipEventSynchronize     vkWaitSemaphores (block,
 *                                                                         never spin)
 *   stream_synchronize   cudaStreamSynchronize    hipStreamSynchronize    submit, then wait for the
 *                                                                         last signal value
 *   allocate             cudaMalloc(Async)        hipMalloc               VkBuffer + VkDeviceMemory
 *   pinned_alloc         cudaHostAlloc            hipHostMalloc           HOST_VISIBLE|COHERENT buffer
 *   launch_host_func     cudaLaunchHostFunc       hipLaunchHostFunc       a host thread waiting on the
 *                                                                         semaphore value
 *   CPU plugin: a stream is a FIFO worker thread, an event a counter + condition variable.
 *
 * Thread-safety: every function may be called concurrently from several threads, except that
 * one stream must not be used by two threads at the same time (core gives each engine worker its
 * own stream). Events may be recorded on one thread and waited on / queried from others.
 *
 * Errors (returned weft_error*, NULL on success): WEFT_ERR_INVALID_ARGUMENT for a bad device
 * index, pointer, offset, size or handle; WEFT_ERR_OUT_OF_MEMORY when memory runs out (never a
 * crash); WEFT_ERR_UNAVAILABLE when the device was lost; WEFT_ERR_UNSUPPORTED for an optional
 * feature asked for through flags that the device lacks.
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
#define WEFT_DEVICE_CAP_TIMESTAMPS (1ull << 4)       /* events created with WEFT_EVENT_TIMING work */
#define WEFT_DEVICE_CAP_UNIFIED_MEMORY (1ull << 5)   /* device and host share physical memory */
#define WEFT_DEVICE_CAP_NATIVE_HANDLES (1ull << 6)   /* native_handle is provided */
#define WEFT_DEVICE_CAP_HOST_FUNC (1ull << 7)        /* launch_host_func is provided */

/* What kind of device it is (weft_device_props.kind). A runtime prefers GPUs over CPU
 * implementations of GPU APIs (lavapipe, SwiftShader) and lists both. */
#define WEFT_DEVICE_KIND_OTHER 0
#define WEFT_DEVICE_KIND_CPU 1            /* the host CPU (the cpu plugin) */
#define WEFT_DEVICE_KIND_GPU_DISCRETE 2   /* a GPU with its own memory */
#define WEFT_DEVICE_KIND_GPU_INTEGRATED 3 /* a GPU sharing the host's memory */
#define WEFT_DEVICE_KIND_GPU_VIRTUAL 4    /* a virtualised GPU */
#define WEFT_DEVICE_KIND_SOFTWARE 5       /* a GPU API implemented on the CPU (lavapipe, simdev) */

typedef struct weft_device_props {
  size_t struct_size;
  char name[128];            /* e.g. "AMD EPYC 7B13 (virtual cpu 0)"; NUL-terminated */
  char vendor[64];           /* NUL-terminated */
  uint64_t total_memory;     /* bytes the device can hold in total (0 = unknown) */
  uint64_t free_memory;      /* bytes free now (0 = unknown) */
  uint64_t capabilities;     /* WEFT_DEVICE_CAP_* bits */
  uint64_t min_alignment;    /* bytes; every allocation is aligned to at least this (power of 2) */
  int32_t compute_units;     /* cores, SMs, CUs; 0 = unknown */
  int32_t kind;              /* WEFT_DEVICE_KIND_* */
  uint64_t max_allocation;   /* bytes one allocate call may ask for (0 = no limit beyond memory);
                                e.g. Vulkan maxMemoryAllocationSize / maxBufferSize */
  char pci_bus_id[32];       /* "0000:65:00.0" (domain:bus:device.function), "" when none; lets a
                                runtime recognise one GPU seen through two plugins (CUDA and
                                Vulkan) */
  int32_t num_attributes;    /* entries in `attributes` */
  const weft_kv* attributes; /* extra key/value facts (driver, API version, ISA, subgroup size,
                                limits, ...); plugin-owned, valid until shutdown */
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
  weft_stream stream;   /* NULL = synchronous. Otherwise the host buffer must stay valid (and,
                           for HOST_TO_DEVICE, unchanged) until the stream has passed this copy.
                           Core passes pinned memory (pinned_alloc) here whenever the device
                           offers it, so the copy can be truly asynchronous. For a
                           DEVICE_TO_DEVICE copy between two devices the stream belongs to the
                           destination device. */
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

/* Stream flags (weft_stream_create_args.flags). */
#define WEFT_STREAM_COMPUTE 0u /* kernels and copies (the default) */
#define WEFT_STREAM_COPY                                                    \
  (1u << 0) /* mostly copies: a plugin may back it by a transfer/DMA queue; \
               kernels must still work on it */

typedef struct weft_stream_create_args {
  size_t struct_size;
  int32_t device;     /* in */
  uint32_t flags;     /* in: WEFT_STREAM_* */
  int32_t priority;   /* in: 0 = normal; higher = more urgent where the device has priorities
                         (cudaStreamCreateWithPriority); ignored elsewhere */
  weft_stream stream; /* out */
} weft_stream_create_args;

/* Event flags (weft_event_create_args.flags). */
#define WEFT_EVENT_DEFAULT 0u
#define WEFT_EVENT_TIMING                                                     \
  (1u << 0) /* event_elapsed works for it (needs WEFT_DEVICE_CAP_TIMESTAMPS); \
               without it a plugin may skip timing (cudaEventDisableTiming) */

typedef struct weft_event_create_args {
  size_t struct_size;
  int32_t device;   /* in */
  uint32_t flags;   /* in: WEFT_EVENT_* */
  weft_event event; /* out */
} weft_event_create_args;

/* ---------------------------------------------------------------------------------------------
 * Native handles: what an operator plugin (or a transport) needs to launch its own work on a
 * device plugin's stream and memory. Core forwards host.h native_handle calls here.
 * ------------------------------------------------------------------------------------------- */

/* What is asked for (weft_native_handle_args.what). */
#define WEFT_NATIVE_STREAM 1 /* the stream `stream` */
#define WEFT_NATIVE_MEMORY 2 /* the memory at `ptr` + `offset` */
#define WEFT_NATIVE_EVENT 3  /* the event `event` */
#define WEFT_NATIVE_DEVICE 4 /* device `device` itself */

/* A stream that is a host work queue (the cpu plugin, simulated devices): kind HOST_QUEUE. */
typedef struct weft_host_queue {
  size_t struct_size;
  void* queue; /* pass to enqueue */
  /* Queues fn(user_data) after the work queued so far; it runs on the queue's thread, and work
   * queued later waits for it. An error fn returns becomes the stream's sticky error (the host
   * owns it). Thread-safe. */
  weft_error* (*enqueue)(void* queue, weft_error* (*fn)(void* user_data), void* user_data);
} weft_host_queue;

/* What came back (weft_native_handle_args.kind). The fields each kind fills, by name:
 *   HOST_QUEUE          stream: handle = a weft_host_queue* (valid while the stream lives), NULL
 *                       for the NULL stream (then compute in the calling thread); event/device:
 *                       handle = the plugin's object (opaque).
 *   HOST_POINTER        memory: handle = host address of ptr + offset (already added);
 *                       size = bytes from there to the end of the allocation.
 *   CUDA_STREAM         handle = cudaStream_t (0 = legacy default stream), aux = CUcontext or 0.
 *   CUDA_DEVICE_POINTER handle = device address of ptr + offset (already added); size as above.
 *   CUDA_EVENT          handle = cudaEvent_t.
 *   CUDA_DEVICE         index = the CUDA device ordinal (cudaSetDevice before launching).
 *   HIP_STREAM / HIP_DEVICE_POINTER / HIP_EVENT / HIP_DEVICE: as CUDA with hip types.
 *   VK_COMMAND_BUFFER   stream: handle = the VkCommandBuffer currently being recorded for this
 *                       stream (valid until the operation that asked returns; record into it
 *                       only from inside a kernel's compute call on that stream), aux = VkQueue,
 *                       index = queue family index.
 *   VK_BUFFER           memory: handle = VkBuffer, value = byte offset of ptr + offset in it
 *                       (any byte offset: a shader binding must start at a multiple of
 *                       minStorageBufferOffsetAlignment, so bind at the aligned offset below and
 *                       pass the rest, in elements, as a push constant), size = bytes bindable
 *                       from there (≤ maxStorageBufferRange).
 *   VK_SEMAPHORE        event: handle = VkSemaphore (timeline), value = the value it will reach.
 *   VK_DEVICE           handle = VkDevice, aux = VkPhysicalDevice, index = queue family index.
 * Handles are borrowed: valid while the object they came from is alive; never destroy them. */
#define WEFT_NATIVE_KIND_NONE 0
#define WEFT_NATIVE_KIND_HOST_QUEUE 1
#define WEFT_NATIVE_KIND_HOST_POINTER 2
#define WEFT_NATIVE_KIND_CUDA_STREAM 10
#define WEFT_NATIVE_KIND_CUDA_DEVICE_POINTER 11
#define WEFT_NATIVE_KIND_CUDA_EVENT 12
#define WEFT_NATIVE_KIND_CUDA_DEVICE 13
#define WEFT_NATIVE_KIND_HIP_STREAM 20
#define WEFT_NATIVE_KIND_HIP_DEVICE_POINTER 21
#define WEFT_NATIVE_KIND_HIP_EVENT 22
#define WEFT_NATIVE_KIND_HIP_DEVICE 23
#define WEFT_NATIVE_KIND_VK_COMMAND_BUFFER 30
#define WEFT_NATIVE_KIND_VK_BUFFER 31
#define WEFT_NATIVE_KIND_VK_SEMAPHORE 32
#define WEFT_NATIVE_KIND_VK_DEVICE 33

typedef struct weft_native_handle_args {
  size_t struct_size;
  int32_t what;        /* in: WEFT_NATIVE_STREAM / MEMORY / EVENT / DEVICE */
  int32_t device;      /* in: device index */
  weft_stream stream;  /* in, for WEFT_NATIVE_STREAM */
  weft_event event;    /* in, for WEFT_NATIVE_EVENT */
  weft_device_ptr ptr; /* in, for WEFT_NATIVE_MEMORY */
  uint64_t offset;     /* in, for WEFT_NATIVE_MEMORY: bytes from ptr */
  int32_t kind;        /* out: WEFT_NATIVE_KIND_* */
  int32_t index;       /* out: an ordinal (device ordinal, queue family), see the kinds */
  void* handle;        /* out: the native object (see the kinds) */
  void* aux;           /* out: a second native object (see the kinds), else NULL */
  uint64_t value;      /* out: an offset or semaphore value (see the kinds), else 0 */
  uint64_t size;       /* out: bytes available from the address / offset (memory), else 0 */
} weft_native_handle_args;

typedef struct weft_device_api {
  size_t struct_size;
  /* The Context name of this plugin's devices: "cpu", "cuda", "simdev". Lower-case letters,
   * digits and '_'; unique among loaded plugins. Plugin-owned, valid until shutdown. */
  const char* device_type;

  /* Number of devices present, 0..4096. Returns 0 (never an error) when the driver or hardware
   * is absent; `reason` (may be NULL) then receives a one-line, NUL-terminated explanation with
   * the remedy (e.g. "CUDA driver not found (cudaErrorInsufficientDriver 35): install the NVIDIA
   * driver"), plugin-owned and valid until shutdown; it is left alone when devices are present. */
  int32_t (*device_count)(void* plugin_state, const char** reason);
  /* Fills *props; the host sets props->struct_size before the call. */
  weft_error* (*get_properties)(void* plugin_state, int32_t device, weft_device_props* props);

  /* Device memory. free of ptr 0 is a no-op. free may be called while work that used the memory
   * is still queued on a stream only if the plugin defers the release past that work (as
   * cudaFree does); core never does so: it frees after the last event of the memory completed. */
  weft_error* (*allocate)(void* plugin_state, weft_alloc_args* args);
  weft_error* (*free)(void* plugin_state, int32_t device, weft_device_ptr ptr);

  /* Copies and fills; both honour args->stream (NULL = synchronous). */
  weft_error* (*copy)(void* plugin_state, const weft_copy_args* args);
  weft_error* (*memset)(void* plugin_state, const weft_memset_args* args);

  /* Streams (queues). stream_synchronize blocks until all work queued so far has completed and
   * returns the stream's sticky error, if any (see "Errors of asynchronous work"), clearing it. */
  weft_error* (*stream_create)(void* plugin_state, weft_stream_create_args* args);
  weft_error* (*stream_destroy)(void* plugin_state, weft_stream stream);
  weft_error* (*stream_synchronize)(void* plugin_state, weft_stream stream);

  /* Events. event_record captures the work queued on `stream` so far (re-recording replaces the
   * capture); stream_wait_event makes work queued later on `stream` wait until `event`'s capture
   * has completed, without blocking the host, and works for an event of any device of this
   * plugin; event_query stores 1 in *done when completed, else 0; event_synchronize blocks the
   * host until completed. Both report the errors of the captured work. An event never recorded
   * counts as completed. event_destroy of an event whose capture is still pending is allowed;
   * the plugin releases it after completion. */
  weft_error* (*event_create)(void* plugin_state, weft_event_create_args* args);
  weft_error* (*event_destroy)(void* plugin_state, weft_event event);
  weft_error* (*event_record)(void* plugin_state, weft_event event, weft_stream stream);
  weft_error* (*stream_wait_event)(void* plugin_state, weft_stream stream, weft_event event);
  weft_error* (*event_query)(void* plugin_state, weft_event event, int32_t* done);
  weft_error* (*event_synchronize)(void* plugin_state, weft_event event);

  /* ----- optional entries: NULL = unsupported (capability bits say the same) ----- */

  /* Page-locked host memory for fast, truly asynchronous transfers (WEFT_DEVICE_CAP_PINNED_HOST),
   * made for copies with `device` (Vulkan: HOST_VISIBLE memory of that VkDevice); a plugin whose
   * pinned memory serves every device (cudaHostAlloc with cudaHostAllocPortable) may ignore it.
   * Core uses it only for copies with that device. */
  weft_error* (*pinned_alloc)(void* plugin_state, int32_t device, uint64_t bytes, void** out);
  weft_error* (*pinned_free)(void* plugin_state, void* ptr);

  /* Milliseconds between two completed events created with WEFT_EVENT_TIMING on one device
   * (WEFT_DEVICE_CAP_TIMESTAMPS). WEFT_ERR_INVALID_ARGUMENT when either is not complete. */
  weft_error* (*event_elapsed)(void* plugin_state, weft_event start, weft_event end, double* ms);

  /* The native objects behind a stream, memory, event or device (WEFT_DEVICE_CAP_NATIVE_HANDLES);
   * see weft_native_handle_args. WEFT_ERR_INVALID_ARGUMENT for a handle this plugin did not
   * make. */
  weft_error* (*native_handle)(void* plugin_state, weft_native_handle_args* args);

  /* Queues fn(user_data) on `stream`: it runs on a plugin thread once the work queued before it
   * has completed, and work queued after it waits for it to return (cudaLaunchHostFunc;
   * WEFT_DEVICE_CAP_HOST_FUNC). fn must not call this plugin's functions that wait on the same
   * stream. Used by core to release staging buffers without blocking the host, and by
   * transports. */
  weft_error* (*launch_host_func)(void* plugin_state, weft_stream stream, void (*fn)(void* user_data), void* user_data);
} weft_device_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_DEVICE_H_ */

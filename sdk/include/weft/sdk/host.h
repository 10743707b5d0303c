/* weft SDK — services the host (libweft) hands to every plugin at init.
 *
 * Plugins link nothing from core: everything they need from the runtime comes through this table,
 * so a plugin can be exercised against a fake host in tests. The table and everything it points to
 * stay valid from init until the plugin's shutdown returns. Every function here is thread-safe and
 * may be called from any thread, including threads the plugin created.
 */
#ifndef WEFT_SDK_HOST_H_
#define WEFT_SDK_HOST_H_

#include "weft/sdk/device.h"
#include "weft/sdk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One traced interval, passed to the host's tracing hook (Chrome trace-event "X" semantics). */
typedef struct weft_trace_event {
  size_t struct_size;
  const char* name;     /* NUL-terminated, borrowed for the duration of the call */
  const char* category; /* e.g. "kernel", "copy"; NUL-terminated, borrowed */
  uint64_t begin_ns;    /* start, ns on CLOCK_MONOTONIC */
  uint64_t end_ns;      /* end, ns on CLOCK_MONOTONIC */
  int32_t device_id;    /* device index within the plugin, -1 when not device-bound */
  int32_t stream_id;    /* plugin's stream number, -1 when none */
} weft_trace_event;

typedef struct weft_host_api {
  size_t struct_size;
  /* The SDK version (WEFT_SDK_MAKE_VERSION) negotiated for this plugin. */
  uint32_t sdk_version;
  /* Opaque host state; pass it as the first argument of every function below. */
  void* host_ctx;

  /* Writes one log line attributed to the plugin. `msg` has `len` bytes (no NUL needed). */
  void (*log)(void* host_ctx, int32_t level, const char* msg, size_t len);

  /* Creates an error object with a WEFT_ERR_* code and a message of `len` bytes (copied).
   * Never returns NULL (on allocation failure it returns a shared static out-of-memory error). */
  weft_error* (*error_create)(void* host_ctx, int32_t code, const char* msg, size_t len);

  /* Looks up a configuration value: first the environment variable named `key`, then the
   * runtime's options. Copies at most `buf_size` bytes (NUL-terminated when room allows) and
   * returns the value's full length in bytes, or -1 when the key is not set. */
  int64_t (*config_get)(void* host_ctx, const char* key, char* buf, size_t buf_size);

  /* Host memory for plugin bookkeeping. `alignment` is a power of two (bytes). NULL on failure.
   * Memory from host_alloc must be released with host_free. */
  void* (*host_alloc)(void* host_ctx, size_t bytes, size_t alignment);
  void (*host_free)(void* host_ctx, void* ptr);

  /* Tracing hook; NULL when the host does not trace. Cheap to call when tracing is off:
   * check trace_enabled first. */
  int32_t (*trace_enabled)(void* host_ctx);
  void (*trace)(void* host_ctx, const weft_trace_event* event);

  /* ----- SDK 2.0 ----- */

  /* Reading and releasing error objects, whoever made them (a plugin may receive one from the
   * host, e.g. from native_handle or kv_get, or from another plugin's function it called through
   * the host). error_code returns the WEFT_ERR_* code (0 for NULL); error_message stores the
   * message's length in *len (may be NULL) and returns its bytes (not NUL-terminated; valid until
   * the error is released); error_release frees it (NULL is a no-op). Returning an error from a
   * plugin function hands it to the host instead: release only errors you keep. */
  int32_t (*error_code)(void* host_ctx, const weft_error* err);
  const char* (*error_message)(void* host_ctx, const weft_error* err, size_t* len);
  void (*error_release)(void* host_ctx, weft_error* err);

  /* The native objects behind a stream, memory, event or device of any loaded device plugin,
   * named by its device_type ("cuda", "vulkan", "cpu", ...): the host forwards `args` to that
   * plugin's native_handle (device.h). This is how an operator plugin whose kernel runs on
   * another plugin's device gets the cudaStream_t, VkCommandBuffer or device address of the
   * stream and tensors its compute call received. Errors: WEFT_ERR_NOT_FOUND for an unknown
   * device type, WEFT_ERR_UNSUPPORTED when that plugin offers no native handles, and the
   * plugin's own errors. Thread-safe. */
  weft_error* (*native_handle)(void* host_ctx, const char* device_type, weft_native_handle_args* args);

  /* Rendezvous key-value store for transports (sdk transport.h). `kv_set` publishes bytes under
   * a key; `kv_get` blocks up to `timeout_ms` for the key to appear, then copies at most
   * `buf_size` bytes into `buf` and stores the value's full length in *len. Errors:
   * WEFT_ERR_TIMEOUT when the key did not appear in time, WEFT_ERR_UNAVAILABLE when the host has
   * no store. Either pointer may be NULL when the host offers no store. */
  weft_error* (*kv_set)(void* host_ctx, const char* key, const void* value, size_t len);
  weft_error* (*kv_get)(void* host_ctx, const char* key, void* buf, size_t buf_size, size_t* len, int64_t timeout_ms);
} weft_host_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_HOST_H_ */

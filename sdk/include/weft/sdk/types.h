/* weft SDK — types shared by every part of the plugin C ABI.
 *
 * ABI rules applied throughout the SDK:
 *   - fixed-width integer types only; no bool, no enums in structs (int32_t carries enum values);
 *   - every struct passed across the boundary starts with `size_t struct_size`, set by whoever
 *     fills the struct to WEFT_STRUCT_SIZE(type, last_field) of the SDK it was built against.
 *     A reader that finds a smaller struct_size treats every field past it as absent
 *     (zero / NULL / unsupported); use WEFT_STRUCT_HAS(ptr, type, field) to test;
 *   - strings are UTF-8. `const char*` fields are NUL-terminated unless a length field is given;
 *     their ownership is documented per field;
 *   - functions report failure by returning a weft_error* created through the host's
 *     error_create (host.h); NULL means success. Nothing throws across the boundary.
 */
#ifndef WEFT_SDK_TYPES_H_
#define WEFT_SDK_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define WEFT_EXTERN_C extern "C"
#else
#define WEFT_EXTERN_C
#endif

#if defined(_WIN32)
#define WEFT_PLUGIN_EXPORT WEFT_EXTERN_C __declspec(dllexport)
#else
#define WEFT_PLUGIN_EXPORT WEFT_EXTERN_C __attribute__((visibility("default")))
#endif

/* Size of `type` up to and including `last_field`: the value to store in struct_size. */
#define WEFT_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* Non-zero when the struct at `ptr` (of C type `type`) is long enough to contain `field`. */
#define WEFT_STRUCT_HAS(ptr, type, field) ((ptr) != NULL && (ptr)->struct_size >= WEFT_STRUCT_SIZE(type, field))

/* Error object. Opaque to plugins: created by the host's error_create, owned by whoever holds
 * it; returning it from a plugin function hands ownership to the host. */
typedef struct weft_error weft_error;

/* Error codes (values are stable across SDK versions). */
#define WEFT_ERR_UNKNOWN 1          /* anything not covered below */
#define WEFT_ERR_INVALID_ARGUMENT 2 /* the caller passed a value the callee cannot accept */
#define WEFT_ERR_OUT_OF_MEMORY 3    /* an allocation failed; the caller may free memory and retry */
#define WEFT_ERR_UNSUPPORTED 4      /* the feature, op, dtype or attribute value is not implemented */
#define WEFT_ERR_INTERNAL 5         /* a bug or broken invariant inside the plugin */
#define WEFT_ERR_UNAVAILABLE 6      /* a device or peer is missing or unreachable */
#define WEFT_ERR_TIMEOUT 7          /* a deadline passed (transports, synchronisation) */
#define WEFT_ERR_ABORTED 8          /* the operation was cancelled (abort, shutdown) */
#define WEFT_ERR_NOT_FOUND 9        /* a named object (key, op, file) does not exist */

/* Element types. The codes are MXNet's `mshadow` type flags, as stored in `.params` files. */
#define WEFT_DTYPE_FLOAT32 0
#define WEFT_DTYPE_FLOAT64 1
#define WEFT_DTYPE_FLOAT16 2
#define WEFT_DTYPE_UINT8 3
#define WEFT_DTYPE_INT32 4
#define WEFT_DTYPE_INT8 5
#define WEFT_DTYPE_INT64 6
#define WEFT_DTYPE_BOOL 7
#define WEFT_DTYPE_INT16 8
#define WEFT_DTYPE_UINT16 9
#define WEFT_DTYPE_UINT32 10
#define WEFT_DTYPE_UINT64 11
#define WEFT_DTYPE_BFLOAT16 12
#define WEFT_DTYPE_COUNT 13

/* Bit for dtype code d in a dtype mask (kernels declare the dtypes they accept). */
#define WEFT_DTYPE_BIT(d) (((uint64_t)1) << (d))

/* An address in a device's memory. Opaque to the host: it is only ever passed back to the
 * plugin that produced it, together with byte offsets. 0 is the null address. Devices whose
 * memory the host may read directly set WEFT_DEVICE_CAP_HOST_ADDRESSABLE (device.h); only then
 * may the host cast it to a pointer. */
typedef uint64_t weft_device_ptr;

/* A key/value string pair; both strings NUL-terminated. */
typedef struct weft_kv {
  const char* key;
  const char* value;
} weft_kv;

/* Log levels for the host's log sink. */
#define WEFT_LOG_DEBUG 0
#define WEFT_LOG_INFO 1
#define WEFT_LOG_WARNING 2
#define WEFT_LOG_ERROR 3

#endif /* WEFT_SDK_TYPES_H_ */

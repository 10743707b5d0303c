// weft internal — the host's error objects (the SDK's opaque weft_error, sdk/types.h): what the
// host's error_create hands to plugins, and the conversion of a plugin's error into a C++
// exception. Used by the loader, the host services, the Device wrapper and core's callers of
// plugin functions (kernels, transports); not installed.
//
// Thread-safety: every function may be called from any thread (an error object belongs to one
// caller at a time).
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <string_view>

#include "weft/sdk/types.h"

namespace weft {

/// Takes ownership of `err` (NULL = success: nothing happens) and throws weft::OutOfMemoryError
/// (WEFT_ERR_OUT_OF_MEMORY) or weft::Error with the message "<what>: <plugin message>".
WEFT_API void ThrowIfError(weft_error* err, std::string_view what);

/// Error objects (what the host's error_create makes). CreateError never returns NULL.
WEFT_API weft_error* CreateError(int32_t code, std::string_view message);
/// Code and message of an error object (borrowed; valid until it is released).
WEFT_API int32_t ErrorCode(const weft_error* err);
WEFT_API std::string_view ErrorMessage(const weft_error* err);
/// Frees an error object; NULL is a no-op.
WEFT_API void ReleaseError(weft_error* err);

}  // namespace weft

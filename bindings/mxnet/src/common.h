// What every C API file of libweft_mxnet shares: the error convention (API_BEGIN / API_END), the
// handle objects and their checks, thread-local return buffers, and MXNet's device numbering.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c_api.h"
#include "weft/base.h"
#include "weft/context.h"
#include "weft/ndarray.h"

namespace weft::mx {

// ---- errors -------------------------------------------------------------------------------------

/// Stores the message MXGetLastError returns on this thread. MXNet's Python reads a leading
/// "Name: " as the exception class; weft's messages carry "MXNetError: " so they become
/// mxnet.base.MXNetError whatever their text starts with.
void SetLastError(const std::string& message);
/// The message of the last failed call on this thread ("" when none failed).
const char* LastError() noexcept;
/// Converts the exception in flight (inside a catch) into the thread's last error; returns -1.
int HandleException() noexcept;

// Every C function: `API_BEGIN(); ...; API_END();` — returns 0, or -1 with the error set. No
// exception leaves the function.
#define API_BEGIN() try {
#define API_END()                         \
  }                                       \
  catch (...) {                           \
    return ::weft::mx::HandleException(); \
  }                                       \
  return 0;

/// Throws weft::Error "<what> is NULL" when a required pointer argument is null.
template <typename T>
T* NotNull(T* p, const char* what) {
  if (p == nullptr) Fail("{} is NULL", what);
  return p;
}

// ---- handles ------------------------------------------------------------------------------------
// Handles are heap objects that register themselves in a process-wide table of live handles of
// their kind on creation and leave it when freed, so a freed, foreign or null handle gives
// "invalid NDArrayHandle 0x..." instead of a crash (MXNet itself crashes there).

enum class HandleKind : int { kNDArray, kSymbol, kExecutor, kKVStore, kDataIter, kCachedOp, kRecordIO, kProfile };
const char* HandleKindName(HandleKind kind);

void RegisterHandle(const void* handle, HandleKind kind);
void UnregisterHandle(const void* handle, HandleKind kind);
/// Throws weft::Error naming the kind when `handle` is not a live handle of that kind.
void CheckHandle(const void* handle, HandleKind kind);

/// Base of handle objects: registers in the ctor, unregisters in the dtor.
template <HandleKind K>
struct Handle {
  Handle() { RegisterHandle(this, K); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { UnregisterHandle(this, K); }
  /// The live handle object behind `h`; throws for an invalid one.
  template <typename Derived>
  static Derived* From(void* h) {
    CheckHandle(h, K);
    return static_cast<Derived*>(static_cast<Handle*>(h));
  }
};

/// An NDArray handle (MXNet's NDArray*). Autograd state lives with the array itself in core.
struct NDArrayH : Handle<HandleKind::kNDArray> {
  explicit NDArrayH(NDArray a) : array(std::move(a)) {}
  NDArray array;
};
inline NDArray& ND(NDArrayHandle h) { return Handle<HandleKind::kNDArray>::From<NDArrayH>(h)->array; }
inline NDArrayHandle NewND(NDArray a) { return new NDArrayH(std::move(a)); }

// ---- thread-local return buffers ----------------------------------------------------------------

/// Strings returned to the caller, kept until the next call that uses the same buffer on this
/// thread (each C function names its buffer, so that e.g. a call listing arguments does not
/// invalidate the strings of the op information Python is still reading).
struct StringList {
  std::vector<std::string> strings;
  std::vector<const char*> ptrs;
  /// Replaces the contents and returns the pointer array (valid until the next Set).
  const char** Set(std::vector<std::string> s);
};
StringList& ThreadStrings(const char* buffer_name);
std::string& ThreadString(const char* buffer_name);

/// Handles returned as an array (MXNDArrayLoad, MXImperativeInvoke outputs, ...).
std::vector<void*>& ThreadHandles(const char* buffer_name);

// ---- devices ------------------------------------------------------------------------------------
// MXNet's dev_type: 1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared. gpu(i) is device i of one
// GPU-class plugin: WEFT_MXNET_GPU names its device type, else the first of cuda, hip, vulkan
// that has a device. cpu_pinned and cpu_shared are cpu memory to weft.
constexpr int kDevCPU = 1, kDevGPU = 2, kDevCPUPinned = 3, kDevCPUShared = 5;

/// The weft device type behind MXNet's gpu ("cuda", "hip", "vulkan"); "" when there is none.
const std::string& GpuDeviceType();
/// weft's Context for MXNet's (dev_type, dev_id). Throws weft::Error for an unknown dev_type or
/// a gpu when no GPU-class plugin has a device (naming WEFT_MXNET_GPU).
Context ToContext(int dev_type, int dev_id);
/// MXNet's (dev_type, dev_id) for a weft Context.
std::pair<int, int> FromContext(const Context& ctx);

// ---- NumPy shape semantics ----------------------------------------------------------------------
/// MXNet's is_np_shape: 0 off (classic: an extent 0 or an empty shape means unknown), 1 on for
/// this thread, 2 on for all threads (0 is a real extent, () a scalar, -1 unknown).
int NumpyShapeMode();
void SetNumpyShapeMode(int mode);
inline bool IsNumpyShape() { return NumpyShapeMode() != 0; }

// ---- small conversions --------------------------------------------------------------------------
std::map<std::string, std::string> KeyValues(int n, const char* const* keys, const char* const* vals, const char* what);
Shape ToShape(const int64_t* dims, int ndim);

}  // namespace weft::mx

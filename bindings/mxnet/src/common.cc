// Errors, handle tables, return buffers and devices shared by the C API files.
#include "common.h"

#include <atomic>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include "weft/env.h"
#include "weft/runtime.h"

namespace weft::mx {

// ---- errors -------------------------------------------------------------------------------------

namespace {
thread_local std::string t_last_error;
}

const char* LastError() noexcept { return t_last_error.c_str(); }

void SetLastError(const std::string& message) {
  t_last_error = message.starts_with("MXNetError: ") ? message : "MXNetError: " + message;
}

int HandleException() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    SetLastError("out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    SetLastError(e.what());
  } catch (...) {
    SetLastError("unknown error (a non-standard exception)");
  }
  return -1;
}

// ---- handles ------------------------------------------------------------------------------------

namespace {
struct HandleTable {
  std::shared_mutex mu;
  std::unordered_map<const void*, HandleKind> live;
};
HandleTable& Table() {
  static auto* t = new HandleTable;  // never destroyed: handles may be freed during exit
  return *t;
}
}  // namespace

const char* HandleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kNDArray:
      return "NDArrayHandle";
    case HandleKind::kSymbol:
      return "SymbolHandle";
    case HandleKind::kExecutor:
      return "ExecutorHandle";
    case HandleKind::kKVStore:
      return "KVStoreHandle";
    case HandleKind::kDataIter:
      return "DataIterHandle";
    case HandleKind::kCachedOp:
      return "CachedOpHandle";
    case HandleKind::kRecordIO:
      return "RecordIOHandle";
    case HandleKind::kProfile:
      return "ProfileHandle";
  }
  return "handle";
}

void RegisterHandle(const void* handle, HandleKind kind) {
  std::unique_lock lock(Table().mu);
  Table().live[handle] = kind;
}

void UnregisterHandle(const void* handle, HandleKind kind) {
  std::unique_lock lock(Table().mu);
  auto it = Table().live.find(handle);
  if (it != Table().live.end() && it->second == kind) Table().live.erase(it);
}

void CheckHandle(const void* handle, HandleKind kind) {
  if (handle == nullptr) Fail("{} is NULL", HandleKindName(kind));
  std::shared_lock lock(Table().mu);
  auto it = Table().live.find(handle);
  if (it == Table().live.end()) {
    Fail("invalid {} {}: it was freed already or never created by this library", HandleKindName(kind), handle);
  }
  if (it->second != kind) {
    Fail("invalid {} {}: it is a {}", HandleKindName(kind), handle, HandleKindName(it->second));
  }
}

// ---- return buffers -----------------------------------------------------------------------------

const char** StringList::Set(std::vector<std::string> s) {
  strings = std::move(s);
  ptrs.resize(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) ptrs[i] = strings[i].c_str();
  return ptrs.data();
}

StringList& ThreadStrings(const char* buffer_name) {
  thread_local std::unordered_map<const char*, StringList> buffers;
  return buffers[buffer_name];
}

std::string& ThreadString(const char* buffer_name) {
  thread_local std::unordered_map<const char*, std::string> buffers;
  return buffers[buffer_name];
}

std::vector<void*>& ThreadHandles(const char* buffer_name) {
  thread_local std::unordered_map<const char*, std::vector<void*>> buffers;
  return buffers[buffer_name];
}

// ---- devices ------------------------------------------------------------------------------------

const std::string& GpuDeviceType() {
  static const std::string type = [] {
    Runtime& rt = Runtime::Get();
    if (auto chosen = GetEnv("WEFT_MXNET_GPU")) return *chosen;
    for (const char* t : {"cuda", "hip", "vulkan"})
      if (rt.DeviceCount(t) > 0) return std::string(t);
    return std::string();
  }();
  return type;
}

Context ToContext(int dev_type, int dev_id) {
  switch (dev_type) {
    case kDevCPU:
    case kDevCPUPinned:
    case kDevCPUShared:
      return Context::cpu(dev_id);
    case kDevGPU:
      if (GpuDeviceType().empty()) {
        Fail(
            "gpu({}) asked for, but no GPU-class device is loaded (no cuda, hip or vulkan device; "
            "WEFT_MXNET_GPU names the device type MXNet's gpu stands for; `weft-info` lists devices)",
            dev_id);
      }
      return Context(GpuDeviceType(), dev_id);
    default:
      Fail("unknown device type {} (MXNet's are 1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)", dev_type);
  }
}

std::pair<int, int> FromContext(const Context& ctx) {
  if (ctx.GetDeviceType() == "cpu") return {kDevCPU, ctx.GetDeviceId()};
  return {kDevGPU, ctx.GetDeviceId()};
}

// ---- NumPy shape semantics ----------------------------------------------------------------------

namespace {
std::atomic<int> g_np_shape_global{0};
thread_local int t_np_shape = 0;
}  // namespace

int NumpyShapeMode() { return g_np_shape_global.load() == 2 ? 2 : t_np_shape; }

void SetNumpyShapeMode(int mode) {
  if (mode == 2) {
    g_np_shape_global = 2;
    t_np_shape = 2;
  } else {
    g_np_shape_global = 0;
    t_np_shape = mode;
  }
}

// ---- conversions --------------------------------------------------------------------------------

std::map<std::string, std::string> KeyValues(int n, const char* const* keys, const char* const* vals,
                                             const char* what) {
  std::map<std::string, std::string> out;
  if (n < 0) Fail("{}: negative count {}", what, n);
  if (n > 0 && (keys == nullptr || vals == nullptr)) Fail("{}: keys or values are NULL", what);
  for (int i = 0; i < n; ++i) {
    if (keys[i] == nullptr || vals[i] == nullptr) Fail("{}: key or value #{} is NULL", what, i);
    out[keys[i]] = vals[i];
  }
  return out;
}

Shape ToShape(const int64_t* dims, int ndim) {
  if (ndim < 0) Fail("negative ndim {}", ndim);
  if (ndim > 0 && dims == nullptr) Fail("shape data is NULL");
  std::vector<int64_t> v(dims, dims + ndim);
  return Shape(v);
}

}  // namespace weft::mx

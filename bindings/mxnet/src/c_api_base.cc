// MXNet C API: errors, library information, engine and random settings, environment.
#include <cstdlib>
#include <mutex>

#include "common.h"
#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/internal/device.h"
#include "weft/internal/host_services.h"
#include "weft/internal/runtime.h"
#include "weft/prefetching_iter.h"
#include "weft/storage.h"

using namespace weft;
using namespace weft::mx;

namespace {

// MXNet's cpu(i) is the host CPU for any i, and its own tests reach cpu(5) (test_module.py's
// ctx_group runs); weft's cpu plugin makes WEFT_CPU_DEVICES virtual devices, 4 unless told. The
// binding asks for 8 when the library loads, before any plugin does: a WEFT_CPU_DEVICES in the
// environment still decides (weft::SetConfig is the fallback the plugin reads without one).
// Devices cost nothing until used (their streams and threads start with their first work).
constexpr const char* kMXNetCpuDevices = "8";
const bool kCpuDevicesSet = [] {
  SetConfig("WEFT_CPU_DEVICES", kMXNetCpuDevices);
  return true;
}();

bool CpuHas(const char* feature) {
  __builtin_cpu_init();
  // __builtin_cpu_supports needs a literal; the table below maps MXNet's names.
  std::string f(feature);
  if (f == "sse") return __builtin_cpu_supports("sse");
  if (f == "sse2") return __builtin_cpu_supports("sse2");
  if (f == "sse3") return __builtin_cpu_supports("sse3");
  if (f == "sse4.1") return __builtin_cpu_supports("sse4.1");
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "sse4a") return __builtin_cpu_supports("sse4a");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  return false;
}

bool PluginLoaded(const char* name) { return internal::FindPlugin(Runtime::Get(), name) != nullptr; }

// MXNet's feature list (include/mxnet/libinfo.h), in its order, answered for this process: what
// the loaded plugins and the machine provide.
std::vector<LibFeature>& Features() {
  static std::vector<LibFeature> features = [] {
    const bool cuda = PluginLoaded("cuda");
    return std::vector<LibFeature>{
        {"CUDA", cuda},
        {"CUDNN", cuda},  // the cuda plugin runs convolutions through cuDNN
        {"NCCL", PluginLoaded("nccl")},
        {"CUDA_RTC", false},
        {"TENSORRT", false},
        {"CPU_SSE", CpuHas("sse")},
        {"CPU_SSE2", CpuHas("sse2")},
        {"CPU_SSE3", CpuHas("sse3")},
        {"CPU_SSE4_1", CpuHas("sse4.1")},
        {"CPU_SSE4_2", CpuHas("sse4.2")},
        {"CPU_SSE4A", CpuHas("sse4a")},
        {"CPU_AVX", CpuHas("avx")},
        {"CPU_AVX2", CpuHas("avx2")},
        {"OPENMP", false},  // weft's engine owns CPU threads; no OpenMP runtime in the frontend's sense
        {"SSE", CpuHas("sse")},
        {"F16C", false},
        {"JEMALLOC", false},
        {"BLAS_OPEN", PluginLoaded("cpu")},  // the cpu plugin's GEMMs are OpenBLAS
        {"BLAS_ATLAS", false},
        {"BLAS_MKL", false},
        {"BLAS_APPLE", false},
        {"LAPACK", false},
        {"MKLDNN", false},  // oneDNN serves some cpu kernels, but MXNet's MKLDNN subgraph ops do not exist here
        {"OPENCV", false},
        {"CAFFE", false},
        {"PROFILER", true},
        {"DIST_KVSTORE", PluginLoaded("gloo") || PluginLoaded("zmq")},
        {"CXX14", true},
        {"INT64_TENSOR_SIZE", false},
        {"SIGNAL_HANDLER", false},
        {"DEBUG", false},
        {"TVM_OP", false},
    };
  }();
  return features;
}

std::mutex g_env_mu;
int g_bulk_size = 0;

}  // namespace

extern "C" {

// The message of the last failed call on this thread ("" when none failed).
const char* MXGetLastError() { return LastError(); }

// MXNet's version number of the API this library implements: 10901 (1.9.1).
int MXGetVersion(int* out) {
  API_BEGIN();
  *NotNull(out, "out") = 10901;
  API_END();
}

// Compile-time features in MXNet; here what this process can do (see Features()).
int MXLibInfoFeatures(const struct LibFeature** lib_features, size_t* size) {
  API_BEGIN();
  std::vector<LibFeature>& f = Features();
  *NotNull(lib_features, "libFeature") = f.data();
  *NotNull(size, "size") = f.size();
  API_END();
}

// Loading MXNet extension libraries (lib_api.h) is MXNet's own plugin ABI; weft's operator
// plugins are loaded through WEFT_PLUGIN_PATH instead.
int MXLoadLib(const char* path, unsigned /*verbose*/) {
  API_BEGIN();
  Fail(
      "MXLoadLib('{}'): MXNet extension libraries (lib_api.h) are not supported by weft; write an operator "
      "plugin against weft's SDK and put it on WEFT_PLUGIN_PATH",
      path ? path : "(null)");
  API_END();
}

// Seeds the random sequence of every device (MXNet seeds each device's generator alike).
int MXRandomSeed(int seed) {
  API_BEGIN();
  RandomSeed(static_cast<uint64_t>(static_cast<uint32_t>(seed)));
  API_END();
}

// Seeds the random sequence of one device; weft has one seed for all devices, so it is that.
int MXRandomSeedContext(int seed, int dev_type, int dev_id) {
  API_BEGIN();
  ToContext(dev_type, dev_id);  // validates the device
  RandomSeed(static_cast<uint64_t>(static_cast<uint32_t>(seed)));
  API_END();
}

// Called by the Python frontend at exit: stops the data iterators' loader threads (a batch in
// production finishes; none starts), then waits for every pushed operation (errors are dropped:
// nobody is left to see them).
int MXNotifyShutdown() {
  API_BEGIN();
  StopDataIterWorkers();
  try {
    Engine::Get()->WaitForAll();
  } catch (const std::exception&) {
  }
  API_END();
}

// MXNet sets the OpenMP thread count of the calling thread. weft's CPU kernels take their thread
// count from WEFT_CPU_MATH_THREADS when the cpu plugin loads; a later change cannot reach them,
// so only values the process already uses (or 0, "default") are accepted.
int MXSetNumOMPThreads(int thread_num) {
  API_BEGIN();
  if (thread_num < 0) Fail("MXSetNumOMPThreads: negative thread count {}", thread_num);
  if (thread_num != 0 && thread_num != RecommendedCpuMathThreads()) {
    Fail(
        "MXSetNumOMPThreads({}): weft's cpu kernels use {} threads, fixed when the cpu plugin loads; set "
        "WEFT_CPU_MATH_THREADS={} in the environment before starting the program",
        thread_num, RecommendedCpuMathThreads(), thread_num);
  }
  API_END();
}

// MXNet bulks consecutive imperative ops into one engine op up to this size. weft's executor
// bulks graph nodes itself and imperative ops are pushed one by one, so the value is kept and
// returned as the previous one next time, with no other effect.
int MXEngineSetBulkSize(int bulk_size, int* prev_bulk_size) {
  API_BEGIN();
  std::lock_guard lock(g_env_mu);
  if (prev_bulk_size) *prev_bulk_size = g_bulk_size;
  g_bulk_size = bulk_size;
  API_END();
}

// Devices behind MXNet's gpu (see GpuDeviceType).
int MXGetGPUCount(int* out) {
  API_BEGIN();
  const std::string& type = GpuDeviceType();
  *NotNull(out, "out") = type.empty() ? 0 : Runtime::Get().DeviceCount(type);
  API_END();
}

int MXGetGPUMemoryInformation64(int dev, uint64_t* free_mem, uint64_t* total_mem) {
  API_BEGIN();
  Device& d = internal::GetDevice(Runtime::Get(), ToContext(kDevGPU, dev));
  const DeviceProperties props = d.QueryProperties();
  *NotNull(free_mem, "free_mem") = props.free_memory;
  *NotNull(total_mem, "total_mem") = props.total_memory;
  API_END();
}

int MXGetGPUMemoryInformation(int dev, int* free_mem, int* total_mem) {
  uint64_t f = 0, t = 0;
  if (MXGetGPUMemoryInformation64(dev, &f, &t) != 0) return -1;
  API_BEGIN();
  *NotNull(free_mem, "free_mem") = static_cast<int>(f >> 20);  // MXNet's 32-bit form is in MB
  *NotNull(total_mem, "total_mem") = static_cast<int>(t >> 20);
  API_END();
}

// Frees the cached blocks of the device's memory pool.
int MXStorageEmptyCache(int dev_type, int dev_id) {
  API_BEGIN();
  Storage::Get()->ReleaseAll(ToContext(dev_type, dev_id));
  API_END();
}

// MXNet's NumPy shape semantics (mx.np_shape(), mx.npx.set_np()): shapes keep zero-size axes and
// scalars (ndim 0); unknown shapes and extents read -1 instead of 0. weft's shapes are like that
// already; the flag changes how shapes cross this API (see IsNumpyShape in common.h). Values as
// MXNet: 0 off, 1 on for the calling thread, 2 on for every thread.
int MXIsNumpyShape(int* curr) {
  API_BEGIN();
  *NotNull(curr, "curr") = NumpyShapeMode();
  API_END();
}

int MXSetIsNumpyShape(int is_np_shape, int* prev) {
  API_BEGIN();
  if (is_np_shape < 0 || is_np_shape > 2) Fail("is_np_shape {} (0 off, 1 this thread, 2 global)", is_np_shape);
  if (prev) *prev = NumpyShapeMode();
  SetNumpyShapeMode(is_np_shape);
  API_END();
}

int MXIsNumpyDefaultDtype(bool* curr) {
  API_BEGIN();
  *NotNull(curr, "curr") = false;
  API_END();
}

int MXSetIsNumpyDefaultDtype(bool dtype_flag, bool* prev) {
  API_BEGIN();
  if (prev) *prev = false;
  if (dtype_flag) Fail("NumPy default dtypes (float64) are not supported by weft");
  API_END();
}

int MXSetEnv(const char* name, const char* value) {
  API_BEGIN();
  std::lock_guard lock(g_env_mu);
  if (setenv(NotNull(name, "name"), NotNull(value, "value"), 1) != 0) Fail("setenv('{}') failed", name);
  API_END();
}

int MXGetEnv(const char* name, const char** value) {
  API_BEGIN();
  std::lock_guard lock(g_env_mu);
  const char* v = std::getenv(NotNull(name, "name"));
  std::string& buf = ThreadString("MXGetEnv");
  buf = v ? v : "";
  *NotNull(value, "value") = v ? buf.c_str() : nullptr;
  API_END();
}

// MXNet 1.9's packed-function registry serves the mx.np front end (mxnet/_ffi); weft registers no
// packed functions, so the list is empty and lookups find nothing (MXNet's frontend then leaves
// those functions out).
int MXNetFuncListGlobalNames(int* out_size, const char*** out_array) {
  API_BEGIN();
  *NotNull(out_size, "out_size") = 0;
  *NotNull(out_array, "out_array") = ThreadStrings("MXNetFuncListGlobalNames").Set({});
  API_END();
}

int MXNetFuncGetGlobal(const char* name, void** out) {
  API_BEGIN();
  NotNull(name, "name");
  *NotNull(out, "out") = nullptr;
  API_END();
}

int MXNetFuncFree(void* /*func*/) { return 0; }

}  // extern "C"

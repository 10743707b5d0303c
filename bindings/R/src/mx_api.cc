// Loading libweft_mxnet.so and resolving the C API (see mx_api.h).
#include "mx_api.h"

#include <Rcpp.h>
#include <dlfcn.h>

#include <thread>

#include "common.h"

namespace mxr {
namespace {

Api g_api;
void* g_library = nullptr;
std::thread::id g_r_thread;

}  // namespace

const Api& api() {
  if (g_library == nullptr) Fail("the MXNet C API library is not loaded (library(mxnet) loads it)");
  return g_api;
}

bool Loaded() { return g_library != nullptr; }

bool OnRThread() { return std::this_thread::get_id() == g_r_thread; }

void Load(const std::string& path) {
  if (g_library != nullptr) return;
  // RTLD_LOCAL: the C API's names stay out of the global namespace, so another library that
  // exports MX* functions (a real libmxnet) cannot be bound by mistake, nor bind to this one.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    Fail("cannot load the MXNet C API library '" + path + "': " + (why ? why : "unknown dlopen error") +
         " (build weft's weft_mxnet target, then set MXNET_LIBRARY_PATH to the library or put weft-config on PATH)");
  }
  Api table;
  std::string missing;
#define MXR_API_RESOLVE(name, ret, params)                         \
  table.name = reinterpret_cast<ret(*) params>(dlsym(lib, #name)); \
  if (table.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  MXR_API_FUNCTIONS(MXR_API_RESOLVE)
#undef MXR_API_RESOLVE
  if (!missing.empty()) {
    dlclose(lib);
    Fail("'" + path + "' is not weft's MXNet C API library: it lacks " + missing);
  }
  g_api = table;
  g_library = lib;
  g_r_thread = std::this_thread::get_id();
}

void Check(int rc) {
  if (rc == 0) return;
  const char* msg = g_api.MXGetLastError ? g_api.MXGetLastError() : nullptr;
  Fail(msg && *msg ? msg : "the MXNet C API call failed without a message");
}

}  // namespace mxr

// [[Rcpp::export(.mx_load_library, rng = false)]]
void mx_load_library(std::string path) { mxr::Load(path); }

// [[Rcpp::export(.mx_wait_all, rng = false)]]
void mx_wait_all() { mxr::Check(mxr::api().MXNDArrayWaitAll()); }

// [[Rcpp::export(.mx_random_seed, rng = false)]]
void mx_random_seed(int seed) { mxr::Check(mxr::api().MXRandomSeed(seed)); }

// [[Rcpp::export(.mx_gpu_count, rng = false)]]
int mx_gpu_count() {
  int n = 0;
  mxr::Check(mxr::api().MXGetGPUCount(&n));
  return n;
}

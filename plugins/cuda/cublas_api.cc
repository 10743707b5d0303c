// cuBLAS loaded at first use (cublas_api.h).
#include "cublas_api.h"

#include <dlfcn.h>

#include <mutex>

#include "weft/sdk/cpp/error.hpp"

namespace weft::cuda {
namespace {

struct Loaded {
  CublasApi api;
  std::string error;  // empty when every symbol resolved
};

template <class F>
void Resolve(void* lib, const char* symbol, F* slot, std::string* error) {
  if (!error->empty()) return;
  *slot = reinterpret_cast<F>(dlsym(lib, symbol));
  if (*slot == nullptr) *error = CublasLibraryName() + " has no symbol " + symbol + " (cuBLAS too old for this plugin)";
}

Loaded Load() {
  Loaded l;
  // RTLD_LOCAL: cuBLAS' symbols stay out of the global namespace; never closed (handles live in
  // streams until exit).
  void* lib = dlopen(CublasLibraryName().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    l.error = "cannot load " + CublasLibraryName() + " (" + (why != nullptr ? why : "unknown reason") +
              "): install cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
              " (the CUDA toolkit's libcublas) where the dynamic loader finds it (LD_LIBRARY_PATH)";
    return l;
  }
  Resolve(lib, "cublasCreate_v2", &l.api.Create, &l.error);
  Resolve(lib, "cublasDestroy_v2", &l.api.Destroy, &l.error);
  Resolve(lib, "cublasSetStream_v2", &l.api.SetStream, &l.error);
  Resolve(lib, "cublasSgemm_v2", &l.api.Sgemm, &l.error);
  Resolve(lib, "cublasSgemmStridedBatched", &l.api.SgemmStridedBatched, &l.error);
  Resolve(lib, "cublasGetStatusString", &l.api.GetStatusString, &l.error);
  return l;
}

}  // namespace

std::string CublasLibraryName() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

const CublasApi& Cublas() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (!loaded.error.empty()) throw sdk::Error(WEFT_ERR_UNAVAILABLE, "cuda: " + loaded.error);
  return loaded.api;
}

}  // namespace weft::cuda

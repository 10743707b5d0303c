// cuBLAS for the CUDA plugin, loaded at its first use instead of with the plugin.
//
// Why: loading libcublas.so pulls in libcublasLt, whose relocations and static data cost about
// 150 MiB of resident memory at dlopen. Linked directly, every process that loads weft's plugins
// paid it, also on the machines with no GPU where the plugin only reports zero devices (weft's
// import from Python went from 174 to 349 MiB). Now the plugin links the CUDA runtime and cuDNN
// (about 1 MiB each at load) and dlopens cuBLAS when a stream first runs a GEMM.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace weft::cuda {

/// The cuBLAS entry points the plugin calls (cublas_v2.h's names; the _v2 symbols where the
/// header maps a name to one).
struct CublasApi {
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasSgemm_v2) Sgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) SgemmStridedBatched = nullptr;
  decltype(&cublasGetStatusString) GetStatusString = nullptr;
};

/// The library's file name: "libcublas.so.<major>" of the cuBLAS headers the plugin was built with.
std::string CublasLibraryName();

/// cuBLAS, loaded (dlopen of CublasLibraryName(), then each symbol) on the first call; later calls
/// return the same table. Thread-safe (the first call holds the others until it is done). Throws
/// weft::sdk::Error(WEFT_ERR_UNAVAILABLE) naming the library and dlerror()'s reason when the
/// library or a symbol is missing, on this and every later call, so a GEMM fails with the cause
/// and the remedy instead of the plugin failing to load.
const CublasApi& Cublas();

}  // namespace weft::cuda

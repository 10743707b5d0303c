// MXNet C API calls for features weft does not have. Each exists so that MXNet's frontend finds it,
// and fails with an MXNetError that names the feature (and what to use instead) rather than an
// AttributeError from ctypes or a crash.
#include "common.h"

using namespace weft;
using namespace weft::mx;

namespace {

int Unsupported(const char* what) {
  API_BEGIN();
  Fail("{} is not supported by weft", what);
  API_END();
}

constexpr const char* kQuantize = "quantization and mixed-precision graph passes (mx.contrib.quantization, AMP)";
constexpr const char* kBackend = "subgraph backends (optimize_for, MXNET_SUBGRAPH_BACKEND)";

}  // namespace

extern "C" {

WEFT_MX_API int MXQuantizeSymbol(SymbolHandle, SymbolHandle*, const int*, const uint32_t, const char**, const uint32_t,
                                 const char**, const uint32_t, const char**, const char*, const bool, const char*,
                                 const char*, uint32_t*, const char***) {
  return Unsupported(kQuantize);
}
WEFT_MX_API int MXReducePrecisionSymbol(SymbolHandle, SymbolHandle*, uint32_t, const int*, uint32_t, const int*,
                                        const int*, const int, const uint32_t, const uint32_t, const uint32_t,
                                        const uint32_t, const uint32_t, const uint32_t, const char**, const char**,
                                        const char**, const char**, const char**, const char**, const char**,
                                        const char**, const char**) {
  return Unsupported(kQuantize);
}
WEFT_MX_API int MXSetCalibTableToQuantizedSymbol(SymbolHandle, const uint32_t, const char**, const float*, const float*,
                                                 SymbolHandle*) {
  return Unsupported(kQuantize);
}
WEFT_MX_API int MXGenBackendSubgraph(SymbolHandle, const char*, SymbolHandle*) { return Unsupported(kBackend); }
WEFT_MX_API int MXGenAtomicSymbolFromSymbol(SymbolHandle, SymbolHandle*) { return Unsupported(kBackend); }
WEFT_MX_API int MXSymbolCutSubgraph(SymbolHandle, SymbolHandle**, int*) { return Unsupported(kBackend); }
WEFT_MX_API int MXOptimizeForBackend(SymbolHandle, const char*, const int, SymbolHandle*, const mx_uint, NDArrayHandle*,
                                     const mx_uint, NDArrayHandle*, const mx_uint, const char**, const char**,
                                     const uint32_t, const char**, const int64_t*, const uint32_t*, const uint32_t,
                                     const char**, const int*, const uint32_t, const char**, const int*, bool, int*,
                                     NDArrayHandle**, char***, int*, NDArrayHandle**, char***) {
  return Unsupported(kBackend);
}

WEFT_MX_API int MXLoadTVMOp(const char*) { return Unsupported("TVM operators (MXLoadTVMOp)"); }
WEFT_MX_API int MXLoadTVMConfig(void*) { return Unsupported("TVM operators (MXLoadTVMConfig)"); }

WEFT_MX_API int MXRtcCudaModuleCreate(const char*, int, const char**, int, const char**, void**) {
  return Unsupported("run-time compiled CUDA kernels (mx.rtc); write a weft operator plugin");
}
WEFT_MX_API int MXRtcCudaModuleFree(void*) { return Unsupported("mx.rtc"); }
WEFT_MX_API int MXRtcCudaKernelCreate(void*, const char*, int, int*, int*, int*, void**) {
  return Unsupported("mx.rtc");
}
WEFT_MX_API int MXRtcCudaKernelFree(void*) { return Unsupported("mx.rtc"); }
WEFT_MX_API int MXRtcCudaKernelCall(void*, int, void**, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                    uint32_t) {
  return Unsupported("mx.rtc");
}

// MXNet 1.9's packed-function runtime (mx.np's FFI): weft registers no global functions
// (MXNetFuncListGlobalNames is empty), so nothing can be called or freed.
WEFT_MX_API int MXNetFuncCall(void*, void*, int*, int, void*, int*) {
  return Unsupported("MXNet's packed-function runtime (the mx.np FFI)");
}
WEFT_MX_API int MXNetObjectFree(void*) { return 0; }

}  // extern "C"

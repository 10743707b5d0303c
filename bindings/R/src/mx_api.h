// The part of MXNet 1.9.1's C API (include/mxnet/c_api.h) this package calls, as a table of
// function pointers resolved at run time from libweft_mxnet.so (dlopen + dlsym). The package has
// no link-time dependency on weft: one binding boundary, the C API, loaded by path
// (MXNET_LIBRARY_PATH or `weft-config --mxnet-library`).
//
// Conventions of every C function (MXNet's): 0 on success, -1 on failure with the message in
// MXGetLastError(); returned strings and handle arrays belong to the library and stay valid until
// the next call of the same kind on the same thread; returned handles belong to the caller, who
// frees each with the matching *Free function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mxr {

typedef void* NDArrayHandle;
typedef void* SymbolHandle;
typedef void* ExecutorHandle;
typedef void* KVStoreHandle;
typedef void* DataIterHandle;
typedef void* DataIterCreator;
typedef void* OpHandle;
typedef void(KVUpdater)(int key, NDArrayHandle recv, NDArrayHandle local, void* handle);

// X(name, return type, (parameter types)): every function the package resolves.
#define MXR_API_FUNCTIONS(X)                                                                                          \
  X(MXGetLastError, const char*, ())                                                                                  \
  X(MXRandomSeed, int, (int))                                                                                         \
  X(MXGetGPUCount, int, (int*))                                                                                       \
  X(MXNDArrayWaitAll, int, ())                                                                                        \
  X(MXNDArrayCreateEx, int, (const uint32_t*, uint32_t, int, int, int, int, NDArrayHandle*))                          \
  X(MXNDArraySyncCopyFromCPU, int, (NDArrayHandle, const void*, size_t))                                              \
  X(MXNDArraySyncCopyToCPU, int, (NDArrayHandle, void*, size_t))                                                      \
  X(MXNDArrayFree, int, (NDArrayHandle))                                                                              \
  X(MXNDArrayGetShapeEx, int, (NDArrayHandle, int*, const int**))                                                     \
  X(MXNDArrayGetDType, int, (NDArrayHandle, int*))                                                                    \
  X(MXNDArrayGetContext, int, (NDArrayHandle, int*, int*))                                                            \
  X(MXNDArraySlice, int, (NDArrayHandle, uint32_t, uint32_t, NDArrayHandle*))                                         \
  X(MXNDArraySave, int, (const char*, uint32_t, NDArrayHandle*, const char**))                                        \
  X(MXNDArrayLoad, int, (const char*, uint32_t*, NDArrayHandle**, uint32_t*, const char***))                          \
  X(MXListAllOpNames, int, (uint32_t*, const char***))                                                                \
  X(NNGetOpHandle, int, (const char*, OpHandle*))                                                                     \
  X(MXSymbolGetAtomicSymbolInfo, int,                                                                                 \
    (OpHandle, const char**, const char**, uint32_t*, const char***, const char***, const char***, const char**,      \
     const char**))                                                                                                   \
  X(MXImperativeInvoke, int, (OpHandle, int, NDArrayHandle*, int*, NDArrayHandle**, int, const char**, const char**)) \
  X(MXSymbolCreateVariable, int, (const char*, SymbolHandle*))                                                        \
  X(MXSymbolCreateAtomicSymbol, int, (OpHandle, uint32_t, const char**, const char**, SymbolHandle*))                 \
  X(MXSymbolCompose, int, (SymbolHandle, const char*, uint32_t, const char**, SymbolHandle*))                         \
  X(MXSymbolCreateGroup, int, (uint32_t, SymbolHandle*, SymbolHandle*))                                               \
  X(MXSymbolCreateFromFile, int, (const char*, SymbolHandle*))                                                        \
  X(MXSymbolCreateFromJSON, int, (const char*, SymbolHandle*))                                                        \
  X(MXSymbolSaveToFile, int, (SymbolHandle, const char*))                                                             \
  X(MXSymbolSaveToJSON, int, (SymbolHandle, const char**))                                                            \
  X(MXSymbolFree, int, (SymbolHandle))                                                                                \
  X(MXSymbolCopy, int, (SymbolHandle, SymbolHandle*))                                                                 \
  X(MXSymbolPrint, int, (SymbolHandle, const char**))                                                                 \
  X(MXSymbolSetAttr, int, (SymbolHandle, const char*, const char*))                                                   \
  X(MXSymbolListArguments, int, (SymbolHandle, uint32_t*, const char***))                                             \
  X(MXSymbolListOutputs, int, (SymbolHandle, uint32_t*, const char***))                                               \
  X(MXSymbolListAuxiliaryStates, int, (SymbolHandle, uint32_t*, const char***))                                       \
  X(MXSymbolGetInternals, int, (SymbolHandle, SymbolHandle*))                                                         \
  X(MXSymbolGetOutput, int, (SymbolHandle, uint32_t, SymbolHandle*))                                                  \
  X(MXSymbolInferShapeEx, int,                                                                                        \
    (SymbolHandle, uint32_t, const char**, const uint32_t*, const int*, uint32_t*, const int**, const int***,         \
     uint32_t*, const int**, const int***, uint32_t*, const int**, const int***, int*))                               \
  X(MXExecutorBind, int,                                                                                              \
    (SymbolHandle, int, int, uint32_t, NDArrayHandle*, NDArrayHandle*, uint32_t*, uint32_t, NDArrayHandle*,           \
     ExecutorHandle*))                                                                                                \
  X(MXExecutorFree, int, (ExecutorHandle))                                                                            \
  X(MXExecutorForward, int, (ExecutorHandle, int))                                                                    \
  X(MXExecutorBackward, int, (ExecutorHandle, uint32_t, NDArrayHandle*))                                              \
  X(MXExecutorOutputs, int, (ExecutorHandle, uint32_t*, NDArrayHandle**))                                             \
  X(MXKVStoreCreate, int, (const char*, KVStoreHandle*))                                                              \
  X(MXKVStoreFree, int, (KVStoreHandle))                                                                              \
  X(MXKVStoreInit, int, (KVStoreHandle, uint32_t, const int*, NDArrayHandle*))                                        \
  X(MXKVStorePush, int, (KVStoreHandle, uint32_t, const int*, NDArrayHandle*, int))                                   \
  X(MXKVStorePull, int, (KVStoreHandle, uint32_t, const int*, NDArrayHandle*, int))                                   \
  X(MXKVStoreSetUpdater, int, (KVStoreHandle, KVUpdater*, void*))                                                     \
  X(MXKVStoreGetType, int, (KVStoreHandle, const char**))                                                             \
  X(MXKVStoreGetRank, int, (KVStoreHandle, int*))                                                                     \
  X(MXKVStoreGetGroupSize, int, (KVStoreHandle, int*))                                                                \
  X(MXListDataIters, int, (uint32_t*, DataIterCreator**))                                                             \
  X(MXDataIterGetIterInfo, int,                                                                                       \
    (DataIterCreator, const char**, const char**, uint32_t*, const char***, const char***, const char***))            \
  X(MXDataIterCreateIter, int, (DataIterCreator, uint32_t, const char**, const char**, DataIterHandle*))              \
  X(MXDataIterFree, int, (DataIterHandle))                                                                            \
  X(MXDataIterNext, int, (DataIterHandle, int*))                                                                      \
  X(MXDataIterBeforeFirst, int, (DataIterHandle))                                                                     \
  X(MXDataIterGetData, int, (DataIterHandle, NDArrayHandle*))                                                         \
  X(MXDataIterGetLabel, int, (DataIterHandle, NDArrayHandle*))                                                        \
  X(MXDataIterGetPadNum, int, (DataIterHandle, int*))

/// The resolved functions; every member is non-null once Load() succeeded.
struct Api {
#define MXR_API_MEMBER(name, ret, params) ret(*name) params = nullptr;
  MXR_API_FUNCTIONS(MXR_API_MEMBER)
#undef MXR_API_MEMBER
};

/// The table (all members null before Load()).
const Api& api();

/// dlopens `path` and resolves every function; throws Rcpp::exception naming the path and what
/// is missing. A second call with the library already loaded does nothing.
void Load(const std::string& path);

/// True once Load() succeeded.
bool Loaded();

/// True in the thread that loaded the library (R's thread: the only one that may call R).
bool OnRThread();

/// Throws an R error carrying the C API's last message when `rc` is not 0.
void Check(int rc);

}  // namespace mxr

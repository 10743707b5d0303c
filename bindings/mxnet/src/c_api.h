// The C functions of MXNet 1.9.1's C API (include/mxnet/c_api.h and nnvm/c_api.h in the mxnet
// wheel) that libweft_mxnet implements, declared here with MXNet's exact signatures so that the
// compiler checks every definition against them. Written from MXNet's documentation of each call;
// the per-call documentation is at each definition.
//
// Conventions every function follows (MXNet's):
//   * returns 0 on success, -1 on failure; MXGetLastError() then gives the message (per thread);
//   * strings and arrays returned through pointer arguments are owned by the library and stay
//     valid until the next call of a function of the same kind on the same thread (MXNet's
//     thread-local return buffers);
//   * handles returned are owned by the caller and freed with the matching *Free function;
//   * no C++ exception leaves a function.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef uint32_t mx_uint;
typedef float mx_float;
typedef int64_t dim_t;
typedef uint32_t nn_uint;
typedef void* NDArrayHandle;
typedef const void* FunctionHandle;
typedef void* AtomicSymbolCreator;
typedef void* OpHandle;
typedef void* CachedOpHandle;
typedef void* SymbolHandle;
typedef void* ExecutorHandle;
typedef void* DataIterCreator;
typedef void* DataIterHandle;
typedef void* KVStoreHandle;
typedef void* RecordIOHandle;
typedef void* ProfileHandle;
typedef void* DLManagedTensorHandle;

typedef void (*ExecutorMonitorCallback)(const char*, NDArrayHandle, void*);
typedef void (*CachedOpMonitorCallback)(const char*, const char*, NDArrayHandle);
typedef void(MXKVStoreUpdater)(int key, NDArrayHandle recv, NDArrayHandle local, void* handle);
typedef void(MXKVStoreStrUpdater)(const char* key, NDArrayHandle recv, NDArrayHandle local, void* handle);
typedef void(MXKVStoreServerController)(int head, const char* body, void* controller_handle);

struct LibFeature {
  const char* name;
  bool enabled;
};

struct MXCallbackList {
  int num_callbacks;
  int (**callbacks)(void);
  void** contexts;
};
typedef int (*CustomOpPropCreator)(const char* op_type, const int num_kwargs, const char** keys, const char** values,
                                   struct MXCallbackList* ret);

#define WEFT_MX_API __attribute__((visibility("default")))

// ---- errors, library, engine, random ------------------------------------------------------------
WEFT_MX_API const char* MXGetLastError();
WEFT_MX_API int MXGetVersion(int* out);
WEFT_MX_API int MXLibInfoFeatures(const struct LibFeature** libFeature, size_t* size);
WEFT_MX_API int MXLoadLib(const char* path, unsigned verbose);
WEFT_MX_API int MXRandomSeed(int seed);
WEFT_MX_API int MXRandomSeedContext(int seed, int dev_type, int dev_id);
WEFT_MX_API int MXNotifyShutdown();
WEFT_MX_API int MXSetNumOMPThreads(int thread_num);
WEFT_MX_API int MXEngineSetBulkSize(int bulk_size, int* prev_bulk_size);
WEFT_MX_API int MXGetGPUCount(int* out);
WEFT_MX_API int MXGetGPUMemoryInformation(int dev, int* free_mem, int* total_mem);
WEFT_MX_API int MXGetGPUMemoryInformation64(int dev, uint64_t* free_mem, uint64_t* total_mem);
WEFT_MX_API int MXStorageEmptyCache(int dev_type, int dev_id);
WEFT_MX_API int MXIsNumpyShape(int* curr);
WEFT_MX_API int MXSetIsNumpyShape(int is_np_shape, int* prev);
WEFT_MX_API int MXIsNumpyDefaultDtype(bool* curr);
WEFT_MX_API int MXSetIsNumpyDefaultDtype(bool dtype_flag, bool* prev);
WEFT_MX_API int MXSetEnv(const char* name, const char* value);
WEFT_MX_API int MXGetEnv(const char* name, const char** value);
WEFT_MX_API int MXNetFuncListGlobalNames(int* out_size, const char*** out_array);
WEFT_MX_API int MXNetFuncGetGlobal(const char* name, void** out);
WEFT_MX_API int MXNetFuncFree(void* func);

// ---- NDArray ------------------------------------------------------------------------------------
WEFT_MX_API int MXNDArrayCreateNone(NDArrayHandle* out);
WEFT_MX_API int MXNDArrayCreate(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id, int delay_alloc,
                                NDArrayHandle* out);
WEFT_MX_API int MXNDArrayCreateEx(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id, int delay_alloc,
                                  int dtype, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayCreateEx64(const int64_t* shape, int ndim, int dev_type, int dev_id, int delay_alloc,
                                    int dtype, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayLoadFromRawBytes(const void* buf, size_t size, NDArrayHandle* out);
WEFT_MX_API int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t* out_size, const char** out_buf);
WEFT_MX_API int MXNDArraySave(const char* fname, uint32_t num_args, NDArrayHandle* args, const char** keys);
WEFT_MX_API int MXNDArrayLoad(const char* fname, uint32_t* out_size, NDArrayHandle** out_arr, uint32_t* out_name_size,
                              const char*** out_names);
WEFT_MX_API int MXNDArrayLoadFromBuffer(const void* ndarray_buffer, size_t size, uint32_t* out_size,
                                        NDArrayHandle** out_arr, uint32_t* out_name_size, const char*** out_names);
WEFT_MX_API int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void* data, size_t size);
WEFT_MX_API int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void* data, size_t size);
WEFT_MX_API int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src, const int i);
WEFT_MX_API int MXNDArraySyncCheckFormat(NDArrayHandle handle, const bool full_check);
WEFT_MX_API int MXNDArrayWaitToRead(NDArrayHandle handle);
WEFT_MX_API int MXNDArrayWaitToWrite(NDArrayHandle handle);
WEFT_MX_API int MXNDArrayWaitAll();
WEFT_MX_API int MXNDArrayFree(NDArrayHandle handle);
WEFT_MX_API int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end, NDArrayHandle* out);
WEFT_MX_API int MXNDArraySlice64(NDArrayHandle handle, int64_t slice_begin, int64_t slice_end, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayAt64(NDArrayHandle handle, int64_t idx, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayGetStorageType(NDArrayHandle handle, int* out_storage_type);
WEFT_MX_API int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t* dims, bool reverse, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayGetShape(NDArrayHandle handle, uint32_t* out_dim, const uint32_t** out_pdata);
WEFT_MX_API int MXNDArrayGetShapeEx(NDArrayHandle handle, int* out_dim, const int** out_pdata);
WEFT_MX_API int MXNDArrayGetShapeEx64(NDArrayHandle handle, int* out_dim, const int64_t** out_pdata);
WEFT_MX_API int MXNDArrayGetData(NDArrayHandle handle, void** out_pdata);
WEFT_MX_API int MXNDArrayGetDType(NDArrayHandle handle, int* out_dtype);
WEFT_MX_API int MXNDArrayGetContext(NDArrayHandle handle, int* out_dev_type, int* out_dev_id);
WEFT_MX_API int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out);
WEFT_MX_API int MXNDArraySetGradState(NDArrayHandle handle, int state);
WEFT_MX_API int MXNDArrayGetGradState(NDArrayHandle handle, int* out);
WEFT_MX_API int MXNDArrayToDLPack(NDArrayHandle handle, DLManagedTensorHandle* out_dlpack);
WEFT_MX_API int MXNDArrayFromDLPack(DLManagedTensorHandle dlpack, NDArrayHandle* out_handle);
WEFT_MX_API int MXNDArrayFromDLPackEx(DLManagedTensorHandle dlpack, const bool transient_handle,
                                      NDArrayHandle* out_handle);
WEFT_MX_API int MXNDArrayCallDLPackDeleter(DLManagedTensorHandle dlpack);
WEFT_MX_API int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayGetSharedMemHandle(NDArrayHandle handle, int* shared_pid, int* shared_id);
WEFT_MX_API int MXNDArrayCreateFromSharedMem(int shared_pid, int shared_id, const uint32_t* shape, uint32_t ndim,
                                             int dtype, NDArrayHandle* out);
WEFT_MX_API int MXNDArrayCreateFromSharedMemEx(int shared_pid, int shared_id, const int* shape, int ndim, int dtype,
                                               NDArrayHandle* out);

// ---- autograd and cached ops (c_api_autograd.cc) ---------------------------------------------------
WEFT_MX_API int MXAutogradSetIsRecording(int is_recording, int* prev);
WEFT_MX_API int MXAutogradSetIsTraining(int is_training, int* prev);
WEFT_MX_API int MXAutogradIsRecording(bool* curr);
WEFT_MX_API int MXAutogradIsTraining(bool* curr);
WEFT_MX_API int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle* var_handles, uint32_t* reqs_array,
                                        NDArrayHandle* grad_handles);
WEFT_MX_API int MXAutogradComputeGradient(uint32_t num_output, NDArrayHandle* output_handles);
WEFT_MX_API int MXAutogradBackward(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                                   int retain_graph);
WEFT_MX_API int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                                     uint32_t num_variables, NDArrayHandle* var_handles, int retain_graph,
                                     int create_graph, int is_train, NDArrayHandle** grad_handles, int** grad_stypes);
WEFT_MX_API int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle* out);
WEFT_MX_API int MXCreateCachedOp(SymbolHandle handle, CachedOpHandle* out);
WEFT_MX_API int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char** keys, const char** vals,
                                   CachedOpHandle* out);
WEFT_MX_API int MXCreateCachedOpEX(SymbolHandle handle, int num_flags, const char** keys, const char** vals,
                                   CachedOpHandle* out, bool thread_safe);
WEFT_MX_API int MXFreeCachedOp(CachedOpHandle handle);
WEFT_MX_API int MXInvokeCachedOp(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                                 NDArrayHandle** outputs);
WEFT_MX_API int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                                   NDArrayHandle** outputs, const int** out_stypes);
WEFT_MX_API int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback callback, bool monitor_all);

// ---- operators: listing, information, imperative calls ------------------------------------------
WEFT_MX_API int MXListAllOpNames(uint32_t* out_size, const char*** out_array);
WEFT_MX_API int NNGetOpHandle(const char* op_name, OpHandle* op_out);
WEFT_MX_API int MXSymbolListAtomicSymbolCreators(uint32_t* out_size, AtomicSymbolCreator** out_array);
WEFT_MX_API int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char** name);
WEFT_MX_API int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char** name, const char** description,
                                            uint32_t* num_args, const char*** arg_names, const char*** arg_type_infos,
                                            const char*** arg_descriptions, const char** key_var_num_args,
                                            const char** return_type);
WEFT_MX_API int MXListFunctions(uint32_t* out_size, FunctionHandle** out_array);
WEFT_MX_API int MXGetFunction(const char* name, FunctionHandle* out);
WEFT_MX_API int MXFuncGetInfo(FunctionHandle fun, const char** name, const char** description, uint32_t* num_args,
                              const char*** arg_names, const char*** arg_type_infos, const char*** arg_descriptions,
                              const char** return_type);
WEFT_MX_API int MXFuncDescribe(FunctionHandle fun, uint32_t* num_use_vars, uint32_t* num_scalars,
                               uint32_t* num_mutate_vars, int* type_mask);
WEFT_MX_API int MXFuncInvoke(FunctionHandle fun, NDArrayHandle* use_vars, float* scalar_args,
                             NDArrayHandle* mutate_vars);
WEFT_MX_API int MXFuncInvokeEx(FunctionHandle fun, NDArrayHandle* use_vars, float* scalar_args,
                               NDArrayHandle* mutate_vars, int num_params, char** param_keys, char** param_vals);
WEFT_MX_API int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                                   NDArrayHandle** outputs, int num_params, const char** param_keys,
                                   const char** param_vals);
WEFT_MX_API int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs,
                                     int* num_outputs, NDArrayHandle** outputs, int num_params, const char** param_keys,
                                     const char** param_vals, const int** out_stypes);

// ---- data iterators ---------------------------------------------------------------------------
WEFT_MX_API int MXListDataIters(uint32_t* out_size, DataIterCreator** out_array);
WEFT_MX_API int MXDataIterGetIterInfo(DataIterCreator creator, const char** name, const char** description,
                                      uint32_t* num_args, const char*** arg_names, const char*** arg_type_infos,
                                      const char*** arg_descriptions);
WEFT_MX_API int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char** keys, const char** vals,
                                     DataIterHandle* out);
WEFT_MX_API int MXDataIterFree(DataIterHandle handle);
WEFT_MX_API int MXDataIterNext(DataIterHandle handle, int* out);
WEFT_MX_API int MXDataIterBeforeFirst(DataIterHandle handle);
WEFT_MX_API int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out);
WEFT_MX_API int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out);
WEFT_MX_API int MXDataIterGetPadNum(DataIterHandle handle, int* pad);
WEFT_MX_API int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size);

// RecordIO (mx.recordio.MXRecordIO / MXIndexedRecordIO): weft/recordio.h.
WEFT_MX_API int MXRecordIOWriterCreate(const char* uri, RecordIOHandle* out);
WEFT_MX_API int MXRecordIOWriterFree(RecordIOHandle handle);
WEFT_MX_API int MXRecordIOWriterWriteRecord(RecordIOHandle handle, const char* buf, size_t size);
WEFT_MX_API int MXRecordIOWriterTell(RecordIOHandle handle, size_t* pos);
WEFT_MX_API int MXRecordIOReaderCreate(const char* uri, RecordIOHandle* out);
WEFT_MX_API int MXRecordIOReaderFree(RecordIOHandle handle);
WEFT_MX_API int MXRecordIOReaderReadRecord(RecordIOHandle handle, char const** buf, size_t* size);
WEFT_MX_API int MXRecordIOReaderSeek(RecordIOHandle handle, size_t pos);
WEFT_MX_API int MXRecordIOReaderTell(RecordIOHandle handle, size_t* pos);

// ---- symbols ------------------------------------------------------------------------------------
WEFT_MX_API int MXSymbolCreateVariable(const char* name, SymbolHandle* out);
WEFT_MX_API int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char** keys,
                                           const char** vals, SymbolHandle* out);
WEFT_MX_API int MXSymbolCompose(SymbolHandle sym, const char* name, uint32_t num_args, const char** keys,
                                SymbolHandle* args);
WEFT_MX_API int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle* symbols, SymbolHandle* out);
WEFT_MX_API int MXSymbolCreateFromFile(const char* fname, SymbolHandle* out);
WEFT_MX_API int MXSymbolCreateFromJSON(const char* json, SymbolHandle* out);
WEFT_MX_API int MXSymbolSaveToFile(SymbolHandle symbol, const char* fname);
WEFT_MX_API int MXSymbolSaveToJSON(SymbolHandle symbol, const char** out_json);
WEFT_MX_API int MXSymbolFree(SymbolHandle symbol);
WEFT_MX_API int MXSymbolCopy(SymbolHandle symbol, SymbolHandle* out);
WEFT_MX_API int MXShallowCopySymbol(SymbolHandle src, SymbolHandle* out);
WEFT_MX_API int MXSymbolPrint(SymbolHandle symbol, const char** out_str);
WEFT_MX_API int MXSymbolGetName(SymbolHandle symbol, const char** out, int* success);
WEFT_MX_API int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success);
WEFT_MX_API int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value);
WEFT_MX_API int MXSymbolListAttr(SymbolHandle symbol, uint32_t* out_size, const char*** out);
WEFT_MX_API int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t* out_size, const char*** out);
WEFT_MX_API int MXSymbolListArguments(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array);
WEFT_MX_API int MXSymbolListOutputs(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array);
WEFT_MX_API int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array);
WEFT_MX_API int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t* output_count);
WEFT_MX_API int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle* out);
WEFT_MX_API int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle* out);
WEFT_MX_API int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle* out);
WEFT_MX_API int MXSymbolGetInputSymbols(SymbolHandle sym, SymbolHandle** inputs, int* input_size);
WEFT_MX_API int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle* ret_sym_handle);
WEFT_MX_API int MXSymbolGrad(SymbolHandle sym, uint32_t num_wrt, const char** wrt, SymbolHandle* out);
WEFT_MX_API int MXSymbolInferShape(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                                   const uint32_t* arg_shape_data, uint32_t* in_shape_size,
                                   const uint32_t** in_shape_ndim, const uint32_t*** in_shape_data,
                                   uint32_t* out_shape_size, const uint32_t** out_shape_ndim,
                                   const uint32_t*** out_shape_data, uint32_t* aux_shape_size,
                                   const uint32_t** aux_shape_ndim, const uint32_t*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys,
                                     const uint32_t* arg_ind_ptr, const int* arg_shape_data, uint32_t* in_shape_size,
                                     const int** in_shape_ndim, const int*** in_shape_data, uint32_t* out_shape_size,
                                     const int** out_shape_ndim, const int*** out_shape_data, uint32_t* aux_shape_size,
                                     const int** aux_shape_ndim, const int*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferShapeEx64(SymbolHandle sym, uint32_t num_args, const char** keys,
                                       const int64_t* arg_ind_ptr, const int64_t* arg_shape_data, size_t* in_shape_size,
                                       const int** in_shape_ndim, const int64_t*** in_shape_data,
                                       size_t* out_shape_size, const int** out_shape_ndim,
                                       const int64_t*** out_shape_data, size_t* aux_shape_size,
                                       const int** aux_shape_ndim, const int64_t*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferShapePartial(SymbolHandle sym, uint32_t num_args, const char** keys,
                                          const uint32_t* arg_ind_ptr, const uint32_t* arg_shape_data,
                                          uint32_t* in_shape_size, const uint32_t** in_shape_ndim,
                                          const uint32_t*** in_shape_data, uint32_t* out_shape_size,
                                          const uint32_t** out_shape_ndim, const uint32_t*** out_shape_data,
                                          uint32_t* aux_shape_size, const uint32_t** aux_shape_ndim,
                                          const uint32_t*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char** keys,
                                            const uint32_t* arg_ind_ptr, const int* arg_shape_data,
                                            uint32_t* in_shape_size, const int** in_shape_ndim,
                                            const int*** in_shape_data, uint32_t* out_shape_size,
                                            const int** out_shape_ndim, const int*** out_shape_data,
                                            uint32_t* aux_shape_size, const int** aux_shape_ndim,
                                            const int*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferShapePartialEx64(SymbolHandle sym, uint32_t num_args, const char** keys,
                                              const int64_t* arg_ind_ptr, const int64_t* arg_shape_data,
                                              size_t* in_shape_size, const int** in_shape_ndim,
                                              const int64_t*** in_shape_data, size_t* out_shape_size,
                                              const int** out_shape_ndim, const int64_t*** out_shape_data,
                                              size_t* aux_shape_size, const int** aux_shape_ndim,
                                              const int64_t*** aux_shape_data, int* complete);
WEFT_MX_API int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                                  uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
                                  const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data,
                                  int* complete);
WEFT_MX_API int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char** keys,
                                         const int* arg_type_data, uint32_t* in_type_size, const int** in_type_data,
                                         uint32_t* out_type_size, const int** out_type_data, uint32_t* aux_type_size,
                                         const int** aux_type_data, int* complete);
WEFT_MX_API int MXSymbolSetAttrs(SymbolHandle symbol, uint32_t num_args, const char** keys, const char** values);
WEFT_MX_API int NNSymbolCompose(SymbolHandle sym, const char* name, nn_uint num_args, const char** keys,
                                SymbolHandle* args);
WEFT_MX_API int NNSymbolFree(SymbolHandle symbol);
WEFT_MX_API int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint* out_size, const char*** out_str_array);

// ---- KVStore ------------------------------------------------------------------------------------
WEFT_MX_API int MXKVStoreCreate(const char* type, KVStoreHandle* out);
WEFT_MX_API int MXKVStoreSetGradientCompression(KVStoreHandle handle, uint32_t num_params, const char** keys,
                                                const char** vals);
WEFT_MX_API int MXKVStoreFree(KVStoreHandle handle);
WEFT_MX_API int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals);
WEFT_MX_API int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals);
WEFT_MX_API int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int priority);
WEFT_MX_API int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                                int priority);
WEFT_MX_API int MXKVStorePullWithSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
                                        int priority, bool ignore_sparse);
WEFT_MX_API int MXKVStorePullWithSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                                          int priority, bool ignore_sparse);
WEFT_MX_API int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int priority);
WEFT_MX_API int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                                int priority);
WEFT_MX_API int MXKVStorePullRowSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
                                       const NDArrayHandle* row_ids, int priority);
WEFT_MX_API int MXKVStorePullRowSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                                         const NDArrayHandle* row_ids, int priority);
WEFT_MX_API int MXKVStoreBroadcast(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum, const int* okeys,
                                   NDArrayHandle* vals, NDArrayHandle* outs, int priority);
WEFT_MX_API int MXKVStoreBroadcastEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum,
                                     const char** okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
WEFT_MX_API int MXKVStorePushPull(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum, const int* okeys,
                                  NDArrayHandle* vals, NDArrayHandle* outs, int priority);
WEFT_MX_API int MXKVStorePushPullEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum,
                                    const char** okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
WEFT_MX_API int MXKVStoreSetUpdater(KVStoreHandle handle, MXKVStoreUpdater* updater, void* updater_handle);
WEFT_MX_API int MXKVStoreSetUpdaterEx(KVStoreHandle handle, MXKVStoreUpdater* updater, MXKVStoreStrUpdater* str_updater,
                                      void* updater_handle);
WEFT_MX_API int MXKVStoreGetType(KVStoreHandle handle, const char** type);
WEFT_MX_API int MXKVStoreGetRank(KVStoreHandle handle, int* ret);
WEFT_MX_API int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret);
WEFT_MX_API int MXKVStoreIsWorkerNode(int* ret);
WEFT_MX_API int MXKVStoreIsServerNode(int* ret);
WEFT_MX_API int MXKVStoreIsSchedulerNode(int* ret);
WEFT_MX_API int MXKVStoreBarrier(KVStoreHandle handle);
WEFT_MX_API int MXKVStoreSetBarrierBeforeExit(KVStoreHandle handle, const int barrier_before_exit);
WEFT_MX_API int MXKVStoreGetNumDeadNode(KVStoreHandle handle, const int node_id, int* number, const int timeout_sec);

WEFT_MX_API int MXKVStoreSendCommmandToServers(KVStoreHandle handle, int cmd_id, const char* cmd_body);
WEFT_MX_API int MXKVStoreRunServer(KVStoreHandle handle, MXKVStoreServerController* controller,
                                   void* controller_handle);

// ---- executors ----------------------------------------------------------------------------------
WEFT_MX_API int MXExecutorFree(ExecutorHandle handle);
WEFT_MX_API int MXExecutorPrint(ExecutorHandle handle, const char** out_str);
WEFT_MX_API int MXExecutorForward(ExecutorHandle handle, int is_train);
WEFT_MX_API int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads);
WEFT_MX_API int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads, int is_train);
WEFT_MX_API int MXExecutorOutputs(ExecutorHandle handle, uint32_t* out_size, NDArrayHandle** out);
WEFT_MX_API int MXExecutorBind(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t len,
                               NDArrayHandle* in_args, NDArrayHandle* arg_grad_store, uint32_t* grad_req_type,
                               uint32_t aux_states_len, NDArrayHandle* aux_states, ExecutorHandle* out);
WEFT_MX_API int MXExecutorBindX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                                const char** map_keys, const int* map_dev_types, const int* map_dev_ids, uint32_t len,
                                NDArrayHandle* in_args, NDArrayHandle* arg_grad_store, uint32_t* grad_req_type,
                                uint32_t aux_states_len, NDArrayHandle* aux_states, ExecutorHandle* out);
WEFT_MX_API int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                                 const char** map_keys, const int* map_dev_types, const int* map_dev_ids, uint32_t len,
                                 NDArrayHandle* in_args, NDArrayHandle* arg_grad_store, uint32_t* grad_req_type,
                                 uint32_t aux_states_len, NDArrayHandle* aux_states, ExecutorHandle shared_exec,
                                 ExecutorHandle* out);
WEFT_MX_API int MXExecutorSimpleBindEx(
    SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys, const char** g2c_keys,
    const int* g2c_dev_types, const int* g2c_dev_ids, const uint32_t provided_grad_req_list_len,
    const char** provided_grad_req_names, const char** provided_grad_req_types, const uint32_t num_provided_arg_shapes,
    const char** provided_arg_shape_names, const int* provided_arg_shape_data, const uint32_t* provided_arg_shape_idx,
    const uint32_t num_provided_arg_dtypes, const char** provided_arg_dtype_names, const int* provided_arg_dtypes,
    const uint32_t num_provided_arg_stypes, const char** provided_arg_stype_names, const int* provided_arg_stypes,
    const uint32_t num_shared_arg_names, const char** shared_arg_name_list, int* shared_buffer_len,
    const char** shared_buffer_name_list, NDArrayHandle* shared_buffer_handle_list,
    const char*** updated_shared_buffer_name_list, NDArrayHandle** updated_shared_buffer_handle_list,
    uint32_t* num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
    NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out);
WEFT_MX_API int MXExecutorSimpleBindEx64(
    SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys, const char** g2c_keys,
    const int* g2c_dev_types, const int* g2c_dev_ids, const uint32_t provided_grad_req_list_len,
    const char** provided_grad_req_names, const char** provided_grad_req_types, const uint32_t num_provided_arg_shapes,
    const char** provided_arg_shape_names, const int64_t* provided_arg_shape_data,
    const uint32_t* provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes,
    const char** provided_arg_dtype_names, const int* provided_arg_dtypes, const uint32_t num_provided_arg_stypes,
    const char** provided_arg_stype_names, const int* provided_arg_stypes, const uint32_t num_shared_arg_names,
    const char** shared_arg_name_list, int* shared_buffer_len, const char** shared_buffer_name_list,
    NDArrayHandle* shared_buffer_handle_list, const char*** updated_shared_buffer_name_list,
    NDArrayHandle** updated_shared_buffer_handle_list, uint32_t* num_in_args, NDArrayHandle** in_args,
    NDArrayHandle** arg_grads, uint32_t* num_aux_states, NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle,
    ExecutorHandle* out);
WEFT_MX_API int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int dev_id,
                                    uint32_t num_map_keys, const char** map_keys, const int* map_dev_types,
                                    const int* map_dev_ids, const uint32_t num_provided_arg_shapes,
                                    const char** provided_arg_shape_names, const int* provided_arg_shape_data,
                                    const uint32_t* provided_arg_shape_idx, uint32_t* num_in_args,
                                    NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
                                    NDArrayHandle** aux_states, ExecutorHandle shared_exec, ExecutorHandle* out);
WEFT_MX_API int MXExecutorGetOptimizedSymbol(ExecutorHandle handle, SymbolHandle* out);
WEFT_MX_API int MXExecutorSetMonitorCallback(ExecutorHandle handle, ExecutorMonitorCallback callback,
                                             void* callback_handle);
WEFT_MX_API int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback callback,
                                               void* callback_handle, bool monitor_all);

// ---- custom operators ---------------------------------------------------------------------------
WEFT_MX_API int MXCustomOpRegister(const char* op_type, CustomOpPropCreator creator);
// mx.autograd.Function: records outputs computed from inputs with a frontend backward;
// callbacks[kCustomFunctionBackward] is int(int num_ograds, int num_igrads, void** ptrs,
// const int* reqs, const int is_train, void* state), callbacks[kCustomFunctionDelete] int(void* state).
enum CustomFunctionCallbacks { kCustomFunctionBackward, kCustomFunctionDelete };
WEFT_MX_API int MXCustomFunctionRecord(int num_inputs, NDArrayHandle* inputs, int num_outputs, NDArrayHandle* outputs,
                                       struct MXCallbackList* callbacks);

// ---- profiler -----------------------------------------------------------------------------------
WEFT_MX_API int MXSetProcessProfilerConfig(int num_params, const char* const* keys, const char* const* vals,
                                           KVStoreHandle kvstoreHandle);
WEFT_MX_API int MXSetProfilerConfig(int num_params, const char* const* keys, const char* const* vals);
WEFT_MX_API int MXSetProcessProfilerState(int state, int profile_process, KVStoreHandle kvStoreHandle);
WEFT_MX_API int MXSetProfilerState(int state);
WEFT_MX_API int MXDumpProcessProfile(int finished, int profile_process, KVStoreHandle kvStoreHandle);
WEFT_MX_API int MXDumpProfile(int finished);
WEFT_MX_API int MXAggregateProfileStatsPrint(const char** out_str, int reset);
WEFT_MX_API int MXAggregateProfileStatsPrintEx(const char** out_str, int reset, int format, int sort_by, int ascending);
WEFT_MX_API int MXProcessProfilePause(int paused, int profile_process, KVStoreHandle kvStoreHandle);
WEFT_MX_API int MXProfilePause(int paused);
WEFT_MX_API int MXProfileCreateDomain(const char* domain, ProfileHandle* out);
WEFT_MX_API int MXProfileCreateTask(ProfileHandle domain, const char* task_name, ProfileHandle* out);
WEFT_MX_API int MXProfileCreateFrame(ProfileHandle domain, const char* frame_name, ProfileHandle* out);
WEFT_MX_API int MXProfileCreateEvent(const char* event_name, ProfileHandle* out);
WEFT_MX_API int MXProfileCreateCounter(ProfileHandle domain, const char* counter_name, ProfileHandle* out);
WEFT_MX_API int MXProfileDestroyHandle(ProfileHandle frame_handle);
WEFT_MX_API int MXProfileDurationStart(ProfileHandle duration_handle);
WEFT_MX_API int MXProfileDurationStop(ProfileHandle duration_handle);
WEFT_MX_API int MXProfileSetCounter(ProfileHandle counter_handle, uint64_t value);
WEFT_MX_API int MXProfileAdjustCounter(ProfileHandle counter_handle, int64_t value);
WEFT_MX_API int MXProfileSetMarker(ProfileHandle domain, const char* instant_marker_name, const char* scope);

}  // extern "C"

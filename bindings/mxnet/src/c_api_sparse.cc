// MXNet C API: sparse NDArrays (row_sparse, csr) — creation, storage type, the data and aux
// arrays. check_format, SyncCopyFromNDArray and the storage type itself are in c_api_ndarray.cc;
// cast_storage is an op of op_table.cc run by c_api_op.cc.
#include "common.h"
#include "weft/sparse.h"

using namespace weft;
using namespace weft::mx;

namespace {

// MXNet's sparse creation: an empty array whose parts the caller then sets with
// MXNDArraySyncCopyFromNDArray (python/mxnet/ndarray/sparse.py). The aux shapes it passes are the
// ones it is about to copy in, so they are not needed here: each copy gives its part its shape.
NDArrayHandle CreateSparse(int storage_type, const Shape& shape, int dev_type, int dev_id, int dtype, uint32_t num_aux,
                           const int* aux_type) {
  const auto stype = static_cast<StorageType>(storage_type);
  if (stype != StorageType::kRowSparse && stype != StorageType::kCSR)
    Fail("MXNDArrayCreateSparseEx: storage type {} is not sparse (1 row_sparse, 2 csr)", storage_type);
  if (num_aux != static_cast<uint32_t>(NumAuxData(stype)))
    Fail("MXNDArrayCreateSparseEx: {} aux types given, a {} array has {}", num_aux, StorageTypeName(stype),
         NumAuxData(stype));
  if (!IsValidDType(dtype)) Fail("MXNDArrayCreateSparseEx: unknown dtype code {}", dtype);
  std::vector<DType> aux_types;
  for (uint32_t i = 0; i < num_aux; ++i) {
    const int t = NotNull(aux_type, "aux_type")[i];
    if (!IsValidDType(t)) Fail("MXNDArrayCreateSparseEx: unknown aux dtype code {}", t);
    aux_types.push_back(static_cast<DType>(t));
  }
  return NewND(NDArray::CreateSparse(stype, shape, ToContext(dev_type, dev_id), static_cast<DType>(dtype), aux_types));
}

const NDArray& Sparse(NDArrayHandle handle, const char* what) {
  const NDArray& a = ND(handle);
  const StorageType s = a.storage_type();
  if (s != StorageType::kRowSparse && s != StorageType::kCSR)
    Fail("{}: the array is {}; only row_sparse and csr arrays have data and aux arrays", what, StorageTypeName(s));
  return a;
}

NDArray AuxOf(NDArrayHandle handle, int64_t i, const char* what) {
  const NDArray& a = Sparse(handle, what);
  if (i < 0 || static_cast<size_t>(i) >= a.num_aux_data())
    Fail("{}: aux index {} is out of range; a {} array has {} aux arrays", what, i, StorageTypeName(a.storage_type()),
         a.num_aux_data());
  return a.aux_ndarray(static_cast<size_t>(i));
}

// A deep copy of a part, as MXNet's data()/indices/indptr properties document.
NDArrayHandle CopyOfPart(const NDArray& part) {
  NDArray copy = part.Copy(part.GetContext());
  copy.WaitToRead();
  return NewND(std::move(copy));
}

}  // namespace

extern "C" {

WEFT_MX_API int MXNDArrayCreateSparseEx(int storage_type, const uint32_t* shape, uint32_t ndim, int dev_type,
                                        int dev_id, int /*delay_alloc*/, int dtype, uint32_t num_aux, int* aux_type,
                                        uint32_t* /*aux_ndims*/, const uint32_t* /*aux_shape*/, NDArrayHandle* out) {
  API_BEGIN();
  if (ndim > 0) NotNull(shape, "shape");
  std::vector<int64_t> dims(shape, shape + ndim);
  *NotNull(out, "out") = CreateSparse(storage_type, Shape(dims), dev_type, dev_id, dtype, num_aux, aux_type);
  API_END();
}

WEFT_MX_API int MXNDArrayCreateSparseEx64(int storage_type, const int64_t* shape, int ndim, int dev_type, int dev_id,
                                          int /*delay_alloc*/, int dtype, uint32_t num_aux, int* aux_type,
                                          int* /*aux_ndims*/, const int64_t* /*aux_shape*/, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = CreateSparse(storage_type, ToShape(shape, ndim), dev_type, dev_id, dtype, num_aux, aux_type);
  API_END();
}

WEFT_MX_API int MXNDArrayGetAuxType64(NDArrayHandle handle, int64_t i, int* out_type) {
  API_BEGIN();
  *NotNull(out_type, "out_type") = static_cast<int>(AuxOf(handle, i, "MXNDArrayGetAuxType").GetDType());
  API_END();
}

WEFT_MX_API int MXNDArrayGetAuxType(NDArrayHandle handle, uint32_t i, int* out_type) {
  return MXNDArrayGetAuxType64(handle, i, out_type);
}

WEFT_MX_API int MXNDArrayGetAuxNDArray64(NDArrayHandle handle, int64_t i, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = CopyOfPart(AuxOf(handle, i, "MXNDArrayGetAuxNDArray"));
  API_END();
}

WEFT_MX_API int MXNDArrayGetAuxNDArray(NDArrayHandle handle, uint32_t i, NDArrayHandle* out) {
  return MXNDArrayGetAuxNDArray64(handle, i, out);
}

WEFT_MX_API int MXNDArrayGetDataNDArray(NDArrayHandle handle, NDArrayHandle* out) {
  API_BEGIN();
  *NotNull(out, "out") = CopyOfPart(Sparse(handle, "MXNDArrayGetDataNDArray").data_ndarray());
  API_END();
}

}  // extern "C"

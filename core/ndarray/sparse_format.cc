// CheckSparseFormat: MXNet's check_format over host copies of a sparse array's parts (used when a
// sparse record is read and by NDArray::SyncCheckFormat).
#include <cstring>

#include "weft/ndarray_format.h"

namespace weft {
namespace {

constexpr const char* kRspShapeErr = "Shape mismatch of this row_sparse NDArray";
constexpr const char* kRspIdxErr =
    "Indices of row_sparse NDArray should be non-negative, less than the size of first dimension and in "
    "ascending order";
constexpr const char* kCsrShapeErr = "Shape mismatch of this csr NDArray";
constexpr const char* kCsrIndPtrErr =
    "IndPtr of csr NDArray should be non-negative, in non-decreasing order, start with 0, and end with value equal "
    "with size of indices.";
constexpr const char* kCsrIdxErr =
    "Indices of csr NDArray should be non-negative, in ascending order per row and less than the number of columns.";

// Element i of an int32 or int64 aux array, as int64.
class IndexReader {
 public:
  IndexReader(const NDArrayAuxRecord& aux, std::string_view what, const char* name) : aux_(aux) {
    if (aux.dtype != DType::kInt64 && aux.dtype != DType::kInt32)
      Fail("{}: the {} array has dtype {}; sparse indices must be int64 or int32", what, name, DTypeName(aux.dtype));
    const uint64_t need = static_cast<uint64_t>(aux.shape.Size()) * DTypeSize(aux.dtype);
    if (aux.data.size() != need)
      Fail("{}: the {} array of shape {} holds {} bytes, expected {}", what, name, aux.shape, aux.data.size(), need);
  }
  int64_t operator[](int64_t i) const {
    if (aux_.dtype == DType::kInt32) {
      int32_t v;
      std::memcpy(&v, aux_.data.data() + i * 4, 4);
      return v;
    }
    int64_t v;
    std::memcpy(&v, aux_.data.data() + i * 8, 8);
    return v;
  }

 private:
  const NDArrayAuxRecord& aux_;
};

void CheckRowSparse(const Shape& shape, const Shape& sshape, std::span<const NDArrayAuxRecord> aux, bool full,
                    std::string_view what) {
  if (aux.size() != 1) Fail("{}: {}: {} aux arrays given, row_sparse has 1 (indices)", what, kRspShapeErr, aux.size());
  const Shape& ishape = aux[0].shape;
  bool ok = ishape.ndim() == 1 && shape.ndim() >= 1 && sshape.ndim() == shape.ndim() && ishape[0] == sshape[0];
  for (size_t d = 1; ok && d < shape.ndim(); ++d) ok = sshape[d] == shape[d];
  if (!ok)
    Fail("{}: {}: indices of shape {} and data of shape {} for an array of shape {}", what, kRspShapeErr, ishape,
         sshape, shape);
  IndexReader idx(aux[0], what, "indices");
  if (!full) return;
  for (int64_t i = 0; i < ishape[0]; ++i) {
    const int64_t v = idx[i];
    if (v < 0 || v >= shape[0] || (i > 0 && v <= idx[i - 1]))
      Fail("{}: {}: indices[{}] = {}{} (the array has {} rows)", what, kRspIdxErr, i, v,
           i > 0 ? fmt::format(" after {}", idx[i - 1]) : std::string(), shape[0]);
  }
}

void CheckCsr(const Shape& shape, const Shape& sshape, std::span<const NDArrayAuxRecord> aux, bool full,
              std::string_view what) {
  if (aux.size() != 2) Fail("{}: {}: {} aux arrays given, csr has 2 (indptr, indices)", what, kCsrShapeErr, aux.size());
  const Shape& pshape = aux[kCSRIndPtr].shape;
  const Shape& ishape = aux[kCSRIndices].shape;
  if (shape.ndim() != 2 || pshape.ndim() != 1 || ishape.ndim() != 1 || sshape.ndim() != 1 ||
      pshape[0] - 1 != shape[0] || ishape[0] != sshape[0]) {  // - 1: shape[0] + 1 may overflow
    Fail("{}: {}: indptr of shape {}, indices of shape {} and data of shape {} for an array of shape {}", what,
         kCsrShapeErr, pshape, ishape, sshape, shape);
  }
  IndexReader indptr(aux[kCSRIndPtr], what, "indptr");
  IndexReader indices(aux[kCSRIndices], what, "indices");
  if (!full) return;
  const int64_t rows = shape[0], nnz = ishape[0];
  if (indptr[0] != 0) Fail("{}: {}: indptr[0] = {}", what, kCsrIndPtrErr, indptr[0]);
  for (int64_t r = 0; r < rows; ++r) {
    if (indptr[r + 1] < indptr[r] || indptr[r + 1] > nnz)
      Fail("{}: {}: indptr[{}] = {} after {} ({} indices)", what, kCsrIndPtrErr, r + 1, indptr[r + 1], indptr[r], nnz);
  }
  if (indptr[rows] != nnz) Fail("{}: {}: indptr[{}] = {}, expected {}", what, kCsrIndPtrErr, rows, indptr[rows], nnz);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = indptr[r]; j < indptr[r + 1]; ++j) {
      const int64_t c = indices[j];
      if (c < 0 || c >= shape[1] || (j > indptr[r] && c <= indices[j - 1]))
        Fail("{}: {}: row {}: indices[{}] = {}{} ({} columns)", what, kCsrIdxErr, r, j, c,
             j > indptr[r] ? fmt::format(" after {}", indices[j - 1]) : std::string(), shape[1]);
    }
  }
}

}  // namespace

void CheckSparseFormat(StorageType stype, const Shape& shape, const Shape& storage_shape,
                       std::span<const NDArrayAuxRecord> aux, bool full_check, std::string_view what) {
  switch (stype) {
    case StorageType::kDefault:
      return;
    case StorageType::kRowSparse:
      CheckRowSparse(shape, storage_shape, aux, full_check, what);
      return;
    case StorageType::kCSR:
      CheckCsr(shape, storage_shape, aux, full_check, what);
      return;
    default:
      Fail("{}: unknown storage type code {}", what, static_cast<int>(stype));
  }
}

}  // namespace weft

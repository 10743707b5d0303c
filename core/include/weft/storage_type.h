// weft core — storage types of an NDArray: dense, row_sparse and csr, with MXNet's codes and
// names (MXNet 1.9 include/mxnet/ndarray.h, NDArrayStorageType; python/mxnet/ndarray/ndarray.py,
// _STORAGE_TYPE_STR_TO_ID).
//
//   default     dense, C order.
//   row_sparse  an array of shape (R, d1, ...) stored as `data` of shape (nnz_rows, d1, ...) and
//               one auxiliary array `indices` (aux 0, int64, shape (nnz_rows,)): the row of the
//               full array each data row holds, sorted ascending, unique, in [0, R). Rows not
//               listed are zero.
//   csr         a 2-d array (M, N) in compressed sparse row form: `data` of shape (nnz,) and two
//               auxiliary arrays, `indptr` (aux 0, int64, shape (M + 1,): row i's elements are
//               data[indptr[i] .. indptr[i+1])), starting at 0, non-decreasing, ending at nnz)
//               and `indices` (aux 1, int64, shape (nnz,): each element's column, ascending
//               within a row, in [0, N)).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "weft/base.h"

namespace weft {

/// MXNet's storage type codes (the codes are what .params records and the C API carry).
enum class StorageType : int32_t { kUndefined = -1, kDefault = 0, kRowSparse = 1, kCSR = 2 };

/// MXNet's name: "default", "row_sparse", "csr" ("undefined" for kUndefined and unknown codes).
constexpr std::string_view StorageTypeName(StorageType stype) noexcept {
  switch (stype) {
    case StorageType::kDefault:
      return "default";
    case StorageType::kRowSparse:
      return "row_sparse";
    case StorageType::kCSR:
      return "csr";
    default:
      return "undefined";
  }
}

/// The storage type named `name` ("default", "row_sparse", "csr"). Throws weft::Error naming the
/// valid names for anything else.
inline StorageType StorageTypeFromName(std::string_view name) {
  for (StorageType s : {StorageType::kDefault, StorageType::kRowSparse, StorageType::kCSR})
    if (StorageTypeName(s) == name) return s;
  Fail("unknown storage type '{}' (valid: 'default', 'row_sparse', 'csr')", name);
}

/// Number of auxiliary arrays of a storage type: 1 for row_sparse (indices), 2 for csr (indptr,
/// indices), 0 otherwise (MXNet's num_aux_data).
constexpr int NumAuxData(StorageType stype) noexcept {
  return stype == StorageType::kRowSparse ? 1 : stype == StorageType::kCSR ? 2 : 0;
}

/// Indices of the auxiliary arrays, as MXNet numbers them (namespace csr / rowsparse).
inline constexpr int kCSRIndPtr = 0, kCSRIndices = 1, kRowSparseIndices = 0;

}  // namespace weft

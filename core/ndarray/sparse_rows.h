// The two halves of a row_sparse_pull (weft::RetainRowsInto in weft/sparse.h), for stores that
// fetch the rows themselves (the parameter-server KVStore asks the servers for the rows only).
// Internal to libweft.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/ndarray.h"

namespace weft {

/// The rows `row_ids` names (a dense array of any shape, read flat, any numeric dtype; values
/// rounded toward zero), sorted and unique. Synchronous (reads row_ids). Throws weft::Error naming
/// the position of an id outside [0, num_rows), or for a none or sparse row_ids.
std::vector<int64_t> RowSparsePullRows(const NDArray& row_ids, int64_t num_rows);

/// Makes `dst` (row_sparse) hold `rows` (sorted, unique) with `values`: `bytes` bytes, the rows'
/// values one after another in dst's dtype. Synchronous. Throws weft::Error for a dst that is not
/// row_sparse or a byte count that does not match rows.size() rows of dst's shape.
void SetRowSparseRows(const NDArray& dst, const std::vector<int64_t>& rows, const void* values, size_t bytes);

/// Makes `dst` (row_sparse) hold `rows` (sorted, unique) with their values gathered from `dense`,
/// a host buffer holding every row of dst's shape one after another, `row_bytes` bytes each, in
/// dst's dtype. Synchronous. Errors as SetRowSparseRows.
void SetRowSparseFromDense(const NDArray& dst, const std::vector<int64_t>& rows, const void* dense, size_t row_bytes);

/// The sum of row_sparse float32 arrays of one shape (any devices) as a row_sparse array on `ctx`
/// storing the union of their rows, sorted (MXNet's ElementwiseSum of row_sparse inputs).
/// Synchronous (reads the values on the host). Throws weft::Error for an empty list, a dense
/// array, shapes or dtypes that differ.
NDArray SumRowSparse(const std::vector<NDArray>& values, const Context& ctx);

}  // namespace weft

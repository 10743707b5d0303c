// weft core — conversions between storage types (MXNet's cast_storage; MXNet 1.9
// src/operator/tensor/cast_storage-inl.h). The storage types and their layouts are described in
// weft/storage_type.h; a sparse NDArray's parts are reached through NDArray (weft/ndarray.h:
// CreateSparse, FromSparseParts, data_ndarray, aux_ndarray, SyncCheckFormat).
//
// The conversions run on the host: they wait for the source, copy it to host memory, convert,
// and copy the result to the destination's Context; they return when the result is written.
// An element is zero when its value compares equal to 0 (so -0.0 is zero and NaN is not), as in
// MXNet. Indices written are int64 unless the destination's aux arrays are int32.
//
// Thread-safety: as NDArray's Sync* functions (the arrays may be used from other threads; the
// caller orders writes to the destination).
#pragma once

#include "weft/export.h"

#include <optional>
#include "weft/ndarray.h"
#include "weft/storage_type.h"

namespace weft {

/// A new array holding `src` in storage type `stype`, on src's Context with src's dtype:
///   default -> row_sparse keeps the rows (along axis 0) that have a non-zero element;
///   default -> csr keeps the non-zero elements of a 2-d array, row by row, columns ascending;
///   sparse -> default writes the stored values into zeros;
///   between two sparse types the result is that of going through default;
///   the same storage type gives a copy.
/// A sparse source is first checked as SyncCheckFormat(true) does, so malformed indices are
/// reported, never written through. Throws weft::Error for a none source, kUndefined, csr of an
/// array that is not 2-d, or row_sparse of a 0-d array.
WEFT_API NDArray CastStorage(const NDArray& src, StorageType stype);

/// Writes `src` converted to dst.storage_type() into `dst` (MXNet's cast_storage with out=, and
/// NDArray::CopyFromTo when either array is sparse). The arrays must have one shape and dtype
/// (weft::Error otherwise); their Contexts may differ. A sparse `dst` gets new parts (its number
/// of stored rows or elements follows `src`).
WEFT_API void CastStorageInto(const NDArray& src, const NDArray& dst);

/// MXNet's row_sparse_pull gather (KVStore.row_sparse_pull; the rows of MXNet's sparse_retain):
/// writes into `dst` (row_sparse, of src's shape and dtype; any Context) the rows of `src` (any
/// storage type) named by `row_ids` (a dense array of any shape, read flat, and any numeric
/// dtype; values are rounded toward zero, may repeat and come in any order): dst then holds those rows, sorted and
/// unique, with src's values (zeros for rows src does not store). Synchronous. Throws
/// weft::Error naming the position of a row id outside [0, rows), or for a dst that is not
/// row_sparse or does not match src.
WEFT_API void RetainRowsInto(const NDArray& src, const NDArray& row_ids, const NDArray& dst);

/// MXNet's _contrib_getnnz (mx.nd.contrib.getnnz) of a csr array: with no axis, the number of
/// stored values as an int64 array of shape (1,); with axis 1 (or -1), the number stored in
/// each row, shape (rows,). On csr's Context. Throws weft::Error for another storage type or
/// axis 0 (MXNet: "getnnz with axis = 0 is not supported yet").
WEFT_API NDArray GetNNZ(const NDArray& csr, std::optional<int> axis);

}  // namespace weft

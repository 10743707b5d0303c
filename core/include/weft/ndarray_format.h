// weft core — the MXNet NDArray list format (`mx.nd.save` / `.params` files), as pure functions
// over bytes. Nothing here touches a device: NDArray::Save/Load (ndarray.h) stage arrays through
// these records, and a fuzzer can drive the parser directly.
//
// Layout (all little-endian, no padding; facts from MXNet 1.9 src/ndarray/ndarray.cc, NDArray::Save
// and NDArray::Load; the README's "Formats" section says what weft reads and writes):
//   file:   u64 0x112 | u64 0 (reserved) | u64 N | N x record | u64 K (0 or N) |
//           K x (u64 length, length bytes of name)
//   record v2 (magic 0xF993FAC9) / v3 (0xF993FACA, numpy-shape semantics):
//           u32 magic | i32 storage type | shape | i32 dev_type | i32 dev_id | i32 dtype | data
//           shape = i32 ndim, ndim x i64 extents
//   record v1: u32 0xF993FAC8 | shape (as v2) | dev_type | dev_id | dtype | data
//   record v0: u32 ndim | ndim x u32 extents | dev_type | dev_id | dtype | data
//   data = shape.Size() * DTypeSize(dtype) bytes, C order.
//   sparse record (v2, storage type 1 row_sparse / 2 csr; weft/storage_type.h):
//           u32 magic | i32 stype | storage shape | shape | dev_type | dev_id | i32 dtype |
//           n_aux x (i32 aux dtype, aux shape) | data (storage shape) | n_aux x aux data
//           The storage shape is the shape of the stored values ((nnz_rows, d1...) or (nnz,)),
//           written as any shape (an extent 0 is a real extent there).
// A record with an unknown shape ("none": v0/v1/v2 ndim 0, v2 any extent 0, v3 ndim -1 or any
// extent -1) ends after its shape and stands for MXNet's empty NDArray(). In v3 ndim 0 is a
// scalar (one element) and extent 0 an array with no elements.
//
// Sparse records are checked as MXNet's check_format does with full_check (CheckSparseFormat)
// when they are read, so a file with an unsorted or out-of-range index is refused. Hostile input never causes an
// allocation larger than the input itself: every count and size is checked against the bytes that remain before
// anything is reserved, ndim is capped at kMaxNDim, and extent products are checked for overflow.
//
// Thread-safety: all functions are reentrant; they share no state.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base.h"
#include "weft/storage_type.h"

namespace weft {

/// Magic of a list file (first u64).
inline constexpr uint64_t kNDArrayListMagic = 0x112;
/// Record magics. v0 records have none (their first u32 is ndim).
inline constexpr uint32_t kNDArrayRecordMagicV1 = 0xF993FAC8u;
inline constexpr uint32_t kNDArrayRecordMagicV2 = 0xF993FAC9u;
inline constexpr uint32_t kNDArrayRecordMagicV3 = 0xF993FACAu;
/// Largest ndim a record may declare (MXNet's own limit is 32 too).
inline constexpr int32_t kNDArrayMaxNDim = 32;

/// MXNet's device type codes as stored in records (mxnet::Context::DeviceType).
enum class SavedDeviceType : int32_t { kCPU = 1, kGPU = 2, kCPUPinned = 3, kCPUShared = 5 };

/// One auxiliary array of a sparse record (indices, indptr): 1-d in files MXNet writes.
struct WEFT_API NDArrayAuxRecord {
  DType dtype = DType::kInt64;
  Shape shape;
  /// shape.Size() * DTypeSize(dtype) bytes, little-endian elements.
  std::vector<uint8_t> data;
};

/// One array as stored in a record.
struct WEFT_API NDArrayRecord {
  /// MXNet's empty NDArray (unknown shape); shape, device, dtype and data are then unused.
  bool none = false;
  Shape shape;
  DType dtype = DType::kFloat32;
  /// The device the array was saved from, as MXNet codes it (SavedDeviceType values; readers
  /// accept any code, writers write what is given).
  int32_t dev_type = static_cast<int32_t>(SavedDeviceType::kCPU);
  int32_t dev_id = 0;
  /// Dense: shape.Size() * DTypeSize(dtype) bytes, C order, little-endian elements. Sparse: the
  /// values, storage_shape.Size() * DTypeSize(dtype) bytes.
  std::vector<uint8_t> data;
  /// kDefault for a dense record; kRowSparse / kCSR with storage_shape and aux set.
  StorageType stype = StorageType::kDefault;
  /// Sparse only: the shape of the values (`shape` is the full array's).
  Shape storage_shape;
  /// Sparse only: NumAuxData(stype) arrays in MXNet's order (row_sparse: indices; csr: indptr,
  /// indices).
  std::vector<NDArrayAuxRecord> aux;
  /// Record version it was read as (0..3). Writers ignore it: see SerializeNDArrayRecord.
  int version = 2;
};

/// The content of a list file: arrays, and either no names or one name per array.
struct WEFT_API NDArrayListData {
  std::vector<NDArrayRecord> arrays;
  std::vector<std::string> names;
};

/// Parses a whole list file held in `bytes`. `source` names the input in errors (a path).
/// Throws weft::Error "<source>: record <i> of <N> at byte <offset>: <what was wrong>" (or
/// "<source>: header ..."/"names ...") for a truncated or malformed input, an unknown magic, an
/// unknown storage type, a sparse record whose parts CheckSparseFormat refuses, an invalid dtype
/// code, ndim above
/// kNDArrayMaxNDim, extents whose data could not fit in the input, a name count other than 0 or
/// N, or trailing bytes after the names.
WEFT_API NDArrayListData ParseNDArrayList(std::span<const uint8_t> bytes, std::string_view source);

/// Parses exactly one record (any version) that fills `bytes` — MXNet's NDArray raw bytes, as in
/// pickled arrays. Errors as ParseNDArrayList.
WEFT_API NDArrayRecord ParseNDArrayRecord(std::span<const uint8_t> bytes, std::string_view source);

/// Checks the parts of a sparse array held on the host, as MXNet's CheckFormat does (MXNet 1.9
/// src/common/utils.h, CheckFormatCSRImpl / CheckFormatRSPImpl), and throws weft::Error starting
/// "<what>: " with MXNet's message for the kind of error and the position that is wrong:
///  - row_sparse: "Shape mismatch of this row_sparse NDArray" unless there is one aux array, 1-d,
///    with as many entries as storage_shape[0], storage_shape has shape's ndim and its extents
///    past the first equal shape's; with full_check "Indices of row_sparse NDArray should be
///    non-negative, less than the size of first dimension and in ascending order" naming the
///    first bad position.
///  - csr: "Shape mismatch of this csr NDArray" unless shape is 2-d, indptr 1-d of shape[0] + 1
///    entries, indices and storage_shape 1-d of one length; with full_check "IndPtr of csr
///    NDArray should be non-negative, in non-decreasing order, start with 0, and end with value
///    equal with size of indices." or "Indices of csr NDArray should be non-negative, in
///    ascending order per row and less than the number of columns." naming the row and position.
/// Aux arrays must be int32 or int64 (else weft::Error); their data must hold shape.Size()
/// elements. Dense (kDefault) input is always valid.
WEFT_API void CheckSparseFormat(StorageType stype, const Shape& shape, const Shape& storage_shape,
                                std::span<const NDArrayAuxRecord> aux, bool full_check, std::string_view what);

/// Serialises one record. Writes v2 (what MXNet 1.x writes outside numpy mode) unless v2 cannot
/// represent the shape — a scalar (ndim 0) or an extent of 0 — in which case it writes v3.
/// A `none` record is written as v2 with ndim 0; a sparse record as MXNet writes it (always v2).
/// Throws weft::Error when data.size() does not
/// equal shape.Size() * DTypeSize(dtype), when an extent is negative or ndim > kNDArrayMaxNDim.
WEFT_API std::vector<uint8_t> SerializeNDArrayRecord(const NDArrayRecord& record);

/// Serialises a list file. `list.names` must be empty or hold one name per array (else
/// weft::Error).
WEFT_API std::vector<uint8_t> SerializeNDArrayList(const NDArrayListData& list);

/// Reads and parses the file at `path` (errors name the path; a file that cannot be opened or
/// read raises weft::Error naming the path and the system's reason). The 8-byte magic is checked
/// before anything else is read, so a device such as /dev/zero or a huge file of another kind is
/// refused at once; a regular file is mapped, not read whole, so only the bytes the records
/// announce are touched. The file must not be truncated while it is read (weft and MXNet replace
/// files by rename, which is safe).
WEFT_API NDArrayListData ReadNDArrayListFile(const std::string& path);

/// Writes `list` to `path` atomically: the bytes go to a temporary file in the same directory,
/// which is flushed to disk and renamed over `path`, so readers see the old or the new file,
/// never a partial one. Throws weft::Error naming the path on any I/O failure (the temporary
/// file is removed).
WEFT_API void WriteNDArrayListFile(const std::string& path, const NDArrayListData& list);

}  // namespace weft

// CastStorage: conversions between dense, row_sparse and csr on the host (weft/sparse.h).
#include <algorithm>
#include <cstring>

#include "dtype_convert.h"
#include "sparse_parts.h"
#include "sparse_rows.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using ndarray_detail::HostBytes;

std::vector<int64_t> HostIndices(const NDArray& a) {
  const std::vector<uint8_t> bytes = HostBytes(a);
  std::vector<int64_t> out(a.Size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (a.GetDType() == DType::kInt32) {
      int32_t v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      out[i] = v;
    } else {
      std::memcpy(&out[i], bytes.data() + i * 8, 8);
    }
  }
  return out;
}

NDArray IndexArray(const std::vector<int64_t>& idx, DType dtype, const Context& ctx) {
  NDArray a(Shape{static_cast<int64_t>(idx.size())}, ctx, false, dtype);
  if (idx.empty()) return a;
  if (dtype == DType::kInt64) {
    a.SyncCopyFromCPUBytes(idx.data(), idx.size() * 8);
  } else {
    std::vector<int32_t> narrow(idx.begin(), idx.end());
    a.SyncCopyFromCPUBytes(narrow.data(), narrow.size() * 4);
  }
  return a;
}

// The dense C-order bytes of `src` (any storage type). A sparse source is checked in full first:
// the scatter below trusts its indices.
std::vector<uint8_t> ToHostDense(const NDArray& src) {
  if (src.storage_type() == StorageType::kDefault) return HostBytes(src);
  src.SyncCheckFormat(true);
  const Shape shape = src.GetShape();
  const size_t elem = DTypeSize(src.GetDType());
  std::vector<uint8_t> out(static_cast<size_t>(shape.Size()) * elem, 0);
  const std::vector<uint8_t> values = HostBytes(src.data_ndarray());
  if (src.storage_type() == StorageType::kRowSparse) {
    const std::vector<int64_t> rows = HostIndices(src.aux_ndarray(kRowSparseIndices));
    const size_t row_bytes = shape[0] == 0 ? 0 : out.size() / static_cast<size_t>(shape[0]);
    for (size_t k = 0; k < rows.size(); ++k)
      std::memcpy(out.data() + static_cast<size_t>(rows[k]) * row_bytes, values.data() + k * row_bytes, row_bytes);
    return out;
  }
  const std::vector<int64_t> indptr = HostIndices(src.aux_ndarray(kCSRIndPtr));
  const std::vector<int64_t> cols = HostIndices(src.aux_ndarray(kCSRIndices));
  const auto ncols = static_cast<size_t>(shape[1]);
  for (size_t r = 0; r + 1 < indptr.size(); ++r) {
    for (auto j = static_cast<size_t>(indptr[r]); j < static_cast<size_t>(indptr[r + 1]); ++j)
      std::memcpy(out.data() + (r * ncols + static_cast<size_t>(cols[j])) * elem, values.data() + j * elem, elem);
  }
  return out;
}

struct HostSparse {
  std::vector<uint8_t> values;
  int64_t count = 0;                      // stored rows (row_sparse) or elements (csr)
  std::vector<std::vector<int64_t>> aux;  // MXNet's order
};

bool IsNonZero(const uint8_t* p, DType dtype) { return ndarray_detail::LoadAsDouble(p, dtype) != 0.0; }

HostSparse FromHostDense(const std::vector<uint8_t>& dense, const Shape& shape, DType dtype, StorageType stype) {
  const size_t elem = DTypeSize(dtype);
  HostSparse hs;
  const auto rows = static_cast<size_t>(shape[0]);
  const size_t row_elems = rows == 0 ? 0 : dense.size() / elem / rows;
  if (stype == StorageType::kRowSparse) {
    hs.aux.resize(1);
    for (size_t r = 0; r < rows; ++r) {
      const uint8_t* row = dense.data() + r * row_elems * elem;
      bool any = false;
      for (size_t k = 0; k < row_elems && !any; ++k) any = IsNonZero(row + k * elem, dtype);
      if (!any) continue;
      hs.aux[0].push_back(static_cast<int64_t>(r));
      hs.values.insert(hs.values.end(), row, row + row_elems * elem);
    }
    hs.count = static_cast<int64_t>(hs.aux[0].size());
    return hs;
  }
  hs.aux.resize(2);
  hs.aux[kCSRIndPtr].push_back(0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < row_elems; ++c) {
      const uint8_t* p = dense.data() + (r * row_elems + c) * elem;
      if (!IsNonZero(p, dtype)) continue;
      hs.aux[kCSRIndices].push_back(static_cast<int64_t>(c));
      hs.values.insert(hs.values.end(), p, p + elem);
    }
    hs.aux[kCSRIndPtr].push_back(static_cast<int64_t>(hs.aux[kCSRIndices].size()));
  }
  hs.count = static_cast<int64_t>(hs.aux[kCSRIndices].size());
  return hs;
}

void CheckTarget(StorageType stype, const Shape& shape) {
  WEFT_CHECK(stype == StorageType::kDefault || stype == StorageType::kRowSparse || stype == StorageType::kCSR,
             "cast_storage: unknown storage type code {}", static_cast<int>(stype));
  WEFT_CHECK(stype != StorageType::kCSR || shape.ndim() == 2, "cast_storage: csr needs a 2-d array, not shape {}",
             shape);
  WEFT_CHECK(stype != StorageType::kRowSparse || shape.ndim() >= 1,
             "cast_storage: row_sparse needs at least one dimension, not shape {}", shape);
}

}  // namespace

NDArray CastStorage(const NDArray& src, StorageType stype) {
  WEFT_CHECK(!src.is_none(), "cast_storage: the input is a none array");
  CheckTarget(stype, src.GetShape());
  const Context ctx = src.GetContext();
  NDArray dst = stype == StorageType::kDefault ? NDArray(src.GetShape(), ctx, false, src.GetDType())
                                               : NDArray::CreateSparse(stype, src.GetShape(), ctx, src.GetDType());
  CastStorageInto(src, dst);
  return dst;
}

void CastStorageInto(const NDArray& src, const NDArray& dst) {
  WEFT_CHECK(!src.is_none() && !dst.is_none(), "cast_storage: the {} is a none array",
             src.is_none() ? "input" : "output");
  WEFT_CHECK(src.GetShape() == dst.GetShape() && src.GetDType() == dst.GetDType(),
             "cast_storage: input {} {} and output {} {} differ in shape or dtype", src.GetShape(),
             DTypeName(src.GetDType()), dst.GetShape(), DTypeName(dst.GetDType()));
  const StorageType stype = dst.storage_type();
  CheckTarget(stype, dst.GetShape());
  NDArray out = dst;  // SyncCopyFromNDArray replaces the parts every view of `dst` shares
  if (src.storage_type() == stype && stype != StorageType::kDefault) {
    src.SyncCheckFormat(false);
    bool same_aux = true;
    for (size_t i = 0; i < src.num_aux_data(); ++i) same_aux = same_aux && src.aux_type(i) == dst.aux_type(i);
    if (same_aux) {
      out.SyncCopyFromNDArray(src.data_ndarray(), -1);
      for (size_t i = 0; i < src.num_aux_data(); ++i) out.SyncCopyFromNDArray(src.aux_ndarray(i), static_cast<int>(i));
      return;
    }
  }
  const std::vector<uint8_t> dense = ToHostDense(src);
  const Context ctx = dst.GetContext();
  if (stype == StorageType::kDefault) {
    if (!dense.empty()) out.SyncCopyFromCPUBytes(dense.data(), dense.size());
    return;
  }
  const HostSparse hs = FromHostDense(dense, dst.GetShape(), dst.GetDType(), stype);
  Shape vshape = stype == StorageType::kCSR ? Shape{hs.count} : dst.GetShape();
  vshape[0] = hs.count;
  NDArray values(vshape, ctx, false, dst.GetDType());
  if (!hs.values.empty()) values.SyncCopyFromCPUBytes(hs.values.data(), hs.values.size());
  out.SyncCopyFromNDArray(values, -1);
  for (size_t i = 0; i < hs.aux.size(); ++i)
    out.SyncCopyFromNDArray(IndexArray(hs.aux[i], dst.aux_type(i), ctx), static_cast<int>(i));
}

std::vector<int64_t> RowSparsePullRows(const NDArray& row_ids, int64_t num_rows) {
  WEFT_CHECK(!row_ids.is_none(), "row_sparse_pull: row_ids is a none array");
  WEFT_CHECK(row_ids.storage_type() == StorageType::kDefault, "row_sparse_pull: row_ids must be dense, not {}",
             StorageTypeName(row_ids.storage_type()));
  const std::vector<uint8_t> id_bytes = HostBytes(row_ids);
  const size_t id_elem = DTypeSize(row_ids.GetDType());
  std::vector<int64_t> rows(row_ids.Size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const double v = ndarray_detail::LoadAsDouble(id_bytes.data() + i * id_elem, row_ids.GetDType());
    WEFT_CHECK(v >= 0 && v < static_cast<double>(num_rows),
               "row_sparse_pull: row_ids[{}] = {} is outside the {} rows of the value", i, v, num_rows);
    rows[i] = static_cast<int64_t>(v);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

void SetRowSparseRows(const NDArray& dst, const std::vector<int64_t>& rows, const void* values, size_t bytes) {
  WEFT_CHECK(dst.storage_type() == StorageType::kRowSparse, "row_sparse_pull: the output must be row_sparse, not {}",
             StorageTypeName(dst.storage_type()));
  Shape vshape = dst.GetShape();
  vshape[0] = static_cast<int64_t>(rows.size());
  NDArray part(vshape, dst.GetContext(), false, dst.GetDType());
  WEFT_CHECK(bytes == part.Size() * DTypeSize(dst.GetDType()),
             "row_sparse_pull: {} bytes of values for {} rows of shape {}", bytes, rows.size(), dst.GetShape());
  if (bytes != 0) part.SyncCopyFromCPUBytes(values, bytes);
  NDArray out = dst;
  out.SyncCopyFromNDArray(part, -1);
  out.SyncCopyFromNDArray(IndexArray(rows, dst.aux_type(kRowSparseIndices), dst.GetContext()), kRowSparseIndices);
}

void SetRowSparseFromDense(const NDArray& dst, const std::vector<int64_t>& rows, const void* dense, size_t row_bytes) {
  const auto* base = static_cast<const uint8_t*>(dense);
  std::vector<uint8_t> values(rows.size() * row_bytes);
  for (size_t k = 0; k < rows.size(); ++k)
    std::memcpy(values.data() + k * row_bytes, base + static_cast<size_t>(rows[k]) * row_bytes, row_bytes);
  SetRowSparseRows(dst, rows, values.data(), values.size());
}

NDArray SumRowSparse(const std::vector<NDArray>& values, const Context& ctx) {
  WEFT_CHECK(!values.empty(), "SumRowSparse: no arrays");
  const Shape shape = values[0].GetShape();
  for (const NDArray& v : values)
    WEFT_CHECK(v.storage_type() == StorageType::kRowSparse && v.GetShape() == shape && v.GetDType() == DType::kFloat32,
               "SumRowSparse: a {} {} {} array among row_sparse float32 arrays of shape {}",
               StorageTypeName(v.storage_type()), DTypeName(v.GetDType()), v.GetShape(), shape);
  // One array (a single device's push) is its own sum: MXNet's CommCPU passes it on as well.
  if (values.size() == 1) return values[0].GetContext() == ctx ? values[0] : values[0].Copy(ctx);
  const size_t row_len = shape[0] == 0 ? 0 : shape.Size() / static_cast<size_t>(shape[0]);
  std::vector<std::vector<int64_t>> idx;
  std::vector<int64_t> ids;  // the union of the stored rows, sorted (each array's are sorted)
  for (const NDArray& v : values) {
    idx.push_back(HostIndices(v.aux_ndarray(kRowSparseIndices)));
    ids.insert(ids.end(), idx.back().begin(), idx.back().end());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<float> sum(ids.size() * row_len, 0.0f), data;
  for (size_t a = 0; a < values.size(); ++a) {
    data.resize(idx[a].size() * row_len);
    if (!data.empty()) values[a].data_ndarray().SyncCopyToCPU(data.data(), data.size());
    size_t pos = 0;  // both lists are sorted: one forward walk finds every row
    for (size_t k = 0; k < idx[a].size(); ++k) {
      while (ids[pos] != idx[a][k]) ++pos;
      for (size_t j = 0; j < row_len; ++j) sum[pos * row_len + j] += data[k * row_len + j];
    }
  }
  NDArray out = NDArray::CreateSparse(StorageType::kRowSparse, shape, ctx);
  SetRowSparseRows(out, ids, sum.data(), sum.size() * sizeof(float));
  return out;
}

void RetainRowsInto(const NDArray& src, const NDArray& row_ids, const NDArray& dst) {
  WEFT_CHECK(!src.is_none() && !dst.is_none(), "row_sparse_pull: an array is none");
  WEFT_CHECK(dst.storage_type() == StorageType::kRowSparse, "row_sparse_pull: the output must be row_sparse, not {}",
             StorageTypeName(dst.storage_type()));
  WEFT_CHECK(src.GetShape() == dst.GetShape() && src.GetDType() == dst.GetDType(),
             "row_sparse_pull: the value {} {} and the output {} {} differ in shape or dtype", src.GetShape(),
             DTypeName(src.GetDType()), dst.GetShape(), DTypeName(dst.GetDType()));
  const Shape shape = dst.GetShape();
  const std::vector<int64_t> rows = RowSparsePullRows(row_ids, shape[0]);
  const std::vector<uint8_t> dense = ToHostDense(src);
  SetRowSparseFromDense(dst, rows, dense.data(), shape[0] == 0 ? 0 : dense.size() / static_cast<size_t>(shape[0]));
}

NDArray GetNNZ(const NDArray& csr, std::optional<int> axis) {
  WEFT_CHECK(csr.storage_type() == StorageType::kCSR, "getnnz: the input is {}; getnnz takes a csr array",
             StorageTypeName(csr.storage_type()));
  WEFT_CHECK(!axis || *axis == 1 || *axis == -1, "getnnz with axis = {} is not supported yet (axis is None or 1)",
             *axis);
  csr.SyncCheckFormat(false);  // indptr has rows + 1 entries
  const std::vector<int64_t> indptr = HostIndices(csr.aux_ndarray(kCSRIndPtr));
  std::vector<int64_t> counts;
  if (!axis) {
    counts.push_back(indptr.back());
  } else {
    for (size_t r = 0; r + 1 < indptr.size(); ++r) counts.push_back(indptr[r + 1] - indptr[r]);
  }
  return IndexArray(counts, DType::kInt64, csr.GetContext());
}

}  // namespace weft

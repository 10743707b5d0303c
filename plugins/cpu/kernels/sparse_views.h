// Checked views of a sparse kernel's csr and row_sparse inputs (SDK 2.1), for the cpu's sparse
// operators in tensor_sparse_ops.cc and tensor_sparse_products.cc. A view is made once per call:
// it resolves the parts to host pointers and checks them as check_format(full_check=True) does
// (a csr's indptr starts at 0, never falls and ends at nnz, its columns lie in [0, n) and rise
// within a row; a row_sparse array's indices rise strictly inside [0, rows)), so a malformed array
// that skipped check_format is refused with its name and position instead of being read out of
// bounds or giving a result that depends on the order of its parts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "host_data.h"
#include "nn_common.h"  // WithFloatType
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cpu::sparse {

/// Throws WEFT_ERR_INVALID_ARGUMENT "<op>: <what>".
[[noreturn]] inline void Fail(const std::string& op, const std::string& what) {
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, op + ": " + what);
}

/// The aux arrays' index dtypes a view reads (MXNet writes int64; int32 is accepted as there).
inline bool IsIndexDType(int32_t d) { return d == WEFT_DTYPE_INT64 || d == WEFT_DTYPE_INT32; }

/// For a ClaimStorage: sets the outputs' storage types to `want` and returns true, unless the
/// output count differs or the caller fixed another storage type for one of them.
inline bool ClaimOutputs(sdk::StorageQuery& q, std::initializer_list<int32_t> want) {
  if (q.output_stypes.size() != want.size()) return false;
  size_t o = 0;
  for (int32_t w : want)
    if (const int32_t fixed = q.output_stypes[o++]; fixed >= 0 && fixed != w) return false;
  std::copy(want.begin(), want.end(), q.output_stypes.begin());
  return true;
}

/// Calls f(int64_t{}) or f(int32_t{}) for an aux array's dtype; other dtypes are refused by name.
template <typename F>
void OnIndexType(int32_t dtype, const std::string& op, const std::string& what, F&& f) {
  if (dtype == WEFT_DTYPE_INT64) {
    f(int64_t{});
  } else if (dtype == WEFT_DTYPE_INT32) {
    f(int32_t{});
  } else {
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, op + ": " + what + " must be int64 or int32, not " + sdk::DTypeName(dtype));
  }
}

/// Calls f(T{}) for T the C++ type of a dense index array's dtype (MXNet accepts float32,
/// float64, int32 and int64 indices; mx.nd.array makes float32 ones); others are refused by name.
template <typename F>
void OnNumericType(int32_t dtype, const std::string& op, const std::string& what, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(float{});
    case WEFT_DTYPE_FLOAT64:
      return f(double{});
    case WEFT_DTYPE_INT32:
      return f(int32_t{});
    case WEFT_DTYPE_INT64:
      return f(int64_t{});
    default:
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       op + ": " + what + " must be float32, float64, int32 or int64, not " + sdk::DTypeName(dtype));
  }
}

/// A csr input, read as int64 positions whatever its aux dtype.
template <typename T>
struct CsrView {
  int64_t rows = 0, cols = 0, nnz = 0;
  const T* values = nullptr;
  std::vector<int64_t> indptr, indices;  // widened copies: the kernels index with them freely

  int64_t begin(int64_t r) const { return indptr[static_cast<size_t>(r)]; }
  int64_t end(int64_t r) const { return indptr[static_cast<size_t>(r) + 1]; }
  int64_t col(int64_t p) const { return indices[static_cast<size_t>(p)]; }
};

namespace detail {
template <typename I>
std::vector<int64_t> Widen(const sdk::DeviceCall& c, const sdk::DeviceTensor& t, int64_t n) {
  const I* p = HostData<const I>(c, t, n);
  return std::vector<int64_t>(p, p + n);
}
inline std::vector<int64_t> ReadIndex(const sdk::DeviceCall& c, const sdk::DeviceTensor& t, int64_t n,
                                      const std::string& op, const std::string& what) {
  std::vector<int64_t> out;
  OnIndexType(t.dtype(), op, what, [&](auto tag) { out = Widen<decltype(tag)>(c, t, n); });
  return out;
}
}  // namespace detail

/// Input `i` of call `c` (a 2-d csr array called `name` in errors), checked.
template <typename T>
CsrView<T> ReadCsr(const sdk::DeviceCall& c, size_t i, const std::string& op, const std::string& name) {
  CsrView<T> v;
  const sdk::DeviceTensor& t = c.inputs[i];
  if (t.ndim() != 2) Fail(op, "the csr " + name + " must be 2-d, not " + std::to_string(t.ndim()) + "-d");
  v.rows = t.dim(0);
  v.cols = t.dim(1);
  const sdk::DeviceTensor ptr = c.InputAux(i, 0), idx = c.InputAux(i, 1);
  if (ptr.dim(0) != v.rows + 1)
    Fail(op, "the csr " + name + "'s indptr has " + std::to_string(ptr.dim(0)) +
                 " entries, not rows + 1 = " + std::to_string(v.rows + 1));
  v.nnz = idx.dim(0);
  v.indptr = detail::ReadIndex(c, ptr, v.rows + 1, op, "the csr " + name + "'s indptr");
  v.indices = detail::ReadIndex(c, idx, v.nnz, op, "the csr " + name + "'s indices");
  v.values = HostData<const T>(c, t, v.nnz);
  auto bad = [&](const std::string& what) { Fail(op, "the csr " + name + " is malformed: " + what); };
  if (v.indptr[0] != 0) bad("indptr[0] is " + std::to_string(v.indptr[0]) + ", not 0");
  if (v.indptr.back() != v.nnz)
    bad("indptr ends at " + std::to_string(v.indptr.back()) + " but " + std::to_string(v.nnz) + " values are stored");
  for (int64_t r = 0; r < v.rows; ++r) {
    if (v.end(r) < v.begin(r) || v.end(r) > v.nnz)
      bad("indptr falls or passes nnz at row " + std::to_string(r) + " (indptr[" + std::to_string(r + 1) +
          "] = " + std::to_string(v.end(r)) + ")");
    for (int64_t p = v.begin(r); p < v.end(r); ++p) {
      const int64_t col = v.col(p);
      if (col < 0 || col >= v.cols)
        bad("column index " + std::to_string(col) + " at position " + std::to_string(p) + " (row " + std::to_string(r) +
            ") is outside [0, " + std::to_string(v.cols) + ")");
      if (p > v.begin(r) && col <= v.col(p - 1))
        bad("column indices of row " + std::to_string(r) + " are not sorted and distinct at position " +
            std::to_string(p) + " (" + std::to_string(v.col(p - 1)) + " then " + std::to_string(col) + ")");
    }
  }
  return v;
}

/// A row_sparse input: `count` stored rows of `width` elements each.
template <typename T>
struct RspView {
  int64_t rows = 0, width = 0, count = 0;
  const T* values = nullptr;
  std::vector<int64_t> indices;  // ascending stored rows

  const T* row(int64_t k) const { return values + k * width; }
  /// Position of row r among the stored ones, or -1 (binary search: the indices are ascending).
  int64_t Find(int64_t r) const {
    size_t lo = 0, hi = indices.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (indices[mid] < r)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < indices.size() && indices[lo] == r ? static_cast<int64_t>(lo) : -1;
  }
};

/// Input `i` of call `c` (a row_sparse array called `name` in errors), checked.
template <typename T>
RspView<T> ReadRsp(const sdk::DeviceCall& c, size_t i, const std::string& op, const std::string& name) {
  RspView<T> v;
  const sdk::DeviceTensor& t = c.inputs[i];
  if (t.ndim() < 1) Fail(op, "the row_sparse " + name + " has no rows (a scalar)");
  v.rows = t.dim(0);
  v.width = v.rows == 0 ? 0 : t.size() / v.rows;
  const sdk::DeviceTensor idx = c.InputAux(i, 0);
  v.count = idx.dim(0);
  v.indices = detail::ReadIndex(c, idx, v.count, op, "the row_sparse " + name + "'s indices");
  v.values = HostData<const T>(c, t, v.count * v.width);
  int64_t prev = -1;
  for (int64_t k = 0; k < v.count; ++k) {
    const int64_t r = v.indices[static_cast<size_t>(k)];
    if (r <= prev || r >= v.rows)
      Fail(op, "the row_sparse " + name + "'s index " + std::to_string(r) + " at position " + std::to_string(k) +
                   " is outside [0, " + std::to_string(v.rows) +
                   ") or not above the one before (indices must be sorted and distinct; check_format reports the "
                   "details)");
    prev = r;
  }
  return v;
}

/// A dense tensor of values of type T at `t`, as a host pointer to all of it.
template <typename T>
T* Dense(const sdk::DeviceCall& c, const sdk::DeviceTensor& t) {
  return HostData<T>(c, t, t.size());
}

/// Asks the host for row_sparse output `o` storing `rows` (ascending) of `width` elements each,
/// writes the indices and returns the values (uninitialised when `zero` is false).
template <typename T>
T* AllocRsp(const sdk::DeviceCall& c, int32_t o, const std::vector<int64_t>& rows, int64_t width, bool zero) {
  const auto count = static_cast<int64_t>(rows.size());
  const weft_sparse_alloc_args got = c.AllocSparseOutput(o, count);
  if (count == 0) return nullptr;
  int64_t* idx = HostData<int64_t>(c, sdk::DeviceTensor(got.aux[0]), count);
  std::copy(rows.begin(), rows.end(), idx);
  T* values = HostData<T>(c, sdk::DeviceTensor(got.values), count * width);
  if (zero) std::fill(values, values + count * width, T(0));
  return values;
}

/// The distinct columns a csr stores in the rows `keep_row(r)` accepts (every row by default),
/// ascending, and each column's position among them (-1 for a column they never store).
struct ColumnRanks {
  std::vector<int64_t> columns, rank;
  template <typename T, typename Keep = bool (*)(int64_t)>
  explicit ColumnRanks(
      const CsrView<T>& a, Keep keep_row = [](int64_t) { return true; })
      : rank(static_cast<size_t>(a.cols), -1) {
    constexpr int64_t kStored = -2;  // a mark until the ranks are known
    for (int64_t r = 0; r < a.rows; ++r)
      if (keep_row(r))
        for (int64_t p = a.begin(r); p < a.end(r); ++p) rank[static_cast<size_t>(a.col(p))] = kStored;
    for (int64_t col = 0; col < a.cols; ++col)
      if (rank[static_cast<size_t>(col)] == kStored) {
        rank[static_cast<size_t>(col)] = static_cast<int64_t>(columns.size());
        columns.push_back(col);
      }
  }
};

}  // namespace weft::cpu::sparse

// sparse_retain on row_sparse arrays, with its gradient, as sparse kernels (SDK 2.1): MXNet
// 1.9's src/operator/tensor/sparse_retain-inl.h. _square_sum is reduce_sparse.cc's.
//
// The same kernels run dense (registered with Add): a bound graph of the MXNet binding runs its
// sparse arrays as dense copies (sparse_executor.h), where _sparse_retain's values are data's rows
// at the indices and zero elsewhere, and its gradient out_grad's rows there and zero elsewhere.
//
//   _sparse_retain(data row_sparse, indices dense)   -> row_sparse: the rows `indices` names, each
//       stored (zero when data lacks it), in the order given; MXNet stores them as given, so
//       sorted distinct indices give exactly its result. Unsorted or repeated ones are sorted and
//       made distinct here (MXNet would store a malformed array with the same dense values); an
//       index outside [0, rows) is refused by position (MXNet stores it).
//   _backward_sparse_retain(out_grad dense, data, indices) -> (row_sparse: out_grad's rows at the
//       same indices, MXNet's SparseRetainOpBackwardEx; indices' gradient, dense zeros). A dense
//       gradient of data has no kernel, as in MXNet.
//
// Every row_sparse input is checked (sparse_views.h) before anything is written. Work is split
// over stored rows (ParallelChunks): each output row is one thread's, so results do not depend
// on the team size.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "parallel.h"
#include "sparse_views.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cpu {
namespace {

using sparse::RspView;

// The row ids of a dense index array (any numeric dtype MXNet accepts for indices), checked
// against [0, rows), sorted and made distinct.
std::vector<int64_t> RetainedRows(const sdk::DeviceCall& c, const sdk::DeviceTensor& t, int64_t rows,
                                  const std::string& op) {
  const int64_t n = t.size();
  std::vector<int64_t> ids(static_cast<size_t>(n));
  auto read = [&](auto tag) {
    using I = decltype(tag);
    const I* p = HostData<const I>(c, t, n);
    for (int64_t k = 0; k < n; ++k) {
      const I v = p[k];
      // A float index is truncated toward zero, as MXNet's cast (mx.nd.array makes float32
      // indices; MXNet's numeric gradient checks move them by ±eps/2); the range is checked before
      // the conversion, which a NaN or a huge value would make undefined.
      const double d = std::trunc(static_cast<double>(v));
      if (!(d >= 0 && d < static_cast<double>(rows)))
        sparse::Fail(op, "indices[" + std::to_string(k) + "] = " + std::to_string(static_cast<double>(v)) +
                             " is not a row of data (rows 0.." + std::to_string(rows - 1) + ")");
      ids[static_cast<size_t>(k)] = static_cast<int64_t>(v);
    }
  };
  sparse::OnNumericType(t.dtype(), op, "indices", read);
  if (!std::is_sorted(ids.begin(), ids.end()) || std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return ids;
}

// _sparse_retain and _backward_sparse_retain: rows of a row_sparse (forward) or dense (backward)
// source at the given indices, into a row_sparse output.
template <bool kBackward>
class RetainKernel {
 public:
  // Backward: (out_grad, data, indices) -> (data's gradient, indices' gradient: zero, dense).
  static bool ClaimStorage(sdk::StorageQuery& q) {  // the sparse registration's
    if (q.inputs.empty() || q.inputs[0].ndim() < 1) return false;
    if constexpr (kBackward) {
      const int32_t data = q.input_stypes.size() == 3 ? q.input_stypes[1] : -1;
      if (q.input_stypes[0] != WEFT_STYPE_DEFAULT || q.input_stypes[2] != WEFT_STYPE_DEFAULT ||
          (data != WEFT_STYPE_ROW_SPARSE && data != WEFT_STYPE_DEFAULT))
        return false;
      return sparse::ClaimOutputs(q, {WEFT_STYPE_ROW_SPARSE, WEFT_STYPE_DEFAULT});
    }
    return q.input_stypes == std::vector<int32_t>{WEFT_STYPE_ROW_SPARSE, WEFT_STYPE_DEFAULT} &&
           sparse::ClaimOutputs(q, {WEFT_STYPE_ROW_SPARSE});
  }

  explicit RetainKernel(const sdk::KernelSetup& s) : op_(s.op_name) {
    s.ExpectCounts(kBackward ? 3 : 2, kBackward ? 2 : 1);
    if (s.outputs[0].shape != s.inputs[0].shape || s.outputs[0].dtype != s.inputs[0].dtype)
      sparse::Fail(op_, "the output must have data's shape and dtype");
    if (kBackward && s.inputs[1].shape != s.inputs[0].shape) sparse::Fail(op_, "out_grad and data must have one shape");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const sdk::DeviceTensor& src = c.inputs[0];
    const int64_t rows = src.dim(0), width = rows == 0 ? 0 : src.size() / rows;
    const std::vector<int64_t> ids = RetainedRows(c, c.inputs[kBackward ? 2 : 1], rows, op_);
    // Forward: data's row for each id (-1 when data lacks it); backward: out_grad is dense.
    std::vector<int64_t> at(ids.size());
    const T* values = nullptr;
    if (c.InputStype(0) == WEFT_STYPE_DEFAULT) {  // dense data (forward) or out_grad (backward)
      values = sparse::Dense<const T>(c, src);
      std::copy(ids.begin(), ids.end(), at.begin());
    } else {
      const RspView<T> data = sparse::ReadRsp<T>(c, 0, op_, "data");
      values = data.values;
      for (size_t k = 0; k < ids.size(); ++k) at[k] = data.Find(ids[k]);
    }
    if constexpr (kBackward) {  // the indices' gradient is zero
      if (!sdk::IsNull(c.req[1]) && c.req[1] != WEFT_REQ_ADD) {
        auto zero = [&](auto tag) {
          using I = decltype(tag);
          I* g = sparse::Dense<I>(c, c.outputs[1]);
          std::fill(g, g + c.outputs[1].size(), I(0));
        };
        sparse::OnNumericType(c.outputs[1].dtype(), op_, "the indices' gradient", zero);
      }
    }
    const auto count = static_cast<int64_t>(ids.size());
    if (c.output_stypes.empty() || c.output_stypes[0] == WEFT_STYPE_DEFAULT) {
      WriteDense(c, values, ids, width);
      return;
    }
    T* out = sparse::AllocRsp<T>(c, 0, ids, width, false);
    ParallelChunks(count, count * width, [&](int64_t k0, int64_t k1, int) {
      for (int64_t k = k0; k < k1; ++k) {
        T* dst = out + k * width;
        const int64_t from = at[static_cast<size_t>(k)];
        if (from < 0)
          std::fill(dst, dst + width, T(0));
        else
          std::memcpy(dst, values + from * width, static_cast<size_t>(width) * sizeof(T));
      }
    });
  }

  // The dense result: the rows `ids` of `values` (a dense array of the output's shape), zero
  // elsewhere; added to the output for req add.
  template <typename T>
  static void WriteDense(const sdk::DeviceCall& c, const T* values, const std::vector<int64_t>& ids, int64_t width) {
    if (sdk::IsNull(c.req[0])) return;
    T* out = sparse::Dense<T>(c, c.outputs[0]);
    const bool add = c.req[0] == WEFT_REQ_ADD;
    if (!add) std::fill(out, out + c.outputs[0].size(), T(0));
    const auto count = static_cast<int64_t>(ids.size());
    ParallelChunks(count, count * width, [&](int64_t k0, int64_t k1, int) {
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t r = ids[static_cast<size_t>(k)];
        for (int64_t j = 0; j < width; ++j) out[r * width + j] += values[r * width + j];
      }
    });
  }

  std::string op_;
};

}  // namespace

void RegisterSparseRowOps(sdk::KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  const uint32_t stypes = WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE);
  table.AddSparse<RetainKernel<false>>("_sparse_retain", floats, stypes);
  table.AddSparse<RetainKernel<true>>("_backward_sparse_retain", floats, stypes);
  table.Add<RetainKernel<false>>("_sparse_retain", floats);
  table.Add<RetainKernel<true>>("_backward_sparse_retain", floats);
}

}  // namespace weft::cpu

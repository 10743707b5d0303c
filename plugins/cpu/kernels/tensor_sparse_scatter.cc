// MXNet 1.9's scatter ops (src/operator/tensor/elemwise_scatter_op.cc; defs/elemwise.cc), as
// checked on libmxnet 1.9.1:
//
//   _scatter_plus_scalar(data, scalar), _scatter_minus_scalar(data, scalar)
//       row_sparse data -> row_sparse storing data's rows: data ± scalar on every element of them
//                          (a zero inside a stored row becomes ±scalar);
//       csr data        -> csr storing data's elements (indptr and indices kept): each value ± scalar;
//       dense data      -> _plus_scalar / _minus_scalar.
//   _scatter_elemwise_div(lhs, rhs)
//       row_sparse lhs, rhs dense, row_sparse or csr -> row_sparse storing lhs's rows: lhs / rhs on
//                          them (rhs's missing values are zeros: 0 / 0 is NaN there, as in MXNet);
//       any other lhs   -> elemwise_div on dense arrays (MXNet's fallback, a dense result).
//
// The sparse kernels (SDK 2.1) take float32 and float64; the dense ones are the plain ops' kernel
// classes under the scatter names. Work is split over stored rows or values (ParallelChunks):
// each output element is one thread's, so results do not depend on the team size.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "elemwise_arith_ops.h"
#include "parallel.h"
#include "sparse_views.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cpu {
namespace {

using sparse::CsrView;
using sparse::RspView;

// Checks that the output has the first input's shape and dtype (and the second input's shape).
void CheckShapes(const sdk::KernelSetup& s, size_t inputs, const std::string& op) {
  s.ExpectCounts(static_cast<int>(inputs), 1);
  if (s.outputs[0].shape != s.inputs[0].shape || s.outputs[0].dtype != s.inputs[0].dtype)
    sparse::Fail(op, "the output must have the input's shape and dtype");
  if (inputs == 2 && s.inputs[1].shape != s.inputs[0].shape) sparse::Fail(op, "lhs and rhs must have one shape");
}

// _scatter_plus_scalar / _scatter_minus_scalar of a row_sparse or csr array.
template <typename Op>
class ScatterScalarKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes.size() != 1) return false;
    const int32_t stype = q.input_stypes[0];
    if (stype != WEFT_STYPE_ROW_SPARSE && stype != WEFT_STYPE_CSR) return false;
    return sparse::ClaimOutputs(q, {stype});
  }

  explicit ScatterScalarKernel(const sdk::KernelSetup& s)
      : op_(s.op_name), scalar_(s.Params<sdk::ScalarParam>().scalar) {
    CheckShapes(s, 1, op_);
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const auto s = static_cast<T>(scalar_);
    const T* in = nullptr;
    T* out = nullptr;
    int64_t n = 0;
    if (c.InputStype(0) == WEFT_STYPE_ROW_SPARSE) {
      const RspView<T> x = sparse::ReadRsp<T>(c, 0, op_, "data");
      n = x.count * x.width;
      in = x.values;
      out = sparse::AllocRsp<T>(c, 0, x.indices, x.width, false);
    } else {
      const CsrView<T> x = sparse::ReadCsr<T>(c, 0, op_, "data");
      const weft_sparse_alloc_args got = c.AllocSparseOutput(0, x.nnz);
      int64_t* indptr = HostData<int64_t>(c, sdk::DeviceTensor(got.aux[0]), x.rows + 1);
      std::copy(x.indptr.begin(), x.indptr.end(), indptr);
      n = x.nnz;
      if (n == 0) return;
      std::copy(x.indices.begin(), x.indices.end(), HostData<int64_t>(c, sdk::DeviceTensor(got.aux[1]), n));
      in = x.values;
      out = HostData<T>(c, sdk::DeviceTensor(got.values), n);
    }
    ParallelChunks(n, n, [&](int64_t i0, int64_t i1, int) {
      for (int64_t i = i0; i < i1; ++i) out[i] = Op::Fwd(in[i], s);
    });
  }

  std::string op_;
  double scalar_;
};

// _scatter_elemwise_div of a row_sparse lhs by a dense, row_sparse or csr rhs.
class ScatterDivKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes.size() != 2 || q.input_stypes[0] != WEFT_STYPE_ROW_SPARSE) return false;
    if (q.input_stypes[1] == WEFT_STYPE_CSR && q.inputs[1].ndim() != 2) return false;
    return sparse::ClaimOutputs(q, {WEFT_STYPE_ROW_SPARSE});
  }

  explicit ScatterDivKernel(const sdk::KernelSetup& s) : op_(s.op_name) { CheckShapes(s, 2, op_); }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const RspView<T> lhs = sparse::ReadRsp<T>(c, 0, op_, "lhs");
    const int64_t width = lhs.width;
    // rhs's row r into `row` (width values; zeros where rhs stores nothing).
    std::function<void(int64_t, T*)> rhs_row;
    const int32_t rhs_stype = c.InputStype(1);
    RspView<T> rsp;
    CsrView<T> csr;
    if (rhs_stype == WEFT_STYPE_ROW_SPARSE) {
      rsp = sparse::ReadRsp<T>(c, 1, op_, "rhs");
      rhs_row = [&](int64_t r, T* row) {
        const int64_t k = rsp.Find(r);
        if (k < 0)
          std::fill(row, row + width, T(0));
        else
          std::copy(rsp.row(k), rsp.row(k) + width, row);
      };
    } else if (rhs_stype == WEFT_STYPE_CSR) {
      csr = sparse::ReadCsr<T>(c, 1, op_, "rhs");
      rhs_row = [&](int64_t r, T* row) {
        std::fill(row, row + width, T(0));
        for (int64_t p = csr.begin(r); p < csr.end(r); ++p) row[csr.col(p)] = csr.values[p];
      };
    } else {
      const T* dense = sparse::Dense<const T>(c, c.inputs[1]);
      rhs_row = [dense, width](int64_t r, T* row) { std::copy(dense + r * width, dense + (r + 1) * width, row); };
    }
    T* out = sparse::AllocRsp<T>(c, 0, lhs.indices, width, false);
    ParallelChunks(lhs.count, lhs.count * width, [&](int64_t k0, int64_t k1, int) {
      std::vector<T> row(static_cast<size_t>(width));
      for (int64_t k = k0; k < k1; ++k) {
        rhs_row(lhs.indices[static_cast<size_t>(k)], row.data());
        const T* a = lhs.row(k);
        for (int64_t j = 0; j < width; ++j) out[k * width + j] = a[j] / row[static_cast<size_t>(j)];
      }
    });
  }

  std::string op_;
};

}  // namespace

void RegisterSparseScatterOps(sdk::KernelTable& table) {
  namespace arith = tensor::arith;
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  const uint32_t stypes =
      WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE) | WEFT_STYPE_BIT(WEFT_STYPE_CSR);
  table.AddSparse<ScatterScalarKernel<arith::PlusScalar>>("_scatter_plus_scalar", floats, stypes);
  table.AddSparse<ScatterScalarKernel<arith::MinusScalar>>("_scatter_minus_scalar", floats, stypes);
  table.AddSparse<ScatterDivKernel>("_scatter_elemwise_div", floats, stypes);
  // Dense arrays, and the gradients (MXNet's: _copy of out_grad, _backward_div): the plain ops'
  // kernels under the scatter ops' names.
  using Wide = tensor::ColdAll;
  tensor::AddScalar<arith::PlusScalar, Wide>(table, "_scatter_plus_scalar", "_backward_scatter_plus_scalar");
  tensor::AddScalar<arith::MinusScalar, Wide>(table, "_scatter_minus_scalar", "_backward_scatter_minus_scalar");
  tensor::AddElemwise<arith::Div, Wide>(table, "_scatter_elemwise_div", "_backward_scatter_elemwise_div");
}

}  // namespace weft::cpu

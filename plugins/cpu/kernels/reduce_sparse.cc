// _square_sum on row_sparse arrays, with its gradient, as sparse kernels (SDK 2.1): MXNet 1.9's
// src/operator/tensor/square_sum-inl.h. The reduce family's sparse part (the dense _square_sum
// is reduce_kernels.cc's).
//
//   _square_sum(data row_sparse 2-d, axis=1, keepdims) -> row_sparse storing data's rows (zero or
//       not) with their sums of squares; axis=1 without keepdims and axis=0 -> dense
//       (SquareSumForwardInferStorageType). Other axes are not claimed: the dense fallback runs
//       them (MXNet refuses them).
//   _backward_square_sum(out_grad dense, data row_sparse) -> row_sparse storing data's rows:
//       2·data·out_grad, out_grad broadcast along the reduced axis.
//
// Every row_sparse input is checked (sparse_views.h) before anything is written. Work is split
// over stored rows (ParallelChunks): each output row is one thread's, so results do not depend
// on the team size.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "parallel.h"
#include "sparse_views.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/reduce.hpp"

namespace weft::cpu {
namespace {

using sparse::RspView;

// The axis _square_sum reduces on a 2-d row_sparse array: 1 (each row's sum; -1 is the same axis)
// or 0 (each column's), -1 for anything the sparse kernels do not take.
int SquareSumAxis(const sdk::ReduceParam& p) {
  if (p.exclude || p.axis.size() != 1) return -1;
  if (p.axis[0] == 1 || p.axis[0] == -1) return 1;
  return p.axis[0] == 0 ? 0 : -1;
}

class SquareSumKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes != std::vector<int32_t>{WEFT_STYPE_ROW_SPARSE} || q.inputs[0].ndim() != 2) return false;
    sdk::ReduceParam p;
    try {
      p = sdk::ParseParams<sdk::ReduceParam>(q.attrs);
    } catch (const sdk::Error&) {
      return false;  // the dense path reports bad attributes
    }
    const int axis = SquareSumAxis(p);
    if (axis < 0) return false;
    return sparse::ClaimOutputs(q, {axis == 1 && p.keepdims ? WEFT_STYPE_ROW_SPARSE : WEFT_STYPE_DEFAULT});
  }

  explicit SquareSumKernel(const sdk::KernelSetup& s) : op_(s.op_name) {
    s.ExpectCounts(1, 1);
    axis_ = SquareSumAxis(s.Params<sdk::ReduceParam>());
    rsp_out_ = !s.output_stypes.empty() && s.output_stypes[0] == WEFT_STYPE_ROW_SPARSE;
    const int64_t want = axis_ == 1 ? s.inputs[0].dim(0) : s.inputs[0].dim(1);
    if (axis_ < 0 || s.outputs[0].size() != want) sparse::Fail(op_, "the output does not fit data reduced on the axis");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const RspView<T> x = sparse::ReadRsp<T>(c, 0, op_, "data");
    auto row_sum = [&](int64_t k) {
      T s = 0;
      for (const T* v = x.row(k); v != x.row(k) + x.width; ++v) s += *v * *v;
      return s;
    };
    if (rsp_out_) {
      T* out = sparse::AllocRsp<T>(c, 0, x.indices, 1, false);
      ParallelChunks(x.count, x.count * x.width, [&](int64_t k0, int64_t k1, int) {
        for (int64_t k = k0; k < k1; ++k) out[k] = row_sum(k);
      });
      return;
    }
    if (sdk::IsNull(c.req[0])) return;
    T* out = sparse::Dense<T>(c, c.outputs[0]);
    const int64_t n = c.outputs[0].size();
    // Rows (or columns) data does not store sum to zero: written as such, or left for add.
    if (c.req[0] != WEFT_REQ_ADD) std::fill(out, out + n, T(0));
    if (axis_ == 1) {
      ParallelChunks(x.count, x.count * x.width, [&](int64_t k0, int64_t k1, int) {
        for (int64_t k = k0; k < k1; ++k) out[x.indices[static_cast<size_t>(k)]] += row_sum(k);
      });
      return;
    }
    // Each column is one thread's, summed over the stored rows in order.
    ParallelChunks(x.width, x.count * x.width, [&](int64_t j0, int64_t j1, int) {
      for (int64_t j = j0; j < j1; ++j) {
        T s = 0;
        for (int64_t k = 0; k < x.count; ++k) s += x.row(k)[j] * x.row(k)[j];
        out[j] += s;
      }
    });
  }

  std::string op_;
  int axis_ = 1;
  bool rsp_out_ = false;
};

class SquareSumBackwardKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes != std::vector<int32_t>{WEFT_STYPE_DEFAULT, WEFT_STYPE_ROW_SPARSE} || q.inputs[1].ndim() != 2)
      return false;
    try {
      if (SquareSumAxis(sdk::ParseParams<sdk::ReduceParam>(q.attrs)) < 0) return false;
    } catch (const sdk::Error&) {
      return false;
    }
    return sparse::ClaimOutputs(q, {WEFT_STYPE_ROW_SPARSE});
  }

  explicit SquareSumBackwardKernel(const sdk::KernelSetup& s) : op_(s.op_name) {
    s.ExpectCounts(2, 1);
    axis_ = SquareSumAxis(s.Params<sdk::ReduceParam>());
    const int64_t want = axis_ == 1 ? s.inputs[1].dim(0) : s.inputs[1].dim(1);
    if (s.inputs[0].size() != want)
      sparse::Fail(op_, "out_grad has " + std::to_string(s.inputs[0].size()) + " elements, data reduced on axis " +
                            std::to_string(axis_) + " has " + std::to_string(want));
    if (s.outputs[0].shape != s.inputs[1].shape) sparse::Fail(op_, "the gradient must have data's shape");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[1].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const RspView<T> x = sparse::ReadRsp<T>(c, 1, op_, "data");
    const T* og = sparse::Dense<const T>(c, c.inputs[0]);
    T* out = sparse::AllocRsp<T>(c, 0, x.indices, x.width, false);
    ParallelChunks(x.count, x.count * x.width, [&](int64_t k0, int64_t k1, int) {
      for (int64_t k = k0; k < k1; ++k) {
        const T* v = x.row(k);
        T* dst = out + k * x.width;
        if (axis_ == 1) {
          const T g = 2 * og[x.indices[static_cast<size_t>(k)]];
          for (int64_t j = 0; j < x.width; ++j) dst[j] = g * v[j];
        } else {
          for (int64_t j = 0; j < x.width; ++j) dst[j] = 2 * og[j] * v[j];
        }
      }
    });
  }

  std::string op_;
  int axis_ = 1;
};

}  // namespace

void RegisterSparseSquareSum(sdk::KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  const uint32_t stypes = WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE);
  table.AddSparse<SquareSumKernel>("_square_sum", floats, stypes);
  table.AddSparse<SquareSumBackwardKernel>("_backward_square_sum", floats, stypes);
}

}  // namespace weft::cpu

// weft GPU kernel layer — the tensor family's transposes (cpu: tensor_transpose.cc): transpose
// and SwapAxis, forward and backward, in every kMoveTypes dtype, as strided copies (gpu_strided.h).
#pragma once

#include <utility>
#include <vector>

#include "gpu_kernel.h"
#include "gpu_strided.h"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::WEFT_GPU_NS {

/// transpose (axes; () reverses) and SwapAxis (dim1, dim2), forward and backward (the inverse).
template <class L>
class TransposeKernel {
 public:
  explicit TransposeKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s, kMoveTypes);
    const bool backward = IsBackward(s);
    const TensorDesc& fwd_in = backward ? s.outputs[0] : s.inputs[0];
    const TensorDesc& fwd_out = backward ? s.inputs[0] : s.outputs[0];
    const int n = fwd_in.ndim();
    std::vector<int> perm(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = k;
    const bool swap = s.op_name.find("SwapAxis") != std::string::npos;
    const std::vector<int64_t> axes = swap ? std::vector<int64_t>{} : s.Params<sdk::TransposeParam>().axes;
    if (swap) {
      const auto p = s.Params<sdk::SwapAxisParam>();
      std::swap(perm[static_cast<size_t>(NormalizeAxis(s, p.dim1, n, "dim1"))],
                perm[static_cast<size_t>(NormalizeAxis(s, p.dim2, n, "dim2"))]);
    } else if (axes.empty()) {
      for (int k = 0; k < n; ++k) perm[static_cast<size_t>(k)] = n - 1 - k;
    } else {
      if (static_cast<int>(axes.size()) != n)
        Invalid(s, "axes " + sdk::FormatTuple(axes) + " must name each axis once");
      std::vector<bool> seen(static_cast<size_t>(n), false);
      for (int k = 0; k < n; ++k) {
        const int a = NormalizeAxis(s, axes[static_cast<size_t>(k)], n, "axes");
        if (seen[static_cast<size_t>(a)]) Invalid(s, "axes " + sdk::FormatTuple(axes) + " repeats an axis");
        seen[static_cast<size_t>(a)] = true;
        perm[static_cast<size_t>(k)] = a;
      }
    }
    bool ok = fwd_out.ndim() == n;
    for (int k = 0; ok && k < n; ++k) ok = fwd_out.dim(k) == fwd_in.dim(perm[static_cast<size_t>(k)]);
    if (!ok) Invalid(s, "output shape does not match the input shape permuted by axes");
    std::vector<int> q = perm;  // output axis k reads input axis q[k]
    if (backward)
      for (int k = 0; k < n; ++k) q[static_cast<size_t>(perm[static_cast<size_t>(k)])] = k;
    const Shape in_st = RowMajorStrides(s.inputs[0].shape);
    Shape from(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) from[static_cast<size_t>(k)] = in_st[static_cast<size_t>(q[static_cast<size_t>(k)])];
    plan_ = MakeIndexPlan<2>(s.outputs[0].shape, {RowMajorStrides(s.outputs[0].shape), from});
  }
  void Compute(const DeviceCall& c) const {
    RunCopy<L>(c, "transpose", c.inputs[0].dtype(), c.req[0], plan_, c.inputs[0], c.outputs[0]);
  }

 private:
  IndexPlan<2> plan_;
};

/// Registers transpose, SwapAxis and their backward ops for launcher L.
template <class L>
void RegisterTensorTransposeKernels(sdk::KernelTable& t) {
  for (const char* op : {"transpose", "_backward_transpose", "SwapAxis", "_backward_SwapAxis"})
    t.Add<TransposeKernel<L>>(op, kMoveTypes);
}

}  // namespace weft::WEFT_GPU_NS

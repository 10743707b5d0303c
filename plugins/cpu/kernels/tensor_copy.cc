// Data copies: _copy, _backward_copy, Flatten, Reshape, expand_dims, BlockGrad's forward (the
// shape is the definition's business; the kernel moves elements; squeeze too), reshape_like,
// zeros_like / ones_like and the input-less fills _zeros, _ones, _full, _arange, _linspace and _eye.
#include <cmath>

#include "tensor_kernels.h"
#include "weft/sdk/ops/init.hpp"

namespace weft::cpu::tensor {
namespace {

// out (=|+=) in. In-place (the output aliasing its input) copies nothing.
class CopyKernel {
 public:
  explicit CopyKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
    if (s.inputs[0].size() != s.outputs[0].size()) {
      Invalid(s, "input has " + std::to_string(s.inputs[0].size()) + " elements, output " +
                     std::to_string(s.outputs[0].size()) + "; a copy keeps the element count");
    }
  }
  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    CopyOrAdd(c.outputs[0].raw(), in.raw(), in.size(), in.dtype(), c.req[0]);
  }
};

// out (=|+=) a constant of the input's dtype; the input is only a shape donor.
template <int kValue>
class FillKernel {
 public:
  explicit FillKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s);
  }
  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    FillOrAdd(out.raw(), kValue, out.size(), out.dtype(), c.req[0]);
  }
};

// reshape_like: output (=|+=) lhs (rhs only gives the shape). _backward_reshape_like: out_grad ->
// lhs gradient (a copy), rhs gradient (zeros).
class ReshapeLikeKernel {
 public:
  explicit ReshapeLikeKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    s.ExpectCounts(backward_ ? 1 : 2, backward_ ? 2 : 1);
    if (s.inputs[0].size() != s.outputs[0].size() || s.inputs[0].dtype != s.outputs[0].dtype)
      Invalid(s, "lhs " + sdk::FormatTuple(backward_ ? s.outputs[0].shape : s.inputs[0].shape) + " and output " +
                     sdk::FormatTuple(backward_ ? s.inputs[0].shape : s.outputs[0].shape) +
                     " must have one element count and dtype");
  }
  void Compute(const KernelCall& c) const {
    const Tensor& in = c.inputs[0];
    CopyOrAdd(c.outputs[0].raw(), in.raw(), in.size(), in.dtype(), c.req[0]);
    if (backward_) FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
  }

 private:
  bool backward_;
};

// _zeros, _ones, _full (attribute `value`); _arange (start, step, repeat:
// element i is start + step·⌊i / repeat⌋, computed in double and converted once, as MXNet's range
// kernel; stop None counts from 0) and _linspace (start + i·(stop − start) / (num − endpoint)); _eye
// (ones on diagonal k of an N × M array). The output's dtype is the definition's.
class InitKernel {
 public:
  explicit InitKernel(const KernelSetup& s) : kind_(KindOf(s.op_name)) {
    s.ExpectCounts(0, 1);
    DispatchAll(s.op_name.c_str(), s.outputs[0].dtype, [](auto) {});
    if (kind_ == Kind::kArange) {
      const auto p = s.Params<sdk::ArangeParam>();
      start_ = p.First();
      step_ = p.step;
      repeat_ = p.repeat;
    } else if (kind_ == Kind::kLinspace) {
      const auto p = s.Params<sdk::LinspaceParam>();
      start_ = p.start;
      const int64_t steps = p.num - (p.endpoint ? 1 : 0);
      step_ = steps > 0 ? (p.stop - start_) / static_cast<double>(steps) : 0.0;
    } else if (kind_ == Kind::kEye) {
      if (s.outputs[0].ndim() != 2) Invalid(s, "the output must be 2-D");
      k_ = s.Params<sdk::EyeParam>().k;
    } else {
      value_ = s.op_name == "_ones" ? 1.0 : s.op_name == "_full" ? s.Params<sdk::FullParam>().value : 0.0;
    }
  }
  void Compute(const KernelCall& c) const {
    const Tensor& out = c.outputs[0];
    if (kind_ == Kind::kFill) {
      FillOrAdd(out.raw(), value_, out.size(), out.dtype(), c.req[0]);
      return;
    }
    DispatchAll("init", out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = static_cast<T*>(out.raw());
      const int64_t cols = kind_ == Kind::kEye ? out.dim(1) : 1;
      sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < out.size(); ++i) {
          const double v = kind_ == Kind::kEye ? (i % cols - i / cols == k_ ? 1.0 : 0.0)
                                               : start_ + step_ * static_cast<double>(i / repeat_);
          assign(y[i], Convert<T>(v));
        }
      });
    });
  }

 private:
  enum class Kind { kFill, kArange, kLinspace, kEye };
  static Kind KindOf(const std::string& op) {
    if (op == "_arange") return Kind::kArange;
    if (op == "_linspace") return Kind::kLinspace;
    return op == "_eye" ? Kind::kEye : Kind::kFill;
  }
  Kind kind_;
  double value_ = 0, start_ = 0, step_ = 1;
  int64_t repeat_ = 1, k_ = 0;
};

}  // namespace

void RegisterCopyKernels(KernelTable& t) {
  AddAny<ReshapeLikeKernel>(t, "reshape_like", kAllMask);
  AddAny<ReshapeLikeKernel>(t, "_backward_reshape_like", kAllMask);
  // _identity_with_attr_like_rhs computes what reshape_like does when the shapes agree.
  AddAny<ReshapeLikeKernel>(t, "_identity_with_attr_like_rhs", kAllMask);
  AddAny<ReshapeLikeKernel>(t, "_backward_identity_with_attr_like_rhs", kAllMask);
  for (const char* op : {"_zeros", "_ones", "_full", "_arange", "_linspace", "_eye"})
    AddAny<InitKernel>(t, op, kAllMask);
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "squeeze", "BlockGrad"}) {
    AddAny<CopyKernel>(t, op, kAllMask);
  }
  AddAny<FillKernel<0>>(t, "zeros_like", kAllMask);
  AddAny<FillKernel<1>>(t, "ones_like", kAllMask);
}

}  // namespace weft::cpu::tensor

// weft GPU kernel layer — the tensor family's copies (cpu: tensor_copy.cc, tensor_cast.cc): _copy,
// Flatten, Reshape, expand_dims, BlockGrad (a copy keeping the element count), zeros_like,
// ones_like, Cast, with their backward ops, in every kMoveTypes dtype. The losses whose forward
// is a copy or whose backward is a fill (gpu_loss.h) reuse CopyKernel and FillValueKernel.
#pragma once

#include <string>

#include "gpu_kernel.h"
#include "gpu_strided.h"

namespace weft::WEFT_GPU_NS {

/// This file, for the kernels of other families built on its classes (gpu_loss.h).
inline constexpr const char* kGpuTensorCopySource = __FILE__;

/// Cast: out[i] = convert(in[i]) between any two kMoveDTypes (run-time dtypes).
template <class Assign>
struct CastMap {
  const void* in;
  int32_t in_dtype;
  void* out;
  int32_t out_dtype;
  WEFT_HD void operator()(int64_t i) const { StoreScalar<Assign>(out, out_dtype, i, LoadScalar(in, in_dtype, i)); }
};

/// _copy, _backward_copy, Flatten, Reshape, expand_dims, BlockGrad (and the losses' forward,
/// gpu_loss.h): out (=|+=) in, the element count kept. `inputs`: how many inputs the op takes
/// (input 0 is copied; a loss checks its label itself).
template <class L>
class CopyKernel {
 public:
  explicit CopyKernel(const KernelSetup& s, int inputs = 1) {
    if (s.inputs.empty() || s.outputs.size() != 1) Invalid(s, "expects data and one output");
    s.ExpectCounts(inputs, 1);
    RequireSameDType(s, kMoveTypes);
    if (s.inputs[0].size() != s.outputs[0].size())
      Invalid(s, "input " + ShapeOf(s.inputs[0]) + " and output " + ShapeOf(s.outputs[0]) + " differ in size");
    plan_ = LinearPlan(s.inputs[0].size());
  }
  void Compute(const DeviceCall& c) const {
    RunCopy<L>(c, "copy", c.inputs[0].dtype(), c.req[0], plan_, c.inputs[0], c.outputs[0]);
  }

 private:
  IndexPlan<2> plan_;
};

/// out (=|+=) `value` in every element, any kMoveTypes dtype: the Compute of zeros_like /
/// ones_like (FillKernel) and of a fill whose value an attribute sets (a loss's backward).
template <class L>
class FillValueKernel {
 public:
  explicit FillValueKernel(double value) : value_(value) {}
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, out.size(), FillAnyMap<decltype(a)>{L::template Ptr<void>(out), out.dtype(), FloatScalar(value_)});
    });
  }

 private:
  double value_;
};

/// zeros_like / ones_like: kValue in every element.
template <class L, int kValue>
class FillKernel : public FillValueKernel<L> {
 public:
  explicit FillKernel(const KernelSetup& s) : FillValueKernel<L>(kValue) {
    s.ExpectCounts(1, 1);
    RequireSameDType(s, kMoveTypes);
  }
};

/// Cast / _backward_Cast between any two kMoveTypes dtypes (the output's is the target).
template <class L>
class CastKernel {
 public:
  explicit CastKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    if (!InMask(s.inputs[0].dtype, kMoveTypes) || !InMask(s.outputs[0].dtype, kMoveTypes))
      Unsupported(s, std::string("Cast from ") + sdk::DTypeName(s.inputs[0].dtype) + " to " +
                         sdk::DTypeName(s.outputs[0].dtype) + " is not implemented on GPUs");
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
  }
  void Compute(const DeviceCall& c) const {
    const DeviceTensor& in = c.inputs[0];
    const DeviceTensor& out = c.outputs[0];
    WithReq(c.req[0], [&](auto a) {
      L::Map(
          c, in.size(),
          CastMap<decltype(a)>{L::template Ptr<const void>(in), in.dtype(), L::template Ptr<void>(out), out.dtype()});
    });
  }
};

/// Registers the copies, fills and Cast for launcher L.
template <class L>
void RegisterTensorCopyKernels(sdk::KernelTable& t) {
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "BlockGrad"})
    t.Add<CopyKernel<L>>(op, kMoveTypes);
  t.Add<FillKernel<L, 0>>("zeros_like", kMoveTypes);
  t.Add<FillKernel<L, 1>>("ones_like", kMoveTypes);
  t.Add<CastKernel<L>>("Cast", kMoveTypes);
  t.Add<CastKernel<L>>("_backward_Cast", kMoveTypes);
}

}  // namespace weft::WEFT_GPU_NS

// weft GPU kernel layer — the loss family (cpu: loss.cc): LinearRegressionOutput and MakeLoss,
// float32. Their forward is a copy of the data (CopyKernel, gpu_tensor_copy.h; the regression's
// label checked here); MakeLoss's backward fills grad_scale (FillValueKernel), the regression's
// is (output − label) · scale.
#pragma once

#include "gpu_kernel.h"
#include "gpu_tensor_copy.h"
#include "weft/sdk/ops/loss.hpp"

namespace weft::WEFT_GPU_NS {

/// LinearRegressionOutput: the data copied to the output; the label (input 1) must have as many
/// elements as the data, everything float32.
template <class L>
class RegressionKernel {
 public:
  explicit RegressionKernel(const KernelSetup& s) : copy_((CheckLabel(s), s), 2) {}
  void Compute(const DeviceCall& c) const { copy_.Compute(c); }

 private:
  static void CheckLabel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    if (s.inputs[1].size() != s.inputs[0].size())
      Invalid(s, "label " + ShapeOf(s.inputs[1]) + " must have as many elements as data " + ShapeOf(s.inputs[0]));
    RequireFloat32(s);
  }
  CopyKernel<L> copy_;
};

/// _backward_MakeLoss: the data gradient is grad_scale (divided by N for normalization 'batch').
template <class L>
class MakeLossBackwardKernel : public FillValueKernel<L> {
 public:
  explicit MakeLossBackwardKernel(const KernelSetup& s) : FillValueKernel<L>(GradValue(s)) {}

 private:
  static double GradValue(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const auto p = s.Params<sdk::MakeLossParam>();
    if (p.normalization == sdk::GradNormalization::kValid)
      Unsupported(
          s, "normalization='valid' needs the data, which MakeLoss's backward does not receive; use null or batch");
    float v = p.grad_scale;
    const TensorDesc& g = s.outputs[0];
    if (p.normalization == sdk::GradNormalization::kBatch && g.ndim() > 0 && g.dim(0) > 0)
      v /= static_cast<float>(g.dim(0));
    return v;
  }
};

/// _backward_LinearRegressionOutput: gdata = (output − label) · scale.
template <class Assign>
struct RegressionGradMap {
  float scale;
  const float* label;
  const float* y;
  float* gx;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(gx[i], (y[i] - label[i]) * scale); }
};

/// Inputs out_grad, data, label, output; outputs data grad, label grad (0).
template <class L>
class RegressionBackwardKernel {
 public:
  explicit RegressionBackwardKernel(const KernelSetup& s) {
    scale_ = sdk::LinearRegressionGradFactor(s);
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.outputs[0].size(),
             RegressionGradMap<decltype(a)>{scale_, L::template Ptr<const float>(c.inputs[2]),
                                            L::template Ptr<const float>(c.inputs[3]),
                                            L::template Ptr<float>(c.outputs[0])});
    });
    WithReq(c.req[1], [&](auto a) {
      L::Map(c, c.outputs[1].size(),
             FillAnyMap<decltype(a)>{L::template Ptr<void>(c.outputs[1]), WEFT_DTYPE_FLOAT32, FloatScalar(0.0)});
    });
  }

 private:
  float scale_ = 1.0f;
};

/// Registers LinearRegressionOutput, MakeLoss and their backward ops for launcher L.
template <class L>
void RegisterLossKernels(sdk::KernelTable& t) {
  t.Add<RegressionBackwardKernel<L>>("_backward_LinearRegressionOutput", kF32);
  t.Add<MakeLossBackwardKernel<L>>("_backward_MakeLoss", kF32);
  sdk::KernelTable::SourceScope copy(t, {kGpuTensorCopySource});  // the forward's class
  t.Add<RegressionKernel<L>>("LinearRegressionOutput", kF32);
  t.Add<CopyKernel<L>>("MakeLoss", kF32);
}

}  // namespace weft::WEFT_GPU_NS

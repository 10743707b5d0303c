// weft GPU kernel layer — the loss family (cpu: loss.cc): the regression heads (linear, logistic,
// MAE) and MakeLoss, float32. Their forward is a copy of the data (CopyKernel, gpu_tensor_copy.h;
// the regression's label checked here), the logistic head's the sigmoid; MakeLoss's backward fills
// grad_scale (FillValueKernel), the regression heads' is (output − label) · scale, or its sign
// (−1 where equal) for MAE.
#pragma once

#include "gpu_kernel.h"
#include "gpu_tensor_copy.h"
#include "weft/sdk/ops/loss.hpp"

namespace weft::WEFT_GPU_NS {

/// Linear and MAE regression heads: the data copied to the output; the label (input 1) must have
/// as many elements as the data, everything float32.
template <class L>
class RegressionKernel {
 public:
  explicit RegressionKernel(const KernelSetup& s) : copy_((CheckLabel(s), s), 2) {}
  void Compute(const DeviceCall& c) const { copy_.Compute(c); }

  static void CheckLabel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    if (s.inputs[1].size() != s.inputs[0].size())
      Invalid(s, "label " + ShapeOf(s.inputs[1]) + " must have as many elements as data " + ShapeOf(s.inputs[0]));
    RequireFloat32(s);
  }

 private:
  CopyKernel<L> copy_;
};

/// LogisticRegressionOutput: y = 1 / (1 + exp(−x)).
template <class Assign>
struct SigmoidMap {
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(y[i], 1.0f / (1.0f + expf(-x[i]))); }
};

/// LogisticRegressionOutput's forward, its inputs checked as RegressionKernel's.
template <class L>
class LogisticRegressionKernel {
 public:
  explicit LogisticRegressionKernel(const KernelSetup& s) { RegressionKernel<L>::CheckLabel(s); }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.outputs[0].size(),
             SigmoidMap<decltype(a)>{L::template Ptr<const float>(c.inputs[0]), L::template Ptr<float>(c.outputs[0])});
    });
  }
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

/// The regression heads' backward: gdata = (output − label) · scale, or with `sign`
/// sign(output − label) · scale, −1 where equal (MXNet's minus_sign).
template <class Assign>
struct RegressionGradMap {
  float scale;
  const float* label;
  const float* y;
  float* gx;
  bool sign;
  WEFT_HD void operator()(int64_t i) const {
    const float d = y[i] - label[i];
    Assign::Put(gx[i], (sign ? (d > 0.0f ? 1.0f : -1.0f) : d) * scale);
  }
};

/// Inputs out_grad, data, label, output; outputs data grad, label grad (0). `Sign`: MAE's.
template <class L, bool Sign = false>
class RegressionBackwardKernel {
 public:
  explicit RegressionBackwardKernel(const KernelSetup& s) {
    scale_ = sdk::RegressionGradFactor(s);
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.outputs[0].size(),
             RegressionGradMap<decltype(a)>{scale_, L::template Ptr<const float>(c.inputs[2]),
                                            L::template Ptr<const float>(c.inputs[3]),
                                            L::template Ptr<float>(c.outputs[0]), Sign});
    });
    WithReq(c.req[1], [&](auto a) {
      L::Map(c, c.outputs[1].size(),
             FillAnyMap<decltype(a)>{L::template Ptr<void>(c.outputs[1]), WEFT_DTYPE_FLOAT32, FloatScalar(0.0)});
    });
  }

 private:
  float scale_ = 1.0f;
};

/// Registers the regression heads, MakeLoss and their backward ops for launcher L.
template <class L>
void RegisterLossKernels(sdk::KernelTable& t) {
  t.Add<RegressionBackwardKernel<L>>("_backward_LinearRegressionOutput", kF32);
  t.Add<RegressionBackwardKernel<L>>("_backward_LogisticRegressionOutput", kF32);
  t.Add<RegressionBackwardKernel<L, true>>("_backward_MAERegressionOutput", kF32);
  t.Add<LogisticRegressionKernel<L>>("LogisticRegressionOutput", kF32);
  t.Add<MakeLossBackwardKernel<L>>("_backward_MakeLoss", kF32);
  sdk::KernelTable::SourceScope copy(t, {kGpuTensorCopySource});  // the forward's class
  t.Add<RegressionKernel<L>>("LinearRegressionOutput", kF32);
  t.Add<RegressionKernel<L>>("MAERegressionOutput", kF32);
  t.Add<CopyKernel<L>>("MakeLoss", kF32);
}

}  // namespace weft::WEFT_GPU_NS

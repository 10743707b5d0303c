// The regression heads and MakeLoss (MXNet 1.9): backward makes its own head gradient and ignores
// out_grad. With f = grad_scale / (label.size / N):
//   LinearRegressionOutput: identity forward, gdata = (output − label) · f.
//   LogisticRegressionOutput: output = sigmoid(data), gdata = (output − label) · f.
//   MAERegressionOutput: identity forward, gdata = sign(output − label) · f, −1 where equal.
//   MakeLoss: identity forward, gdata = grad_scale (normalization null) or grad_scale / N (batch).
#include <algorithm>

#include "nn_common.h"
#include "vector_math.h"
#include "weft/sdk/ops/loss.hpp"

namespace weft::cpu {
namespace {

// Forward of both: output = data (inputs data[, label]).
class IdentityLossForward {
 public:
  explicit IdentityLossForward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.empty() || s.outputs.size() != 1) Invalid(s, "expects data and one output");
    if (s.outputs[0].size() != s.inputs[0].size()) Invalid(s, "output and data differ in size");
    if (s.inputs.size() == 2 && s.inputs[1].size() != s.inputs[0].size())
      Invalid(s,
              "label " + ShapeString(s.inputs[1]) + " must have as many elements as data " + ShapeString(s.inputs[0]));
  }
  void Compute(const KernelCall& c) const {
    weft::sdk::StoreReq(c.req[0], c.outputs[0].data<float>(), c.inputs[0].data<float>(), c.inputs[0].size());
  }
};

// LogisticRegressionOutput's forward: output = sigmoid(data), the sigmoid op's own function.
class LogisticForward : public IdentityLossForward {
 public:
  using IdentityLossForward::IdentityLossForward;
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    const int64_t n = c.inputs[0].size();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) assign(y[i], vmath::Sigmoid(x[i]));
    });
  }
};

// The head gradient's map of (output − label): itself for the linear and logistic heads, its
// sign for MAE (MXNet's minus_sign: 1 where output > label, else −1).
struct Difference {
  static float Map(float d) { return d; }
};
struct SignOfDifference {
  static float Map(float d) { return d > 0.0f ? 1.0f : -1.0f; }
};

// Inputs: out_grad, data, label, output; outputs: data grad, label grad (0).
template <class GradMap>
class RegressionBackward {
 public:
  explicit RegressionBackward(const KernelSetup& s) {
    scale_ = weft::sdk::RegressionGradFactor(s);
    RequireFloat32(s);
  }
  void Compute(const KernelCall& c) const {
    const float* label = c.inputs[2].data<float>();
    const float* y = c.inputs[3].data<float>();
    float* gx = c.outputs[0].data<float>();
    int64_t n = c.inputs[3].size();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) assign(gx[i], GradMap::Map(y[i] - label[i]) * scale_);
    });
    weft::sdk::FillReq(c.req[1], c.outputs[1].data<float>(), 0.0f, c.outputs[1].size());
  }

 private:
  float scale_ = 1.0f;
};

// Inputs: out_grad (ignored); output: data grad.
class MakeLossBackward {
 public:
  explicit MakeLossBackward(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    using weft::sdk::GradNormalization;
    const auto p = s.Params<weft::sdk::MakeLossParam>();
    if (p.normalization == GradNormalization::kValid)
      Unsupported(
          s, "normalization='valid' needs the data, which MakeLoss's backward does not receive; use null or batch");
    value_ = p.grad_scale;
    const TensorDesc& g = s.outputs[0];
    if (p.normalization == GradNormalization::kBatch && g.ndim() > 0 && g.dim(0) > 0)
      value_ /= static_cast<float>(g.dim(0));
  }
  void Compute(const KernelCall& c) const {
    weft::sdk::FillReq(c.req[0], c.outputs[0].data<float>(), value_, c.outputs[0].size());
  }

 private:
  float value_ = 1.0f;
};

}  // namespace

void RegisterLoss(KernelTable& t) {
  t.Add<IdentityLossForward>("LinearRegressionOutput", kF32);
  t.Add<RegressionBackward<Difference>>("_backward_LinearRegressionOutput", kF32);
  t.Add<LogisticForward>("LogisticRegressionOutput", kF32);
  t.Add<RegressionBackward<Difference>>("_backward_LogisticRegressionOutput", kF32);
  t.Add<IdentityLossForward>("MAERegressionOutput", kF32);
  t.Add<RegressionBackward<SignOfDifference>>("_backward_MAERegressionOutput", kF32);
  t.Add<IdentityLossForward>("MakeLoss", kF32);
  t.Add<MakeLossBackward>("_backward_MakeLoss", kF32);
}

}  // namespace weft::cpu

// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu), forward and
// backward. Formulas are MXNet 1.9's (src/operator/mshadow_op.h): softrelu(x) = log(1 + e^x)
// (x itself above 20, where the two agree in float), softsign(x) = x / (1 + |x|),
// elu(x) = slope * (e^x - 1) for x <= 0. sigmoid and tanh use vector_math.h (vectorised, within
// 3 ulp of libm); the rarer softrelu and elu keep libm.
#include <cmath>

#include "isa_dispatch.h"
#include "nn_common.h"
#include "vector_math.h"

namespace weft::cpu {
namespace {

enum class Act { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign, kLeaky, kElu };

Act ParseActivation(const KernelSetup& s) {
  if (s.op_name.find("LeakyReLU") != std::string::npos) {
    std::string t = s.attrs.GetEnum("act_type", {"leaky", "elu", "prelu", "rrelu", "selu", "gelu"}, "leaky");
    if (t == "leaky") return Act::kLeaky;
    if (t == "elu") return Act::kElu;
    Unsupported(s, "act_type '" + t + "' is not implemented on cpu (leaky and elu are)");
  }
  std::string t = s.attrs.GetEnum("act_type", {"relu", "sigmoid", "tanh", "softrelu", "softsign"}, "relu");
  if (t == "relu") return Act::kRelu;
  if (t == "sigmoid") return Act::kSigmoid;
  if (t == "tanh") return Act::kTanh;
  if (t == "softrelu") return Act::kSoftRelu;
  return Act::kSoftSign;
}

// Forward over n elements; out may alias x (in-place).
template <typename Assign>
void Forward(Act act, float slope, const float* x, float* out, int64_t n, Assign assign) {
  switch (act) {
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > 0.0f ? x[i] : 0.0f);
      break;
    case Act::kSigmoid:
      for (int64_t i = 0; i < n; ++i) assign(out[i], vmath::Sigmoid(x[i]));
      break;
    case Act::kTanh:
      for (int64_t i = 0; i < n; ++i) assign(out[i], vmath::Tanh(x[i]));
      break;
    case Act::kSoftRelu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i])));
      break;
    case Act::kSoftSign:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] / (1.0f + std::fabs(x[i])));
      break;
    case Act::kLeaky:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > 0.0f ? x[i] : slope * x[i]);
      break;
    case Act::kElu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > 0.0f ? x[i] : slope * std::expm1(x[i]));
      break;
  }
}

// Backward: gx = gy * f'(x) written through assign, f' from the input x and/or output y.
template <typename Assign>
void Backward(Act act, float slope, const float* gy, const float* x, const float* y, float* gx, int64_t n,
              Assign assign) {
  switch (act) {
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], y[i] > 0.0f ? gy[i] : 0.0f);
      break;
    case Act::kSigmoid:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * y[i] * (1.0f - y[i]));
      break;
    case Act::kTanh:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * (1.0f - y[i] * y[i]));
      break;
    case Act::kSoftRelu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * -std::expm1(-y[i]));
      break;
    case Act::kSoftSign:
      for (int64_t i = 0; i < n; ++i) {
        float d = 1.0f + std::fabs(x[i]);
        assign(gx[i], gy[i] / (d * d));
      }
      break;
    case Act::kLeaky:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], x[i] > 0.0f ? gy[i] : slope * gy[i]);
      break;
    case Act::kElu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], x[i] > 0.0f ? gy[i] : gy[i] * (y[i] + slope));
      break;
  }
}

class ActivationKernel {
 public:
  explicit ActivationKernel(const KernelSetup& s) : act_(ParseActivation(s)) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty()) Invalid(s, "expects an output");
    RequireFloat32(s);
    slope_ = static_cast<float>(s.attrs.GetFloat("slope", 0.25));
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output " + ShapeString(s.outputs[0]) + " differs from data " + ShapeString(s.inputs[0]));
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    isa::Dispatch([&] {
      weft::sdk::WithReq(c.req[0], [&](auto assign) { Forward(act_, slope_, x, y, c.inputs[0].size(), assign); });
    });
  }

 private:
  Act act_;
  float slope_ = 0.25f;
};

// _backward_Activation / _backward_LeakyReLU: inputs out_grad, data, output; output data grad.
// _backward_Activation gets out_grad, output only (OPS.md) unless act_type is softsign: the other
// derivatives are functions of the output, so data may have been overwritten in place.
class ActivationBackwardKernel {
 public:
  explicit ActivationBackwardKernel(const KernelSetup& s) : act_(ParseActivation(s)) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    slope_ = static_cast<float>(s.attrs.GetFloat("slope", 0.25));
    const bool output_only =
        act_ == Act::kRelu || act_ == Act::kSigmoid || act_ == Act::kTanh || act_ == Act::kSoftRelu;
    if (s.inputs.size() != 3 && !(output_only && s.inputs.size() == 2))
      Invalid(s, "expects 3 inputs (out_grad, data, output)" +
                     std::string(output_only ? " or 2 (out_grad, output)" : "") + ", got " +
                     std::to_string(s.inputs.size()));
    has_data_ = s.inputs.size() == 3;
    for (size_t i = 1; i < s.inputs.size(); ++i)
      if (s.inputs[i].size() != s.inputs[0].size())
        Invalid(s, "input " + std::to_string(i) + " " + ShapeString(s.inputs[i]) + " differs from out_grad " +
                       ShapeString(s.inputs[0]));
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* x = has_data_ ? c.inputs[1].data<float>() : nullptr;  // unread without data
    const float* y = c.inputs[has_data_ ? 2 : 1].data<float>();
    float* gx = c.outputs[0].data<float>();
    isa::Dispatch([&] {
      weft::sdk::WithReq(c.req[0],
                         [&](auto assign) { Backward(act_, slope_, gy, x, y, gx, c.inputs[0].size(), assign); });
    });
  }

 private:
  Act act_;
  float slope_ = 0.25f;
  bool has_data_ = true;
};

}  // namespace

void RegisterActivation(KernelTable& t) {
  t.Add<ActivationKernel>("Activation", kF32);
  t.Add<ActivationBackwardKernel>("_backward_Activation", kF32);
  t.Add<ActivationKernel>("LeakyReLU", kF32);
  t.Add<ActivationBackwardKernel>("_backward_LeakyReLU", kF32);
}

}  // namespace weft::cpu

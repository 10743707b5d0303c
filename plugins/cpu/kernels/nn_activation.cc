// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu, selu, gelu,
// prelu, rrelu), forward and backward. Formulas are MXNet 1.9's (src/operator/mshadow_op.h): softrelu(x) = log(1 + e^x)
// (x itself above 20, where the two agree in float), softsign(x) = x / (1 + |x|),
// elu(x) = slope * (e^x - 1) for x <= 0. sigmoid and tanh use vector_math.h (vectorised, within
// 3 ulp of libm); the rarer softrelu and elu keep libm. float32; Activation and its backward also
// take float64 (libm) and float16 (computed in float, rounded once, as MXNet's half_t math).
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "isa_dispatch.h"
#include "nn_common.h"
#include "parallel.h"
#include "tensor_util.h"
#include "vector_math.h"
#include "weft/sdk/ops/activation.hpp"

namespace weft::cpu {
namespace {

enum class Act { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign, kLeaky, kElu, kSelu, kGelu, kPrelu, kRrelu };
// Activation's act_type (weft::sdk::ActType, in its order) as an Act.
constexpr Act kActivationActs[] = {Act::kRelu, Act::kSigmoid, Act::kTanh, Act::kSoftRelu, Act::kSoftSign};

// MXNet's SELU constants (mshadow_op.h).
constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSqrt1_2 = 0.70710678118654752440f;     // 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;  // 1/√(2π)

// The node's function and slope (slope: LeakyReLU's leaky and elu).
struct ActSetup {
  Act act;
  float slope = 0.25f, lower = 0.125f, upper = 0.334f;
};

ActSetup ParseActivation(const KernelSetup& s) {
  using weft::sdk::LeakyType;
  if (s.op_name.find("LeakyReLU") != std::string::npos) {
    const auto p = s.Params<weft::sdk::LeakyReLUParam>();
    static constexpr Act kLeaky[] = {Act::kLeaky, Act::kElu, Act::kPrelu, Act::kRrelu, Act::kSelu, Act::kGelu};
    return {kLeaky[static_cast<int>(p.act_type)], p.slope, p.lower_bound, p.upper_bound};
  }
  return {kActivationActs[static_cast<int>(s.Params<weft::sdk::ActivationParam>().act_type)]};
}

// sigmoid and tanh: vector_math.h's for float (the hot path), libm's for double.
inline float Sigmoid(float x) { return vmath::Sigmoid(x); }
inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline float Tanh(float x) { return vmath::Tanh(x); }
inline double Tanh(double x) { return std::tanh(x); }

// Forward over n elements; out may alias x (in-place).
template <typename T, typename Assign>
void Forward(Act act, T slope, const T* x, T* out, int64_t n, Assign assign) {
  switch (act) {
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > T(0) ? x[i] : T(0));
      break;
    case Act::kSigmoid:
      for (int64_t i = 0; i < n; ++i) assign(out[i], Sigmoid(x[i]));
      break;
    case Act::kTanh:
      for (int64_t i = 0; i < n; ++i) assign(out[i], Tanh(x[i]));
      break;
    case Act::kSoftRelu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > T(20) ? x[i] : std::log1p(std::exp(x[i])));
      break;
    case Act::kSoftSign:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] / (T(1) + std::fabs(x[i])));
      break;
    case Act::kLeaky:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > T(0) ? x[i] : slope * x[i]);
      break;
    case Act::kElu:
      for (int64_t i = 0; i < n; ++i) assign(out[i], x[i] > T(0) ? x[i] : slope * std::expm1(x[i]));
      break;
    case Act::kSelu:
      for (int64_t i = 0; i < n; ++i)
        assign(out[i], T(kSeluLambda) * (x[i] > T(0) ? x[i] : T(kSeluAlpha) * std::expm1(x[i])));
      break;
    case Act::kGelu:  // MXNet 1.9's exact (erf) form
      for (int64_t i = 0; i < n; ++i) assign(out[i], T(0.5) * x[i] * (T(1) + std::erf(x[i] * T(kSqrt1_2))));
      break;
    case Act::kPrelu:
    case Act::kRrelu:
      break;  // per-channel / per-element slopes: LeakyForward
  }
}

// Backward: gx = gy * f'(x) written through assign, f' from the input x and/or output y.
template <typename T, typename Assign>
void Backward(Act act, T slope, const T* gy, const T* x, const T* y, T* gx, int64_t n, Assign assign) {
  switch (act) {
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], y[i] > T(0) ? gy[i] : T(0));
      break;
    case Act::kSigmoid:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * y[i] * (T(1) - y[i]));
      break;
    case Act::kTanh:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * (T(1) - y[i] * y[i]));
      break;
    case Act::kSoftRelu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], gy[i] * -std::expm1(-y[i]));
      break;
    case Act::kSoftSign:
      for (int64_t i = 0; i < n; ++i) {
        T d = T(1) + std::fabs(x[i]);
        assign(gx[i], gy[i] / (d * d));
      }
      break;
    case Act::kLeaky:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], x[i] > T(0) ? gy[i] : slope * gy[i]);
      break;
    case Act::kElu:
      for (int64_t i = 0; i < n; ++i) assign(gx[i], x[i] > T(0) ? gy[i] : gy[i] * (y[i] + slope));
      break;
    case Act::kSelu:  // MXNet 1.9's selu_grad below zero: λ·(y + α) (the exact one is y + λ·α)
      for (int64_t i = 0; i < n; ++i)
        assign(gx[i], gy[i] * (x[i] > T(0) ? T(kSeluLambda) : T(kSeluLambda) * (y[i] + T(kSeluAlpha))));
      break;
    case Act::kGelu:
      for (int64_t i = 0; i < n; ++i) {
        const T d =
            T(0.5) * (T(1) + std::erf(x[i] * T(kSqrt1_2))) + x[i] * T(kInvSqrt2Pi) * std::exp(-T(0.5) * x[i] * x[i]);
        assign(gx[i], gy[i] * d);
      }
      break;
    case Act::kPrelu:
    case Act::kRrelu:
      break;  // LeakyBackward
  }
}

using tensor::Half;
inline constexpr uint64_t kActivationDTypes =
    kF32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);

// The dtype every input and output has: float32, float64 or float16; Unsupported otherwise.
int32_t RequireOneFloatDType(const KernelSetup& s) {
  const int32_t dt = s.inputs.empty() ? WEFT_DTYPE_FLOAT32 : s.inputs[0].dtype;
  auto check = [&](const TensorDesc& t) {
    if (t.dtype != dt || (dt != WEFT_DTYPE_FLOAT32 && dt != WEFT_DTYPE_FLOAT64 && dt != WEFT_DTYPE_FLOAT16))
      Unsupported(s, "every array must be float32, every one float64 or every one float16");
  };
  for (const TensorDesc& t : s.inputs) check(t);
  for (const TensorDesc& t : s.outputs) check(t);
  return dt;
}

// float16 arrays (MXNet's cpu Activation takes them; its half_t arithmetic widens to float): the
// elements [b, e) go in blocks widened to float through `compute(const float* in[N], float* out,
// n)` (the float32 loops) and are rounded once into `out` (add-to adds in float, then rounds).
// A null input pointer stays null.
constexpr int64_t kHalfBlock = 256;
template <size_t N, typename F>
void ThroughFloat(const std::array<const Half*, N>& in, Half* out, int64_t b, int64_t e, int32_t req, F compute) {
  if (sdk::IsNull(req)) return;
  float wide[N][kHalfBlock], y[kHalfBlock];
  for (int64_t s = b; s < e; s += kHalfBlock) {
    const int64_t n = std::min(kHalfBlock, e - s);
    std::array<const float*, N> p{};
    for (size_t k = 0; k < N; ++k) {
      if (in[k] == nullptr) continue;
      for (int64_t i = 0; i < n; ++i) wide[k][i] = tensor::HalfToFloat(in[k][s + i]);
      p[k] = wide[k];
    }
    compute(p, y, n);
    for (int64_t i = 0; i < n; ++i) {
      const float prior = req == WEFT_REQ_ADD ? tensor::HalfToFloat(out[s + i]) : 0.0f;
      out[s + i] = tensor::FloatToHalf(prior + y[i]);
    }
  }
}

// Runs kernel k on its dtype: k.RunHalf for float16, k.Run<float> / k.Run<double> otherwise.
template <typename K>
void RunByDType(const K& k, int32_t dtype, const KernelCall& c, double slope) {
  if (dtype == WEFT_DTYPE_FLOAT16) return k.RunHalf(c, static_cast<float>(slope));
  if (dtype == WEFT_DTYPE_FLOAT64) return k.template Run<double>(c, slope);
  k.template Run<float>(c, static_cast<float>(slope));
}

class ActivationKernel {
 public:
  explicit ActivationKernel(const KernelSetup& s) : act_(ParseActivation(s).act), slope_(ParseActivation(s).slope) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty()) Invalid(s, "expects an output");
    dtype_ = RequireOneFloatDType(s);
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output " + ShapeString(s.outputs[0]) + " differs from data " + ShapeString(s.inputs[0]));
  }
  void Compute(const KernelCall& c) const { RunByDType(*this, dtype_, c, slope_); }

  // For RunByDType. Element-wise: the thread plan's team takes contiguous runs (tanh of LeNet's
  // conv1 output is 1.15 M elements).
  void RunHalf(const KernelCall& c, float slope) const {
    const int64_t n = c.inputs[0].size();
    const Half* x = static_cast<const Half*>(c.inputs[0].raw());
    Half* y = static_cast<Half*>(c.outputs[0].raw());
    ParallelChunks(n, n, [&](int64_t b, int64_t e, int) {
      ThroughFloat<1>({x}, y, b, e, c.req[0], [&](const std::array<const float*, 1>& in, float* out, int64_t len) {
        Forward(act_, slope, in[0], out, len, sdk::AssignWrite{});
      });
    });
  }
  template <typename T>
  void Run(const KernelCall& c, T slope) const {
    const T* x = c.inputs[0].data<T>();
    T* y = c.outputs[0].data<T>();
    const int64_t n = c.inputs[0].size();
    ParallelChunks(n, n, [&](int64_t b, int64_t e, int) {
      isa::Dispatch([&] {
        weft::sdk::WithReq(c.req[0], [&](auto assign) { Forward(act_, slope, x + b, y + b, e - b, assign); });
      });
    });
  }

 private:
  Act act_;
  double slope_ = 0.25;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

// _backward_Activation / _backward_LeakyReLU: inputs out_grad, data, output; output data grad.
// _backward_Activation gets out_grad, output only (OPS.md) unless act_type is softsign: the other
// derivatives are functions of the output, so data may have been overwritten in place.
class ActivationBackwardKernel {
 public:
  explicit ActivationBackwardKernel(const KernelSetup& s)
      : act_(ParseActivation(s).act), slope_(ParseActivation(s).slope) {
    s.ExpectCounts(-1, 1);
    dtype_ = RequireOneFloatDType(s);
    const bool output_only =
        act_ == Act::kRelu || act_ == Act::kSigmoid || act_ == Act::kTanh || act_ == Act::kSoftRelu;
    has_data_ = weft::sdk::ActivationGradHasData(s.op_name, output_only, s.inputs.size());
    for (size_t i = 1; i < s.inputs.size(); ++i)
      if (s.inputs[i].size() != s.inputs[0].size())
        Invalid(s, "input " + std::to_string(i) + " " + ShapeString(s.inputs[i]) + " differs from out_grad " +
                       ShapeString(s.inputs[0]));
  }
  void Compute(const KernelCall& c) const { RunByDType(*this, dtype_, c, slope_); }

  // For RunByDType.
  void RunHalf(const KernelCall& c, float slope) const {
    const int64_t n = c.inputs[0].size();
    const Half* x = has_data_ ? static_cast<const Half*>(c.inputs[1].raw()) : nullptr;
    const std::array<const Half*, 3> in = {static_cast<const Half*>(c.inputs[0].raw()), x,
                                           static_cast<const Half*>(c.inputs[has_data_ ? 2 : 1].raw())};
    Half* gx = static_cast<Half*>(c.outputs[0].raw());
    ParallelChunks(n, n, [&](int64_t b, int64_t e, int) {
      ThroughFloat<3>(in, gx, b, e, c.req[0], [&](const std::array<const float*, 3>& w, float* out, int64_t len) {
        Backward(act_, slope, w[0], w[1], w[2], out, len, sdk::AssignWrite{});
      });
    });
  }
  template <typename T>
  void Run(const KernelCall& c, T slope) const {
    const int64_t n = c.inputs[0].size();
    const T* gy = c.inputs[0].data<T>();
    const T* x = has_data_ ? c.inputs[1].data<T>() : nullptr;  // unread without data
    const T* y = c.inputs[has_data_ ? 2 : 1].data<T>();
    T* gx = c.outputs[0].data<T>();
    ParallelChunks(n, n, [&](int64_t b, int64_t e, int) {
      isa::Dispatch([&] {
        weft::sdk::WithReq(c.req[0], [&](auto assign) {
          Backward(act_, slope, gy + b, x ? x + b : nullptr, y + b, gx + b, e - b, assign);
        });
      });
    });
  }

 private:
  Act act_;
  double slope_ = 0.25;
  bool has_data_ = true;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
};

// Slopes below zero that vary per channel (prelu: gamma, one per channel of axis 1 or a single
// one) or per element (rrelu: the mask). LeakyReLU with these act_types:
//   prelu  inputs data, gamma;  y = x > 0 ? x : gamma[channel] · x
//   rrelu  outputs output, mask; training: mask ~ U[lower_bound, upper_bound) per element (a pure
//          function of the call seed, as Dropout); otherwise mask = (lower + upper) / 2 (MXNet's
//          inference slope; MXNet leaves the mask unwritten there). y = x > 0 ? x : mask · x.
using ChannelView = weft::sdk::PreluChannels;  // element i has channel (i / inner) % channels

ChannelView PreluView(const KernelSetup& s, const TensorDesc& x, const TensorDesc& gamma) {
  return weft::sdk::PreluChannelsOf(s.op_name, x.shape, gamma.shape);
}

class LeakyForward {
 public:
  explicit LeakyForward(const KernelSetup& s) : act_(ParseActivation(s).act) {
    RequireFloat32(s);
    if (act_ != Act::kPrelu && act_ != Act::kRrelu) elementwise_ = std::make_unique<ActivationKernel>(s);
    if (act_ == Act::kPrelu) {
      s.ExpectCounts(2, 1);
      view_ = PreluView(s, s.inputs[0], s.inputs[1]);
    }
    if (act_ == Act::kRrelu) {
      s.ExpectCounts(1, 2);
      const ActSetup a = ParseActivation(s);
      lower_ = a.lower, upper_ = a.upper;
    }
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    const int64_t n = c.inputs[0].size();
    if (act_ == Act::kPrelu) {
      const float* gamma = c.inputs[1].data<float>();
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < n; ++i) {
          const float g = gamma[(i / view_.inner) % view_.channels];
          assign(y[i], x[i] > 0.0f ? x[i] : g * x[i]);
        }
      });
    } else if (act_ == Act::kRrelu) {
      // The slopes go to a scratch copy first: the mask output may be unwanted (req null).
      std::vector<float> slope(static_cast<size_t>(n), 0.5f * (lower_ + upper_));
      if (c.is_train)
        for (int64_t i = 0; i < n; ++i)
          slope[i] = lower_ + (upper_ - lower_) * UniformAt(c.seed, static_cast<uint64_t>(i));
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < n; ++i) assign(y[i], x[i] > 0.0f ? x[i] : slope[i] * x[i]);
      });
      weft::sdk::StoreReq(c.req[1], c.outputs[1].data<float>(), slope.data(), n);
    } else {
      elementwise_->Compute(c);
    }
  }

 private:
  Act act_;
  std::unique_ptr<ActivationKernel> elementwise_;
  ChannelView view_;
  float lower_ = 0.125f, upper_ = 0.334f;
};

// _backward_LeakyReLU. Inputs per OPS.md: prelu out_grad, data, gamma, output (outputs data and
// gamma gradients: gamma's sums x · out_grad over the elements below zero of its channel); rrelu
// out_grad(output), out_grad(mask), data, output, mask (output: data gradient = out_grad where
// output > 0, out_grad · mask elsewhere); the other types as _backward_Activation.
class LeakyBackward {
 public:
  explicit LeakyBackward(const KernelSetup& s) : act_(ParseActivation(s).act) {
    if (act_ == Act::kPrelu) {
      s.ExpectCounts(4, 2);
      RequireFloat32(s);
      view_ = PreluView(s, s.inputs[1], s.inputs[2]);
    } else if (act_ == Act::kRrelu) {
      s.ExpectCounts(5, 1);
      RequireFloat32(s);
    } else {
      elementwise_ = std::make_unique<ActivationBackwardKernel>(s);
    }
  }
  void Compute(const KernelCall& c) const {
    if (elementwise_) return elementwise_->Compute(c);
    const float* gy = c.inputs[0].data<float>();
    float* gx = c.outputs[0].data<float>();
    const int64_t n = c.outputs[0].size();
    if (act_ == Act::kRrelu) {
      const float* y = c.inputs[3].data<float>();
      const float* mask = c.inputs[4].data<float>();
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0; i < n; ++i) assign(gx[i], y[i] > 0.0f ? gy[i] : gy[i] * mask[i]);
      });
      return;
    }
    const float* x = c.inputs[1].data<float>();
    const float* gamma = c.inputs[2].data<float>();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i)
        assign(gx[i], x[i] > 0.0f ? gy[i] : gy[i] * gamma[(i / view_.inner) % view_.channels]);
    });
    std::vector<double> gg(static_cast<size_t>(view_.channels), 0.0);
    for (int64_t i = 0; i < n; ++i)
      if (!(x[i] > 0.0f)) gg[(i / view_.inner) % view_.channels] += static_cast<double>(x[i]) * gy[i];
    weft::sdk::WithReq(c.req[1], [&](auto assign) {
      float* ggamma = c.outputs[1].data<float>();
      for (int64_t k = 0; k < view_.channels; ++k) assign(ggamma[k], static_cast<float>(gg[k]));
    });
  }

 private:
  Act act_;
  std::unique_ptr<ActivationBackwardKernel> elementwise_;
  ChannelView view_;
};

}  // namespace

void ActivationInPlace(weft::sdk::ActType type, float* y, int64_t n) {
  const Act act = kActivationActs[static_cast<int>(type)];
  isa::Dispatch([&] { Forward(act, 0.0f, y, y, n, sdk::AssignWrite{}); });
}

void RegisterActivation(KernelTable& t) {
  t.Add<ActivationKernel>("Activation", kActivationDTypes);
  t.Add<ActivationBackwardKernel>("_backward_Activation", kActivationDTypes);
  t.Add<LeakyForward>("LeakyReLU", kF32);
  t.Add<LeakyBackward>("_backward_LeakyReLU", kF32);
}

}  // namespace weft::cpu

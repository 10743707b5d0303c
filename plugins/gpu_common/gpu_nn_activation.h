// weft GPU kernel layer — the nn family's activations (cpu: nn_activation.cc, MXNet 1.9's
// formulas): Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu,
// selu, gelu through the same functors; prelu with its per-channel gamma and gradient; rrelu with
// random slopes in training, the mean slope otherwise), forward and backward, float32. Work
// items never write what another reads; prelu's gamma gradient loops inside one item per channel.
#pragma once

#include <math.h>

#include <memory>
#include <string>

#include "gpu_kernel.h"
#include "weft/sdk/ops/activation.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose activations fall back to these classes.
inline constexpr const char* kGpuNnActivationSource = __FILE__;

enum class Act { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign, kLeaky, kElu, kSelu, kGelu };

// MXNet's SELU constants (mshadow_op.h) and the erf-form GELU's.
inline constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
inline constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
inline constexpr float kSqrt1_2 = 0.70710678118654752440f;
inline constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

WEFT_HD inline float ActForward(Act act, float slope, float x) {
  switch (act) {
    case Act::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Act::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Act::kTanh:
      return tanhf(x);
    case Act::kSoftRelu:
      return x > 20.0f ? x : log1pf(expf(x));
    case Act::kSoftSign:
      return x / (1.0f + fabsf(x));
    case Act::kLeaky:
      return x > 0.0f ? x : slope * x;
    case Act::kElu:
      return x > 0.0f ? x : slope * expm1f(x);
    case Act::kSelu:
      return kSeluLambda * (x > 0.0f ? x : kSeluAlpha * expm1f(x));
    case Act::kGelu:
      return 0.5f * x * (1.0f + erff(x * kSqrt1_2));
  }
  return 0.0f;
}

/// dL/dx from dL/dy = gy, the input x (may be unused) and the output y.
WEFT_HD inline float ActBackward(Act act, float slope, float gy, float x, float y) {
  switch (act) {
    case Act::kRelu:
      return y > 0.0f ? gy : 0.0f;
    case Act::kSigmoid:
      return gy * y * (1.0f - y);
    case Act::kTanh:
      return gy * (1.0f - y * y);
    case Act::kSoftRelu:
      return gy * -expm1f(-y);
    case Act::kSoftSign: {
      const float d = 1.0f + fabsf(x);
      return gy / (d * d);
    }
    case Act::kLeaky:
      return x > 0.0f ? gy : slope * gy;
    case Act::kElu:
      return x > 0.0f ? gy : gy * (y + slope);
    case Act::kSelu:  // MXNet 1.9's selu_grad below zero: lambda * (y + alpha)
      return gy * (x > 0.0f ? kSeluLambda : kSeluLambda * (y + kSeluAlpha));
    case Act::kGelu:
      return gy * (0.5f * (1.0f + erff(x * kSqrt1_2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x));
  }
  return 0.0f;
}

template <class Assign>
struct ActForwardMap {
  Act act;
  float slope;
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(y[i], ActForward(act, slope, x[i])); }
};

/// `x` may be null when the activation's derivative needs only the output.
template <class Assign>
struct ActBackwardMap {
  Act act;
  float slope;
  const float* gy;
  const float* x;
  const float* y;
  float* gx;
  WEFT_HD void operator()(int64_t i) const {
    Assign::Put(gx[i], ActBackward(act, slope, gy[i], x != nullptr ? x[i] : 0.0f, y[i]));
  }
};

inline Act ParseAct(const KernelSetup& s) {
  if (s.op_name.find("LeakyReLU") != std::string::npos) {
    using sdk::LeakyType;
    const LeakyType t = s.Params<sdk::LeakyReLUParam>().act_type;
    if (t == LeakyType::kPrelu || t == LeakyType::kRrelu)
      Unsupported(s, "act_type prelu and rrelu have per-channel or random slopes: LeakyKernel runs them");
    return t == LeakyType::kLeaky  ? Act::kLeaky
           : t == LeakyType::kElu  ? Act::kElu
           : t == LeakyType::kSelu ? Act::kSelu
                                   : Act::kGelu;
  }
  static constexpr Act kActs[] = {Act::kRelu, Act::kSigmoid, Act::kTanh, Act::kSoftRelu, Act::kSoftSign};
  return kActs[static_cast<int>(s.Params<sdk::ActivationParam>().act_type)];
}

/// LeakyReLU's slope (leaky, elu); unused by the other functions.
inline float SlopeOf(const KernelSetup& s) {
  return s.op_name.find("LeakyReLU") != std::string::npos ? s.Params<sdk::LeakyReLUParam>().slope : 0.25f;
}

template <class L>
class ActivationKernel {
 public:
  explicit ActivationKernel(const KernelSetup& s) : act_(ParseAct(s)), slope_(SlopeOf(s)) {
    s.ExpectCounts(1, -1);
    if (s.outputs.empty()) Invalid(s, "expects an output");
    RequireFloat32(s);
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output " + ShapeOf(s.outputs[0]) + " differs from data " + ShapeOf(s.inputs[0]));
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.inputs[0].size(),
             ActForwardMap<decltype(a)>{act_, slope_, L::template Ptr<const float>(c.inputs[0]),
                                        L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  Act act_;
  float slope_;
};

// Inputs out_grad, data, output — or out_grad, output when the derivative needs only the output.
template <class L>
class ActivationBackwardKernel {
 public:
  explicit ActivationBackwardKernel(const KernelSetup& s) : act_(ParseAct(s)), slope_(SlopeOf(s)) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    const bool output_only =
        act_ == Act::kRelu || act_ == Act::kSigmoid || act_ == Act::kTanh || act_ == Act::kSoftRelu;
    has_data_ = sdk::ActivationGradHasData(s.op_name, output_only, s.inputs.size());
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.inputs[0].size(),
             ActBackwardMap<decltype(a)>{act_, slope_, L::template Ptr<const float>(c.inputs[0]),
                                         has_data_ ? L::template Ptr<const float>(c.inputs[1]) : nullptr,
                                         L::template Ptr<const float>(c.inputs[has_data_ ? 2 : 1]),
                                         L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  Act act_;
  float slope_;
  bool has_data_ = true;
};

// ---- LeakyReLU prelu / rrelu ------------------------------------------------------------------

/// Element i's channel among `channels` (prelu's gamma), `inner` elements per channel run.
struct ChannelView {
  int64_t channels = 1, inner = 1;
  WEFT_HD int64_t Of(int64_t i) const { return (i / inner) % channels; }
};

/// prelu: y = x > 0 ? x : gamma[ch] · x; rrelu: y = x > 0 ? x : slope(i) · x, and its mask.
template <class Assign>
struct LeakySlopeMap {
  ChannelView v;
  const float* gamma;  // prelu; null for rrelu
  float lower, upper;  // rrelu
  bool train;
  uint64_t seed;
  bool mask_only;
  const float* x;
  float* out;
  WEFT_HD float Slope(int64_t i) const {
    if (gamma != nullptr) return gamma[v.Of(i)];
    return train ? lower + (upper - lower) * UniformAt(seed, static_cast<uint64_t>(i)) : 0.5f * (lower + upper);
  }
  WEFT_HD void operator()(int64_t i) const {
    const float s = Slope(i);
    Assign::Put(out[i], mask_only ? s : (x[i] > 0.0f ? x[i] : s * x[i]));
  }
};

/// prelu's data gradient (slopes gamma[ch]) or rrelu's (slopes mask[i], test on the output).
template <class Assign>
struct LeakySlopeGradMap {
  ChannelView v;
  const float* gamma;  // prelu
  const float* mask;   // rrelu
  const float* gy;
  const float* pos;  // prelu: data; rrelu: output
  float* gx;
  WEFT_HD void operator()(int64_t i) const {
    const float s = gamma != nullptr ? gamma[v.Of(i)] : mask[i];
    Assign::Put(gx[i], pos[i] > 0.0f ? gy[i] : gy[i] * s);
  }
};

/// prelu's gamma gradient: item = channel; Σ x · gy over its elements below zero, in double.
template <class Assign>
struct PreluGammaGradMap {
  ChannelView v;
  int64_t n;
  const float* gy;
  const float* x;
  float* gg;
  WEFT_HD void operator()(int64_t ch) const {
    double acc = 0.0;
    for (int64_t b = ch; b * v.inner < n; b += v.channels)
      for (int64_t j = 0, i = b * v.inner; j < v.inner && i < n; ++j, ++i)
        if (!(x[i] > 0.0f)) acc += static_cast<double>(x[i]) * gy[i];
    Assign::Put(gg[ch], static_cast<float>(acc));
  }
};

inline ChannelView PreluView(const KernelSetup& s, const TensorDesc& x, const TensorDesc& gamma) {
  const sdk::PreluChannels p = sdk::PreluChannelsOf(s.op_name, x.shape, gamma.shape);
  ChannelView v;
  v.channels = p.channels == 0 ? 1 : p.channels;  // an empty gamma goes with empty data: no item divides by it
  v.inner = p.inner;
  return v;
}

/// LeakyReLU and _backward_LeakyReLU for every act_type: prelu and rrelu here, the others through
/// ActivationKernel / ActivationBackwardKernel (above).
template <class L>
class LeakyKernel {
 public:
  explicit LeakyKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    const auto lp = s.Params<sdk::LeakyReLUParam>();
    prelu_ = lp.act_type == sdk::LeakyType::kPrelu;
    rrelu_ = lp.act_type == sdk::LeakyType::kRrelu;
    if (!prelu_ && !rrelu_) {
      if (backward_)
        bwd_ = std::make_unique<ActivationBackwardKernel<L>>(s);
      else
        fwd_ = std::make_unique<ActivationKernel<L>>(s);
      return;
    }
    RequireFloat32(s);
    if (prelu_) {
      s.ExpectCounts(backward_ ? 4 : 2, backward_ ? 2 : 1);
      v_ = PreluView(s, s.inputs[backward_ ? 1 : 0], s.inputs[backward_ ? 2 : 1]);
    } else {
      s.ExpectCounts(backward_ ? 5 : 1, backward_ ? 1 : 2);
      lower_ = lp.lower_bound;
      upper_ = lp.upper_bound;
    }
    const TensorDesc& x = s.inputs[backward_ && prelu_ ? 1 : 0];
    for (const TensorDesc& o : s.outputs)
      if (o.size() != x.size() && !(prelu_ && backward_ && &o == &s.outputs[1]))
        Invalid(s, "output " + ShapeOf(o) + " differs from data " + ShapeOf(x));
  }
  void Compute(const DeviceCall& c) const {
    if (fwd_) return fwd_->Compute(c);
    if (bwd_) return bwd_->Compute(c);
    auto in = [&](size_t i) { return L::template Ptr<const float>(c.inputs[i]); };
    auto out = [&](size_t i) { return L::template Ptr<float>(c.outputs[i]); };
    const int64_t n = c.outputs[0].size();
    if (!backward_) {
      for (size_t o = 0; o < c.outputs.size(); ++o)
        WithReq(c.req[o], [&](auto a) {
          L::Map(c, n,
                 LeakySlopeMap<decltype(a)>{v_, prelu_ ? in(1) : nullptr, lower_, upper_, c.is_train, c.seed, o == 1,
                                            in(0), out(o)});
        });
      return;
    }
    WithReq(c.req[0], [&](auto a) {
      if (prelu_)  // out_grad, data, gamma, output
        L::Map(c, n, LeakySlopeGradMap<decltype(a)>{v_, in(2), nullptr, in(0), in(1), out(0)});
      else  // out_grad(output), out_grad(mask), data, output, mask
        L::Map(c, n, LeakySlopeGradMap<decltype(a)>{v_, nullptr, in(4), in(0), in(3), out(0)});
    });
    if (prelu_)
      WithReq(c.req[1], [&](auto a) {
        L::Map(c, v_.channels, PreluGammaGradMap<decltype(a)>{v_, n, in(0), in(1), out(1)});
      });
  }

 private:
  bool backward_, prelu_ = false, rrelu_ = false;
  std::unique_ptr<ActivationKernel<L>> fwd_;
  std::unique_ptr<ActivationBackwardKernel<L>> bwd_;
  ChannelView v_;
  float lower_ = 0.125f, upper_ = 0.334f;
};

/// Registers Activation and its backward op (RegisterGpuLayer, unless the plugin runs them through
/// a vendor library).
template <class L>
void RegisterActivationKernels(sdk::KernelTable& t) {
  t.Add<ActivationKernel<L>>("Activation", kF32);
  t.Add<ActivationBackwardKernel<L>>("_backward_Activation", kF32);
}

/// Registers LeakyReLU and its backward op for launcher L.
template <class L>
void RegisterLeakyReLUKernels(sdk::KernelTable& t) {
  t.Add<LeakyKernel<L>>("LeakyReLU", kF32);
  t.Add<LeakyKernel<L>>("_backward_LeakyReLU", kF32);
}

}  // namespace weft::WEFT_GPU_NS

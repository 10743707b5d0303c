// weft GPU kernel layer — more nn ops over a launcher L, with their functors (the cpu plugin's
// formulas, MXNet 1.9's):
//   Dropout          mode training: mask = UniformAt(seed, i) < 1 − p ? 1/(1 − p) : 0 — the cpu's
//                    counter-based stream, so every launcher draws the cpu's mask bit for bit;
//                    identity (mask 1) outside training or for p = 0
//   LRN              cross-channel window of nsize on (N, C, ...); the hidden tmp_norm output
//   LeakyReLU        prelu (per-channel gamma and its gradient) and rrelu (random slopes in
//                    training, the mean slope otherwise); the other act_types are Activation's
//   LinearRegressionOutput / MakeLoss backward (their forward is a copy, gpu_tensor_ops.h)
// Work items never write what another reads; reductions (prelu's gamma gradient, LRN's window)
// loop inside one item in the cpu's order.
#pragma once

#include <memory>
#include <string>

#include "gpu_ops.h"
#include "gpu_tensor_ops.h"
#include "weft/sdk/ops/activation.hpp"
#include "weft/sdk/ops/dropout.hpp"
#include "weft/sdk/ops/loss.hpp"
#include "weft/sdk/ops/lrn.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for the kernels defined here and registered by gpu_register.h.
inline constexpr const char* kGpuNnExtraSource = __FILE__;

// ---- Dropout (cpu: nn_dropout.cc) --------------------------------------------------------------

struct DropoutParams {
  uint64_t seed = 0;
  float keep = 1, scale = 1;
  bool train = false;
  WEFT_HD float Mask(int64_t i) const {
    return !train ? 1.0f : (UniformAt(seed, static_cast<uint64_t>(i)) < keep ? scale : 0.0f);
  }
};

/// y[i] = x[i] · mask(i) (mask_out null), or mask[i] = mask(i) (x null).
template <class Assign>
struct DropoutMap {
  DropoutParams p;
  const float* x;
  float* out;
  WEFT_HD void operator()(int64_t i) const {
    const float m = p.Mask(i);
    Assign::Put(out[i], x != nullptr ? (p.train ? x[i] * m : x[i]) : m);
  }
};

/// gx = gy · mask (the backward's last input).
template <class Assign>
struct ProductMap {
  const float* a;
  const float* b;
  float* out;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(out[i], b ? a[i] * b[i] : a[i]); }  // b null: a
};

template <class L>
class DropoutKernel {
 public:
  explicit DropoutKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    RequireFloat32(s);
    s.Params<sdk::DropoutParam>().RequireNoAxes(s.op_name, "the GPU layer");
    if (backward_) {
      s.ExpectCounts(-1, 1);
      if (s.inputs.size() < 2) Invalid(s, "expects out_grad and the mask");
    } else {
      s.ExpectCounts(1, -1);
      if (s.outputs.empty() || s.outputs.size() > 2) Invalid(s, "expects output and an optional mask output");
      p_ = s.Params<sdk::DropoutParam>().p;  // mode is DefaultOnly: Params refuses others
    }
    RequireSameSize(s);
  }
  void Compute(const DeviceCall& c) const {
    const int64_t n = c.outputs[0].size();
    if (backward_) {
      // The mask applies only in training (cpu: nn_dropout.cc); otherwise out_grad · 1.
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, n,
               ProductMap<decltype(a)>{L::template Ptr<const float>(c.inputs[0]),
                                       c.is_train ? L::template Ptr<const float>(c.inputs.back()) : nullptr,
                                       L::template Ptr<float>(c.outputs[0])});
      });
      return;
    }
    DropoutParams d;
    d.seed = c.seed;
    d.train = c.is_train && p_ != 0.0f;
    d.keep = 1.0f - p_;
    d.scale = d.keep > 0.0f ? 1.0f / d.keep : 0.0f;
    WithReq(c.req[0], [&](auto a) {
      L::Map(
          c, n,
          DropoutMap<decltype(a)>{d, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<float>(c.outputs[0])});
    });
    if (c.outputs.size() > 1)
      WithReq(c.req[1], [&](auto a) {
        L::Map(c, n, DropoutMap<decltype(a)>{d, nullptr, L::template Ptr<float>(c.outputs[1])});
      });
  }

 private:
  bool backward_;
  float p_ = 0.5f;
};

// ---- LRN (cpu: norm_lrn.cc) ----------------------------------------------------------------------

struct LrnParams {
  int64_t c = 1, inner = 1, half = 0, nsize = 1;
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f;
  /// Element i's channel and the offset of channel 0 of its column.
  WEFT_HD void Column(int64_t i, int64_t& ch, int64_t& base) const {
    ch = (i / inner) % c;
    base = i - ch * inner;
  }
  WEFT_HD int64_t Lo(int64_t ch) const { return ch - half > 0 ? ch - half : 0; }
  WEFT_HD int64_t Hi(int64_t ch) const { return ch + half < c - 1 ? ch + half : c - 1; }
  /// tmp_norm of element i: knorm + alpha / nsize · Σ_window x².
  WEFT_HD float Norm(const float* x, int64_t i) const {
    int64_t ch, base;
    Column(i, ch, base);
    float acc = 0.0f;
    for (int64_t k = Lo(ch); k <= Hi(ch); ++k) {
      const float v = x[base + k * inner];
      acc += v * v;
    }
    return knorm + alpha / static_cast<float>(nsize) * acc;
  }
};

/// y = x · norm^−beta (x, y) or tmp_norm (y only: x read, norm written).
template <class Assign>
struct LrnMap {
  LrnParams p;
  bool norm_only;
  const float* x;
  float* out;
  WEFT_HD void operator()(int64_t i) const {
    const float norm = p.Norm(x, i);
    Assign::Put(out[i], norm_only ? norm : x[i] * powf(norm, -p.beta));
  }
};

/// gx = gy · norm^−beta − 2·alpha·beta/nsize · x · Σ_window gy · x · norm^(−beta−1).
template <class Assign>
struct LrnGradMap {
  LrnParams p;
  const float* gy;
  const float* x;
  const float* norm;
  float* gx;
  WEFT_HD void operator()(int64_t i) const {
    int64_t ch, base;
    p.Column(i, ch, base);
    float sum = 0.0f;
    for (int64_t k = p.Lo(ch); k <= p.Hi(ch); ++k) {
      const int64_t e = base + k * p.inner;
      sum += gy[e] * x[e] * powf(norm[e], -p.beta - 1.0f);
    }
    const float kk = -2.0f * p.alpha * p.beta / static_cast<float>(p.nsize);
    Assign::Put(gx[i], gy[i] * powf(norm[i], -p.beta) + kk * x[i] * sum);
  }
};

inline LrnParams ParseLrn(const KernelSetup& s, const TensorDesc& x) {
  const sdk::LrnGeometry g = sdk::LRNGeometry(s.op_name, s.Params<sdk::LRNParam>(), x.shape);
  LrnParams p;
  p.c = g.c, p.inner = g.inner, p.half = g.half, p.nsize = g.nsize;
  p.alpha = g.alpha, p.beta = g.beta, p.knorm = g.knorm;
  return p;
}

/// LRN (outputs output, tmp_norm) and _backward_LRN (inputs out_grad(output), out_grad(tmp_norm),
/// data, output, tmp_norm).
template <class L>
class LrnKernel {
 public:
  explicit LrnKernel(const KernelSetup& s) : backward_(IsBackward(s)) {
    RequireFloat32(s);
    s.ExpectCounts(backward_ ? 5 : 1, backward_ ? 1 : -1);
    if (!backward_ && (s.outputs.empty() || s.outputs.size() > 2)) Invalid(s, "expects output and the hidden tmp_norm");
    RequireSameSize(s);
    p_ = ParseLrn(s, s.inputs[backward_ ? 2 : 0]);
  }
  const LrnParams& params() const { return p_; }
  void Compute(const DeviceCall& c) const {
    const int64_t n = c.outputs[0].size();
    auto in = [&](size_t i) { return L::template Ptr<const float>(c.inputs[i]); };
    if (backward_) {
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, n, LrnGradMap<decltype(a)>{p_, in(0), in(2), in(4), L::template Ptr<float>(c.outputs[0])});
      });
      return;
    }
    for (size_t o = 0; o < c.outputs.size(); ++o)
      WithReq(c.req[o], [&](auto a) {
        L::Map(c, n, LrnMap<decltype(a)>{p_, o == 1, in(0), L::template Ptr<float>(c.outputs[o])});
      });
  }

 private:
  bool backward_;
  LrnParams p_;
};

// ---- LeakyReLU prelu / rrelu (cpu: nn_activation.cc) -------------------------------------------

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
/// ActivationKernel / ActivationBackwardKernel (gpu_ops.h).
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

// ---- losses (cpu: loss.cc) ------------------------------------------------------------------

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

}  // namespace weft::WEFT_GPU_NS

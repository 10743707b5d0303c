// weft GPU kernel layer — the norm family's LRN (cpu: norm_lrn.cc, MXNet 1.9's formulas) and its
// backward, float32: a cross-channel window of nsize on (N, C, ...), with the hidden tmp_norm
// output. The window's sums loop inside one item, in the cpu's order.
#pragma once

#include <math.h>

#include "gpu_kernel.h"
#include "weft/sdk/ops/lrn.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose LRN falls back to these classes.
inline constexpr const char* kGpuNormLrnSource = __FILE__;

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

/// Registers LRN and its backward op (RegisterGpuLayer, unless the plugin runs them through a vendor
/// library).
template <class L>
void RegisterLrnKernels(sdk::KernelTable& t) {
  t.Add<LrnKernel<L>>("LRN", kF32);
  t.Add<LrnKernel<L>>("_backward_LRN", kF32);
}

}  // namespace weft::WEFT_GPU_NS

// weft GPU kernel layer — BatchNorm (MXNet 1.9; the cpu plugin's norm_batch_norm.cc semantics) over
// the channel axis `axis` of data viewed as (outer, C, inner). Training (is_train and not
// use_global_stats): batch mean and biased variance per channel, moving statistics updated as
// momentum·moving + (1 − momentum)·batch; otherwise the moving statistics normalise. The hidden
// outputs are the mean and 1/√(var + eps). fix_gamma treats gamma as 1 (zero gradient).
//
// Two passes each way: a per-channel item computes the statistics (sums in double) into the
// workspace, then a per-element item normalises (forward) or forms the data gradient (backward).
#pragma once

#include <string>
#include <vector>

#include "gpu_kernel.h"
#include "weft/sdk/ops/batch_norm.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose BatchNorm falls back to these classes.
inline constexpr const char* kGpuNormBatchNormSource = __FILE__;

using BnShape = sdk::BatchNormGeometry;

/// The geometry of a BatchNorm node with data x (its shapes checked by the kernels' setup).
inline BnShape ParseBatchNorm(const KernelSetup& s, const TensorDesc& x) {
  return sdk::BatchNormGeometryOf(s.op_name, s.Params<sdk::BatchNormParam>(), x.shape);
}

/// moving = momentum·moving + (1 − momentum)·batch, for the mean and the (biased) variance.
WEFT_HD inline void UpdateMovingStats(const BnShape& p, double mu, double var, float& moving_mean, float& moving_var) {
  moving_mean = static_cast<float>(p.momentum * moving_mean + (1.0 - p.momentum) * mu);
  moving_var = static_cast<float>(p.momentum * moving_var + (1.0 - p.momentum) * var);
}

/// Per channel: the moving statistics' update from a batch's mean and 1/√(var + eps) (the CUDA
/// plugin's cuDNN path, which saves those two; cuDNN's own running variance is the unbiased one).
struct BnMovingUpdateMap {
  BnShape p;
  const float* mean;
  const float* inv_std;
  float* moving_mean;
  float* moving_var;
  WEFT_HD void operator()(int64_t ch) const {
    const double is = inv_std[ch], var = 1.0 / (is * is) - p.eps;
    UpdateMovingStats(p, mean[ch], var > 0.0 ? var : 0.0, moving_mean[ch], moving_var[ch]);
  }
};

/// Per channel: the statistics to normalise with (batch ones when `batch`, updating the moving
/// ones; else the moving ones) into mean[ch], inv_std[ch].
struct BnStatsMap {
  BnShape p;
  bool batch;
  const float* x;
  float* moving_mean;
  float* moving_var;
  float* mean;
  float* inv_std;
  WEFT_HD void operator()(int64_t ch) const {
    double mu = moving_mean[ch], var = moving_var[ch];
    if (batch) {
      const double m = static_cast<double>(p.outer * p.inner);
      double s = 0;
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i) s += x[(o * p.c + ch) * p.inner + i];
      mu = m > 0 ? s / m : 0.0;
      double v = 0;
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t i = 0; i < p.inner; ++i) {
          const double d = x[(o * p.c + ch) * p.inner + i] - mu;
          v += d * d;
        }
      var = m > 0 ? v / m : 0.0;
      UpdateMovingStats(p, mu, var, moving_mean[ch], moving_var[ch]);
    }
    mean[ch] = static_cast<float>(mu);
    inv_std[ch] = static_cast<float>(1.0 / sqrt(var + p.eps));
  }
};

template <class Assign>
struct BnNormalizeMap {
  BnShape p;
  const float* x;
  const float* gamma;
  const float* beta;
  const float* mean;
  const float* inv_std;
  float* y;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t ch = e / p.inner % p.c;
    const float scale = (p.fix_gamma ? 1.0f : gamma[ch]) * inv_std[ch];
    Assign::Put(y[e], x[e] * scale + (beta[ch] - mean[ch] * scale));
  }
};

/// out[i] (=|+=) in[i]; item = element.
template <class Assign>
struct CopyMap {
  const float* in;
  float* out;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(out[i], in[i]); }
};

/// Per channel, backward: the statistics the forward used (mu, is) and the sums Σgy, Σgy·x̂.
struct BnGradStatsMap {
  BnShape p;
  const float* gy;
  const float* x;
  const float* mean;
  const float* inv_std;
  const float* moving_mean;
  const float* moving_var;
  float* ws;  // [mu | is | sum_gy | sum_gy_xhat], C each
  WEFT_HD void operator()(int64_t ch) const {
    const float mu = p.use_global ? moving_mean[ch] : mean[ch];
    const float is =
        p.use_global ? static_cast<float>(1.0 / sqrt(static_cast<double>(moving_var[ch]) + p.eps)) : inv_std[ch];
    double a = 0, b = 0;
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t k = (o * p.c + ch) * p.inner + i;
        a += gy[k];
        b += static_cast<double>(gy[k]) * (x[k] - mu);
      }
    ws[ch] = mu;
    ws[p.c + ch] = is;
    ws[2 * p.c + ch] = static_cast<float>(a);
    ws[3 * p.c + ch] = static_cast<float>(b * is);
  }
};

template <class Assign>
struct BnDataGradMap {
  BnShape p;
  const float* gy;
  const float* x;
  const float* gamma;
  const float* ws;
  float* gx;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t ch = e / p.inner % p.c;
    const float mu = ws[ch], is = ws[p.c + ch];
    const float k = (p.fix_gamma ? 1.0f : gamma[ch]) * is;
    if (p.use_global) {
      Assign::Put(gx[e], gy[e] * k);
      return;
    }
    const float m = static_cast<float>(p.outer * p.inner);
    const float mg = ws[2 * p.c + ch] / m, mgx = ws[3 * p.c + ch] / m;
    Assign::Put(gx[e], k * (gy[e] - mg - (x[e] - mu) * is * mgx));
  }
};

/// gamma / beta gradients from the sums; item = channel.
template <class Assign>
struct BnParamGradMap {
  const float* sums;  // Σgy·x̂ (gamma) or Σgy (beta)
  bool zero;          // fix_gamma: gamma's gradient is 0
  float* out;
  WEFT_HD void operator()(int64_t ch) const { Assign::Put(out[ch], zero ? 0.0f : sums[ch]); }
};

// Inputs data, gamma, beta; outputs output[, mean, inv_std]; aux moving_mean, moving_var.
template <class L>
class BatchNormKernel {
 public:
  explicit BatchNormKernel(const KernelSetup& s) {
    p_ = sdk::CheckBatchNormSetup(s, false);
    RequireFloat32(s);
  }
  uint64_t WorkspaceBytes() const { return static_cast<uint64_t>(2 * p_.c) * sizeof(float); }
  void Compute(const DeviceCall& c) const {
    const float* x = L::template Ptr<const float>(c.inputs[0]);
    float* mean = L::template Ptr<float>(c.workspace);
    float* inv_std = mean + p_.c;
    L::Map(c, p_.c,
           BnStatsMap{p_, c.is_train && !p_.use_global, x, L::template Ptr<float>(c.aux[0]),
                      L::template Ptr<float>(c.aux[1]), mean, inv_std});
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, p_.outer * p_.c * p_.inner,
             BnNormalizeMap<decltype(a)>{p_, x, L::template Ptr<const float>(c.inputs[1]),
                                         L::template Ptr<const float>(c.inputs[2]), mean, inv_std,
                                         L::template Ptr<float>(c.outputs[0])});
    });
    for (size_t k = 1; k < c.outputs.size(); ++k)
      WithReq(c.req[k], [&](auto a) {
        L::Map(c, p_.c, CopyMap<decltype(a)>{k == 1 ? mean : inv_std, L::template Ptr<float>(c.outputs[k])});
      });
  }

 private:
  BnShape p_;
};

// _backward_BatchNorm inputs: out-grads (1, or 3 with the hidden outputs'), data, gamma, beta,
// output, mean, inv_std, moving_mean, moving_var. Outputs: data, gamma, beta gradients.
template <class L>
class BatchNormBackwardKernel {
 public:
  explicit BatchNormBackwardKernel(const KernelSetup& s) {
    p_ = sdk::CheckBatchNormSetup(s, true);
    g_ = p_.data;
    RequireFloat32(s);
  }
  uint64_t WorkspaceBytes() const { return static_cast<uint64_t>(4 * p_.c) * sizeof(float); }
  void Compute(const DeviceCall& c) const {
    auto in = [&](size_t i) { return L::template Ptr<const float>(c.inputs[i]); };
    const float* gy = in(0);
    const float* x = in(g_);
    float* ws = L::template Ptr<float>(c.workspace);
    L::Map(c, p_.c, BnGradStatsMap{p_, gy, x, in(g_ + 4), in(g_ + 5), in(g_ + 6), in(g_ + 7), ws});
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, p_.outer * p_.c * p_.inner,
             BnDataGradMap<decltype(a)>{p_, gy, x, in(g_ + 1), ws, L::template Ptr<float>(c.outputs[0])});
    });
    WithReq(c.req[1], [&](auto a) {
      L::Map(c, p_.c, BnParamGradMap<decltype(a)>{ws + 3 * p_.c, p_.fix_gamma, L::template Ptr<float>(c.outputs[1])});
    });
    WithReq(c.req[2], [&](auto a) {
      L::Map(c, p_.c, BnParamGradMap<decltype(a)>{ws + 2 * p_.c, false, L::template Ptr<float>(c.outputs[2])});
    });
  }

 private:
  BnShape p_;
  size_t g_ = 1;
};

template <class L>
void RegisterBatchNorm(sdk::KernelTable& t) {
  t.Add<BatchNormKernel<L>>("BatchNorm", kF32);
  t.Add<BatchNormBackwardKernel<L>>("_backward_BatchNorm", kF32);
}

}  // namespace weft::WEFT_GPU_NS

// BatchNorm (MXNet 1.9) over the channel axis `axis` of data viewed as (outer, C, inner).
// Training (is_train and not use_global_stats): batch mean and biased variance per channel; the
// hidden outputs get the mean and the inverse std 1/√(var + eps); moving_mean/moving_var become
// momentum·moving + (1 − momentum)·batch. Otherwise the moving statistics normalise and the
// hidden outputs get moving_mean and 1/√(moving_var + eps). fix_gamma treats gamma as 1 and gives
// it a zero gradient. Sums run in double.
#include <cmath>
#include <vector>

#include "nn_common.h"
#include "weft/sdk/ops/batch_norm.hpp"

namespace weft::cpu {
namespace {

using BnParams = weft::sdk::BatchNormGeometry;

// The node's geometry and attributes, its shapes checked.
BnParams ParseBn(const KernelSetup& s, bool backward) {
  const BnParams p = weft::sdk::CheckBatchNormSetup(s, backward);
  RequireFloat32(s);
  return p;
}

// Per-channel mean and biased variance of x.
void ChannelStats(const BnParams& p, const float* x, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(p.c), 0.0);
  var.assign(static_cast<size_t>(p.c), 0.0);
  const double m = static_cast<double>(p.outer * p.inner);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t ch = 0; ch < p.c; ++ch) {
      const float* r = x + (o * p.c + ch) * p.inner;
      double s = 0;
      for (int64_t i = 0; i < p.inner; ++i) s += r[i];
      mean[static_cast<size_t>(ch)] += s;
    }
  for (double& v : mean) v = m > 0 ? v / m : 0.0;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t ch = 0; ch < p.c; ++ch) {
      const float* r = x + (o * p.c + ch) * p.inner;
      double mu = mean[static_cast<size_t>(ch)], s = 0;
      for (int64_t i = 0; i < p.inner; ++i) s += (r[i] - mu) * (r[i] - mu);
      var[static_cast<size_t>(ch)] += s;
    }
  for (double& v : var) v = m > 0 ? v / m : 0.0;
}

// Inputs data, gamma, beta; outputs output[, mean, inv_std]; aux moving_mean, moving_var.
class BatchNormForward {
 public:
  explicit BatchNormForward(const KernelSetup& s) { p_ = ParseBn(s, false); }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    const float* gamma = c.inputs[1].data<float>();
    const float* beta = c.inputs[2].data<float>();
    float* mm = c.aux[0].data<float>();
    float* mv = c.aux[1].data<float>();
    const size_t C = static_cast<size_t>(p_.c);
    std::vector<double> mean, var;
    const bool batch = c.is_train && !p_.use_global;
    if (batch) {
      ChannelStats(p_, x, mean, var);
      for (size_t ch = 0; ch < C; ++ch) {
        mm[ch] = static_cast<float>(p_.momentum * mm[ch] + (1.0 - p_.momentum) * mean[ch]);
        mv[ch] = static_cast<float>(p_.momentum * mv[ch] + (1.0 - p_.momentum) * var[ch]);
      }
    } else {
      mean.assign(mm, mm + C);
      var.assign(mv, mv + C);
    }
    std::vector<float> scale(C), shift(C), inv_std(C);
    for (size_t ch = 0; ch < C; ++ch) {
      inv_std[ch] = static_cast<float>(1.0 / std::sqrt(var[ch] + p_.eps));
      float gm = p_.fix_gamma ? 1.0f : gamma[ch];
      scale[ch] = gm * inv_std[ch];
      shift[ch] = beta[ch] - static_cast<float>(mean[ch]) * scale[ch];
    }
    float* y = c.outputs[0].data<float>();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t o = 0; o < p_.outer; ++o)
        for (int64_t ch = 0; ch < p_.c; ++ch) {
          int64_t base = (o * p_.c + ch) * p_.inner;
          float a = scale[static_cast<size_t>(ch)], b = shift[static_cast<size_t>(ch)];
          for (int64_t i = 0; i < p_.inner; ++i) assign(y[base + i], x[base + i] * a + b);
        }
    });
    if (c.outputs.size() == 3) {
      float* om = c.outputs[1].data<float>();
      float* os = c.outputs[2].data<float>();
      weft::sdk::WithReq(c.req[1], [&](auto assign) {
        for (size_t ch = 0; ch < C; ++ch) assign(om[ch], static_cast<float>(mean[ch]));
      });
      weft::sdk::StoreReq(c.req[2], os, inv_std.data(), p_.c);
    }
  }

 private:
  BnParams p_;
};

// _backward_BatchNorm inputs: out-grads (1, or 3 with the hidden outputs'), data, gamma, beta,
// output, mean, inv_std, moving_mean, moving_var. Outputs: data, gamma, beta gradients.
class BatchNormBackward {
 public:
  explicit BatchNormBackward(const KernelSetup& s) {
    p_ = ParseBn(s, true);
    g_ = static_cast<int>(p_.data);
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* x = c.inputs[static_cast<size_t>(g_)].data<float>();
    const float* gamma = c.inputs[static_cast<size_t>(g_ + 1)].data<float>();
    const float* mean = c.inputs[static_cast<size_t>(g_ + 4)].data<float>();
    const float* inv_std = c.inputs[static_cast<size_t>(g_ + 5)].data<float>();
    const float* mm = c.inputs[static_cast<size_t>(g_ + 6)].data<float>();
    const float* mv = c.inputs[static_cast<size_t>(g_ + 7)].data<float>();
    const size_t C = static_cast<size_t>(p_.c);
    // Statistics the forward used: batch ones (from the hidden outputs) or the moving ones.
    std::vector<float> mu(C), is(C);
    for (size_t ch = 0; ch < C; ++ch) {
      mu[ch] = p_.use_global ? mm[ch] : mean[ch];
      is[ch] = p_.use_global ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(mv[ch]) + p_.eps)) : inv_std[ch];
    }
    std::vector<double> sum_gy(C, 0.0), sum_gy_xhat(C, 0.0);
    for (int64_t o = 0; o < p_.outer; ++o)
      for (size_t ch = 0; ch < C; ++ch) {
        int64_t base = (o * p_.c + static_cast<int64_t>(ch)) * p_.inner;
        double a = 0, b = 0;
        for (int64_t i = 0; i < p_.inner; ++i) {
          a += gy[base + i];
          b += static_cast<double>(gy[base + i]) * (x[base + i] - mu[ch]);
        }
        sum_gy[ch] += a;
        sum_gy_xhat[ch] += b * is[ch];
      }
    const double m = static_cast<double>(p_.outer * p_.inner);
    float* gx = c.outputs[0].data<float>();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t o = 0; o < p_.outer; ++o)
        for (size_t ch = 0; ch < C; ++ch) {
          int64_t base = (o * p_.c + static_cast<int64_t>(ch)) * p_.inner;
          float k = (p_.fix_gamma ? 1.0f : gamma[ch]) * is[ch];
          if (p_.use_global) {
            for (int64_t i = 0; i < p_.inner; ++i) assign(gx[base + i], gy[base + i] * k);
          } else {
            float mg = static_cast<float>(sum_gy[ch] / m), mgx = static_cast<float>(sum_gy_xhat[ch] / m);
            for (int64_t i = 0; i < p_.inner; ++i) {
              float xhat = (x[base + i] - mu[ch]) * is[ch];
              assign(gx[base + i], k * (gy[base + i] - mg - xhat * mgx));
            }
          }
        }
    });
    float* gg = c.outputs[1].data<float>();
    float* gb = c.outputs[2].data<float>();
    weft::sdk::WithReq(c.req[1], [&](auto assign) {
      for (size_t ch = 0; ch < C; ++ch) assign(gg[ch], p_.fix_gamma ? 0.0f : static_cast<float>(sum_gy_xhat[ch]));
    });
    weft::sdk::WithReq(c.req[2], [&](auto assign) {
      for (size_t ch = 0; ch < C; ++ch) assign(gb[ch], static_cast<float>(sum_gy[ch]));
    });
  }

 private:
  BnParams p_;
  int g_ = 1;
};

}  // namespace

void RegisterBatchNorm(KernelTable& t) {
  t.Add<BatchNormForward>("BatchNorm", kF32);
  t.Add<BatchNormBackward>("_backward_BatchNorm", kF32);
}

}  // namespace weft::cpu

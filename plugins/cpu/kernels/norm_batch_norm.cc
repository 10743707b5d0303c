// BatchNorm (MXNet 1.9) over the channel axis `axis` of data viewed as (outer, C, inner).
// Training (is_train and not use_global_stats): batch mean and biased variance per channel; the
// hidden outputs get the mean and the inverse std 1/√(var + eps); moving_mean/moving_var become
// momentum·moving + (1 − momentum)·batch. Otherwise the moving statistics normalise and the
// hidden outputs get moving_mean and 1/√(moving_var + eps). fix_gamma treats gamma as 1 and gives
// it a zero gradient. Sums run in double. float32 and float64 (Gluon nets cast to float64).
#include <cmath>
#include <vector>

#include "norm_batch_norm.h"

#include "isa_dispatch.h"
#include "nn_common.h"
#include "parallel.h"
#include "tensor_util.h"

namespace weft::cpu {
namespace {

using tensor::DispatchFloat;
using tensor::kFloatMask;

// The node's geometry and attributes, its shapes checked.
BnParams ParseBn(const KernelSetup& s, bool backward) { return weft::sdk::CheckBatchNormSetup(s, backward); }

// The sums below run in double over 8 independent lanes (element i in lane i % 8, added in a fixed
// tree at the end): one accumulator chained every element was bound by the add latency, and the
// lanes vectorise without reassociation, so results stay the same run to run and on every ISA.
// sum of f(i) for i in [0, n).
template <typename F>
inline double LaneSum(int64_t n, F f) {
  double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) a[k] += f(i + k);
  double tail = 0;
  for (; i < n; ++i) tail += f(i);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
}

// Runs body(ch) for every channel, channels split over the OpenMP team: a channel's sums are made by
// one thread in one order, so the split does not change them.
template <typename F>
void ForChannels(const BnParams& p, F body) {
  ParallelChunks(p.c, p.outer * p.c * p.inner, [&](int64_t c0, int64_t c1, int) {
    isa::Dispatch([&] {
      for (int64_t ch = c0; ch < c1; ++ch) body(ch);
    });
  });
}

// The mean and biased variance of channel ch of x: the sum, then the squared deviations from the
// mean (two passes; the second finds the channel's data in the cache).
template <typename T>
void ChannelMoments(const BnParams& p, const T* x, int64_t ch, double& mean, double& var) {
  const double m = static_cast<double>(p.outer * p.inner);
  double s = 0;
  for (int64_t o = 0; o < p.outer; ++o) {
    const T* r = x + (o * p.c + ch) * p.inner;
    s += LaneSum(p.inner, [&](int64_t i) { return static_cast<double>(r[i]); });
  }
  const double mu = m > 0 ? s / m : 0.0;
  double q = 0;
  for (int64_t o = 0; o < p.outer; ++o) {
    const T* r = x + (o * p.c + ch) * p.inner;
    q += LaneSum(p.inner, [&](int64_t i) {
      const double d = r[i] - mu;
      return d * d;
    });
  }
  mean = mu;
  var = m > 0 ? q / m : 0.0;
}

// Per-channel mean and biased variance of x.
template <typename T>
void ChannelStats(const BnParams& p, const T* x, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(p.c), 0.0);
  var.assign(static_cast<size_t>(p.c), 0.0);
  ForChannels(
      p, [&](int64_t ch) { ChannelMoments(p, x, ch, mean[static_cast<size_t>(ch)], var[static_cast<size_t>(ch)]); });
}

// Channel ch's inverse std, scale and shift from r.mean / r.var (sized by the caller). Out of line
// so that the ISA variants of a dispatched loop calling it (isa::Dispatch flattens everything
// else) do not contract beta − mean·scale into an FMA: every path, BatchNormScaleShift's and the
// fused convolution's included, gets the same bits.
template <typename T>
[[gnu::noinline]] void ChannelScaleShift(const BnParams& p, const T* gamma, const T* beta, size_t ch,
                                         BnScaleShift<T>& r) {
  r.inv_std[ch] = static_cast<T>(1.0 / std::sqrt(r.var[ch] + p.eps));
  const T gm = p.fix_gamma ? T(1) : gamma[ch];
  r.scale[ch] = gm * r.inv_std[ch];
  r.shift[ch] = beta[ch] - static_cast<T>(r.mean[ch]) * r.scale[ch];
}

// moving = momentum·moving + (1 − momentum)·batch.
template <typename T>
void UpdateMoving(const BnParams& p, const BnScaleShift<T>& r, T* mm, T* mv) {
  for (size_t ch = 0; ch < static_cast<size_t>(p.c); ++ch) {
    mm[ch] = static_cast<T>(p.momentum * mm[ch] + (1.0 - p.momentum) * r.mean[ch]);
    mv[ch] = static_cast<T>(p.momentum * mv[ch] + (1.0 - p.momentum) * r.var[ch]);
  }
}

template <typename T>
BnScaleShift<T> SizedScaleShift(const BnParams& p) {
  const size_t C = static_cast<size_t>(p.c);
  BnScaleShift<T> r;
  r.mean.resize(C), r.var.resize(C), r.scale.resize(C), r.shift.resize(C), r.inv_std.resize(C);
  return r;
}

}  // namespace

template <typename T>
BnScaleShift<T> BatchNormScaleShift(const BnParams& p, const T* x, const T* gamma, const T* beta, T* mm, T* mv,
                                    bool batch) {
  BnScaleShift<T> r = SizedScaleShift<T>(p);
  if (batch) {
    ChannelStats(p, x, r.mean, r.var);
    UpdateMoving(p, r, mm, mv);
  } else {
    r.mean.assign(mm, mm + p.c);
    r.var.assign(mv, mv + p.c);
  }
  for (size_t ch = 0; ch < static_cast<size_t>(p.c); ++ch) ChannelScaleShift(p, gamma, beta, ch, r);
  return r;
}

template BnScaleShift<float> BatchNormScaleShift(const BnParams&, const float*, const float*, const float*, float*,
                                                 float*, bool);
template BnScaleShift<double> BatchNormScaleShift(const BnParams&, const double*, const double*, const double*, double*,
                                                  double*, bool);

namespace {

// Inputs data, gamma, beta; outputs output[, mean, inv_std]; aux moving_mean, moving_var.
class BatchNormForward {
 public:
  explicit BatchNormForward(const KernelSetup& s) : p_(ParseBn(s, false)), dtype_(RequireFloatDType(s)) {}
  void Compute(const KernelCall& c) const {
    DispatchFloat("BatchNorm", dtype_, [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* x = c.inputs[0].data<T>();
    const T* gamma = c.inputs[1].data<T>();
    const T* beta = c.inputs[2].data<T>();
    T* mm = c.aux[0].data<T>();
    T* mv = c.aux[1].data<T>();
    const size_t C = static_cast<size_t>(p_.c);
    T* y = WantedOutput<T>(c, 0);
    const BnScaleShift<T> b = c.is_train && !p_.use_global ? BatchStatsAndOutput(c, x, gamma, beta, mm, mv, y)
                                                           : MovingStatsOutput(c, x, gamma, beta, mm, mv, y);
    const std::vector<T>& inv_std = b.inv_std;
    const std::vector<double>& mean = b.mean;
    if (c.outputs.size() == 3) {
      T* om = WantedOutput<T>(c, 1);
      T* os = WantedOutput<T>(c, 2);
      weft::sdk::WithReq(c.req[1], [&](auto assign) {
        for (size_t ch = 0; ch < C; ++ch) assign(om[ch], static_cast<T>(mean[ch]));
      });
      weft::sdk::StoreReq(c.req[2], os, inv_std.data(), p_.c);
    }
  }

  // Training: per channel its statistics, then its output while its data is still in the cache
  // (a separate output pass read the whole input from memory a second time). Same arithmetic as
  // BatchNormScaleShift and the plane loop of MovingStatsOutput, so the same bits.
  template <typename T>
  BnScaleShift<T> BatchStatsAndOutput(const KernelCall& c, const T* x, const T* gamma, const T* beta, T* mm, T* mv,
                                      T* y) const {
    BnScaleShift<T> r = SizedScaleShift<T>(p_);
    // y is null when no output is wanted (req null): the statistics still.
    weft::sdk::WithReq(y == nullptr ? WEFT_REQ_WRITE : c.req[0], [&](auto assign) {
      ForChannels(p_, [&](int64_t c64) {
        const auto ch = static_cast<size_t>(c64);
        ChannelMoments(p_, x, c64, r.mean[ch], r.var[ch]);
        ChannelScaleShift(p_, gamma, beta, ch, r);
        if (y == nullptr) return;
        const T k = r.scale[ch], d = r.shift[ch];
        for (int64_t o = 0; o < p_.outer; ++o) {
          const int64_t base = (o * p_.c + c64) * p_.inner;
          for (int64_t i = 0; i < p_.inner; ++i) assign(y[base + i], x[base + i] * k + d);
        }
      });
    });
    UpdateMoving(p_, r, mm, mv);
    return r;
  }

  // Inference or use_global_stats: the moving statistics; planes (one image's channel) split over
  // the OpenMP team.
  template <typename T>
  BnScaleShift<T> MovingStatsOutput(const KernelCall& c, const T* x, const T* gamma, const T* beta, T* mm, T* mv,
                                    T* y) const {
    BnScaleShift<T> b = BatchNormScaleShift(p_, x, gamma, beta, mm, mv, false);
    const int64_t planes = p_.outer * p_.c;
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      ParallelChunks(planes, planes * p_.inner, [&](int64_t p0, int64_t p1, int) {
        isa::Dispatch([&] {
          for (int64_t q = p0; q < p1; ++q) {
            const int64_t base = q * p_.inner;
            const T k = b.scale[static_cast<size_t>(q % p_.c)], d = b.shift[static_cast<size_t>(q % p_.c)];
            for (int64_t i = 0; i < p_.inner; ++i) assign(y[base + i], x[base + i] * k + d);
          }
        });
      });
    });
    return b;
  }

  BnParams p_;
  int32_t dtype_;
};

// _backward_BatchNorm inputs: out-grads (1, or 3 with the hidden outputs'), data, gamma, beta,
// output, mean, inv_std, moving_mean, moving_var. Outputs: data, gamma, beta gradients.
class BatchNormBackward {
 public:
  explicit BatchNormBackward(const KernelSetup& s) : p_(ParseBn(s, true)), dtype_(RequireFloatDType(s)) {
    g_ = static_cast<int>(p_.data);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("_backward_BatchNorm", dtype_, [&](auto tag) { Run<typename decltype(tag)::type>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* gy = c.inputs[0].data<T>();
    const T* x = c.inputs[static_cast<size_t>(g_)].data<T>();
    const T* gamma = c.inputs[static_cast<size_t>(g_ + 1)].data<T>();
    const T* mean = c.inputs[static_cast<size_t>(g_ + 4)].data<T>();
    const T* inv_std = c.inputs[static_cast<size_t>(g_ + 5)].data<T>();
    const T* mm = c.inputs[static_cast<size_t>(g_ + 6)].data<T>();
    const T* mv = c.inputs[static_cast<size_t>(g_ + 7)].data<T>();
    const size_t C = static_cast<size_t>(p_.c);
    // Statistics the forward used: batch ones (from the hidden outputs) or the moving ones.
    std::vector<T> mu(C), is(C);
    for (size_t ch = 0; ch < C; ++ch) {
      mu[ch] = p_.use_global ? mm[ch] : mean[ch];
      is[ch] = p_.use_global ? static_cast<T>(1.0 / std::sqrt(static_cast<double>(mv[ch]) + p_.eps)) : inv_std[ch];
    }
    std::vector<double> sum_gy(C, 0.0), sum_gy_xhat(C, 0.0);
    const double m = static_cast<double>(p_.outer * p_.inner);
    T* gx = WantedOutput<T>(c, 0);
    // Per channel: its two sums, then its rows of gx (the channel's data is still in cache).
    ForChannels(p_, [&](int64_t c64) {
      const auto ch = static_cast<size_t>(c64);
      double a = 0, b = 0;
      for (int64_t o = 0; o < p_.outer; ++o) {
        const int64_t base = (o * p_.c + c64) * p_.inner;
        a += LaneSum(p_.inner, [&](int64_t i) { return static_cast<double>(gy[base + i]); });
        b += LaneSum(p_.inner, [&](int64_t i) {
          return static_cast<double>(gy[base + i]) * static_cast<double>(x[base + i] - mu[ch]);
        });
      }
      sum_gy[ch] = a;
      sum_gy_xhat[ch] = b * is[ch];
      if (gx == nullptr) return;
      const T k = (p_.fix_gamma ? T(1) : gamma[ch]) * is[ch];
      const T mg = static_cast<T>(sum_gy[ch] / m), mgx = static_cast<T>(sum_gy_xhat[ch] / m);
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t o = 0; o < p_.outer; ++o) {
          const int64_t base = (o * p_.c + c64) * p_.inner;
          if (p_.use_global) {
            for (int64_t i = 0; i < p_.inner; ++i) assign(gx[base + i], gy[base + i] * k);
          } else {
            for (int64_t i = 0; i < p_.inner; ++i) {
              const T xhat = (x[base + i] - mu[ch]) * is[ch];
              assign(gx[base + i], k * (gy[base + i] - mg - xhat * mgx));
            }
          }
        }
      });
    });
    T* gg = WantedOutput<T>(c, 1);
    T* gb = WantedOutput<T>(c, 2);
    weft::sdk::WithReq(c.req[1], [&](auto assign) {
      for (size_t ch = 0; ch < C; ++ch) assign(gg[ch], p_.fix_gamma ? T(0) : static_cast<T>(sum_gy_xhat[ch]));
    });
    weft::sdk::WithReq(c.req[2], [&](auto assign) {
      for (size_t ch = 0; ch < C; ++ch) assign(gb[ch], static_cast<T>(sum_gy[ch]));
    });
  }

  BnParams p_;
  int32_t dtype_;
  int g_ = 1;
};

}  // namespace

void RegisterSgBatchNorm(KernelTable& t);  // norm_batch_norm_fused.cc

void RegisterBatchNorm(KernelTable& t) {
  t.Add<BatchNormForward>("BatchNorm", kFloatMask);
  t.Add<BatchNormBackward>("_backward_BatchNorm", kFloatMask);
  RegisterSgBatchNorm(t);
}

}  // namespace weft::cpu

// The per-element rules of MXNet 1.9's optimizer updates (src/operator/optimizer_op-inl.h),
// shared by the float32/float64 update ops of optimizer.cc and the multi-precision, multi-tensor and
// other update ops of optimizer_more.cc. Internal to weft_cpu_kernels; pure functions.
#pragma once

#include <algorithm>
#include <cmath>

#include "nn_common.h"

namespace weft::cpu {

/// clip(x) = min(max(x, −c), c) when c ≥ 0, else x (MXNet's clip_gradient / clip_weights), in the
/// update's dtype T (float, or double for float64 weights).
template <typename T>
inline T ClipTo(T v, float c) {
  return c >= 0.0f ? std::min(std::max(v, static_cast<T>(-c)), static_cast<T>(c)) : v;
}

/// The attributes every update op has: lr, wd, rescale_grad, clip_gradient (the multi-tensor ops
/// give lr and wd per weight). Float attributes as MXNet's; a float64 update computes in double.
struct UpdateParams {
  float lr = 0, wd = 0, rescale = 1, clip = -1;
  UpdateParams() = default;
  UpdateParams(float lr_value, float wd_value, float rescale_grad, float clip_gradient)
      : lr(lr_value), wd(wd_value), rescale(rescale_grad), clip(clip_gradient) {}
  template <typename T>
  T Clip(T g) const {
    return ClipTo(g, clip);
  }
};

/// sgd_update: w' = (1 − lr·wd)·w − lr·clip(rescale·g).
template <typename T>
inline T SgdRule(const UpdateParams& p, T w, T g) {
  const T lr = p.lr;
  return (T(1) - lr * T(p.wd)) * w - lr * p.Clip(T(p.rescale) * g);
}

/// sgd_mom_update: mom = momentum·mom − lr·wd·w − lr·clip(rescale·g); w' = w + mom.
template <typename T>
inline T SgdMomRule(const UpdateParams& p, float momentum, T w, T g, T& mom) {
  const T lr = p.lr;
  mom = T(momentum) * mom - lr * T(p.wd) * w - lr * p.Clip(T(p.rescale) * g);
  return w + mom;
}

/// nag_mom_update: g' = clip(rescale·g) + wd·w; m = momentum·mom; mom = m − lr·g';
/// w' = w − m + (momentum + 1)·(m − lr·g').
template <typename T>
inline T NagMomRule(const UpdateParams& p, float momentum, T w, T g, T& mom) {
  const T gi = p.Clip(T(p.rescale) * g) + T(p.wd) * w;
  const T m = T(momentum) * mom;
  mom = m - T(p.lr) * gi;
  return w - m + (T(momentum) + T(1)) * (m - T(p.lr) * gi);
}

/// adam_update: g' = clip(rescale·g + wd·w); mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²;
/// w' = w − lr·mean/(√var + ε).
template <typename T>
inline T AdamRule(const UpdateParams& p, float beta1, float beta2, float eps, T w, T g, T& mean, T& var) {
  const T gi = p.Clip(T(p.rescale) * g + T(p.wd) * w);
  const T b1 = beta1, b2 = beta2;
  mean = b1 * mean + (T(1) - b1) * gi;
  var = b2 * var + (T(1) - b2) * gi * gi;
  return w - T(p.lr) * mean / (std::sqrt(var) + T(eps));
}

/// The rules of the sgd family: sgd_update, sgd_mom_update, nag_mom_update.
enum class Sgd { kPlain, kMomentum, kNag };

/// One float32 weight's update by `rule` (SgdRule, SgdMomRule or NagMomRule) over n elements: the
/// new weights into output `out` of `c` as its req says (none for null; the momentum `mom`, null
/// for kPlain, advances anyway). `w` may be that output (in place). Runs in the ISA variants
/// (optimizer.cc): the multi-tensor ops of optimizer_more.cc call it per weight, because Gluon's
/// Trainer sends its sgd updates through them.
void SgdUpdateF32(const KernelCall& c, size_t out, const UpdateParams& p, Sgd rule, float momentum, const float* w,
                  const float* g, float* mom, int64_t n);

/// Registers the lazy updates on row_sparse gradients (optimizer_sparse.cc: sgd_update,
/// sgd_mom_update, adam_update as sparse kernels, SDK 2.1); MakeKernelTable calls it next to
/// RegisterSparseKernels, on the same terms (the cpu plugin's own table only).
void RegisterSparseOptimizers(KernelTable& table);

}  // namespace weft::cpu

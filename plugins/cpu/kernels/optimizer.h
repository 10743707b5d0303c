// The per-element rules of MXNet 1.9's optimizer updates (src/operator/optimizer_op-inl.h),
// shared by the float32 update ops of optimizer.cc and the multi-precision, multi-tensor and
// other update ops of optimizer_more.cc. Internal to weft_cpu_kernels; pure functions.
#pragma once

#include <algorithm>

#include "nn_common.h"

namespace weft::cpu {

/// clip(x) = min(max(x, −c), c) when c ≥ 0, else x (MXNet's clip_gradient / clip_weights).
inline float ClipTo(float v, float c) { return c >= 0.0f ? std::min(std::max(v, -c), c) : v; }

/// The attributes every update op has: lr, wd, rescale_grad, clip_gradient (the multi-tensor ops
/// give lr and wd per weight).
struct UpdateParams {
  float lr = 0, wd = 0, rescale = 1, clip = -1;
  UpdateParams() = default;
  UpdateParams(float lr_value, float wd_value, float rescale_grad, float clip_gradient)
      : lr(lr_value), wd(wd_value), rescale(rescale_grad), clip(clip_gradient) {}
  float Clip(float g) const { return ClipTo(g, clip); }
};

/// sgd_update: w' = (1 − lr·wd)·w − lr·clip(rescale·g).
inline float SgdRule(const UpdateParams& p, float w, float g) {
  return (1.0f - p.lr * p.wd) * w - p.lr * p.Clip(p.rescale * g);
}

/// sgd_mom_update: mom = momentum·mom − lr·wd·w − lr·clip(rescale·g); w' = w + mom.
inline float SgdMomRule(const UpdateParams& p, float momentum, float w, float g, float& mom) {
  mom = momentum * mom - p.lr * p.wd * w - p.lr * p.Clip(p.rescale * g);
  return w + mom;
}

/// nag_mom_update: g' = clip(rescale·g) + wd·w; m = momentum·mom; mom = m − lr·g';
/// w' = w − m + (momentum + 1)·(m − lr·g').
inline float NagMomRule(const UpdateParams& p, float momentum, float w, float g, float& mom) {
  const float gi = p.Clip(p.rescale * g) + p.wd * w;
  const float m = momentum * mom;
  mom = m - p.lr * gi;
  return w - m + (momentum + 1.0f) * (m - p.lr * gi);
}

}  // namespace weft::cpu

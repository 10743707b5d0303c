// weft GPU kernel layer — the optimizer family (cpu: optimizer.cc, MXNet's optimizer_op-inl.h):
// sgd_update, sgd_mom_update, nag_mom_update, adam_update, rmsprop_update, rmspropalex_update,
// float32. Work item = one element; the states advance in place.
#pragma once

#include <math.h>

#include "gpu_kernel.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::WEFT_GPU_NS {

WEFT_HD inline float ClipTo(float v, float c) { return c >= 0.0f ? fminf(fmaxf(v, -c), c) : v; }

/// What every update shares: learning rate, weight decay, gradient rescale and clip.
struct UpdateParams {
  float lr = 0, wd = 0, rescale = 1, clip = -1;
  WEFT_HD float Clip(float g) const { return ClipTo(g, clip); }
};

using Update = sdk::UpdateRule;

/// The update of one element: reads w and g, advances the states s0..s2 (as many as the rule has)
/// and returns the new weight. `h` holds the rule's extra attributes (momentum or beta1, beta2,
/// gamma1, gamma2, epsilon, clip_weights), named by the rule below.
struct UpdateExtra {
  float a = 0, b = 0, c = 0, eps = 0, clip_weights = -1;
};

template <Update U>
WEFT_HD inline float UpdateRule(const UpdateParams& p, const UpdateExtra& h, float w, float g, float* s0, float* s1,
                                float* s2) {
  if constexpr (U == Update::kSgd) {  // w' = (1 − lr·wd)·w − lr·clip(rescale·g)
    return (1.0f - p.lr * p.wd) * w - p.lr * p.Clip(p.rescale * g);
  } else if constexpr (U == Update::kSgdMom) {  // h.a = momentum
    *s0 = h.a * *s0 - p.lr * p.wd * w - p.lr * p.Clip(p.rescale * g);
    return w + *s0;
  } else if constexpr (U == Update::kNagMom) {  // h.a = momentum
    const float gi = p.Clip(p.rescale * g) + p.wd * w;
    const float m = h.a * *s0;
    *s0 = m - p.lr * gi;
    return w - m + (h.a + 1.0f) * (m - p.lr * gi);
  } else if constexpr (U == Update::kAdam) {  // h.a = beta1, h.b = beta2; s0 mean, s1 var
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = h.a * *s0 + (1.0f - h.a) * gi;
    *s1 = h.b * *s1 + (1.0f - h.b) * gi * gi;
    return w - p.lr * *s0 / (sqrtf(*s1) + h.eps);
  } else if constexpr (U == Update::kRmsProp) {  // h.a = gamma1; s0 n
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = (1.0f - h.a) * (gi * gi) + h.a * *s0;
    return ClipTo(w - p.lr * (gi / sqrtf(*s0 + h.eps)), h.clip_weights);
  } else {  // kRmsPropAlex: h.a = gamma1, h.b = gamma2; s0 n, s1 g, s2 delta
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = (1.0f - h.a) * gi * gi + h.a * *s0;
    *s1 = (1.0f - h.a) * gi + h.a * *s1;
    *s2 = h.b * *s2 - p.lr * gi / sqrtf(*s0 - *s1 * *s1 + h.eps);
    return ClipTo(w + *s2, h.clip_weights);
  }
}

/// <name>_update: out[i] = rule(w[i], g[i]); states advance even when `out` is null (req null).
template <Update U, class Assign>
struct UpdateMap {
  UpdateParams p;
  UpdateExtra h;
  const float* w;
  const float* g;
  float* s0;
  float* s1;
  float* s2;
  float* out;  // null: req null
  WEFT_HD void operator()(int64_t i) const {
    float dummy = 0;
    const float wi = UpdateRule<U>(p, h, w[i], g[i], s0 ? s0 + i : &dummy, s1 ? s1 + i : &dummy, s2 ? s2 + i : &dummy);
    if (out != nullptr) Assign::Put(out[i], wi);
  }
};

template <class L, Update U, int kStates>
class UpdateKernel {
 public:
  explicit UpdateKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1, kStates);
    RequireFloat32(s);
    RequireSameSize(s);
    const auto p = s.Params<sdk::UpdateParam<U>>();
    p_.lr = p.lr, p_.wd = p.wd, p_.rescale = p.rescale_grad, p_.clip = p.clip_gradient;
    if constexpr (U == Update::kSgdMom || U == Update::kNagMom) {
      h_.a = p.momentum;
    } else if constexpr (U == Update::kAdam) {
      h_.a = p.beta1, h_.b = p.beta2, h_.eps = p.epsilon;
    } else if constexpr (U == Update::kRmsProp || U == Update::kRmsPropAlex) {
      h_.a = p.gamma1, h_.b = p.gamma2, h_.eps = p.epsilon, h_.clip_weights = p.clip_weights;
    }
  }
  void Compute(const DeviceCall& c) const {
    auto state = [&](int i) { return i < kStates ? L::template Ptr<float>(c.aux[static_cast<size_t>(i)]) : nullptr; };
    auto run = [&](auto a, float* out) {
      L::Map(c, c.inputs[0].size(),
             UpdateMap<U, decltype(a)>{p_, h_, L::template Ptr<const float>(c.inputs[0]),
                                       L::template Ptr<const float>(c.inputs[1]), state(0), state(1), state(2), out});
    };
    if (c.req[0] == WEFT_REQ_NULL) {
      run(ReqWrite{}, nullptr);  // the states still advance
    } else {
      WithReq(c.req[0], [&](auto a) { run(a, L::template Ptr<float>(c.outputs[0])); });
    }
  }

 private:
  UpdateParams p_;
  UpdateExtra h_;
};

/// Registers the optimizer updates for launcher L.
template <class L>
void RegisterOptimizerKernels(sdk::KernelTable& t) {
  t.Add<UpdateKernel<L, Update::kSgd, 0>>("sgd_update", kF32);
  t.Add<UpdateKernel<L, Update::kSgdMom, 1>>("sgd_mom_update", kF32);
  t.Add<UpdateKernel<L, Update::kNagMom, 1>>("nag_mom_update", kF32);
  t.Add<UpdateKernel<L, Update::kAdam, 2>>("adam_update", kF32);
  t.Add<UpdateKernel<L, Update::kRmsProp, 1>>("rmsprop_update", kF32);
  t.Add<UpdateKernel<L, Update::kRmsPropAlex, 3>>("rmspropalex_update", kF32);
}

}  // namespace weft::WEFT_GPU_NS

// Optimizer updates with MXNet 1.9's formulas (src/operator/optimizer_op-inl.h). The output is
// the new weight (usually in place over input 0); state tensors are aux states and are updated.
// clip(x) = min(max(x, −c), c) when clip_gradient = c ≥ 0, else x; clipw likewise with
// clip_weights.
//   sgd_update:         w' = (1 − lr·wd)·w − lr·clip(rescale·g)
//   sgd_mom_update:     mom = momentum·mom − lr·wd·w − lr·clip(rescale·g); w' = w + mom
//   nag_mom_update:     g' = clip(rescale·g) + wd·w; m = momentum·mom;
//                       w' = w − m + (momentum + 1)·(m − lr·g'); mom = m − lr·g'
//   adam_update:        g' = clip(rescale·g + wd·w); mean = β1·mean + (1−β1)·g';
//                       var = β2·var + (1−β2)·g'²; w' = w − lr·mean/(√var + ε)
//   rmsprop_update:     g' = clip(rescale·g + wd·w); n = (1−γ1)·g'² + γ1·n;
//                       w' = clipw(w − lr·g'/√(n + ε))
//   rmspropalex_update: g' as rmsprop; n = (1−γ1)·g'² + γ1·n; g = (1−γ1)·g' + γ1·g;
//                       delta = γ2·delta − lr·g'/√(n − g² + ε); w' = clipw(w + delta)
// Note where MXNet clips: after adding the weight decay for adam and rmsprop, before for sgd and
// nag. States advance even when the weight's req is null (the update happened; only the new
// weight is not wanted).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "isa_dispatch.h"
#include "optimizer.h"
#include "tensor_any_kernel.h"
#include "tensor_util.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::cpu {
namespace {

using weft::sdk::UpdateRule;

void CheckSameSize(const KernelSetup& s) {
  int64_t n = s.inputs[0].size();
  auto check = [&](const TensorDesc& t, const std::string& what) {
    if (t.size() != n) Invalid(s, what + " " + ShapeString(t) + " differs from weight " + ShapeString(s.inputs[0]));
  };
  for (size_t i = 1; i < s.inputs.size(); ++i) check(s.inputs[i], "input " + std::to_string(i));
  for (size_t i = 0; i < s.outputs.size(); ++i) check(s.outputs[i], "output " + std::to_string(i));
  for (size_t i = 0; i < s.aux.size(); ++i) check(s.aux[i], "state " + std::to_string(i));
}

// What every update op shares: inputs weight and grad, the new weight as output, `num_states`
// state tensors, all of one size and one dtype (float32, or float64 as MXNet's cpu updates take);
// attributes lr, wd, rescale_grad, clip_gradient of `p`, the op's parameter struct
// (sdk::UpdateParam<rule>).
struct Common : UpdateParams {
  Common(const KernelSetup& s, const weft::sdk::UpdateFields& p, int num_states)
      : UpdateParams(p.lr, p.wd, p.rescale_grad, p.clip_gradient) {
    s.ExpectCounts(2, 1, num_states);
    dtype = RequireFloatDType(s);
    CheckSameSize(s);
  }
  int32_t dtype;
};

// body() for the ISA variants when T is float (the training path); once, at baseline, for double.
template <typename T, typename Body>
void ForIsa(const Body& body) {
  if constexpr (std::is_same_v<T, float>)
    isa::Dispatch(body);
  else
    body();
}

// Runs update(i, store) for every element i; store(v) writes the new weight v into output element
// i as the output's req says (nothing for null).
template <typename T, typename Update>
void ForEachElement(const KernelCall& c, Update update) {
  const int64_t n = c.inputs[0].size();
  ForIsa<T>([&] {
    if (c.req[0] == WEFT_REQ_NULL) {
      for (int64_t i = 0; i < n; ++i) update(i, [](T) {});
      return;
    }
    T* out = c.outputs[0].data<T>();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) update(i, [&](T v) { assign(out[i], v); });
    });
  });
}

class SgdKernel {
 public:
  explicit SgdKernel(const KernelSetup& s) : p_(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kSgd>>(), 0) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(p_.dtype, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* out = c.outputs[0].data<T>();
    ForIsa<T>([&] {
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0, n = c.inputs[0].size(); i < n; ++i) assign(out[i], SgdRule(p_, w[i], g[i]));
      });
    });
  }
  Common p_;
};

// The update ops with one momentum state: `Rule` advances the state of one element and returns
// its new weight (w and g are that element's weight and gradient): SgdMomRule, NagMomRule.
template <UpdateRule R, template <typename> class Rule>
class MomentumKernel {
 public:
  explicit MomentumKernel(const KernelSetup& s) : MomentumKernel(s, s.Params<weft::sdk::UpdateParam<R>>()) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(p_.dtype, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  MomentumKernel(const KernelSetup& s, const weft::sdk::UpdateParam<R>& p) : p_(s, p, 1), momentum_(p.momentum) {}
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* mom = c.aux[0].data<T>();
    ForEachElement<T>(c, [&](int64_t i, auto store) {
      T m = mom[i];
      const T wi = Rule<T>::Apply(p_, momentum_, w[i], g[i], m);  // reads w[i] before store writes out[i]
      mom[i] = m;
      store(wi);
    });
  }
  Common p_;
  float momentum_;
};

template <typename T>
struct SgdMom {
  static T Apply(const UpdateParams& p, float momentum, T w, T g, T& mom) { return SgdMomRule(p, momentum, w, g, mom); }
};
template <typename T>
struct NagMom {
  static T Apply(const UpdateParams& p, float momentum, T w, T g, T& mom) { return NagMomRule(p, momentum, w, g, mom); }
};

class AdamKernel {
 public:
  explicit AdamKernel(const KernelSetup& s) : AdamKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kAdam>>()) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(p_.dtype, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  AdamKernel(const KernelSetup& s, const weft::sdk::UpdateParam<UpdateRule::kAdam>& p)
      : p_(s, p, 2), beta1_(p.beta1), beta2_(p.beta2), eps_(p.epsilon) {}
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* mean = c.aux[0].data<T>();
    T* var = c.aux[1].data<T>();
    ForEachElement<T>(c, [&](int64_t i, auto store) {
      T m = mean[i], v = var[i];
      const T wi = AdamRule(p_, beta1_, beta2_, eps_, w[i], g[i], m, v);  // reads w[i] before store writes out[i]
      mean[i] = m;
      var[i] = v;
      store(wi);
    });
  }
  Common p_;
  float beta1_, beta2_, eps_;
};

// The rmsprop family's extra attributes.
struct RmsParams {
  float gamma1, epsilon, clip_weights;
  template <class P>
  explicit RmsParams(const P& p) : gamma1(p.gamma1), epsilon(p.epsilon), clip_weights(p.clip_weights) {}
};

class RmsPropKernel {
 public:
  explicit RmsPropKernel(const KernelSetup& s)
      : RmsPropKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kRmsProp>>()) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(p_.dtype, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  RmsPropKernel(const KernelSetup& s, const weft::sdk::UpdateParam<UpdateRule::kRmsProp>& p) : p_(s, p, 1), r_(p) {}
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* n = c.aux[0].data<T>();
    const T g1 = r_.gamma1;
    ForEachElement<T>(c, [&](int64_t i, auto store) {
      const T gi = p_.Clip(T(p_.rescale) * g[i] + T(p_.wd) * w[i]);
      const T ni = (T(1) - g1) * (gi * gi) + g1 * n[i];
      const T wi = w[i] - T(p_.lr) * (gi / std::sqrt(ni + T(r_.epsilon)));
      n[i] = ni;
      store(ClipTo(wi, r_.clip_weights));
    });
  }
  Common p_;
  RmsParams r_;
};

class RmsPropAlexKernel {
 public:
  explicit RmsPropAlexKernel(const KernelSetup& s)
      : RmsPropAlexKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kRmsPropAlex>>()) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(p_.dtype, [&](auto t) { Run<decltype(t)>(c); });
  }

 private:
  RmsPropAlexKernel(const KernelSetup& s, const weft::sdk::UpdateParam<UpdateRule::kRmsPropAlex>& p)
      : p_(s, p, 3), r_(p), gamma2_(p.gamma2) {}
  template <typename T>
  void Run(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    T* n = c.aux[0].data<T>();
    T* avg = c.aux[1].data<T>();
    T* delta = c.aux[2].data<T>();
    const T g1 = r_.gamma1;
    ForEachElement<T>(c, [&](int64_t i, auto store) {
      const T gi = p_.Clip(T(p_.rescale) * g[i] + T(p_.wd) * w[i]);
      const T ni = (T(1) - g1) * gi * gi + g1 * n[i];
      const T ai = (T(1) - g1) * gi + g1 * avg[i];
      const T di = T(gamma2_) * delta[i] - T(p_.lr) * gi / std::sqrt(ni - ai * ai + T(r_.epsilon));
      const T wi = w[i];
      n[i] = ni;
      avg[i] = ai;
      delta[i] = di;
      store(ClipTo(wi + di, r_.clip_weights));
    });
  }
  Common p_;
  RmsParams r_;
  float gamma2_;
};

}  // namespace

void SgdUpdateF32(const KernelCall& c, size_t out, const UpdateParams& p, Sgd rule, float momentum, const float* w,
                  const float* g, float* mom, int64_t n) {
  float* o = c.req[out] == WEFT_REQ_NULL ? nullptr : c.outputs[out].data<float>();
  isa::Dispatch([&] {
    // step(i) -> the new weight i; the rule and the req are chosen outside the element loop.
    auto each = [&](auto step) {
      if (o == nullptr) {
        for (int64_t i = 0; i < n; ++i) step(i);
        return;
      }
      weft::sdk::WithReq(c.req[out], [&](auto assign) {
        for (int64_t i = 0; i < n; ++i) assign(o[i], step(i));
      });
    };
    auto with_mom = [&](auto rule_fn) {
      each([&](int64_t i) {
        float m = mom[i];
        const float next = rule_fn(w[i], g[i], m);
        mom[i] = m;
        return next;
      });
    };
    switch (rule) {
      case Sgd::kPlain:
        each([&](int64_t i) { return SgdRule(p, w[i], g[i]); });
        break;
      case Sgd::kMomentum:
        with_mom([&](float wi, float gi, float& m) { return SgdMomRule(p, momentum, wi, gi, m); });
        break;
      case Sgd::kNag:
        with_mom([&](float wi, float gi, float& m) { return NagMomRule(p, momentum, wi, gi, m); });
        break;
    }
  });
}

void RegisterOptimizer(KernelTable& t) {
  constexpr uint64_t kReal = tensor::kFloatMask;  // float32 and float64, as MXNet's cpu updates
  tensor::AddAny<SgdKernel>(t, "sgd_update", kReal);
  tensor::AddAny<MomentumKernel<UpdateRule::kSgdMom, SgdMom>>(t, "sgd_mom_update", kReal);
  tensor::AddAny<MomentumKernel<UpdateRule::kNagMom, NagMom>>(t, "nag_mom_update", kReal);
  tensor::AddAny<AdamKernel>(t, "adam_update", kReal);
  tensor::AddAny<RmsPropKernel>(t, "rmsprop_update", kReal);
  tensor::AddAny<RmsPropAlexKernel>(t, "rmspropalex_update", kReal);
}

}  // namespace weft::cpu

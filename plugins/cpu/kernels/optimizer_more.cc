// The update ops of defs/optimizer_more.cc with MXNet 1.9's formulas (src/operator/optimizer_op-inl.h,
// contrib/multi_sum_sq-inl.h, contrib/multi_lars-inl.h), computed in float32 (float64 for float64
// weights where MXNet's cpu kernels take them: multi_sgd(_mom) (not preloaded_), signsgd, signum, ftrl, adagrad),
// compiled for the baseline ISA only (none is on weft's own training path). clip(x) is ClipTo (optimizer.h).
//   mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update: the float32 rule on weight32 (and mom),
//       weight = weight32 converted to the weight's dtype (float16 or float32).
//   multi_* / preloaded_multi_* (mp_)sgd(_mom)_update: the same per weight, with that weight's lr
//       and wd (attributes lrs, wds, or the last two inputs for preloaded_).
//   signsgd_update:  w = (1 − lr·wd)·w − lr·sign(g), g the raw gradient (not rescaled nor clipped).
//   signum_update:   mom = momentum·mom − (1 − momentum)·(wd·w + clip(rescale·g));
//                    w = (1 − lr·wd_lh)·w + lr·sign(mom).
//   ftrl_update, ftml_update, _sparse_adagrad_update, lamb_update_phase1/2 (and mp_), multi_sum_sq,
//       multi_lars: OPS.md.
// States are aux states, updated in place; they advance even when the output's req is null.
#include <cmath>
#include <type_traits>
#include <vector>

#include "optimizer.h"
#include "tensor_any_kernel.h"
#include "tensor_util.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::cpu {
namespace {

using tensor::Convert;
using tensor::Half;
using weft::sdk::UpdateFields;
using weft::sdk::UpdateRule;

// lr, wd, rescale_grad and clip_gradient of an update op's parameter struct.
UpdateParams Common(const UpdateFields& f) { return UpdateParams(f.lr, f.wd, f.rescale_grad, f.clip_gradient); }

inline constexpr uint64_t kF16F32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

template <typename T>
T Sign(T v) {
  return v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
}

void CheckSizes(const KernelSetup& s, int64_t n, size_t first_input, size_t inputs, size_t first_aux, size_t aux) {
  for (size_t i = first_input; i < first_input + inputs; ++i)
    if (s.inputs[i].size() != n) Invalid(s, "input " + std::to_string(i) + " differs in size from the weight");
  for (size_t i = first_aux; i < first_aux + aux; ++i)
    if (s.aux[i].size() != n) Invalid(s, "state " + std::to_string(i) + " differs in size from the weight");
}

void RequireF32Aux(const KernelSetup& s) {
  for (const TensorDesc& a : s.aux)
    if (a.dtype != WEFT_DTYPE_FLOAT32) Invalid(s, "states (mom, weight32, ...) must be float32");
}

// Calls f(TypeTag<T>) for the weight dtype of a multi-precision op (float16 or float32).
template <typename F>
void WeightType(const char* op, int32_t dtype, F&& f) {
  if (dtype == WEFT_DTYPE_FLOAT16) return f(tensor::TypeTag<Half>{});
  if (dtype == WEFT_DTYPE_FLOAT32) return f(tensor::TypeTag<float>{});
  tensor::UnsupportedDType(op, dtype);
}

// Writes the new weights v(i) to output `o` as its req says.
template <typename T, typename V>
void StoreWeights(const KernelCall& c, size_t o, int64_t n, V v) {
  if (c.req[o] == WEFT_REQ_NULL) {
    for (int64_t i = 0; i < n; ++i) v(i);  // the states still advance
    return;
  }
  T* out = static_cast<T*>(c.outputs[o].raw());
  weft::sdk::WithReq(c.req[o], [&](auto assign) {
    for (int64_t i = 0; i < n; ++i) assign(out[i], Convert<T>(v(i)));
  });
}

// ---- SGD family: one weight (mp_*) or num_weights (multi_*) -------------------------------------

// One weight's update, computed in C (float, or double for float64 weights): grad g (T), weight w
// (T) or its float32 master copy w32, momentum state (C).
template <typename T, typename C = float>
void SgdGroup(const KernelCall& c, size_t out, const UpdateParams& p, Sgd rule, float momentum, const T* w, const T* g,
              C* mom, C* w32, int64_t n) {
  StoreWeights<T>(c, out, n, [&](int64_t i) {
    const C wi = w32 ? w32[i] : Convert<C>(w[i]);
    const C gi = Convert<C>(g[i]);
    C m = mom ? mom[i] : C(0);
    const C next = rule == Sgd::kPlain      ? SgdRule(p, wi, gi)
                   : rule == Sgd::kMomentum ? SgdMomRule(p, momentum, wi, gi, m)
                                            : NagMomRule(p, momentum, wi, gi, m);
    if (mom) mom[i] = m;
    if (w32) w32[i] = next;
    return next;
  });
}

Sgd SgdKind(const std::string& op) {
  if (op.find("nag") != std::string::npos) return Sgd::kNag;
  return op.find("mom") != std::string::npos ? Sgd::kMomentum : Sgd::kPlain;
}

// mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update: inputs weight, grad; aux [mom,] weight32.
class MpSgdKernel {
 public:
  explicit MpSgdKernel(const KernelSetup& s) : MpSgdKernel(s, weft::sdk::UpdateParamsOf(s)) {}
  MpSgdKernel(const KernelSetup& s, const UpdateFields& f)
      : rule_(SgdKind(s.op_name)), p_(Common(f)), momentum_(f.momentum) {
    const int states = rule_ == Sgd::kPlain ? 1 : 2;
    s.ExpectCounts(2, 1, states);
    RequireF32Aux(s);
    if (s.inputs[1].dtype != s.inputs[0].dtype) Invalid(s, "grad must have the weight's dtype");
    CheckSizes(s, s.inputs[0].size(), 1, 1, 0, static_cast<size_t>(states));
  }
  void Compute(const KernelCall& c) const {
    WeightType("mp update", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      float* mom = rule_ == Sgd::kPlain ? nullptr : c.aux[0].data<float>();
      SgdGroup<T>(c, 0, p_, rule_, momentum_, static_cast<const T*>(c.inputs[0].raw()),
                  static_cast<const T*>(c.inputs[1].raw()), mom, c.aux.back().data<float>(), c.inputs[0].size());
    });
  }

 private:
  Sgd rule_;
  UpdateParams p_;
  float momentum_;
};

// multi_* and preloaded_multi_* (mp_)sgd(_mom)_update. Inputs weight_i, grad_i (i < n)[, lrs,
// wds]; aux per weight: [mom_i][, weight32_i]; outputs the n new weights.
class MultiSgdKernel {
 public:
  explicit MultiSgdKernel(const KernelSetup& s)
      : rule_(SgdKind(s.op_name)),
        mp_(s.op_name.find("_mp_") != std::string::npos),
        preloaded_(s.op_name.starts_with("preloaded_")) {
    // The multi-tensor struct of this op's family: lrs and wds hold num_weights values each.
    const bool momentum = rule_ != Sgd::kPlain;
    const auto p = preloaded_ ? (momentum ? Fields(s.Params<weft::sdk::MultiSgdParam<true, true>>())
                                          : Fields(s.Params<weft::sdk::MultiSgdParam<true, false>>()))
                              : (momentum ? Fields(s.Params<weft::sdk::MultiSgdParam<false, true>>())
                                          : Fields(s.Params<weft::sdk::MultiSgdParam<false, false>>()));
    momentum_ = p.momentum;
    n_ = static_cast<size_t>(p.num_weights);
    states_ = (rule_ == Sgd::kPlain ? 0 : 1) + (mp_ ? 1 : 0);
    s.ExpectCounts(static_cast<int>(2 * n_ + (preloaded_ ? 2 : 0)), static_cast<int>(n_),
                   static_cast<int>(n_ * states_));
    if (mp_) RequireF32Aux(s);
    for (size_t i = 0; i < n_; ++i) {
      const TensorDesc& w = s.inputs[2 * i];
      if (s.inputs[2 * i + 1].dtype != w.dtype || w.dtype != s.inputs[0].dtype)
        Invalid(s, "weights and grads must share one dtype");
      if (!mp_ && w.dtype != WEFT_DTYPE_FLOAT32 && w.dtype != WEFT_DTYPE_FLOAT64)
        Invalid(s, "weights must be float32 or float64 (the mp_ ops take float16)");
      for (size_t j = 0; !mp_ && j < states_; ++j)
        if (s.aux[i * states_ + j].dtype != w.dtype) Invalid(s, "momentum states must have their weight's dtype");
      CheckSizesOf(s, i);
      const float lr = preloaded_ ? 0.0f : static_cast<float>(p.lrs[i]);
      const float wd = preloaded_ ? 0.0f : static_cast<float>(p.wds[i]);
      params_.push_back(UpdateParams(lr, wd, p.rescale_grad, p.clip_gradient));
    }
    if (preloaded_)
      for (size_t k : {2 * n_, 2 * n_ + 1})
        if (s.inputs[k].dtype != WEFT_DTYPE_FLOAT32 || s.inputs[k].size() != static_cast<int64_t>(n_))
          Invalid(s, "lrs and wds must be float32 arrays of num_weights values");
  }

  void Compute(const KernelCall& c) const {
    if (c.inputs[0].dtype() == WEFT_DTYPE_FLOAT64) return Run<double, double>(c);
    WeightType("multi update", c.inputs[0].dtype(), [&](auto tag) { Run<typename decltype(tag)::type, float>(c); });
  }

 private:
  // Weights and grads of dtype T, states and arithmetic in C.
  template <typename T, typename C>
  void Run(const KernelCall& c) const {
    for (size_t i = 0; i < n_; ++i) {
      UpdateParams p = params_[i];
      if (preloaded_) {
        p.lr = c.inputs[2 * n_].data<float>()[i];
        p.wd = c.inputs[2 * n_ + 1].data<float>()[i];
      }
      C* mom = rule_ == Sgd::kPlain ? nullptr : c.aux[i * states_].data<C>();
      if constexpr (std::is_same_v<T, float> && std::is_same_v<C, float>) {
        if (!mp_) {  // Gluon's Trainer path: the vectorised loop of optimizer.cc
          SgdUpdateF32(c, i, p, rule_, momentum_, c.inputs[2 * i].data<float>(), c.inputs[2 * i + 1].data<float>(), mom,
                       c.inputs[2 * i].size());
          continue;
        }
      }
      C* w32 = mp_ ? c.aux[i * states_ + states_ - 1].data<C>() : nullptr;
      SgdGroup<T, C>(c, i, p, rule_, momentum_, static_cast<const T*>(c.inputs[2 * i].raw()),
                     static_cast<const T*>(c.inputs[2 * i + 1].raw()), mom, w32, c.inputs[2 * i].size());
    }
  }

  // The fields every MultiSgdParam variant has (lrs and wds empty when preloaded).
  struct MultiFields {
    weft::sdk::FloatTuple lrs, wds;
    float momentum, rescale_grad, clip_gradient;
    int64_t num_weights;
  };
  template <class P>
  static MultiFields Fields(const P& p) {
    return {p.lrs, p.wds, p.momentum, p.rescale_grad, p.clip_gradient, p.num_weights};
  }
  void CheckSizesOf(const KernelSetup& s, size_t i) const {
    const int64_t n = s.inputs[2 * i].size();
    if (s.inputs[2 * i + 1].size() != n || s.outputs[i].size() != n) Invalid(s, "weight and grad sizes differ");
    for (size_t j = 0; j < states_; ++j)
      if (s.aux[i * states_ + j].size() != n) Invalid(s, "a state differs in size from its weight");
  }

  Sgd rule_;
  bool mp_, preloaded_;
  float momentum_ = 0;
  size_t n_ = 1, states_ = 0;
  std::vector<UpdateParams> params_;
};

// ---- signsgd, signum, ftrl, ftml ----------------------------------------------------------------

// The update ops with their own rule, float32 or float64 (computed in the weights' dtype): inputs
// weight, grad; `states` aux arrays of the weight's dtype. Each op's Compute is
// `WithFloatType(dtype_, [&](auto t) { Update<decltype(t)>(c); })`.
class RuleKernel {
 public:
  RuleKernel(const KernelSetup& s, const UpdateFields& f, int states) : p_(Common(f)), dtype_(RequireFloatDType(s)) {
    s.ExpectCounts(2, 1, states);
    CheckSizes(s, s.inputs[0].size(), 1, 1, 0, static_cast<size_t>(states));
  }

 protected:
  // rule(i, w, clip(rescale·g)) -> the new weight i.
  template <typename T, typename Rule>
  void Run(const KernelCall& c, Rule rule) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    StoreWeights<T>(c, 0, c.inputs[0].size(),
                    [&](int64_t i) { return rule(i, w[i], p_.Clip(static_cast<T>(p_.rescale) * g[i])); });
  }
  UpdateParams p_;
  int32_t dtype_;
};

class SignSgdKernel : public RuleKernel {
 public:
  explicit SignSgdKernel(const KernelSetup& s)
      : RuleKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kSignSgd>>(), 0) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Update<decltype(t)>(c); });
  }

 private:
  // MXNet 1.9 takes the sign of the raw gradient: rescale_grad and clip_gradient do not enter.
  template <typename T>
  void Update(const KernelCall& c) const {
    const T* w = c.inputs[0].data<T>();
    const T* g = c.inputs[1].data<T>();
    const T lr = p_.lr;
    StoreWeights<T>(c, 0, c.inputs[0].size(),
                    [&](int64_t i) { return (T(1) - lr * T(p_.wd)) * w[i] - lr * Sign(g[i]); });
  }
};

class SignumKernel : public RuleKernel {
 public:
  explicit SignumKernel(const KernelSetup& s)
      : SignumKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kSignum>>()) {}
  SignumKernel(const KernelSetup& s, const UpdateFields& f)
      : RuleKernel(s, f, 1), momentum_(f.momentum), wd_lh_(f.wd_lh) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Update<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Update(const KernelCall& c) const {
    T* mom = c.aux[0].data<T>();
    const T mo = momentum_, lr = p_.lr;
    Run<T>(c, [&](int64_t i, T w, T g) {
      mom[i] = mo * mom[i] - (T(1) - mo) * T(p_.wd) * w - (T(1) - mo) * g;
      return (T(1) - lr * T(wd_lh_)) * w + lr * Sign(mom[i]);
    });
  }
  float momentum_, wd_lh_;
};

class FtrlKernel : public RuleKernel {
 public:
  explicit FtrlKernel(const KernelSetup& s) : FtrlKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kFtrl>>()) {}
  FtrlKernel(const KernelSetup& s, const UpdateFields& f) : RuleKernel(s, f, 2), lamda1_(f.lamda1), beta_(f.beta) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Update<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Update(const KernelCall& c) const {
    T* z = c.aux[0].data<T>();
    T* n = c.aux[1].data<T>();
    const T lr = p_.lr, l1 = lamda1_;
    Run<T>(c, [&](int64_t i, T w, T g) {
      z[i] += g - (std::sqrt(n[i] + g * g) - std::sqrt(n[i])) * w / lr;
      n[i] += g * g;
      return std::fabs(z[i]) > l1 ? (Sign(z[i]) * l1 - z[i]) / ((T(beta_) + std::sqrt(n[i])) / lr + T(p_.wd)) : T(0);
    });
  }
  float lamda1_, beta_;
};

// _sparse_adagrad_update: history += g'²; w −= lr·g' / √(history + ε), g' = clip(rescale·g)
// (MXNet's AdagradDnsRspDnsKernel on every element: the C API gathers a row_sparse gradient's rows).
class AdaGradKernel : public RuleKernel {
 public:
  explicit AdaGradKernel(const KernelSetup& s) : AdaGradKernel(s, s.Params<weft::sdk::AdaGradParam>()) {}
  AdaGradKernel(const KernelSetup& s, const weft::sdk::AdaGradParam& p)
      : RuleKernel(s, Fields(p), 1), epsilon_(p.epsilon) {}
  void Compute(const KernelCall& c) const {
    WithFloatType(dtype_, [&](auto t) { Update<decltype(t)>(c); });
  }

 private:
  template <typename T>
  void Update(const KernelCall& c) const {
    T* history = c.aux[0].data<T>();
    Run<T>(c, [&](int64_t i, T w, T g) {
      history[i] += g * g;
      return w - T(p_.lr) * g / std::sqrt(history[i] + T(epsilon_));
    });
  }
  static UpdateFields Fields(const weft::sdk::AdaGradParam& p) {
    UpdateFields f;
    f.lr = p.lr;
    f.wd = p.wd;
    f.rescale_grad = p.rescale_grad;
    f.clip_gradient = p.clip_gradient;
    return f;
  }
  float epsilon_;
};

// ftml_update clips with clip_grad and adds the weight decay before clipping.
class FtmlKernel {
 public:
  explicit FtmlKernel(const KernelSetup& s) : FtmlKernel(s, s.Params<weft::sdk::UpdateParam<UpdateRule::kFtml>>()) {}
  // f.clip_gradient holds ftml's clip_grad.
  FtmlKernel(const KernelSetup& s, const UpdateFields& f)
      : lr_(f.lr),
        wd_(f.wd),
        rescale_(f.rescale_grad),
        clip_(f.clip_gradient),
        beta1_(f.beta1),
        beta2_(f.beta2),
        eps_(f.epsilon),
        t_(f.t) {
    s.ExpectCounts(2, 1, 3);
    RequireFloat32(s);
    CheckSizes(s, s.inputs[0].size(), 1, 1, 0, 3);
  }
  void Compute(const KernelCall& c) const {
    const float* w = c.inputs[0].data<float>();
    const float* g = c.inputs[1].data<float>();
    float* d = c.aux[0].data<float>();
    float* v = c.aux[1].data<float>();
    float* z = c.aux[2].data<float>();
    const float b1t = 1.0f - std::pow(beta1_, static_cast<float>(t_));
    const float b2t = 1.0f - std::pow(beta2_, static_cast<float>(t_));
    StoreWeights<float>(c, 0, c.inputs[0].size(), [&](int64_t i) {
      const float gi = ClipTo(rescale_ * g[i] + wd_ * w[i], clip_);
      v[i] = beta2_ * v[i] + (1.0f - beta2_) * gi * gi;
      const float dt = b1t / lr_ * (std::sqrt(v[i] / b2t) + static_cast<float>(eps_));
      z[i] = beta1_ * z[i] + (1.0f - beta1_) * gi - (dt - beta1_ * d[i]) * w[i];
      d[i] = dt;
      return -z[i] / dt;
    });
  }

 private:
  float lr_, wd_, rescale_, clip_, beta1_, beta2_;
  double eps_;
  int64_t t_;
};

// ---- LAMB -------------------------------------------------------------------------------------

// lamb_update_phase1: weight, grad; aux mean, var[, weight32] -> g (float32 when mp).
class LambPhase1Kernel {
 public:
  explicit LambPhase1Kernel(const KernelSetup& s) : LambPhase1Kernel(s, s.Params<weft::sdk::LambPhase1Param>()) {}
  LambPhase1Kernel(const KernelSetup& s, const weft::sdk::LambPhase1Param& p)
      : mp_(s.op_name.starts_with("mp_")),
        p_(0.0f, p.wd, p.rescale_grad, p.clip_gradient),
        beta1_(p.beta1),
        beta2_(p.beta2),
        eps_(p.epsilon),
        t_(p.t),
        bias_correction_(p.bias_correction) {
    s.ExpectCounts(2, 1, mp_ ? 3 : 2);
    RequireF32Aux(s);
    if (!mp_) RequireFloat32(s);
    CheckSizes(s, s.inputs[0].size(), 1, 1, 0, mp_ ? 3 : 2);
  }
  void Compute(const KernelCall& c) const {
    WeightType("lamb_update_phase1", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* w = static_cast<const T*>(c.inputs[0].raw());
      const T* g = static_cast<const T*>(c.inputs[1].raw());
      float* mean = c.aux[0].data<float>();
      float* var = c.aux[1].data<float>();
      const float* w32 = mp_ ? c.aux[2].data<float>() : nullptr;
      const float c1 = bias_correction_ ? 1.0f - std::pow(beta1_, static_cast<float>(t_)) : 1.0f;
      const float c2 = bias_correction_ ? 1.0f - std::pow(beta2_, static_cast<float>(t_)) : 1.0f;
      auto rule = [&](int64_t i) {
        const float gi = p_.Clip(p_.rescale * Convert<float>(g[i]));
        mean[i] = beta1_ * mean[i] + (1.0f - beta1_) * gi;
        var[i] = beta2_ * var[i] + (1.0f - beta2_) * gi * gi;
        const float wi = w32 ? w32[i] : Convert<float>(w[i]);
        return (mean[i] / c1) / (std::sqrt(var[i] / c2) + eps_) + p_.wd * wi;
      };
      if (c.outputs[0].dtype() == WEFT_DTYPE_FLOAT32)
        StoreWeights<float>(c, 0, c.inputs[0].size(), rule);
      else
        StoreWeights<T>(c, 0, c.inputs[0].size(), rule);
    });
  }

 private:
  bool mp_;
  UpdateParams p_;
  float beta1_, beta2_, eps_;
  int64_t t_;
  bool bias_correction_;
};

// lamb_update_phase2: weight, g, r1, r2[; aux weight32] -> the new weight.
class LambPhase2Kernel {
 public:
  explicit LambPhase2Kernel(const KernelSetup& s) : LambPhase2Kernel(s, s.Params<weft::sdk::LambPhase2Param>()) {}
  LambPhase2Kernel(const KernelSetup& s, const weft::sdk::LambPhase2Param& p)
      : mp_(s.op_name.starts_with("mp_")), lr_(p.lr), lower_(p.lower_bound), upper_(p.upper_bound) {
    s.ExpectCounts(4, 1, mp_ ? 1 : 0);
    RequireF32Aux(s);
    for (size_t i = 1; i < 4; ++i)
      if (s.inputs[i].dtype != WEFT_DTYPE_FLOAT32) Invalid(s, "g, r1 and r2 must be float32");
    if (s.inputs[2].size() != 1 || s.inputs[3].size() != 1) Invalid(s, "r1 and r2 must hold one value");
    CheckSizes(s, s.inputs[0].size(), 1, 1, 0, mp_ ? 1 : 0);
  }
  void Compute(const KernelCall& c) const {
    WeightType("lamb_update_phase2", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* w = static_cast<const T*>(c.inputs[0].raw());
      const float* g = c.inputs[1].data<float>();
      float r1 = c.inputs[2].data<float>()[0];
      const float r2 = c.inputs[3].data<float>()[0];
      if (lower_ >= 0) r1 = std::max(r1, lower_);
      if (upper_ >= 0) r1 = std::min(r1, upper_);
      const float lr = r1 == 0.0f || r2 == 0.0f ? lr_ : lr_ * r1 / r2;
      float* w32 = mp_ ? c.aux[0].data<float>() : nullptr;
      StoreWeights<T>(c, 0, c.inputs[0].size(), [&](int64_t i) {
        const float next = (w32 ? w32[i] : Convert<float>(w[i])) - lr * g[i];
        if (w32) w32[i] = next;
        return next;
      });
    });
  }

 private:
  bool mp_;
  float lr_, lower_, upper_;
};

// ---- LARS helpers -------------------------------------------------------------------------------

class MultiSumSqKernel {
 public:
  explicit MultiSumSqKernel(const KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    if (s.outputs[0].dtype != WEFT_DTYPE_FLOAT32 || s.outputs[0].size() != static_cast<int64_t>(s.inputs.size()))
      Invalid(s, "the output must be float32 with one value per array");
    for (const TensorDesc& t : s.inputs)
      if (t.dtype != WEFT_DTYPE_FLOAT32 && t.dtype != WEFT_DTYPE_FLOAT16)
        Invalid(s, "arrays must be float32 or float16");
  }
  void Compute(const KernelCall& c) const {
    std::vector<float> sums;
    for (const Tensor& t : c.inputs) {
      double acc = 0;
      WeightType("multi_sum_sq", t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = static_cast<const T*>(t.raw());
        for (int64_t i = 0; i < t.size(); ++i) acc += static_cast<double>(Convert<float>(x[i])) * Convert<float>(x[i]);
      });
      sums.push_back(static_cast<float>(acc));
    }
    weft::sdk::StoreReq(c.req[0], c.outputs[0].data<float>(), sums.data(), static_cast<int64_t>(sums.size()));
  }
};

class MultiLarsKernel {
 public:
  explicit MultiLarsKernel(const KernelSetup& s) : MultiLarsKernel(s, s.Params<weft::sdk::MultiLarsParam>()) {}
  MultiLarsKernel(const KernelSetup& s, const weft::sdk::MultiLarsParam& p)
      : eta_(p.eta), eps_(p.eps), rescale_(p.rescale_grad) {
    s.ExpectCounts(4, 1);
    RequireFloat32(s);
    CheckSizes(s, s.inputs[0].size(), 1, 3, 0, 0);
  }
  void Compute(const KernelCall& c) const {
    const float* lrs = c.inputs[0].data<float>();
    const float* ws = c.inputs[1].data<float>();
    const float* gs = c.inputs[2].data<float>();
    const float* wds = c.inputs[3].data<float>();
    StoreWeights<float>(c, 0, c.inputs[0].size(), [&](int64_t i) {
      const float wn = std::sqrt(ws[i]), gn = std::sqrt(gs[i]);
      return wn > 0.0f && gn > 0.0f ? lrs[i] * eta_ * wn / (gn * rescale_ + wds[i] * wn + eps_) : lrs[i];
    });
  }

 private:
  float eta_, eps_, rescale_;
};

}  // namespace

void RegisterOptimizerMore(KernelTable& t) {
  for (const char* op : {"mp_sgd_update", "mp_sgd_mom_update", "mp_nag_mom_update"})
    tensor::AddAny<MpSgdKernel>(t, op, kF16F32);
  // float64 as MXNet's cpu kernels; its preloaded_ ops infer float32 lrs/wds and fail on float64 weights.
  for (const char* op : {"multi_sgd_update", "multi_sgd_mom_update"})
    tensor::AddAny<MultiSgdKernel>(t, op, tensor::kFloatMask);
  for (const char* op : {"preloaded_multi_sgd_update", "preloaded_multi_sgd_mom_update"})
    tensor::AddAny<MultiSgdKernel>(t, op, kF32);
  for (const char* op : {"multi_mp_sgd_update", "multi_mp_sgd_mom_update", "preloaded_multi_mp_sgd_update",
                         "preloaded_multi_mp_sgd_mom_update"})
    tensor::AddAny<MultiSgdKernel>(t, op, kF16F32);
  tensor::AddAny<SignSgdKernel>(t, "signsgd_update", tensor::kFloatMask);
  tensor::AddAny<SignumKernel>(t, "signum_update", tensor::kFloatMask);
  tensor::AddAny<FtrlKernel>(t, "ftrl_update", tensor::kFloatMask);
  tensor::AddAny<FtmlKernel>(t, "ftml_update", kF32);
  tensor::AddAny<AdaGradKernel>(t, "_sparse_adagrad_update", tensor::kFloatMask);
  tensor::AddAny<LambPhase1Kernel>(t, "lamb_update_phase1", kF32);
  tensor::AddAny<LambPhase2Kernel>(t, "lamb_update_phase2", kF32);
  tensor::AddAny<LambPhase1Kernel>(t, "mp_lamb_update_phase1", kF16F32);
  tensor::AddAny<LambPhase2Kernel>(t, "mp_lamb_update_phase2", kF16F32);
  tensor::AddAny<MultiSumSqKernel>(t, "multi_sum_sq", kF16F32);
  tensor::AddAny<MultiLarsKernel>(t, "multi_lars", kF32);
}

}  // namespace weft::cpu

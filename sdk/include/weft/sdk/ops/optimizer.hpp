// weft SDK ops — the optimizer updates sgd_update, sgd_mom_update, nag_mom_update, adam_update,
// rmsprop_update, rmspropalex_update, signsgd_update, signum_update, ftrl_update, ftml_update
// (MXNet 1.9's SGDParam, SGDMomParam, NAGMomParam, AdamParam, RMSPropParam, RMSPropAlexParam,
// SignSGDParam, SignumParam, FtrlParam, FTMLParam): one struct per rule, declaring the rule's
// attributes in MXNet's order (lr, the rule's own, wd, rescale_grad, clip_gradient, then
// clip_weights, wd_lh or lazy_update). The mp_ ops take their base rule's struct. The LAMB
// phases, the multi-tensor SGD family and the LARS helpers follow.
#pragma once

#include <iterator>
#include <optional>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class UpdateRule { kSgd, kSgdMom, kNagMom, kAdam, kRmsProp, kRmsPropAlex, kSignSgd, kSignum, kFtrl, kFtml };

/// The values of every rule's attributes (a rule's struct fills those it declares).
struct UpdateFields {
  float lr = 0.0f, momentum = 0.0f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, gamma1 = 0.95f, gamma2 = 0.9f;
  float wd = 0.0f, rescale_grad = 1.0f, clip_gradient = -1.0f, clip_weights = -1.0f;
  float wd_lh = 0.0f, lamda1 = 0.01f, beta = 1.0f;
  int64_t t = 0;
  bool lazy_update = true;
};

/// The attributes of update rule R; fields R does not declare keep their defaults.
template <UpdateRule R>
struct UpdateParam : UpdateFields {
  static constexpr bool kMomentum = R == UpdateRule::kSgdMom || R == UpdateRule::kNagMom || R == UpdateRule::kSignum;
  static constexpr bool kRmsProp = R == UpdateRule::kRmsProp || R == UpdateRule::kRmsPropAlex;

  template <class V>
  void Visit(V& v) {
    v(lr, Attr("lr").Doc("learning rate"));
    if constexpr (kMomentum) v(momentum, Attr("momentum").Default("0").Doc("momentum"));
    if constexpr (R == UpdateRule::kFtrl) {
      v(lamda1, Attr("lamda1").Default("0.01").Doc("L1 regularisation"));
      v(beta, Attr("beta").Default("1").Doc("FTRL beta"));
    }
    if constexpr (R == UpdateRule::kAdam || R == UpdateRule::kFtml) {
      v(beta1, Attr("beta1").Default(R == UpdateRule::kFtml ? "0.6" : "0.9").Doc("decay of the first moment"));
      v(beta2, Attr("beta2").Default("0.999").Doc("decay of the second moment"));
    }
    if constexpr (R == UpdateRule::kRmsProp)
      v(gamma1, Attr("gamma1").Default("0.95").Doc("decay of the squared-gradient average"));
    if constexpr (R == UpdateRule::kRmsPropAlex) {
      v(gamma1, Attr("gamma1").Default("0.95").Doc("decay of the gradient averages"));
      v(gamma2, Attr("gamma2").Default("0.9").Doc("momentum of delta"));
    }
    if constexpr (R == UpdateRule::kAdam || kRmsProp || R == UpdateRule::kFtml)
      v(epsilon, Attr("epsilon").Default("1e-08").Doc("added for numerical stability"));
    if constexpr (R == UpdateRule::kFtml) v(t, Attr("t").Doc("number of updates so far, this one included"));
    v(wd, Attr("wd").Default("0").Doc("weight decay"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient first"));
    // MXNet names ftml_update's clipping attribute clip_grad.
    v(clip_gradient, Attr(R == UpdateRule::kFtml ? "clip_grad" : "clip_gradient")
                         .Default("-1")
                         .Doc("clips the rescaled gradient to ±value; < 0 = no clipping"));
    if constexpr (kRmsProp)
      v(clip_weights, Attr("clip_weights").Default("-1").Doc("clips the new weight to ±value; < 0 = no clipping"));
    if constexpr (R == UpdateRule::kSignum)
      v(wd_lh, Attr("wd_lh").Default("0").Doc("weight decay applied to the weight directly (decoupled)"));
    if constexpr (R == UpdateRule::kSgd || R == UpdateRule::kSgdMom || R == UpdateRule::kAdam)
      v(lazy_update, Attr("lazy_update").Default("True").Ignored().Doc("MXNet: sparse (row_sparse) updates only"));
  }
};

/// The rule of an update op ("adam_update" -> kAdam, "mp_sgd_update" -> kSgd); nullopt for other
/// names.
inline std::optional<UpdateRule> UpdateRuleOf(std::string_view op) {
  static constexpr std::string_view kOps[] = {"sgd_update",     "sgd_mom_update",     "nag_mom_update", "adam_update",
                                              "rmsprop_update", "rmspropalex_update", "signsgd_update", "signum_update",
                                              "ftrl_update",    "ftml_update"};
  if (op.starts_with("mp_")) op.remove_prefix(3);
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i] == op) return static_cast<UpdateRule>(i);
  return std::nullopt;
}

/// The attributes of the update op a kernel `setup` (sdk::KernelSetup) is made for, parsed as its
/// rule declares them: for kernels that serve several rules.
template <class Setup>
UpdateFields UpdateParamsOf(const Setup& setup) {
  const std::optional<UpdateRule> rule = UpdateRuleOf(setup.op_name);
  if (!rule) throw Error(WEFT_ERR_INVALID_ARGUMENT, setup.op_name + " is not an optimizer update op");
  switch (*rule) {
    case UpdateRule::kSgd:
      return setup.template Params<UpdateParam<UpdateRule::kSgd>>();
    case UpdateRule::kSgdMom:
      return setup.template Params<UpdateParam<UpdateRule::kSgdMom>>();
    case UpdateRule::kNagMom:
      return setup.template Params<UpdateParam<UpdateRule::kNagMom>>();
    case UpdateRule::kAdam:
      return setup.template Params<UpdateParam<UpdateRule::kAdam>>();
    case UpdateRule::kRmsProp:
      return setup.template Params<UpdateParam<UpdateRule::kRmsProp>>();
    case UpdateRule::kRmsPropAlex:
      return setup.template Params<UpdateParam<UpdateRule::kRmsPropAlex>>();
    case UpdateRule::kSignSgd:
      return setup.template Params<UpdateParam<UpdateRule::kSignSgd>>();
    case UpdateRule::kSignum:
      return setup.template Params<UpdateParam<UpdateRule::kSignum>>();
    case UpdateRule::kFtrl:
      return setup.template Params<UpdateParam<UpdateRule::kFtrl>>();
    case UpdateRule::kFtml:
      break;
  }
  return setup.template Params<UpdateParam<UpdateRule::kFtml>>();
}

/// _sparse_adagrad_update (MXNet 1.9's AdagradParam; mx.nd.sparse.adagrad_update): AdaGrad (Duchi
/// et al. 2011). MXNet runs it on row_sparse gradients only and refuses a weight decay.
struct AdaGradParam {
  float lr = 0.0f, epsilon = 1e-7f, wd = 0.0f, rescale_grad = 1.0f, clip_gradient = -1.0f;

  template <class V>
  void Visit(V& v) {
    v(lr, Attr("lr").Doc("learning rate"));
    v(epsilon, Attr("epsilon").Default("1e-07").Doc("added to the denominator"));
    v(wd, Attr("wd").Default("0").Doc("weight decay; must be 0 (as MXNet's sparse AdaGrad)"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient first"));
    v(clip_gradient,
      Attr("clip_gradient").Default("-1").Doc("clips the rescaled gradient to ±value; < 0 = no clipping"));
  }
  void Validate() const {
    CheckParam(wd == 0.0f, "wd is " + std::to_string(wd) +
                               ": sparse adagrad_update does not support a weight decay (as MXNet); pass wd=0");
  }
};

/// lamb_update_phase1 (and mp_): LAMB's moments and the update direction (You et al. 2019).
struct LambPhase1Param {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-6f;
  int64_t t = 0;
  bool bias_correction = true;
  float wd = 0.0f, rescale_grad = 1.0f, clip_gradient = -1.0f;

  template <class V>
  void Visit(V& v) {
    v(beta1, Attr("beta1").Default("0.9").Doc("decay of the first moment"));
    v(beta2, Attr("beta2").Default("0.999").Doc("decay of the second moment"));
    v(epsilon, Attr("epsilon").Default("1e-06").Doc("added for numerical stability"));
    v(t, Attr("t").Doc("number of updates so far, this one included"));
    v(bias_correction, Attr("bias_correction").Default("True").Doc("divide the moments by 1 − βᵗ"));
    v(wd, Attr("wd").Doc("weight decay"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient first"));
    v(clip_gradient,
      Attr("clip_gradient").Default("-1").Doc("clips the rescaled gradient to ±value; < 0 = no clipping"));
  }
};

/// lamb_update_phase2 (and mp_): the step scaled by the trust ratio r1 / r2.
struct LambPhase2Param {
  float lr = 0.0f, lower_bound = -1.0f, upper_bound = -1.0f;

  template <class V>
  void Visit(V& v) {
    v(lr, Attr("lr").Doc("learning rate"));
    v(lower_bound, Attr("lower_bound").Default("-1").Doc("lower bound of r1; < 0 = none"));
    v(upper_bound, Attr("upper_bound").Default("-1").Doc("upper bound of r1; < 0 = none"));
  }
};

/// The multi-tensor SGD family, multi_(mp_)sgd(_mom)_update and preloaded_multi_...: num_weights
/// weights in one call, with lrs and wds as attributes (kPreloaded false) or as the last two
/// inputs (true).
template <bool kPreloaded, bool kMomentum>
struct MultiSgdParam {
  FloatTuple lrs, wds;
  float momentum = 0.0f, rescale_grad = 1.0f, clip_gradient = -1.0f;
  int64_t num_weights = 1;

  template <class V>
  void Visit(V& v) {
    if constexpr (!kPreloaded) {
      v(lrs, Attr("lrs").Doc("learning rate per weight, e.g. (0.1, 0.1)"));
      v(wds, Attr("wds").Doc("weight decay per weight"));
    }
    if constexpr (kMomentum) v(momentum, Attr("momentum").Default("0").Doc("momentum"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient first"));
    v(clip_gradient,
      Attr("clip_gradient").Default("-1").Doc("clips the rescaled gradient to ±value; < 0 = no clipping"));
    v(num_weights, Attr("num_weights").Default("1").Min(1).Max(65536).Doc("number of weights updated"));
  }
  void Validate() const {
    if constexpr (!kPreloaded) {
      for (const FloatTuple* t : {&lrs, &wds})
        CheckParam(t->size() == static_cast<size_t>(num_weights),
                   std::string(t == &lrs ? "lrs" : "wds") + " has " + std::to_string(t->size()) +
                       " values, num_weights is " + std::to_string(num_weights));
    }
  }
};

/// multi_sum_sq: Σ x² of each of num_arrays arrays.
struct MultiSumSqParam {
  int64_t num_arrays = 1;

  template <class V>
  void Visit(V& v) {
    v(num_arrays, Attr("num_arrays").MxType("int").Doc("number of arrays"));
  }
};

/// multi_lars: LARS's per-layer learning rates (You et al. 2017).
struct MultiLarsParam {
  float eta = 0.0f, eps = 0.0f, rescale_grad = 1.0f;

  template <class V>
  void Visit(V& v) {
    v(eta, Attr("eta").Doc("LARS coefficient"));
    v(eps, Attr("eps").Doc("added to the denominator"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient norm"));
  }
};

}  // namespace weft::sdk

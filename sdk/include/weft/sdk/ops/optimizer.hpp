// weft SDK ops — the optimizer updates sgd_update, sgd_mom_update, nag_mom_update, adam_update,
// rmsprop_update, rmspropalex_update (MXNet 1.9's SGDParam, SGDMomParam, NAGMomParam,
// AdamParam, RMSPropParam, RMSPropAlexParam): one struct per rule, declaring the rule's
// attributes in MXNet's order (lr, the rule's own, wd, rescale_grad, clip_gradient, then
// clip_weights or lazy_update).
#pragma once

#include <iterator>
#include <optional>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class UpdateRule { kSgd, kSgdMom, kNagMom, kAdam, kRmsProp, kRmsPropAlex };

/// The values of every rule's attributes (a rule's struct fills those it declares).
struct UpdateFields {
  float lr = 0.0f, momentum = 0.0f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, gamma1 = 0.95f, gamma2 = 0.9f;
  float wd = 0.0f, rescale_grad = 1.0f, clip_gradient = -1.0f, clip_weights = -1.0f;
  bool lazy_update = true;
};

/// The attributes of update rule R; fields R does not declare keep their defaults.
template <UpdateRule R>
struct UpdateParam : UpdateFields {
  static constexpr bool kMomentum = R == UpdateRule::kSgdMom || R == UpdateRule::kNagMom;
  static constexpr bool kRmsProp = R == UpdateRule::kRmsProp || R == UpdateRule::kRmsPropAlex;

  template <class V>
  void Visit(V& v) {
    v(lr, Attr("lr").Doc("learning rate"));
    if constexpr (kMomentum) v(momentum, Attr("momentum").Default("0").Doc("momentum"));
    if constexpr (R == UpdateRule::kAdam) {
      v(beta1, Attr("beta1").Default("0.9").Doc("decay of the first moment"));
      v(beta2, Attr("beta2").Default("0.999").Doc("decay of the second moment"));
    }
    if constexpr (R == UpdateRule::kRmsProp)
      v(gamma1, Attr("gamma1").Default("0.95").Doc("decay of the squared-gradient average"));
    if constexpr (R == UpdateRule::kRmsPropAlex) {
      v(gamma1, Attr("gamma1").Default("0.95").Doc("decay of the gradient averages"));
      v(gamma2, Attr("gamma2").Default("0.9").Doc("momentum of delta"));
    }
    if constexpr (R == UpdateRule::kAdam || kRmsProp)
      v(epsilon, Attr("epsilon").Default("1e-08").Doc("added for numerical stability"));
    v(wd, Attr("wd").Default("0").Doc("weight decay"));
    v(rescale_grad, Attr("rescale_grad").Default("1").Doc("multiplies the gradient first"));
    v(clip_gradient,
      Attr("clip_gradient").Default("-1").Doc("clips the rescaled gradient to ±value; < 0 = no clipping"));
    if constexpr (kRmsProp)
      v(clip_weights, Attr("clip_weights").Default("-1").Doc("clips the new weight to ±value; < 0 = no clipping"));
    if constexpr (R == UpdateRule::kSgd || R == UpdateRule::kSgdMom || R == UpdateRule::kAdam)
      v(lazy_update, Attr("lazy_update").Default("True").Ignored().Doc("MXNet: sparse (row_sparse) updates only"));
  }
};

/// The rule of an update op ("adam_update" -> kAdam); nullopt for other names.
inline std::optional<UpdateRule> UpdateRuleOf(std::string_view op) {
  static constexpr std::string_view kOps[] = {"sgd_update",  "sgd_mom_update", "nag_mom_update",
                                              "adam_update", "rmsprop_update", "rmspropalex_update"};
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
      break;
  }
  return setup.template Params<UpdateParam<UpdateRule::kRmsPropAlex>>();
}

}  // namespace weft::sdk

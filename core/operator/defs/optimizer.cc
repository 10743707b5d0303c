// Optimizer update ops (MXNet 1.9 src/operator/optimizer_op.cc, optimizer_op-inl.h): sgd_update,
// sgd_mom_update, nag_mom_update, adam_update, rmsprop_update, rmspropalex_update (the optimizer
// family of docs/adding-an-op.md, with defs/optimizer_more.cc).
//
// Update ops: the output is the new weight (in place on input 0); state arrays are aux states,
// updated in place (MXNet declares them as mutable inputs; the positional order of an imperative
// call, weight, grad, states..., is the same). Formulas in OPS.md.
#include "operator/defs/builtin.h"
#include "operator/defs/optimizer_defs.h"

namespace weft::opdef {

OpDef UpdateBase(std::string name, std::string description, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({"weight", "grad"});
  d.list_outputs = Fixed({"output"});
  if (!aux.empty()) d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kNone;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

namespace {

void RegisterUpdateOps(OpRegistry& r) {
  using sdk::UpdateRule;
  r.Register(Update<UpdateRule::kSgd>("sgd_update", "w = (1 − lr·wd)·w − lr·clip(rescale_grad·g)", {}));
  r.Register(Update<UpdateRule::kSgdMom>("sgd_mom_update",
                                         "mom = momentum·mom − lr·(clip(rescale_grad·g) + wd·w); w += mom", {"mom"}));
  r.Register(Update<UpdateRule::kNagMom>(
      "nag_mom_update", "g' = clip(rescale_grad·g) + wd·w; mom' = momentum·mom − lr·g'; w += momentum·mom' − lr·g'",
      {"mom"}));
  r.Register(Update<UpdateRule::kAdam>(
      "adam_update",
      "g' = clip(rescale_grad·g + wd·w); mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²; "
      "w −= lr·mean/(sqrt(var) + ε)",
      {"mean", "var"}));
  r.Register(Update<UpdateRule::kRmsProp>(
      "rmsprop_update",
      "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; w = clipw(w − lr·g'/sqrt(n + ε)) "
      "(Tieleman & Hinton 2012)",
      {"n"}));
  r.Register(Update<UpdateRule::kRmsPropAlex>(
      "rmspropalex_update",
      "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; g = (1−γ1)·g' + γ1·g; "
      "delta = γ2·delta − lr·g'/sqrt(n − g² + ε); w = clipw(w + delta) (Graves 2013, eq. 38–45)",
      {"n", "g", "delta"}));
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) { RegisterUpdateOps(r); }

}  // namespace weft::opdef

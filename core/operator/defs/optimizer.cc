// Optimizer update ops: sgd_update, sgd_mom_update, adam_update (MXNet 1.9 optimizer_op.cc). The
// output is the new weight (in place on input 0); state arrays are aux states, updated in place.
// Formulas in OPS.md.
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

OpDef Update(std::string name, std::string description, std::vector<AttrSpec> extra, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.attrs = {Req("lr", "float", "learning rate")};
  d.attrs.insert(d.attrs.end(), extra.begin(), extra.end());
  d.attrs.push_back(Opt("wd", "float", "0", "weight decay"));
  d.attrs.push_back(Opt("rescale_grad", "float", "1", "multiplies the gradient first"));
  d.attrs.push_back(Opt("clip_gradient", "float", "-1", "clips the rescaled gradient to ±value; < 0 = no clipping"));
  d.attrs.push_back(Ignored(Opt("lazy_update", "bool", "True", "MXNet: sparse (row_sparse) updates only")));
  d.list_inputs = Fixed({"weight", "grad"});
  d.list_outputs = Fixed({"output"});
  if (!aux.empty()) d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kNone;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  r.Register(Update("sgd_update", "w = (1 − lr·wd)·w − lr·clip(rescale_grad·g)", {}, {}));
  r.Register(Update("sgd_mom_update", "mom = momentum·mom − lr·(clip(rescale_grad·g) + wd·w); w += mom",
                    {Opt("momentum", "float", "0", "momentum")}, {"mom"}));
  r.Register(Update("adam_update",
                    "g' = clip(rescale_grad·g) + wd·w; mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²; "
                    "w −= lr·mean/(sqrt(var) + ε)",
                    {Opt("beta1", "float", "0.9", "decay of the first moment"),
                     Opt("beta2", "float", "0.999", "decay of the second moment"),
                     Opt("epsilon", "float", "1e-08", "added to the denominator")},
                    {"mean", "var"}));
}

}  // namespace weft::opdef

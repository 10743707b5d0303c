#include "operator/gradient.h"

#include <set>

#include "operator/infer.h"

namespace weft {

uint32_t BackwardUses(const OpDef& def, const AttrMap& attrs) {
  if (!def.backward_uses_for) return def.backward_uses;
  const uint32_t uses = def.backward_uses_for(attrs);
  WEFT_CHECK((uses & ~def.backward_uses) == 0,
             "{}: backward_uses_for returned 0x{:x}, which is not a subset of backward_uses 0x{:x}", def.name, uses,
             def.backward_uses);
  return uses;
}

std::optional<BackwardNode> DescribeBackward(const OpDef& def, const AttrMap& attrs, int num_inputs, int num_outputs,
                                             int num_aux) {
  const size_t ni = OpInputNames(def, attrs).size(), no = OpOutputNames(def, attrs).size(),
               na = OpAuxNames(def, attrs).size();
  WEFT_CHECK(static_cast<size_t>(num_inputs) == ni && static_cast<size_t>(num_outputs) == no &&
                 static_cast<size_t>(num_aux) == na,
             "{}: a node with {} inputs, {} outputs and {} aux states does not fit the definition ({}, {}, {})",
             def.name, num_inputs, num_outputs, num_aux, ni, no, na);
  if (def.grad != GradKind::kOp) return std::nullopt;
  BackwardNode node;
  node.op = def.backward_op;
  node.num_outputs = num_inputs;
  node.resources = def.resources & kResourceTempSpace;
  auto add = [&](BackwardSource s, int n) {
    for (int i = 0; i < n; ++i) node.inputs.push_back({s, i});
  };
  const uint32_t uses = BackwardUses(def, attrs);
  add(BackwardSource::kOutGrad, num_outputs);
  if (uses & kUsesInputs) add(BackwardSource::kInput, num_inputs);
  if (uses & kUsesOutputs) add(BackwardSource::kOutput, num_outputs);
  if (uses & kUsesAux) add(BackwardSource::kAux, num_aux);
  return node;
}

bool BackwardInplaceOk(const std::string& backward_op) {
  static const std::set<std::string> ops = {
      "_backward_Activation", "_backward_copy",        "_backward_sin",          "_backward_cos",
      "_backward_exp",        "_backward_log",         "_backward_sqrt",         "_backward_square",
      "_backward_abs",        "_backward_negative",    "_backward_relu",         "_backward_sigmoid",
      "_backward_tanh",       "_backward_plus_scalar", "_backward_minus_scalar", "_backward_rminus_scalar",
      "_backward_mul_scalar", "_backward_div_scalar",  "_backward_rdiv_scalar",  "_backward_power_scalar"};
  return ops.count(backward_op) > 0;
}

const char* BackwardSourceName(BackwardSource s) noexcept {
  switch (s) {
    case BackwardSource::kOutGrad:
      return "out_grad";
    case BackwardSource::kInput:
      return "input";
    case BackwardSource::kOutput:
      return "output";
    case BackwardSource::kAux:
      return "aux";
  }
  return "?";
}

}  // namespace weft

// weft-ops-json: the built-in operator registry as JSON, the input of scripts/gen_ops_md.py
// (which writes the top-level OPS.md). Not installed: it reads core's internal registry.
//
//   {"ops": [{"name": "softmax", "definition": "core/operator/defs/softmax.cc", "aliases": [],
//             "gradient": "op", "backward_op": "_backward_softmax", "inputs": ["data"], "aux": [],
//             "outputs": ["output"], "hidden_outputs": [], "uses": "O", "inplace": [],
//             "attrs": [["axis", "-1"], ...], "loss": false, "random": false}, ...]}
//
// The contract fields (inputs, aux states, outputs with the hidden ones, what the backward op
// reads, in-place pairs, attributes with their defaults) are those of the op's default
// attributes; inputs list every input the op can take, as MXNet's op info does.
//
// Ops are sorted by name; only built-in definitions are listed (a loaded plugin's own ops are
// not weft's), so the output depends on the source tree alone.
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/defs/builtin.h"
#include "operator/gradient.h"
#include "operator/infer.h"
#include "operator/op_def.h"
#include "weft/op_info.h"

namespace {

// Adds the contract fields of `def` at its default attributes to `op` (see above).
nlohmann::ordered_json Contract(const weft::OpDef& def, nlohmann::ordered_json op) {
  const std::optional<weft::OpInfo> info = weft::FindOpInfo(def.name);
  const weft::AttrMap attrs = weft::DefaultAttrs(def);
  std::vector<std::string> inputs = info ? info->inputs : std::vector<std::string>{};
  const size_t num_aux = info ? static_cast<size_t>(info->num_aux) : 0;
  const std::vector<std::string> aux(inputs.end() - static_cast<std::ptrdiff_t>(num_aux), inputs.end());
  inputs.resize(inputs.size() - num_aux);
  std::vector<std::string> outputs = def.list_outputs(attrs);
  const size_t visible = static_cast<size_t>(weft::OpNumVisibleOutputs(def, attrs));
  const std::vector<std::string> hidden(outputs.begin() + static_cast<std::ptrdiff_t>(visible), outputs.end());
  outputs.resize(visible);
  const uint32_t uses = def.grad == weft::GradKind::kOp ? weft::BackwardUses(def, attrs) : 0;
  std::string uses_text;
  if (uses & weft::kUsesInputs) uses_text += "I";
  if (uses & weft::kUsesOutputs) uses_text += uses_text.empty() ? "O" : " O";
  if (uses & weft::kUsesAux) uses_text += uses_text.empty() ? "A" : " A";
  nlohmann::ordered_json inplace = nlohmann::ordered_json::array();
  for (const auto& [in, out] : weft::OpInplacePairs(def, attrs)) inplace.push_back({in, out});
  nlohmann::ordered_json declared = nlohmann::ordered_json::array();
  for (const weft::AttrSpec& a : def.attrs) declared.push_back({a.name, a.default_value.value_or("required")});
  op["inputs"] = inputs;
  op["aux"] = aux;
  op["outputs"] = outputs;
  op["hidden_outputs"] = hidden;
  op["uses"] = uses_text;
  op["inplace"] = inplace;
  op["attrs"] = declared;
  op["loss"] = def.is_loss;
  op["random"] = (def.resources & weft::kResourceRandom) != 0;
  return op;
}

}  // namespace

int main() {
  try {
    using weft::OpRegistry;
    const OpRegistry& registry = OpRegistry::Get();
    std::map<std::string, std::vector<std::string>> aliases;
    for (const auto& [alias, target] : registry.ListAliases()) aliases[target].push_back(alias);
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const std::string& name : registry.ListNames()) {
      const std::string& file = weft::opdef::BuiltinDefinitionFile(name);
      if (file.empty()) continue;
      const weft::OpDef& def = registry.Lookup(name);
      const char* gradient = def.grad == weft::GradKind::kOp     ? "op"
                             : def.grad == weft::GradKind::kZero ? "zero"
                                                                 : "none";
      ops.push_back(Contract(def, {{"name", name},
                                   {"definition", file},
                                   {"aliases", aliases[name]},
                                   {"gradient", gradient},
                                   {"backward_op", def.backward_op}}));
    }
    std::printf("%s\n", nlohmann::ordered_json{{"ops", ops}}.dump(1).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-ops-json: %s\n", e.what());
    return 1;
  }
}

// weft-ops-json: the built-in operator registry as JSON, the input of scripts/gen_ops_md.py
// (which writes the top-level OPS.md). Not installed: it reads core's internal registry.
//
//   {"ops": [{"name": "softmax", "definition": "core/operator/defs/loss.cc", "aliases": [],
//             "gradient": "op", "backward_op": "_backward_softmax"}, ...]}
//
// Ops are sorted by name; only built-in definitions are listed (a loaded plugin's own ops are
// not weft's), so the output depends on the source tree alone.
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/defs/builtin.h"
#include "operator/op_def.h"

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
      ops.push_back({{"name", name},
                     {"definition", file},
                     {"aliases", aliases[name]},
                     {"gradient", gradient},
                     {"backward_op", def.backward_op}});
    }
    std::printf("%s\n", nlohmann::ordered_json{{"ops", ops}}.dump(1).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-ops-json: %s\n", e.what());
    return 1;
  }
}

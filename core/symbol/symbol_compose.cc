// weft::Symbol::Compose: MXNet's composition of a graph with free variables (Symbol.__call__).
#include <algorithm>
#include <unordered_map>

#include <fmt/ranges.h>

#include "symbol/graph.h"
#include "weft/symbol.h"

namespace weft {

using graph::Entry;
using graph::NodePtr;

void Symbol::Compose(const std::vector<Symbol>& args, const std::map<std::string, Symbol>& kwargs) {
  WEFT_CHECK(!outputs_.empty(), "Symbol::Compose: the symbol is empty");
  // A lone variable has nothing to compose; a group may list variables among its outputs (a
  // graph's get_internals(), which Gluon's SymbolBlock composes): they are replaced like inputs.
  WEFT_CHECK(outputs_.size() > 1 || !outputs_[0].node->is_variable(),
             "Symbol::Compose: variable '{}' cannot be composed", outputs_[0].node->name);
  graph::IndexedGraph g = graph::Index(outputs_);
  WEFT_CHECK(args.size() <= g.arg_nodes.size(),
             "Symbol::Compose: {} positional arguments given, but the symbol has {} arguments ({})", args.size(),
             g.arg_nodes.size(), fmt::join(ListArguments(), ", "));
  // Variable node -> the entry that replaces it.
  std::unordered_map<const graph::Node*, Entry> replace;
  auto entry_of = [](const Symbol& s, const std::string& what) {
    WEFT_CHECK(s.outputs_.size() == 1, "Symbol::Compose: argument '{}' has {} outputs; it must have one", what,
               s.outputs_.size());
    return s.outputs_[0];
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const graph::Node* var = g.nodes[g.arg_nodes[i]].node.get();
    replace[var] = entry_of(args[i], var->name);
  }
  size_t matched = 0;
  for (uint32_t id : g.var_nodes) {
    const graph::Node* var = g.nodes[id].node.get();
    auto it = kwargs.find(var->name);
    if (it == kwargs.end()) continue;
    WEFT_CHECK(!replace.count(var), "Symbol::Compose: argument '{}' is given by position and by name", var->name);
    replace[var] = entry_of(it->second, var->name);
    ++matched;
  }
  if (matched != kwargs.size()) {
    std::vector<std::string> unknown;
    const std::vector<std::string> inputs = ListInputs();
    for (const auto& [name, s] : kwargs)
      if (std::find(inputs.begin(), inputs.end(), name) == inputs.end()) unknown.push_back(name);
    Fail("Symbol::Compose: no input named {}; the inputs are: {}", fmt::join(unknown, ", "), fmt::join(inputs, ", "));
  }
  for (const auto& info : g.nodes) {
    for (Entry& in : info.node->inputs) {
      auto it = replace.find(in.node.get());
      if (it != replace.end()) in = it->second;
    }
  }
  for (Entry& out : outputs_) {
    auto it = replace.find(out.node.get());
    if (it != replace.end()) out = it->second;
  }
}

}  // namespace weft

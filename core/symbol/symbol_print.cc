// weft::Symbol::DebugStr in MXNet 1.9's layout (nnvm Symbol::Print, what MXSymbolPrint returns).
#include <sstream>

#include "symbol/graph.h"
#include "weft/symbol.h"

namespace weft {

std::string Symbol::DebugStr() const {
  WEFT_CHECK(!outputs_.empty(), "Symbol::DebugStr: the symbol is empty");
  std::ostringstream os;
  os << "Symbol Outputs:\n";
  for (size_t i = 0; i < outputs_.size(); ++i)
    os << "\toutput[" << i << "]=" << outputs_[i].node->name << "(" << outputs_[i].index << ")\n";
  graph::PostOrderDFS(outputs_, [&](const graph::NodePtr& n) {
    if (n->is_variable()) {
      os << "Variable:" << n->name << "\n";
      return;
    }
    os << "--------------------\n";
    os << "Op:" << n->op->name << ", Name=" << n->name << "\n";
    os << "Inputs:\n";
    for (size_t j = 0; j < n->inputs.size(); ++j) {
      const graph::Entry& in = n->inputs[j];
      os << "\targ[" << j << "]=" << in.node->name << "(" << in.index << ")";
      if (in.node->is_variable()) os << " version=" << in.version;
      os << "\n";
    }
    if (!n->attrs.empty()) {
      os << "Attrs:\n";
      for (const auto& [k, v] : n->attrs) os << "\t" << k << "=" << v << "\n";
    }
  });
  return os.str();
}

}  // namespace weft

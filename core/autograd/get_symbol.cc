// weft::autograd::GetSymbol: the recorded graph behind an array as a Symbol (MXAutogradGetSymbol).
#include <unordered_map>

#include "autograd/tape.h"
#include "symbol/graph.h"
#include "weft/autograd.h"

namespace weft::autograd {

using autograd_detail::Node;
using autograd_detail::NodeKind;

namespace {

class SymbolBuilder {
 public:
  graph::Entry Build(const NDArray& head) {
    std::vector<std::pair<const Node*, size_t>> stack{{head.autograd_node().get(), 0}};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      WEFT_CHECK(!n->cleared, "GetSymbol: {} was freed by a backward without retain_graph", n->Describe());
      if (next < n->inputs.size()) {
        const Node* in = n->inputs[next++].node.get();
        if (in != nullptr && !outs_.count(in)) stack.emplace_back(in, 0);
        continue;
      }
      if (!outs_.count(n)) Make(*n);
      stack.pop_back();
    }
    return outs_.at(head.autograd_node().get()).at(head.autograd_index());
  }

 private:
  std::vector<graph::Entry> InputEntries(const Node& n) {
    std::vector<graph::Entry> in;
    for (const auto& i : n.inputs)
      in.push_back(i.node ? outs_.at(i.node.get()).at(i.index)
                          : graph::Entry{graph::MakeVariable("null" + std::to_string(constants_++)), 0, 0});
    return in;
  }

  void Make(const Node& n) {
    std::vector<graph::Entry>& out = outs_[&n];
    switch (n.kind) {
      case NodeKind::kVariable:
        out = {graph::Entry{graph::MakeVariable(n.name), 0, 0}};
        return;
      case NodeKind::kOp: {
        graph::NodePtr g = graph::MakeOpNode(*n.def, n.name, n.attrs.values());
        g->inputs = InputEntries(n);
        for (uint32_t k = 0; k < g->num_outputs; ++k) out.push_back(graph::Entry{g, k, 0});
        return;
      }
      case NodeKind::kGraph:
        out = CachedOpCall(n);
        return;
      case NodeKind::kBackward:
        Fail(
            "GetSymbol: the graph holds {}, a gradient recorded by a backward with create_graph; a Symbol cannot "
            "hold backward ops",
            n.Describe());
    }
  }

  // A CachedOp call that was not inlined: one `_CachedOp` node holding the call's graph, as MXNet
  // shows it (so a hybridized block counts as one node). The call's inputs are in the order of the
  // graph's variables; the node takes its arguments, then its aux states.
  std::vector<graph::Entry> CachedOpCall(const Node& n) {
    std::vector<graph::Entry> heads = graph::ExpandSubgraphs(n.graph->GetGraph().outputs());
    const graph::IndexedGraph g = graph::Index(heads);
    const std::vector<graph::Entry> inputs = InputEntries(n);
    WEFT_CHECK(inputs.size() == g.var_nodes.size(), "GetSymbol: {} had {} inputs, its graph has {}", n.Describe(),
               inputs.size(), g.var_nodes.size());
    std::unordered_map<uint32_t, size_t> position;
    for (size_t i = 0; i < g.var_nodes.size(); ++i) position.emplace(g.var_nodes[i], i);
    std::vector<graph::Entry> args, aux;
    for (uint32_t nid : g.arg_nodes) args.push_back(inputs[position.at(nid)]);
    for (uint32_t nid : g.aux_nodes) aux.push_back(inputs[position.at(nid)]);
    graph::NodePtr c = graph::MakeCachedOpNode(n.name, std::move(heads), std::move(args), std::move(aux));
    std::vector<graph::Entry> out;
    for (uint32_t k = 0; k < c->num_outputs; ++k) out.push_back(graph::Entry{c, k, 0});
    return out;
  }

  std::unordered_map<const Node*, std::vector<graph::Entry>> outs_;
  size_t constants_ = 0;
};

}  // namespace

Symbol GetSymbol(const NDArray& head) {
  WEFT_CHECK(autograd_detail::InGraph(head),
             "GetSymbol: {} is not part of a recorded graph (record the computation with autograd::Record, on a "
             "marked variable)",
             autograd_detail::DescribeArray(head));
  return Symbol::FromOutputs({SymbolBuilder().Build(head)});
}

}  // namespace weft::autograd

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
        out = Inline(n);
        return;
      case NodeKind::kBackward:
        Fail(
            "GetSymbol: the graph holds {}, a gradient recorded by a backward with create_graph; a Symbol cannot "
            "hold backward ops",
            n.Describe());
    }
  }

  // A CachedOp call: its graph's nodes, with the graph's inputs (ListInputs order) replaced by the
  // call's inputs.
  std::vector<graph::Entry> Inline(const Node& n) {
    const Symbol sym = n.graph->GetGraph();
    const std::vector<graph::Entry> inputs = InputEntries(n);
    std::unordered_map<const graph::Node*, graph::NodePtr> copies;
    std::unordered_map<const graph::Node*, graph::Entry> vars;
    size_t next_input = 0;
    graph::PostOrderDFS(sym.outputs(), [&](const graph::NodePtr& g) {
      if (g->is_variable()) {
        WEFT_CHECK(next_input < inputs.size(), "GetSymbol: {} has more graph inputs than the call had", n.Describe());
        vars.emplace(g.get(), inputs[next_input++]);
        return;
      }
      auto c = std::make_shared<graph::Node>(*g);
      for (graph::Entry& e : c->inputs)
        e = e.node->is_variable() ? vars.at(e.node.get()) : graph::Entry{copies.at(e.node.get()), e.index, e.version};
      copies.emplace(g.get(), std::move(c));
    });
    std::vector<graph::Entry> out;
    for (const graph::Entry& e : sym.outputs())
      out.push_back(e.node->is_variable() ? vars.at(e.node.get()) : graph::Entry{copies.at(e.node.get()), e.index, 0});
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

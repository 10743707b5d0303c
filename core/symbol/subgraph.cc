// `_CachedOp` nodes (a graph run as one node, as autograd.get_symbol shows a hybridized block)
// and their expansion into the graph they hold for inference and executors.
#include <unordered_map>

#include "symbol/graph.h"

namespace weft::graph {
namespace {

// The node's op: never called for inference or kernels (ExpandSubgraphs removes the node first);
// it gives the node its name in JSON, debug strings and errors.
const OpDef& CachedOpDef() {
  static const OpDef def = [] {
    OpDef d;
    d.name = "_CachedOp";
    d.description =
        "A graph run as one node (MXNet's CachedOp call, from autograd.get_symbol of a hybridized block that was not "
        "inlined). Inference and executors expand it into the graph it holds.";
    return d;
  }();
  return def;
}

// Rebuilds the graph of some heads with `_CachedOp` nodes expanded. `outs_` maps each visited node
// of the source graph to its outputs in the new one.
class Expander {
 public:
  // `bound`: variables of this graph that stand for other entries (a subgraph's inputs).
  std::vector<Entry> Run(const std::vector<Entry>& heads, const std::unordered_map<const Node*, Entry>& bound) {
    std::unordered_map<const Node*, std::vector<Entry>> outs;
    PostOrderDFS(heads, [&](const NodePtr& n) {
      if (n->is_variable()) {
        auto it = bound.find(n.get());
        outs[n.get()] = {it == bound.end() ? Entry{n, 0, 0} : it->second};
        return;
      }
      std::vector<Entry> in;
      bool changed = false;
      for (const Entry& e : n->inputs) {
        Entry m = outs.at(e.node.get()).at(e.index);
        if (m.node == e.node) m.version = e.version;  // an unchanged variable keeps its entry's version
        changed = changed || m.node != e.node || m.index != e.index;
        in.push_back(std::move(m));
      }
      std::vector<Entry>& mine = outs[n.get()];
      if (n->subgraph) {
        mine = Inline(*n, in);
        return;
      }
      NodePtr node = n;
      if (changed) {
        node = std::make_shared<Node>(*n);
        node->inputs = std::move(in);
      }
      for (uint32_t k = 0; k < node->num_outputs; ++k) mine.push_back(Entry{node, k, 0});
    });
    std::vector<Entry> result;
    for (const Entry& h : heads) {
      Entry e = outs.at(h.node.get()).at(h.index);
      if (e.node == h.node) e.version = h.version;
      result.push_back(std::move(e));
    }
    return result;
  }

 private:
  std::vector<Entry> Inline(const Node& n, const std::vector<Entry>& inputs) {
    const IndexedGraph g = Index(*n.subgraph);
    std::unordered_map<const Node*, Entry> bound;
    size_t next = 0;
    for (const auto* list : {&g.arg_nodes, &g.aux_nodes})
      for (uint32_t nid : *list) bound.emplace(g.nodes[nid].node.get(), inputs.at(next++));
    return Run(*n.subgraph, bound);
  }
};

}  // namespace

NodePtr MakeCachedOpNode(std::string name, std::vector<Entry> subgraph_heads, std::vector<Entry> args,
                         std::vector<Entry> aux) {
  WEFT_CHECK(!subgraph_heads.empty(), "_CachedOp node '{}': the graph it runs has no outputs", name);
  auto n = std::make_shared<Node>();
  n->op = &CachedOpDef();
  n->name = std::move(name);
  n->subgraph = std::make_shared<const std::vector<Entry>>(std::move(subgraph_heads));
  const IndexedGraph g = Index(*n->subgraph);
  WEFT_CHECK(args.size() == g.arg_nodes.size() && aux.size() == g.aux_nodes.size(),
             "_CachedOp node '{}': {} arguments and {} aux states given, its graph has {} and {}", n->name, args.size(),
             aux.size(), g.arg_nodes.size(), g.aux_nodes.size());
  n->inputs = std::move(args);
  n->inputs.insert(n->inputs.end(), aux.begin(), aux.end());
  Refresh(*n);
  return n;
}

void RefreshSubgraphNode(Node& n) {
  const IndexedGraph g = Index(*n.subgraph);
  n.params = AttrMap();
  n.input_names.clear();
  for (const auto* list : {&g.arg_nodes, &g.aux_nodes})
    for (uint32_t nid : *list) n.input_names.push_back(g.nodes[nid].node->name);
  n.num_args = static_cast<uint32_t>(g.arg_nodes.size());
  n.output_names.clear();
  for (const Entry& h : *n.subgraph) n.output_names.push_back(OutputName(h));
  n.num_outputs = n.num_visible_outputs = static_cast<uint32_t>(n.output_names.size());
}

std::vector<Entry> ExpandSubgraphs(const std::vector<Entry>& heads) {
  bool any = false;
  PostOrderDFS(heads, [&](const NodePtr& n) { any = any || n->subgraph != nullptr; });
  if (!any) return heads;
  return Expander().Run(heads, {});
}

}  // namespace weft::graph

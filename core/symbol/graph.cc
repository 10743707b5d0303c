// Symbol graph nodes, op lookup with MXNet's internal aliases, DFS and the indexed view.
#include "symbol/graph.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/release_chain.h"
#include "operator/infer.h"

namespace weft::graph {

const std::vector<std::string>& HiddenKeys() {
  // MXNet's kHiddenKeys (src/c_api/c_api_symbolic.cc).
  static const std::vector<std::string> keys = {"ctx_group",       "lr_mult",      "wd_mult",
                                                "force_mirroring", "mirror_stage", "profiler_scope"};
  return keys;
}

bool IsNonParamKey(std::string_view key) {
  if (key.size() >= 4 && key.starts_with("__") && key.ends_with("__")) return true;
  for (const std::string& h : HiddenKeys()) {
    if (key == h) return true;
    if (key.size() > h.size() + 1 && key.ends_with(h) && key[key.size() - h.size() - 1] == '_') return true;
  }
  return false;
}

namespace {

// Names MXNet's front ends and old JSON files use for ops registered under another name.
const std::unordered_map<std::string_view, std::string_view>& Aliases() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"_Plus", "elemwise_add"},
      {"_plus", "elemwise_add"},
      {"_add", "elemwise_add"},
      {"_Minus", "elemwise_sub"},
      {"_minus", "elemwise_sub"},
      {"_sub", "elemwise_sub"},
      {"_Mul", "elemwise_mul"},
      {"_mul", "elemwise_mul"},
      {"_Div", "elemwise_div"},
      {"_div", "elemwise_div"},
      {"_PlusScalar", "_plus_scalar"},
      {"_MinusScalar", "_minus_scalar"},
      {"_RMinusScalar", "_rminus_scalar"},
      {"_MulScalar", "_mul_scalar"},
      {"_DivScalar", "_div_scalar"},
      {"_RDivScalar", "_rdiv_scalar"},
      {"_PowerScalar", "_power_scalar"},
      {"ElementWiseSum", "add_n"},
      {"flatten", "Flatten"},
      {"reshape", "Reshape"},
      {"split", "SliceChannel"},
      {"concat", "Concat"},
      {"cast", "Cast"},
      {"sum_axis", "sum"},
      {"max_axis", "max"},
      {"Softmax", "SoftmaxOutput"},
  };
  return m;
}

}  // namespace

const OpDef* FindOp(std::string_view name) {
  const OpRegistry& reg = OpRegistry::Get();
  if (const OpDef* op = reg.Find(name)) return op;
  auto it = Aliases().find(name);
  return it == Aliases().end() ? nullptr : reg.Find(it->second);
}

const OpDef& LookupOp(std::string_view name) {
  if (const OpDef* op = FindOp(name)) return *op;
  return OpRegistry::Get().Lookup(name);  // throws the registry's "unknown operator" error
}

Node::~Node() { detail::ReleaseInputChain(inputs); }

std::string Node::Describe() const {
  if (is_variable()) return "variable '" + name + "'";
  return "node '" + name + "' (" + op->name + ")";
}

NodePtr MakeVariable(std::string name, AttrDict attrs) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->attrs = std::move(attrs);
  return n;
}

NodePtr MakeOpNode(const OpDef& op, std::string name, AttrDict attrs) {
  auto n = std::make_shared<Node>();
  n->op = &op;
  n->name = std::move(name);
  n->attrs = std::move(attrs);
  Refresh(*n);
  return n;
}

void Refresh(Node& n) {
  if (n.is_variable()) {
    n.params = AttrMap();
    n.input_names.clear();
    n.output_names.clear();
    n.num_args = 0;
    n.num_outputs = n.num_visible_outputs = 1;
    return;
  }
  if (n.subgraph) {
    RefreshSubgraphNode(n);
    return;
  }
  try {
    std::map<std::string, std::string> given;
    for (const auto& [k, v] : n.attrs) {
      if (!IsNonParamKey(k)) given.emplace(k, v);
    }
    n.params = n.op->Normalize(AttrMap(std::move(given)));
    std::vector<std::string> args = OpInputNames(*n.op, n.params);
    std::vector<std::string> aux = OpAuxNames(*n.op, n.params);
    n.output_names = OpOutputNames(*n.op, n.params);
    n.num_args = static_cast<uint32_t>(args.size());
    n.input_names = std::move(args);
    n.input_names.insert(n.input_names.end(), aux.begin(), aux.end());
    n.num_outputs = static_cast<uint32_t>(n.output_names.size());
    int vis = OpNumVisibleOutputs(*n.op, n.params);
    if (vis < 0 || static_cast<uint32_t>(vis) > n.num_outputs) {
      Fail("operator '{}' reports {} visible outputs but has {}", n.op->name, vis, n.num_outputs);
    }
    n.num_visible_outputs = static_cast<uint32_t>(vis);
  } catch (const std::exception& e) {
    Fail("{}: {}", n.Describe(), e.what());
  }
}

void ApplyInputVarAttrs(const Node& op_node, size_t index, Node& var) {
  if (op_node.is_variable() || !var.is_variable() || var.attrs.count("__init__")) return;
  if (op_node.op->name == "BatchNorm" && index < op_node.input_names.size()) {
    const std::string& in = op_node.input_names[index];
    if (in == "moving_mean") var.attrs["__init__"] = "[\"zero\", {}]";
    if (in == "moving_var") var.attrs["__init__"] = "[\"one\", {}]";
  }
  // PReLU's slopes start at 0.25 (MXNet's LeakyReLU sets this on its gamma input).
  if (op_node.op->name == "LeakyReLU" && index < op_node.input_names.size() && op_node.input_names[index] == "gamma") {
    var.attrs["__init__"] = "[\"Constant\", {\"value\": 0.25}]";
  }
}

void PostOrderDFS(const std::vector<Entry>& heads, const std::function<void(const NodePtr&)>& fn) {
  std::unordered_set<const Node*> visited;
  std::vector<std::pair<const NodePtr*, size_t>> stack;  // node, next input to visit
  for (const Entry& h : heads) {
    if (!h.node || visited.count(h.node.get())) continue;
    visited.insert(h.node.get());
    stack.emplace_back(&h.node, 0);
    while (!stack.empty()) {
      auto& [np, next] = stack.back();
      const Node& n = **np;
      if (next < n.inputs.size()) {
        const NodePtr& child = n.inputs[next++].node;
        if (child && visited.insert(child.get()).second) stack.emplace_back(&child, 0);
      } else {
        const NodePtr* done = np;
        stack.pop_back();
        fn(*done);
      }
    }
  }
}

IndexedGraph Index(const std::vector<Entry>& heads) {
  IndexedGraph g;
  std::unordered_map<const Node*, uint32_t> ids;
  PostOrderDFS(heads, [&](const NodePtr& n) {
    ids.emplace(n.get(), static_cast<uint32_t>(g.nodes.size()));
    g.nodes.push_back({n, {}});
  });
  std::unordered_set<uint32_t> aux_vars;
  g.row_ptr.assign(1, 0);
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    IndexedGraph::NodeInfo& info = g.nodes[nid];
    const Node& n = *info.node;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Entry& e = n.inputs[i];
      uint32_t src = ids.at(e.node.get());
      info.inputs.push_back({src, e.index, e.version});
      if (i >= n.num_args && e.node->is_variable()) aux_vars.insert(src);
    }
    g.row_ptr.push_back(g.row_ptr.back() + n.num_outputs);
  }
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    if (!g.nodes[nid].node->is_variable()) continue;
    g.var_nodes.push_back(nid);
    (aux_vars.count(nid) ? g.aux_nodes : g.arg_nodes).push_back(nid);
  }
  for (const Entry& h : heads) g.outputs.push_back({ids.at(h.node.get()), h.index, h.version});
  return g;
}

std::string OutputName(const Entry& e) {
  const Node& n = *e.node;
  if (n.is_variable()) return n.name;
  const std::string& out = e.index < n.output_names.size() ? n.output_names[e.index] : "output";
  return n.name.empty() ? out : n.name + "_" + out;
}

}  // namespace weft::graph

// The convolution fusion pass (fuse_conv.h): find chains on the indexed graph, then rebuild the
// graph with one `_sg_conv` node per chain.
#include "executor/fuse_conv.h"

#include <string>
#include <string_view>

#include "weft/env.h"

namespace weft::exec {
namespace {

constexpr uint32_t kNone = ~0u;

// One fusable chain: node ids of its stages (kNone = absent) and the sum's entry.
struct Chain {
  uint32_t conv = kNone, bn = kNone, act = kNone, add = kNone, postsum = kNone;
  graph::IndexedGraph::EntryRef sum;
  uint32_t end() const {
    for (uint32_t n : {postsum, add, act, bn})
      if (n != kNone) return n;
    return conv;
  }
};

class ChainFinder {
 public:
  ChainFinder(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes, const std::vector<int>& types)
      : ig_(ig), shapes_(shapes), types_(types), readers_(ig.num_entries()) {
    for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid)
      for (uint32_t i = 0; i < ig.nodes[nid].inputs.size(); ++i)
        readers_[ig.entry_id(ig.nodes[nid].inputs[i])].push_back({nid, i});
    for (const auto& h : ig.outputs) readers_[ig.entry_id(h)].push_back({kNone, 0});
  }

  // The chain starting at Convolution node `nid` through nodes no earlier chain took (`taken`), or
  // one with conv == kNone.
  Chain From(uint32_t nid, const std::vector<bool>& taken) const {
    Chain c;
    if (!IsConv(nid)) return c;
    uint32_t cur = nid;
    auto next = [&](auto accept) {
      const Reader r = OnlyReader(cur);
      if (r.node == kNone || taken[r.node] || !accept(r)) return kNone;
      return cur = r.node;
    };
    c.bn = next([&](const Reader& r) { return r.input == 0 && IsBatchNorm(r.node); });
    c.act = next([&](const Reader& r) { return r.input == 0 && IsActivation(r.node); });
    c.add = next([&](const Reader& r) {
      if (!IsAdd(r.node)) return false;
      c.sum = ig_.nodes[r.node].inputs[1 - r.input];
      return true;
    });
    if (c.add != kNone) c.postsum = next([&](const Reader& r) { return IsActivation(r.node); });
    c.conv = nid;
    if (c.end() == nid) c.conv = kNone;  // nothing to fuse with
    return c;
  }

 private:
  struct Reader {
    uint32_t node = kNone, input = 0;
  };

  const graph::Node& Op(uint32_t nid) const { return *ig_.nodes[nid].node; }
  bool Float32(uint32_t nid, uint32_t k = 0) const {
    return types_[ig_.entry_id(nid, k)] == static_cast<int>(DType::kFloat32);
  }
  // The one op node reading output 0 of `nid` when that is its only use (not a graph output, and
  // no other output of the node read), else none.
  Reader OnlyReader(uint32_t nid) const {
    for (uint32_t k = 1; k < Op(nid).num_outputs; ++k)
      if (!readers_[ig_.entry_id(nid, k)].empty()) return {};
    const auto& r = readers_[ig_.entry_id(nid, 0)];
    if (r.size() != 1 || r[0].node == kNone) return {};
    return {r[0].node, r[0].input};
  }
  bool IsConv(uint32_t nid) const {
    const graph::Node& n = Op(nid);
    if (n.is_variable() || n.op->name != "Convolution" || !Float32(nid)) return false;
    const std::string layout = n.params.GetString("layout", "None");
    return layout == "None" || layout == "NCW" || layout == "NCHW" || layout == "NCDHW";
  }
  bool IsBatchNorm(uint32_t nid) const {
    const graph::Node& n = Op(nid);
    if (n.op->name != "BatchNorm" || !Float32(nid) || n.params.GetBool("output_mean_var", false)) return false;
    const int64_t axis = n.params.GetInt("axis", 1);
    return axis == 1 || axis + static_cast<int64_t>(shapes_[ig_.entry_id(nid, 0)]->ndim()) == 1;
  }
  bool IsActivation(uint32_t nid) const {
    const graph::Node& n = Op(nid);
    if (!Float32(nid)) return false;
    if (n.op->name == "relu") return true;
    // _sg_conv refuses bounds the wrong way round; clip itself takes them.
    if (n.op->name == "clip") return n.params.GetFloat("a_min") <= n.params.GetFloat("a_max");
    return n.op->name == "Activation" && n.params.GetString("act_type", "") == "relu";
  }
  bool IsAdd(uint32_t nid) const {
    const graph::Node& n = Op(nid);
    if ((n.op->name != "elemwise_add" && n.op->name != "broadcast_add") || !Float32(nid)) return false;
    const auto& in = ig_.nodes[nid].inputs;
    const Shape& out = *shapes_[ig_.entry_id(nid, 0)];
    return in.size() == 2 && *shapes_[ig_.entry_id(in[0])] == out && *shapes_[ig_.entry_id(in[1])] == out &&
           types_[ig_.entry_id(in[0])] == types_[ig_.entry_id(in[1])];
  }

  const graph::IndexedGraph& ig_;
  const std::vector<ShapeSlot>& shapes_;
  const std::vector<int>& types_;
  std::vector<std::vector<Reader>> readers_;  // per entry; node kNone = a graph output
};

// The activation attributes of `_sg_conv` for activation node `n` under `prefix`.
void SetActivation(graph::AttrDict& a, const std::string& prefix, const graph::Node& n) {
  if (n.op->name == "clip") {
    a[prefix + "act_type"] = "clip";
    a[prefix + "act_min"] = n.params.GetString("a_min");
    a[prefix + "act_max"] = n.params.GetString("a_max");
  } else {
    a[prefix + "act_type"] = "relu";
  }
}

class Rebuilder {
 public:
  explicit Rebuilder(const graph::IndexedGraph& ig) : ig_(ig), made_(ig.nodes.size()) {}

  graph::Entry Map(const graph::IndexedGraph::EntryRef& e) const { return {made_[e.node_id], e.index, e.version}; }

  // Output `nid` as the original node, or a copy reading the rebuilt inputs when any changed.
  void Keep(uint32_t nid) {
    const auto& info = ig_.nodes[nid];
    bool same = true;
    std::vector<graph::Entry> inputs;
    for (const auto& in : info.inputs) {
      inputs.push_back(Map(in));
      same = same && inputs.back().node == info.node->inputs[inputs.size() - 1].node;
    }
    if (same) {
      made_[nid] = info.node;
      return;
    }
    auto copy = std::make_shared<graph::Node>(*info.node);
    copy->inputs = std::move(inputs);
    made_[nid] = std::move(copy);
  }

  void Fuse(const Chain& c) {
    const graph::Node& conv = *ig_.nodes[c.conv].node;
    graph::AttrDict a;
    for (const auto& [k, v] : conv.params.values()) a[k] = v;
    const auto& conv_in = ig_.nodes[c.conv].inputs;
    std::vector<graph::Entry> inputs, aux;
    for (const auto& in : conv_in) inputs.push_back(Map(in));
    if (c.bn != kNone) {
      const graph::Node& bn = *ig_.nodes[c.bn].node;
      const auto& bn_in = ig_.nodes[c.bn].inputs;
      a["with_bn"] = "True";
      a["bn_eps"] = bn.params.GetString("eps");
      a["bn_momentum"] = bn.params.GetString("momentum");
      a["bn_fix_gamma"] = bn.params.GetString("fix_gamma");
      a["bn_use_global_stats"] = bn.params.GetString("use_global_stats");
      inputs.push_back(Map(bn_in[1]));
      inputs.push_back(Map(bn_in[2]));
      aux = {Map(bn_in[3]), Map(bn_in[4])};
    }
    if (c.act != kNone) SetActivation(a, "", *ig_.nodes[c.act].node);
    if (c.add != kNone) {
      a["with_sum"] = "True";
      inputs.push_back(Map(c.sum));
    }
    if (c.postsum != kNone) SetActivation(a, "postsum_", *ig_.nodes[c.postsum].node);
    const uint32_t end = c.end();
    graph::NodePtr node = graph::MakeOpNode(graph::LookupOp("_sg_conv"), ig_.nodes[end].node->name, std::move(a));
    inputs.insert(inputs.end(), aux.begin(), aux.end());
    node->inputs = std::move(inputs);
    made_[end] = std::move(node);
  }

 private:
  const graph::IndexedGraph& ig_;
  std::vector<graph::NodePtr> made_;  // per node id: the rebuilt node (null inside a chain)
};

}  // namespace

bool GraphFusionEnabled() { return GetEnvBool("WEFT_GRAPH_FUSION", true); }

std::vector<graph::Entry> FuseConvolutions(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                           const std::vector<int>& types, size_t* fused) {
  *fused = 0;
  const ChainFinder finder(ig, shapes, types);
  std::vector<Chain> chain_at(ig.nodes.size());  // at the chain's last node
  std::vector<bool> inside(ig.nodes.size(), false), taken(ig.nodes.size(), false);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const Chain c = finder.From(nid, taken);
    if (c.conv == kNone) continue;
    chain_at[c.end()] = c;
    // Two chains may reach one add (a ResNet block with a downsampling convolution): the first
    // found takes it, the other ends before it.
    for (uint32_t n : {c.conv, c.bn, c.act, c.add, c.postsum}) {
      if (n == kNone) continue;
      taken[n] = true;
      inside[n] = n != c.end();
    }
    ++*fused;
  }
  std::vector<graph::Entry> heads;
  if (*fused == 0) {
    for (const auto& h : ig.outputs) heads.push_back({ig.nodes[h.node_id].node, h.index, h.version});
    return heads;
  }
  Rebuilder rb(ig);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (inside[nid]) continue;
    if (chain_at[nid].conv != kNone)
      rb.Fuse(chain_at[nid]);
    else
      rb.Keep(nid);
  }
  for (const auto& h : ig.outputs) heads.push_back(rb.Map(h));
  return heads;
}

}  // namespace weft::exec

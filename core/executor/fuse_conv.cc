// The convolution fusion pass (fuse_conv.h): find chains on the indexed graph, then rebuild the
// graph with one `_sg_conv` node per chain.
#include "executor/fuse_conv.h"

#include <string>
#include <string_view>

#include "weft/env.h"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::exec {
namespace {

constexpr uint32_t kNone = ~0u;

// Channels per block of a data_format / out_format value (SgConvParam's ActFormat names); 1 for
// plain or any other word.
int64_t FormatBlock(std::string_view name) {
  for (size_t f = 0; f < std::size(sdk::kActFormats); ++f)
    if (sdk::kActFormats[f] == name) return sdk::ActFormatBlock(static_cast<sdk::ActFormat>(f));
  return 1;
}

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

  struct Reader {
    uint32_t node = kNone, input = 0;
  };
  // Who reads each output of `nid` (node kNone: a graph output).
  const std::vector<Reader>& Readers(uint32_t nid, uint32_t index = 0) const {
    return readers_[ig_.entry_id(nid, index)];
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

  // `data_format` / `out_format`: the layouts of the chain's input data and of its output and sum
  // (empty: plain).
  void Fuse(const Chain& c, const std::string& data_format, const std::string& out_format) {
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
    if (!data_format.empty()) a["data_format"] = data_format;
    if (!out_format.empty()) a["out_format"] = out_format;
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

// Which chains' outputs stay in the blocked layout (per chain end node): those read only by other
// chains (as their convolution's data or as their sum), never a graph output, 4-D with whole
// blocks of channels. The sum post-op adds into dst, so a chain's sum and its output share a
// layout: where one of the two cannot be blocked, neither is, until nothing changes.
std::vector<bool> BlockedOutputs(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                 const ChainFinder& finder, const std::vector<Chain>& chain_at, int64_t block) {
  std::vector<bool> blocked(ig.nodes.size(), false);
  if (block <= 1) return blocked;
  std::vector<uint32_t> owner(ig.nodes.size(), kNone);  // the end node of the chain holding each node
  for (uint32_t end = 0; end < ig.nodes.size(); ++end) {
    const Chain& c = chain_at[end];
    if (c.conv == kNone) continue;
    for (uint32_t n : {c.conv, c.bn, c.act, c.add, c.postsum})
      if (n != kNone) owner[n] = end;
  }
  // The chain producing entry `e` (its end's output 0), or kNone.
  auto producer = [&](const graph::IndexedGraph::EntryRef& e) {
    const uint32_t end = owner[e.node_id];
    return end == e.node_id && e.index == 0 ? end : kNone;
  };
  for (uint32_t end = 0; end < ig.nodes.size(); ++end) {
    if (chain_at[end].conv == kNone) continue;
    const Shape& out = *shapes[ig.entry_id(end, 0)];
    bool ok = out.ndim() == 4 && out[1] % block == 0;
    for (uint32_t k = 1; k < ig.nodes[end].node->num_outputs; ++k) ok = ok && finder.Readers(end, k).empty();
    for (const auto& r : finder.Readers(end)) {
      if (!ok || r.node == kNone || owner[r.node] == kNone) {
        ok = false;
        break;
      }
      const Chain& reader = chain_at[owner[r.node]];
      ok = (r.node == reader.conv && r.input == 0) || (r.node == reader.add && producer(reader.sum) == end);
    }
    blocked[end] = ok;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t end = 0; end < ig.nodes.size(); ++end) {
      const Chain& c = chain_at[end];
      if (c.conv == kNone || c.add == kNone) continue;
      const uint32_t sum = producer(c.sum);
      if (blocked[end] == (sum != kNone && blocked[sum])) continue;
      blocked[end] = false;
      if (sum != kNone) blocked[sum] = false;
      changed = true;
    }
  }
  return blocked;
}

}  // namespace

bool GraphFusionEnabled() { return GetEnvBool("WEFT_GRAPH_FUSION", true); }

std::vector<graph::Entry> FuseConvolutions(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                           const std::vector<int>& types, const std::string& blocked_format,
                                           size_t* fused) {
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
  const int64_t block = FormatBlock(blocked_format);
  const std::vector<bool> blocked = BlockedOutputs(ig, shapes, finder, chain_at, block);
  // The layout of output `index` of node `nid` (blocked only for a chain's output).
  auto format = [&](uint32_t nid, uint32_t index) {
    return index == 0 && blocked[nid] ? blocked_format : std::string();
  };
  Rebuilder rb(ig);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (inside[nid]) continue;
    const Chain& c = chain_at[nid];
    if (c.conv != kNone)
      rb.Fuse(c, format(ig.nodes[c.conv].inputs[0].node_id, ig.nodes[c.conv].inputs[0].index), format(nid, 0));
    else
      rb.Keep(nid);
  }
  for (const auto& h : ig.outputs) heads.push_back(rb.Map(h));
  return heads;
}

void CheckBlockedLayouts(const graph::IndexedGraph& ig) {
  auto is_sg = [&](uint32_t nid) {
    const graph::Node& n = *ig.nodes[nid].node;
    return !n.is_variable() && n.op->name == "_sg_conv";
  };
  // The layout entry `e` is written in.
  auto written = [&](const graph::IndexedGraph::EntryRef& e) {
    return e.index == 0 && is_sg(e.node_id) ? ig.nodes[e.node_id].node->params.GetString("out_format", "plain")
                                            : std::string("plain");
  };
  auto mismatch = [&](const graph::IndexedGraph::EntryRef& e, const std::string& want, const std::string& reader) {
    throw Error("Executor::Bind: " + ig.nodes[e.node_id].node->Describe() + " writes its output in " + written(e) +
                " but " + reader + " reads it as " + want +
                ": bind the symbol before fusion (the executor chooses the layouts itself), or make "
                "out_format and data_format agree");
  };
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const graph::Node& n = *ig.nodes[nid].node;
    if (n.is_variable()) continue;
    const bool sg = is_sg(nid);
    const size_t sum = sg && n.params.GetBool("with_sum", false) ? n.num_args - 1 : ~size_t{0};
    for (size_t i = 0; i < ig.nodes[nid].inputs.size(); ++i) {
      const auto& in = ig.nodes[nid].inputs[i];
      const std::string want = !sg        ? "plain"
                               : i == 0   ? n.params.GetString("data_format", "plain")
                               : i == sum ? n.params.GetString("out_format", "plain")
                                          : "plain";
      if (written(in) != want) mismatch(in, want, n.Describe() + " (input " + n.input_names[i] + ")");
    }
  }
  for (const auto& h : ig.outputs)
    if (written(h) != "plain") mismatch(h, "plain", "the graph's output");
}

int64_t ActivationBlock(const std::string& op, const AttrMap& params, int input) {
  if (op != "_sg_conv") return 0;
  const bool with_sum = params.GetBool("with_sum", false);
  const int sum = (params.GetBool("no_bias", false) ? 2 : 3) + (params.GetBool("with_bn", false) ? 2 : 0);
  const std::string f = input == 0                                ? params.GetString("data_format", "plain")
                        : input < 0 || (with_sum && input == sum) ? params.GetString("out_format", "plain")
                                                                  : "plain";
  const int64_t block = FormatBlock(f);
  return block > 1 ? block : 0;
}

NDArray PlainCopy(const NDArray& a, int64_t block) {
  const Shape s = a.GetShape();
  WEFT_CHECK(s.ndim() == 4 && s[1] % block == 0 && a.GetDType() == DType::kFloat32,
             "PlainCopy: {} is not a blocked activation of {} channels per block", s.ToString(), block);
  std::vector<float> in, out(a.Size());
  a.SyncCopyToCPU(&in);
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  // Blocked (n, c / block, h, w, c % block) -> plain (n, c, h, w).
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[static_cast<size_t>((i * c + ch) * hw + p)] =
            in[static_cast<size_t>(((i * (c / block) + ch / block) * hw + p) * block + ch % block)];
  return NDArray(out, s, a.GetContext());
}

}  // namespace weft::exec

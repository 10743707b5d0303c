// The convolution fusion pass (fuse_conv.h): find chains on the indexed graph, then rebuild the
// graph with one `_sg_conv` node per chain.
#include "executor/fuse_conv.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "executor/graph_rebuild.h"
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

// The `_sg_conv` act_type of activation node `n`: relu, clip, or Activation's act_type where
// SgConvParam has that word (relu, tanh, sigmoid, softrelu; Activation has no clip); kNone for any
// other node.
sdk::FusedAct ActOf(const graph::Node& n) {
  if (n.is_variable()) return sdk::FusedAct::kNone;
  const std::string word = n.op->name == "relu" || n.op->name == "clip" ? n.op->name
                           : n.op->name == "Activation"                 ? n.params.GetString("act_type", "")
                                                                        : "";
  for (size_t a = 1; a < std::size(sdk::kFusedActs); ++a)
    if (sdk::kFusedActs[a] == word) return static_cast<sdk::FusedAct>(a);
  return sdk::FusedAct::kNone;
}
std::string ActWord(const graph::Node& n) { return std::string(sdk::kFusedActs[static_cast<size_t>(ActOf(n))]); }

// One fusable chain: node ids of its stages (kNone = absent) and the sum's entry; with a
// depthwise convolution chain merged into it (dw: with_dw), that chain's stages.
struct Chain {
  uint32_t conv = kNone, bn = kNone, act = kNone, add = kNone, postsum = kNone;
  uint32_t dw = kNone, dw_bn = kNone, dw_act = kNone;
  graph::IndexedGraph::EntryRef sum;
  std::array<uint32_t, 8> nodes() const { return {conv, bn, act, add, postsum, dw, dw_bn, dw_act}; }
  uint32_t end() const {
    for (uint32_t n : {dw_act, dw_bn, dw, postsum, add, act, bn})
      if (n != kNone) return n;
    return conv;
  }
};

// A BatchNorm no chain took (DenseNet's pre-activation ones, which read a concat) with its relu
// when that is its only reader: one `_sg_batch_norm` (bn kNone: none).
struct BnChain {
  uint32_t bn = kNone, act = kNone;
  uint32_t end() const { return act != kNone ? act : bn; }
};

class ChainFinder {
 public:
  ChainFinder(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes, const std::vector<int>& types,
              const std::vector<std::string>& acts)
      : ig_(ig), shapes_(shapes), types_(types), acts_(acts), readers_(ig.num_entries()) {
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
    // tanh, sigmoid and softrelu end a chain: kernels run them after the convolution (a post-op of
    // them inside it was slower than a pass of its own, nn_conv_fused.cc).
    if (c.act == kNone || Inside(c.act))
      c.add = next([&](const Reader& r) {
        if (!IsAdd(r.node)) return false;
        c.sum = ig_.nodes[r.node].inputs[1 - r.input];
        return true;
      });
    if (c.add != kNone) c.postsum = next([&](const Reader& r) { return IsActivation(r.node); });
    c.conv = nid;
    // A 2-D convolution alone is a chain too (as MXNet's pass makes `_sg_mkldnn_conv` of it): the
    // fused kernel runs it for inference, its weights reordered once, on blocked activations and
    // with Winograd where they fit (DenseNet's 3x3 convolutions, which no BatchNorm follows).
    if (c.end() == nid && shapes_[ig_.entry_id(ig_.nodes[nid].inputs[0])]->ndim() != 4) c.conv = kNone;
    return c;
  }

  // Whether chain `b` (found after `a`) can run as `a`'s depthwise stage (SgConvParam with_dw):
  // `a` is a 1x1 convolution (stride 1, no pad, one group) without a sum whose result only `b`'s
  // convolution reads, as its data; `b` is a 3x3 depthwise one (a group per channel, pad 1,
  // stride 1 or 2) without a sum. oneDNN runs such pairs as one primitive (a depthwise post-op),
  // the expanded activation kept in the cache: MobileNet v2's expansion and depthwise layers.
  bool Depthwise(const Chain& a, const Chain& b) const {
    if (a.add != kNone || b.add != kNone || a.dw != kNone) return false;
    if ((a.act != kNone && !Inside(a.act)) || (b.act != kNone && !Inside(b.act))) return false;
    const Reader r = OnlyReader(a.end());
    if (r.node != b.conv || r.input != 0) return false;
    const sdk::ConvolutionParam pa = ConvParams(a.conv), pb = ConvParams(b.conv);
    const Tuple one{1, 1}, three{3, 3};
    return pa.kernel == one && pa.stride == one && pa.dilate == one && pa.pad == Tuple{0, 0} && pa.num_group == 1 &&
           pb.kernel == three && pb.pad == one && pb.dilate == one && pb.stride[0] == pb.stride[1] &&
           pb.stride[0] <= 2 && pb.num_filter == pa.num_filter && pb.num_group == pa.num_filter &&
           shapes_[ig_.entry_id(ig_.nodes[a.conv].inputs[0])]->ndim() == 4;
  }

  // The BatchNorm chain at node `nid` when it is a BatchNorm of 4-D data no chain took.
  BnChain BnFrom(uint32_t nid, const std::vector<bool>& taken) const {
    BnChain c;
    if (taken[nid] || Op(nid).is_variable() || !IsBatchNorm(nid) ||
        shapes_[ig_.entry_id(ig_.nodes[nid].inputs[0])]->ndim() != 4)
      return c;
    for (uint32_t k = 1; k < Op(nid).num_outputs; ++k)
      if (!readers_[ig_.entry_id(nid, k)].empty()) return c;  // its hidden statistics read
    c.bn = nid;
    const Reader r = OnlyReader(nid);
    if (r.node != kNone && !taken[r.node] && IsActivation(r.node) && ActOf(Op(r.node)) == sdk::FusedAct::kRelu)
      c.act = r.node;
    return c;
  }

 private:
  using Tuple = std::vector<int64_t>;
  const graph::Node& Op(uint32_t nid) const { return *ig_.nodes[nid].node; }
  sdk::ConvolutionParam ConvParams(uint32_t nid) const {
    return sdk::ParseParams<sdk::ConvolutionParam>(Op(nid).params);
  }
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
  // An activation the device's `_sg_conv` takes (acts_).
  bool IsActivation(uint32_t nid) const {
    const graph::Node& n = Op(nid);
    const sdk::FusedAct act = ActOf(n);
    const std::string word = ActWord(n);
    if (act == sdk::FusedAct::kNone || !Float32(nid) || std::find(acts_.begin(), acts_.end(), word) == acts_.end())
      return false;
    // _sg_conv refuses bounds the wrong way round; clip itself takes them.
    return act != sdk::FusedAct::kClip || n.params.GetFloat("a_min") <= n.params.GetFloat("a_max");
  }
  // Whether activation node `nid` runs inside a fused convolution (sdk::FusedActInside).
  bool Inside(uint32_t nid) const { return sdk::FusedActInside(ActOf(Op(nid))); }
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
  const std::vector<std::string>& acts_;
  std::vector<std::vector<Reader>> readers_;  // per entry; node kNone = a graph output
};

// The activation attributes of `_sg_conv` for activation node `n` under `prefix`.
void SetActivation(graph::AttrDict& a, const std::string& prefix, const graph::Node& n) {
  a[prefix + "act_type"] = ActWord(n);
  if (n.op->name == "clip") {
    a[prefix + "act_min"] = n.params.GetString("a_min");
    a[prefix + "act_max"] = n.params.GetString("a_max");
  }
}

class Rebuilder : public GraphRebuilder {
 public:
  using GraphRebuilder::GraphRebuilder;

  // A BatchNorm chain as `_sg_batch_norm` with its data and output in `format` (empty: plain).
  void FuseBn(const BnChain& c, const std::string& format) {
    const graph::Node& bn = *ig_.nodes[c.bn].node;
    graph::AttrDict a;
    for (const auto& [k, v] : bn.params.values()) a[k] = v;
    if (c.act != kNone) a["act_type"] = "relu";
    if (!format.empty()) a["data_format"] = format;
    const uint32_t end = c.end();
    graph::NodePtr node = graph::MakeOpNode(graph::LookupOp("_sg_batch_norm"), ig_.nodes[end].node->name, std::move(a));
    for (const auto& in : ig_.nodes[c.bn].inputs) node->inputs.push_back(Map(in));
    made_[end] = std::move(node);
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
    AddBatchNorm(c.bn, "", a, inputs, aux);
    if (c.act != kNone) SetActivation(a, "", *ig_.nodes[c.act].node);
    if (c.dw != kNone) {  // the depthwise stage's weight, bias, BatchNorm and activation
      const graph::Node& dw = *ig_.nodes[c.dw].node;
      const auto& dw_in = ig_.nodes[c.dw].inputs;
      const bool dw_bias = !dw.params.GetBool("no_bias", false);
      a["with_dw"] = "True";
      a["dw_stride"] = std::to_string(sdk::ParseParams<sdk::ConvolutionParam>(dw.params).stride[0]);
      a["dw_no_bias"] = dw_bias ? "False" : "True";
      inputs.push_back(Map(dw_in[1]));
      if (dw_bias) inputs.push_back(Map(dw_in[2]));
      AddBatchNorm(c.dw_bn, "dw_", a, inputs, aux);
      if (c.dw_act != kNone) SetActivation(a, "dw_", *ig_.nodes[c.dw_act].node);
    }
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
  // BatchNorm node `bn` (none: kNone) as attributes under `prefix`, its gamma and beta as inputs
  // and its moving statistics as aux states.
  void AddBatchNorm(uint32_t bn, const std::string& prefix, graph::AttrDict& a, std::vector<graph::Entry>& inputs,
                    std::vector<graph::Entry>& aux) const {
    if (bn == kNone) return;
    const graph::Node& n = *ig_.nodes[bn].node;
    const auto& in = ig_.nodes[bn].inputs;
    a[prefix + "with_bn"] = "True";
    for (const char* key : {"eps", "momentum", "fix_gamma", "use_global_stats"})
      a[prefix + "bn_" + key] = n.params.GetString(key);
    inputs.push_back(Map(in[1]));
    inputs.push_back(Map(in[2]));
    aux.push_back(Map(in[3]));
    aux.push_back(Map(in[4]));
  }
};

// The nodes that may hold an activation in the blocked layout besides fused chains: a float32
// 2-D Pooling (max or avg) of whole blocks of channels, which reads and writes it (kGlobalPool:
// one with a 1x1 output, which reads it and writes plain, the same bytes), and a float32 Concat
// of 4-D arrays along the channels, each with whole blocks (the plain copy joins blocked ones),
// a BatchNorm chain of whole blocks (kBn: reads and writes it), and a Dropout of a 4-D array with
// whole blocks (SqueezeNet's before its classifier: the identity in inference, and in training its
// kernel draws the mask in plain order).
enum class Kind { kOther, kChain, kPool, kGlobalPool, kConcat, kBn, kDropout };

// Every node's chains: per node id, the convolution chain and the BatchNorm chain ending there.
struct Chains {
  std::vector<Chain> conv;
  std::vector<BnChain> bn;
};

Kind KindOf(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes, const std::vector<int>& types,
            const Chains& chains, uint32_t nid, int64_t block) {
  if (chains.conv[nid].conv != kNone) return Kind::kChain;
  auto whole_blocks = [&](const graph::IndexedGraph::EntryRef& e) {
    const Shape& s = *shapes[ig.entry_id(e)];
    return s.ndim() == 4 && s[1] % block == 0;
  };
  if (chains.bn[nid].bn != kNone) return whole_blocks(ig.nodes[chains.bn[nid].bn].inputs[0]) ? Kind::kBn : Kind::kOther;
  const graph::Node& n = *ig.nodes[nid].node;
  if (n.is_variable() || types[ig.entry_id(nid, 0)] != static_cast<int>(DType::kFloat32)) return Kind::kOther;
  const auto& in = ig.nodes[nid].inputs;
  if (n.op->name == "Pooling") {
    const std::string type = n.params.GetString("pool_type", "max"), layout = n.params.GetString("layout", "None");
    if ((type != "max" && type != "avg") || (layout != "None" && layout != "NCHW") || !whole_blocks(in[0]))
      return Kind::kOther;
    const Shape& out = *shapes[ig.entry_id(nid, 0)];
    return out[2] * out[3] == 1 ? Kind::kGlobalPool : Kind::kPool;
  }
  if (n.op->name == "Concat") {
    const int64_t dim = n.params.GetInt("dim", 1);
    bool ok = dim == 1 || dim == -3;
    for (const auto& e : in) ok = ok && whole_blocks(e);
    return ok ? Kind::kConcat : Kind::kOther;
  }
  if (n.op->name == "Dropout") return whole_blocks(in[0]) ? Kind::kDropout : Kind::kOther;
  return Kind::kOther;
}

// Which nodes keep activations blocked (per node id; for a chain, at its end): a chain writes its
// output blocked, a Pooling, Concat or BatchNorm chain reads and writes blocked (a kGlobalPool only
// reads). A value is blocked when its writer is such a node and every reader takes it blocked: a
// chain's convolution as its data, a chain's add as its sum (then that chain's output is blocked
// too: the sum post-op adds into dst), a BatchNorm chain as its data, a blocked Pooling or Concat;
// never a graph output, and not 4-D: never; with a partial last block only between convolution
// chains (padded, see below; the other readers need whole blocks). Start from every candidate and drop
// what breaks a rule until nothing changes. Per node: whether it reads its inputs blocked (a
// Pooling, Concat or BatchNorm chain; a convolution chain's data follows its writer) and whether
// it writes its output 0 blocked.
struct NodeLayout {
  bool reads = false, writes = false;
};

std::vector<NodeLayout> BlockedNodes(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                     const std::vector<int>& types, const ChainFinder& finder, const Chains& chains,
                                     int64_t block) {
  if (block <= 1) return std::vector<NodeLayout>(ig.nodes.size());
  std::vector<bool> blocked(ig.nodes.size(), false);
  std::vector<uint32_t> owner(ig.nodes.size(), kNone);  // the end node of the chain holding each node
  std::vector<Kind> kind(ig.nodes.size(), Kind::kOther);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const Chain& c = chains.conv[nid];
    if (c.conv != kNone)
      for (uint32_t n : c.nodes())
        if (n != kNone) owner[n] = nid;
    for (uint32_t n : {chains.bn[nid].bn, chains.bn[nid].act})
      if (n != kNone) owner[n] = nid;
  }
  // Channels that fill no whole block (MobileNet v2's 24) are padded to whole blocks with zeros
  // (the entry takes the padded size, exec_graph.h) between convolution chains only, whose
  // convolutions have one group or one per channel (oneDNN's blocked kernels pad such tensors in
  // their own copies anyway: the padded layout saves the reorders into and out of them), and only
  // with more channels than one block (padding less than half the tensor).
  auto whole = [&](uint32_t nid) { return (*shapes[ig.entry_id(nid, 0)])[1] % block == 0; };
  auto padding_ok = [&](uint32_t conv) {
    const auto p = sdk::ParseParams<sdk::ConvolutionParam>(ig.nodes[conv].node->params);
    return p.num_group == 1 || p.num_group == p.num_filter;
  };
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (owner[nid] != kNone && owner[nid] != nid) continue;  // inside a chain
    kind[nid] = KindOf(ig, shapes, types, chains, nid, block);
    if (kind[nid] == Kind::kChain) {
      const Shape& out = *shapes[ig.entry_id(nid, 0)];
      const Chain& c = chains.conv[nid];
      blocked[nid] = out.ndim() == 4 && (whole(nid) || (out[1] > block && padding_ok(c.dw != kNone ? c.dw : c.conv)));
    } else {
      blocked[nid] = kind[nid] != Kind::kOther;
    }
  }
  auto writes = [&](uint32_t nid) { return blocked[nid] && kind[nid] != Kind::kGlobalPool; };
  // Whether entry `e` is written blocked.
  auto blocked_entry = [&](const graph::IndexedGraph::EntryRef& e) { return e.index == 0 && writes(e.node_id); };
  // Whether reader r takes output 0 of `nid` blocked.
  auto takes = [&](const ChainFinder::Reader& r, uint32_t nid) {
    if (r.node == kNone) return false;
    if (owner[r.node] != kNone && chains.bn[owner[r.node]].bn != kNone)
      return r.node == chains.bn[owner[r.node]].bn && r.input == 0 && blocked[owner[r.node]];
    if (owner[r.node] != kNone) {
      const Chain& c = chains.conv[owner[r.node]];
      if (r.node == c.conv) return r.input == 0 && (whole(nid) || padding_ok(c.conv));
      return r.node == c.add && c.sum.node_id == nid && c.sum.index == 0 && blocked[owner[r.node]];
    }
    return kind[r.node] != Kind::kOther && kind[r.node] != Kind::kChain && blocked[r.node];
  };
  auto keeps = [&](uint32_t nid) {
    const Chain& c = chains.conv[nid];
    if (kind[nid] == Kind::kChain && c.add != kNone && !blocked_entry(c.sum)) return false;
    if (kind[nid] == Kind::kBn && !blocked_entry(ig.nodes[chains.bn[nid].bn].inputs[0])) return false;
    if (kind[nid] != Kind::kChain && kind[nid] != Kind::kBn)
      for (const auto& in : ig.nodes[nid].inputs)
        if (!blocked_entry(in)) return false;
    for (uint32_t k = 1; k < ig.nodes[nid].node->num_outputs; ++k)
      if (!finder.Readers(nid, k).empty()) return false;
    if (!writes(nid)) return true;
    for (const auto& r : finder.Readers(nid))
      if (!takes(r, nid)) return false;
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid)
      if (blocked[nid] && !keeps(nid)) blocked[nid] = false, changed = true;
  }
  std::vector<NodeLayout> layout(ig.nodes.size());
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid)
    layout[nid] = {blocked[nid] && kind[nid] != Kind::kChain, writes(nid)};
  return layout;
}

// Merges each depthwise chain into the 1x1 chain before it where ChainFinder::Depthwise allows
// (one `_sg_conv` with with_dw, ending where the depthwise chain ended).
void MergeDepthwise(const ChainFinder& finder, std::vector<Chain>& chain_at, std::vector<bool>& inside, size_t* fused) {
  std::vector<uint32_t> end_of(chain_at.size(), kNone);  // per convolution node: its chain's end
  for (uint32_t e = 0; e < chain_at.size(); ++e)
    if (chain_at[e].conv != kNone) end_of[chain_at[e].conv] = e;
  for (uint32_t e = 0; e < chain_at.size(); ++e) {
    Chain& a = chain_at[e];
    if (a.conv == kNone) continue;
    const auto& readers = finder.Readers(e);
    if (readers.size() != 1 || readers[0].node == kNone || end_of[readers[0].node] == kNone) continue;
    const uint32_t b_end = end_of[readers[0].node];
    const Chain& b = chain_at[b_end];
    if (!finder.Depthwise(a, b)) continue;
    Chain merged = a;
    merged.dw = b.conv;
    merged.dw_bn = b.bn;
    merged.dw_act = b.act;
    chain_at[b_end] = merged;
    inside[e] = true;
    a = Chain{};
    --*fused;
  }
}

}  // namespace

bool GraphFusionEnabled() { return GetEnvBool("WEFT_GRAPH_FUSION", true); }

std::vector<graph::Entry> FuseConvolutions(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                           const std::vector<int>& types, const FusionTarget& target, size_t* fused) {
  *fused = 0;
  const std::string& blocked_format = target.blocked_format;
  const ChainFinder finder(ig, shapes, types, target.activations);
  Chains chains{std::vector<Chain>(ig.nodes.size()), std::vector<BnChain>(ig.nodes.size())};  // at their last node
  std::vector<Chain>& chain_at = chains.conv;
  std::vector<bool> inside(ig.nodes.size(), false), taken(ig.nodes.size(), false);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const Chain c = finder.From(nid, taken);
    if (c.conv == kNone) continue;
    chain_at[c.end()] = c;
    // Two chains may reach one add (a ResNet block with a downsampling convolution): the first
    // found takes it, the other ends before it.
    for (uint32_t n : c.nodes()) {
      if (n == kNone) continue;
      taken[n] = true;
      inside[n] = n != c.end();
    }
    ++*fused;
  }
  MergeDepthwise(finder, chain_at, inside, fused);
  // Then the BatchNorms left: a convolution's BatchNorm belongs to its chain.
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const BnChain c = finder.BnFrom(nid, taken);
    if (c.bn == kNone) continue;
    chains.bn[c.end()] = c;
    for (uint32_t n : {c.bn, c.act})
      if (n != kNone) taken[n] = true, inside[n] = n != c.end();
    ++*fused;
  }
  if (*fused == 0) return GraphRebuilder::OriginalHeads(ig);
  const int64_t block = FormatBlock(blocked_format);
  const std::vector<NodeLayout> layout = BlockedNodes(ig, shapes, types, finder, chains, block);
  // The layout of output `index` of node `nid`.
  auto format = [&](uint32_t nid, uint32_t index) {
    return index == 0 && layout[nid].writes ? blocked_format : std::string();
  };
  Rebuilder rb(ig);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (inside[nid]) continue;
    const Chain& c = chain_at[nid];
    if (c.conv != kNone) {
      rb.Fuse(c, format(ig.nodes[c.conv].inputs[0].node_id, ig.nodes[c.conv].inputs[0].index), format(nid, 0));
    } else if (chains.bn[nid].bn != kNone) {
      rb.FuseBn(chains.bn[nid], format(nid, 0));
    } else if (layout[nid].reads) {
      graph::AttrDict a{{"data_format", blocked_format}};
      if (ig.nodes[nid].node->op->name == "Pooling" && layout[nid].writes) a["out_format"] = blocked_format;
      rb.Keep(nid, a);
    } else {
      rb.Keep(nid);
    }
  }
  return rb.Heads();
}

namespace {

// The layout node `op` (attributes `params`) reads input `input` in, or writes its output 0 in
// when `input` is -1: "plain" but for the blocked activations' readers and writers.
std::string ActFormatOf(const std::string& op, const AttrMap& params, int input) {
  if (op == "Concat" || op == "Dropout") return params.GetString("data_format", "plain");
  if (op == "_sg_batch_norm") return input <= 0 ? params.GetString("data_format", "plain") : "plain";
  if (op == "Pooling") return params.GetString(input < 0 ? "out_format" : "data_format", "plain");
  if (op != "_sg_conv") return "plain";
  const bool with_sum = params.GetBool("with_sum", false);
  const int sum = (params.GetBool("no_bias", false) ? 2 : 3) + (params.GetBool("with_bn", false) ? 2 : 0);
  return input == 0                                ? params.GetString("data_format", "plain")
         : input < 0 || (with_sum && input == sum) ? params.GetString("out_format", "plain")
                                                   : "plain";
}

}  // namespace

void CheckBlockedLayouts(const graph::IndexedGraph& ig) {
  // The layout entry `e` is written in.
  auto written = [&](const graph::IndexedGraph::EntryRef& e) {
    const graph::Node& n = *ig.nodes[e.node_id].node;
    return e.index == 0 && !n.is_variable() ? ActFormatOf(n.op->name, n.params, -1) : std::string("plain");
  };
  auto mismatch = [&](const graph::IndexedGraph::EntryRef& e, const std::string& want, const std::string& reader) {
    throw Error("Executor::Bind: " + ig.nodes[e.node_id].node->Describe() + " writes its output in " + written(e) +
                " but " + reader + " reads it as " + want +
                ": bind the symbol before fusion (the executor chooses the layouts itself), or make "
                "the data_format and out_format attributes agree");
  };
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const graph::Node& n = *ig.nodes[nid].node;
    if (n.is_variable()) continue;
    for (size_t i = 0; i < ig.nodes[nid].inputs.size(); ++i) {
      const auto& in = ig.nodes[nid].inputs[i];
      const std::string want = ActFormatOf(n.op->name, n.params, static_cast<int>(i));
      if (written(in) != want) mismatch(in, want, n.Describe() + " (input " + n.input_names[i] + ")");
    }
  }
  for (const auto& h : ig.outputs)
    if (written(h) != "plain") mismatch(h, "plain", "the graph's output");
}

int64_t ActivationBlock(const std::string& op, const AttrMap& params, int input) {
  const int64_t block = FormatBlock(ActFormatOf(op, params, input));
  return block > 1 ? block : 0;
}

uint64_t BlockedBytes(const Shape& shape, DType dtype, int64_t block) {
  WEFT_CHECK(shape.ndim() == 4 && block > 0, "BlockedBytes: {} is no 4-D activation", shape.ToString());
  const int64_t padded = (shape[1] + block - 1) / block * block;
  return static_cast<uint64_t>(shape[0] * padded * shape[2] * shape[3]) * DTypeSize(dtype);
}

NDArray PlainCopy(const NDArray& a, int64_t block) {
  const Shape s = a.GetShape();
  WEFT_CHECK(s.ndim() == 4 && a.GetDType() == DType::kFloat32,
             "PlainCopy: {} is not a blocked activation of {} channels per block", s.ToString(), block);
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3], blocks = (c + block - 1) / block;
  // A partial last block is padded (the entry's storage holds it): read the padded tensor.
  std::vector<float> in, out(a.Size());
  a.AsArray(Shape(n, blocks * block, s[2], s[3]), DType::kFloat32).SyncCopyToCPU(&in);
  // Blocked (n, c / block, h, w, c % block) -> plain (n, c, h, w).
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[static_cast<size_t>((i * c + ch) * hw + p)] =
            in[static_cast<size_t>(((i * blocks + ch / block) * hw + p) * block + ch % block)];
  return NDArray(out, s, a.GetContext());
}

}  // namespace weft::exec

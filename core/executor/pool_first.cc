// The pooling-before-convolution rewrite (pool_first.h).
#include "executor/pool_first.h"

#include <string>

#include "executor/graph_rebuild.h"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::exec {
namespace {

using Tuple = std::vector<int64_t>;

bool ChannelsFirst(const graph::Node& n) {
  const std::string layout = n.params.GetString("layout", "None");
  return layout == "None" || layout == "NCHW";
}

// Whether node `nid` is a 1x1, stride 1, unpadded, undilated float32 Convolution of NCHW data.
bool IsPointwiseConv(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes, const std::vector<int>& types,
                     uint32_t nid) {
  const graph::Node& n = *ig.nodes[nid].node;
  if (n.is_variable() || n.op->name != "Convolution" || !ChannelsFirst(n) ||
      types[ig.entry_id(nid, 0)] != static_cast<int>(DType::kFloat32) ||
      shapes[ig.entry_id(ig.nodes[nid].inputs[0])]->ndim() != 4)
    return false;
  const auto p = sdk::ParseParams<sdk::ConvolutionParam>(n.params);
  return p.kernel == Tuple{1, 1} && p.stride == Tuple{1, 1} && p.pad == Tuple{0, 0} && p.dilate == Tuple{1, 1};
}

// Whether Pooling node `nid` averages each output over a window inside the image with equal
// weights summing to 1, over 2-D NCHW data, with at most half as many output positions as input.
bool IsMeanPooling(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes, uint32_t nid) {
  const graph::Node& n = *ig.nodes[nid].node;
  if (n.is_variable() || n.op->name != "Pooling" || !ChannelsFirst(n)) return false;
  const auto p = sdk::ParseParams<sdk::PoolingParam>(n.params);
  // A pooling already on blocked activations belongs to a rewritten graph (a rebound optimized
  // symbol), where the convolutions are fused ones.
  if (p.pool_type != sdk::PoolType::kAvg || p.data_format != sdk::ActFormat::kPlain) return false;
  const Shape& in = *shapes[ig.entry_id(ig.nodes[nid].inputs[0])];
  const Shape& out = *shapes[ig.entry_id(nid, 0)];
  if (in.ndim() != 4 || out.ndim() != 4 || 2 * out[2] * out[3] > in[2] * in[3]) return false;
  if (p.global_pool) return true;
  if (p.kernel.size() != 2 || p.pad != Tuple{0, 0}) return false;
  if (p.pooling_convention == sdk::PoolingConvention::kValid) return true;
  // full: the ceiling adds a window past the edge unless the windows fit exactly.
  return p.pooling_convention == sdk::PoolingConvention::kFull && (in[2] - p.kernel[0]) % p.stride[0] == 0 &&
         (in[3] - p.kernel[1]) % p.stride[1] == 0;
}

// Per entry id, how many node inputs and graph outputs use it.
std::vector<int> UseCounts(const graph::IndexedGraph& ig) {
  std::vector<int> uses(ig.num_entries(), 0);
  for (const auto& info : ig.nodes)
    for (const auto& in : info.inputs) ++uses[ig.entry_id(in)];
  for (const auto& h : ig.outputs) ++uses[ig.entry_id(h)];
  return uses;
}

}  // namespace

std::vector<graph::Entry> PoolBeforeConvolution(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                                const std::vector<int>& types, size_t* swapped) {
  *swapped = 0;
  const std::vector<int> uses = UseCounts(ig);
  // Per node id: the convolution a pooling swaps with (kNone: none); convolutions so taken.
  constexpr uint32_t kNone = ~0u;
  std::vector<uint32_t> conv_of(ig.nodes.size(), kNone);
  std::vector<bool> moved(ig.nodes.size(), false);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (!IsMeanPooling(ig, shapes, nid)) continue;
    const auto& data = ig.nodes[nid].inputs[0];
    if (data.index != 0 || uses[ig.entry_id(data)] != 1 || !IsPointwiseConv(ig, shapes, types, data.node_id)) continue;
    conv_of[nid] = data.node_id;
    moved[data.node_id] = true;
    ++*swapped;
  }
  if (*swapped == 0) return GraphRebuilder::OriginalHeads(ig);
  GraphRebuilder rb(ig);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    if (moved[nid]) continue;  // rebuilt with its pooling
    if (conv_of[nid] == kNone) {
      rb.Keep(nid);
      continue;
    }
    const auto& conv_info = ig.nodes[conv_of[nid]];
    auto pool = std::make_shared<graph::Node>(*ig.nodes[nid].node);
    pool->name += "_before_conv";
    pool->inputs = {rb.Map(conv_info.inputs[0])};
    auto conv = std::make_shared<graph::Node>(*conv_info.node);
    conv->name = ig.nodes[nid].node->name;
    conv->inputs = {graph::Entry{std::move(pool), 0, 0}};
    for (size_t i = 1; i < conv_info.inputs.size(); ++i) conv->inputs.push_back(rb.Map(conv_info.inputs[i]));
    rb.Put(nid, std::move(conv));
  }
  return rb.Heads();
}

}  // namespace weft::exec

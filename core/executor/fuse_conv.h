// Inference graph fusion (MXNet's oneDNN subgraph pass for convolutions, `_sg_mkldnn_conv`):
// chains Convolution -> [BatchNorm] -> [activation] -> [element-wise add] -> [activation]
// become one `_sg_conv` node (core/operator/defs/nn.cc; attributes sdk::SgConvParam), whose cpu
// kernel folds the BatchNorm into the convolution's weights and bias and runs the rest as oneDNN
// post-ops; BatchNorms outside such chains (with a relu after them) become `_sg_batch_norm` nodes
// (core/operator/defs/norm.cc; sdk::SgBatchNormParam). ExecState::Init runs it for binds without
// gradients (every grad_req null), with no device groups, on a device whose plugin has both
// kernels (the cpu); other binds keep
// the graph as given. WEFT_GRAPH_FUSION=0 turns it off (default 1); WEFT_BLOCKED_ACTIVATIONS=0
// keeps every value in NCHW (default 1: blocked between fused convolutions, see FuseConvolutions).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "symbol/graph.h"
#include "weft/ndarray.h"

namespace weft::exec {

/// Whether WEFT_GRAPH_FUSION allows the fusion (default yes); throws weft::Error for a value that
/// is not a boolean.
bool GraphFusionEnabled();

/// What the device's fused kernels take, from its attributes: the blocked layout
/// ("blocked_activations"; empty: none) and the activation words its `_sg_conv` takes
/// ("fused_activations", comma-separated; relu and clip without the attribute, what every SDK 2.x
/// `_sg_conv` takes).
struct FusionTarget {
  std::string blocked_format;
  std::vector<std::string> activations{"relu", "clip"};
};

/// The heads of `ig` (with every entry's shape and dtype known: `shapes`, `types` per entry id)
/// with each fusable chain replaced by one `_sg_conv` node named after the chain's last node (so
/// output names stay), or `ig`'s own heads when nothing fuses; `*fused` gets the number of chains.
/// A chain starts at a float32 channels-first Convolution and takes, in this order and each only
/// when present: a BatchNorm over axis 1 without output_mean_var; an activation the device takes
/// (`target.activations`: relu, clip, or Activation with act_type relu, tanh, sigmoid or softrelu);
/// an elemwise_add / broadcast_add of equal shapes with one more input (the sum); such an activation.
/// A tanh, sigmoid or softrelu ends its chain (the kernel applies it after the convolution, not
/// as a post-op before a sum) and keeps it out of a depthwise merge.
/// Every value inside a chain must have exactly one reader and not be a graph output (otherwise
/// the chain ends before it); a chain of a 1-D or 3-D convolution needs a stage after it. A chain
/// of a 1x1 convolution (stride 1, no pad, one group) without a sum whose result only a depthwise
/// 3x3 convolution (a group per channel, pad 1, stride 1 or 2) reads, as its data, takes that
/// convolution's chain too when it has no sum: one `_sg_conv` with with_dw (MobileNet v2's
/// expansion and depthwise layers; oneDNN runs them as one primitive with a depthwise post-op,
/// the expanded activation never written to memory), named after the depthwise chain's end. Nodes
/// downstream of a fused chain are copies; variables and untouched nodes are shared with `ig`.
/// The BatchNorm behaves as before: the fused kernel uses the moving statistics unless called in
/// training mode without use_global_stats, when it uses the batch's and updates the moving ones.
/// Then each float32 BatchNorm over axis 1 of 4-D data that no chain took (its hidden statistics
/// unread; DenseNet's pre-activation ones, reading a concat) becomes one `_sg_batch_norm` node,
/// with the relu (Activation relu or relu) reading it when that is its only reader, named after
/// the last of them; these count in `*fused` too.
///
/// With `target.blocked_format` "nChw16c" or "nChw8c" (the device's attribute "blocked_activations":
/// oneDNN's layout for the ISA the cpu plugin runs; empty or another word: none), values stay in
/// that layout where both ends can: a chain writes its output blocked (out_format) and reads its
/// data (data_format) and sum (out_format: sum and output are blocked together or not at all) as
/// their writers wrote them; a float32 2-D max or avg Pooling of whole blocks of channels reads and
/// writes blocked (data_format, out_format; a 1x1 output, global pooling's, is written plain: the
/// same bytes); a float32 Concat of 4-D arrays along the channels, each with whole blocks, joins
/// blocked arrays (data_format); a `_sg_batch_norm` of whole blocks reads and writes blocked
/// (data_format); a float32 Dropout of a 4-D array with whole blocks reads and writes blocked
/// (data_format; SqueezeNet's before its classifier). A value is blocked only when its writer is
/// one of these, every reader is one of these taking it blocked, it is not a graph output, and it
/// is 4-D with a multiple of the block's channels, or, between chains whose convolutions have one
/// group or one per channel, with more channels than one block: such a tensor (MobileNet v2's 24
/// channels in nChw16c) is padded to whole blocks with zeros and takes that size in memory
/// (BlockedBytes; the executor plans it, exec_graph.h), as oneDNN's blocked kernels pad their own
/// copies. Other blocked tensors have the plain one's size; the kernels skip the reorders between
/// the layers.
std::vector<graph::Entry> FuseConvolutions(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                           const std::vector<int>& types, const FusionTarget& target, size_t* fused);

/// Throws weft::Error when a value is written in one layout (see above: _sg_conv, Pooling, Concat
/// attributes) and read in another: by an op reading plain, by a reader expecting another layout,
/// or as a graph output.
/// ExecState::Init checks every graph it runs (a rebound optimized symbol, or one cut from it).
void CheckBlockedLayouts(const graph::IndexedGraph& ig);

/// Channels per block (8, 16) in which node `op` (`params`: its attributes) reads input `input`
/// (or writes its output 0 when `input` is -1), 0 when plain: for the monitor, which reports NCHW.
int64_t ActivationBlock(const std::string& op, const AttrMap& params, int input);

/// Bytes of the 4-D activation `shape` of `dtype` in blocks of `block` channels, the last block
/// padded: what a blocked value occupies. Throws weft::Error unless `shape` is 4-D.
uint64_t BlockedBytes(const Shape& shape, DType dtype, int64_t block);

/// A plain NCHW copy of `a`, a 4-D float32 array in oneDNN's nChw{block}c (a partial last block
/// padded: `a`'s memory holds BlockedBytes), through host memory.
NDArray PlainCopy(const NDArray& a, int64_t block);

}  // namespace weft::exec

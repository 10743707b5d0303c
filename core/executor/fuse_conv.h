// Inference graph fusion (MXNet's oneDNN subgraph pass for convolutions, `_sg_mkldnn_conv`):
// chains Convolution -> [BatchNorm] -> [activation] -> [element-wise add] -> [activation]
// become one `_sg_conv` node (core/operator/defs/nn.cc; attributes sdk::SgConvParam), whose cpu
// kernel folds the BatchNorm into the convolution's weights and bias and runs the rest as oneDNN
// post-ops. ExecState::Init runs it for binds without gradients (every grad_req null), with no
// device groups, on a device whose plugin has an `_sg_conv` kernel (the cpu); other binds keep
// the graph as given. WEFT_GRAPH_FUSION=0 turns it off (default 1).
#pragma once

#include <cstddef>
#include <vector>

#include "symbol/graph.h"

namespace weft::exec {

/// Whether WEFT_GRAPH_FUSION allows the fusion (default yes); throws weft::Error for a value that
/// is not a boolean.
bool GraphFusionEnabled();

/// The heads of `ig` (with every entry's shape and dtype known: `shapes`, `types` per entry id)
/// with each fusable chain replaced by one `_sg_conv` node named after the chain's last node (so
/// output names stay), or `ig`'s own heads when nothing fuses; `*fused` gets the number of chains.
/// A chain starts at a float32 channels-first Convolution and takes, in this order and each only
/// when present: a BatchNorm over axis 1 without output_mean_var; an Activation relu, relu or clip;
/// an elemwise_add / broadcast_add of equal shapes with one more input (the sum); a relu or clip.
/// Every value inside a chain must have exactly one reader and not be a graph output (otherwise
/// the chain ends before it), and a chain needs at least one stage after the convolution. Nodes
/// downstream of a fused chain are copies; variables and untouched nodes are shared with `ig`.
/// The BatchNorm behaves as before: the fused kernel uses the moving statistics unless called in
/// training mode without use_global_stats, when it uses the batch's and updates the moving ones.
std::vector<graph::Entry> FuseConvolutions(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                           const std::vector<int>& types, size_t* fused);

}  // namespace weft::exec

// Inference graph rewrite: an average pooling of a 1x1 convolution's output runs before the
// convolution instead. Both are linear and the pooling treats every channel alike, so
// Convolution(Pooling(x)) = Pooling(Convolution(x)) up to float rounding, and the convolution then
// runs on the pooled, smaller image: DenseNet's transition layers (1x1 convolution, then 2x2 average
// pooling of stride 2) do a quarter of their multiply-adds. ExecState::Init runs it with the
// convolution fusion (fuse_conv.h: binds without gradients, WEFT_GRAPH_FUSION), before it.
#pragma once

#include <cstddef>
#include <vector>

#include "symbol/graph.h"
#include "symbol/infer.h"

namespace weft::exec {

/// The heads of `ig` (every entry's shape and dtype known: `shapes`, `types` per entry id) with
/// each Convolution -> Pooling pair below turned into Pooling -> Convolution, or `ig`'s own heads
/// when there is none; `*swapped` gets the number of pairs. The Convolution: float32 NCHW data,
/// a 1x1 kernel, stride 1, no pad, dilation 1 (any groups, bias or not), its output read by the
/// Pooling alone and not a graph output. The Pooling: avg, 2-D over plain NCHW (not a rebound
/// optimized symbol's blocked layout), either global or with no pad and windows that lie inside
/// the image (pooling_convention valid, or full where the windows fit exactly), so each output is
/// a mean of its window with weights summing to 1 (which lets the bias through unchanged), and an
/// output with at most half the positions of its input (otherwise the swap gains nothing). The
/// new Pooling, named "<pooling>_before_conv", reads the convolution's data; the new Convolution,
/// named after the Pooling (so output names stay), reads it. Nodes downstream are copies;
/// everything else is shared with `ig`.
std::vector<graph::Entry> PoolBeforeConvolution(const graph::IndexedGraph& ig, const std::vector<ShapeSlot>& shapes,
                                                const std::vector<int>& types, size_t* swapped);

}  // namespace weft::exec

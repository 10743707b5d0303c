// Concat without the copy (inference): values that a channel Concat joins are written straight
// into their channel slice of its output, and the Concat copies only its other inputs (none: it
// does nothing).
//
// A channel slice [c0, c0 + C) of an (N, C_total, H, W) array is, per image, C·H·W contiguous
// floats at c0·H·W, both in NCHW and in oneDNN's nChw8c / nChw16c when c0 is a multiple of the
// block (the blocks of one image lie channel block after channel block); image n starts
// n·C_total·H·W floats later. Such a value's entry becomes a view of the array that has the
// memory (EntryInfo::view_of, view_channel; the planner places it, plan_memory.h), and the nodes
// that touch it get the executor-only attributes (the op definitions do not declare them, so no
// symbol can carry them) "out_image_stride" (its writer) or "in_image_stride" (a reader) =
// C_total·H·W, the floats between its images. The cpu Concat kernel sees that such an input
// already lies where it would copy it and skips it.
//
// Writers that take a slice: a fused convolution (`_sg_conv`, fuse_conv.h) without sum or
// depthwise stage, and a channel Concat itself, whose output then is a slice of a later Concat's
// (DenseNet: each layer joins the previous join and its growth, so every join of a dense block
// lies in the last one's memory and no layer copies the block's earlier channels). Readers: the
// Concat, once, and fused BatchNorms (`_sg_batch_norm`) reading it as their data (DenseNet's
// pre-activations). Only where every piece can: a forward-only graph (no gradients), a Concat
// along axis 1 of 4-D float32 arrays on the cpu with write request, a writer on the same device
// with write request, no graph output, a channel offset that is a multiple of the Concat's block.
// Everything else keeps the copy. WEFT_CONCAT_IN_PLACE=0 turns it off (default 1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "executor/exec_graph.h"
#include "weft/ndarray.h"

namespace weft::exec {

/// Whether WEFT_CONCAT_IN_PLACE allows the pass (default yes); throws weft::Error for a value that
/// is not a boolean.
bool ConcatInPlaceEnabled();

/// Makes the qualifying Concat inputs of `g` views of the memory of their Concat's output (or of
/// the array that output is a view of), sets the attributes (see above); returns how many.
size_t PlaceConcatInputs(ExecGraph& g);

/// Floats between two images of entry `eid`: its own image size, or for a view that of the array
/// it lies in.
int64_t ImageStride(const ExecGraph& g, uint32_t eid);

/// A contiguous copy of view entry `eid` (the monitor's report) from `root`, the array of entry
/// view_of, through host memory.
NDArray ContiguousCopy(const ExecGraph& g, uint32_t eid, const NDArray& root);

}  // namespace weft::exec

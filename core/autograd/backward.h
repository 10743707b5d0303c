// weft core — Backward over the tape (weft/autograd.h's BackwardEx) and the pieces the
// higher-order rules and CachedOp share with it.
#pragma once

#include <vector>

#include "autograd/tape.h"
#include "operator/kernel_runner.h"

namespace weft::autograd_detail {

/// weft::autograd::BackwardEx (see there).
std::vector<NDArray> RunBackward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
                                 const std::vector<NDArray>& variables, bool retain_graph, bool create_graph,
                                 bool is_train);

/// Runs the backward node `bw` of forward op `def` with (normalised) `attrs` on `inputs`, writing
/// `outputs` (one per forward input, of `out_shapes` / `out_dtypes`, allocated by the caller; a
/// none array where req is null on a host-addressable device) with `req`, with the shared prepared
/// kernel (SharedKernelRunner), so a training loop prepares each kernel once. When the thread records (create_graph),
/// the run is recorded as a kBackward node: `inputs` must then carry the autograd entries of the values they are.
/// `out_stypes` (empty: a dense backward) are the outputs' storage types a sparse kernel claimed for
/// the inputs' storage types (ClaimStorageTypes); that kernel then runs and its sparse outputs are
/// waited for.
void RunBackwardOp(const OpDef& def, const AttrMap& attrs, const BackwardNode& bw, const std::vector<NDArray>& inputs,
                   const std::vector<Shape>& out_shapes, const std::vector<DType>& out_dtypes,
                   std::vector<NDArray>& outputs, const std::vector<int32_t>& req, bool is_train,
                   const std::vector<StorageType>& out_stypes = {});

/// The sum of `terms` (none when empty, the array itself when one, else add_n; recorded when the
/// thread records).
NDArray SumArrays(const std::vector<NDArray>& terms);

}  // namespace weft::autograd_detail

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
/// `outputs` (one per forward input, allocated by the caller) with `req`. The prepared kernel is
/// taken from a cache keyed by op, attributes, device and shapes, so a training loop prepares each
/// kernel once. When the thread records (create_graph), the run is recorded as a kBackward node:
/// `inputs` must then carry the autograd entries of the values they are.
void RunBackwardOp(const OpDef& def, const AttrMap& attrs, const BackwardNode& bw, const std::vector<NDArray>& inputs,
                   std::vector<NDArray>& outputs, const std::vector<int32_t>& req, bool is_train);

/// A prepared kernel for (op, attrs, ctx, signature, resources), made once and reused (bounded
/// cache; thread-safe).
std::shared_ptr<KernelRunner> CachedRunner(const std::string& op, const AttrMap& attrs, const Context& ctx,
                                           const NodeSignature& sig, uint32_t resources);

/// The sum of `terms` (none when empty, the array itself when one, else add_n; recorded when the
/// thread records).
NDArray SumArrays(const std::vector<NDArray>& terms);

}  // namespace weft::autograd_detail

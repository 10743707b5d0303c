// weft core — host operators inside core (weft/host_op.h is the public side): the registered
// definitions, and running one node of one on the host-operator threads.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "weft/host_op.h"

namespace weft::host_op {

/// The host operator `op` is, or is the backward op ("_backward_<name>") of; nullptr for any
/// other op. *backward tells which.
std::shared_ptr<const HostOpDef> Find(std::string_view op, bool* backward);

/// One prepared node: its kernel and how its slots split.
struct Node {
  std::shared_ptr<HostOpKernel> kernel;
  bool backward = false;
  size_t num_in = 0, num_out = 0;  // the forward op's inputs and outputs
};

/// Prepares the node of `op` (a host op or its backward) for `attrs` (hidden keys dropped) on
/// `ctx`; `in_shapes`/`in_dtypes` are the node's own inputs (for a backward node: output
/// gradients, forward inputs, forward outputs, aux states).
Node Prepare(const HostOpDef& def, bool backward, const HostOpAttrs& attrs, const Context& ctx,
             const std::vector<Shape>& in_shapes, const std::vector<DType>& in_dtypes);

/// Runs `fn` on a host-operator thread (never an engine worker); returns at once.
void Submit(std::function<void()> fn);

/// Computes one run of `node` on the calling thread (a host-operator thread): the arrays under
/// variables of their own, then waits for what the kernel pushed on them. Throws the kernel's
/// error, naming `label`.
void Execute(const Node& node, const std::string& label, const std::vector<NDArray>& inputs,
             const std::vector<NDArray>& outputs, const std::vector<int32_t>& req, const std::vector<NDArray>& aux,
             bool is_train);

}  // namespace weft::host_op

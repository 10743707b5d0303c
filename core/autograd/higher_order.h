// weft core — gradients of gradients (create_graph): the backward of a `_backward_X` node that
// Backward recorded. The first-order gradients are the `_backward_X` kernels of the op definitions;
// their own derivatives are not part of those definitions, so they exist where they follow from
// the definition or from a short rule written here:
//   * ops whose backward reads nothing but the head gradients (backward_uses empty, not a loss:
//     add, sub, scalar add/mul/div, negative, Reshape, Flatten, transpose, sum, mean, slice,
//     Concat, SliceChannel, broadcast_add, Cast, ...): such an op is affine, y = A·x + c, its
//     backward is A^T·dy, and the gradient of that with respect to dy along g is A·g = X(g) − X(0),
//     computed by running the op itself;
//   * element-wise unary ops sin, cos, exp, expm1, log, log1p, sqrt, rsqrt, square, sigmoid, tanh,
//     relu, abs, negative and Activation (relu, sigmoid, tanh): the backward dy·f'(x) has the derivative f'(x)·g with
//     respect to dy (the backward kernel run again on g) and dy·f''(x)·g with respect to x, with
//     f'' written in forward ops;
//   * elemwise_mul: (dy·b, dy·a) differentiated directly.
// Every rule is built from recorded imperative calls, so third and higher orders follow as long as
// the ops involved have rules.
#pragma once

#include <vector>

#include "autograd/tape.h"

namespace weft::autograd_detail {

/// Throws weft::Error naming the node and listing what has second-order gradients when `n` (a
/// kBackward node) has no rule.
void CheckHigherOrder(const Node& n);

/// The gradients of kBackward node `n`'s inputs given `og`, the gradients of its outputs (one per
/// input of the forward op; none where none flows), for the inputs with `need` set (none
/// elsewhere).
std::vector<NDArray> HigherOrderBackward(const Node& n, const std::vector<NDArray>& og, const std::vector<bool>& need,
                                         bool is_train);

}  // namespace weft::autograd_detail

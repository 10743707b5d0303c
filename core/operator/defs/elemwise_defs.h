// weft core — builders of the element-wise op definitions shared by defs/elemwise.cc and the
// MXNet math families (defs/elemwise_binary.cc, defs/elemwise_unary.cc). Shape rules are MXNet 1.9's
// (elemwise_binary_op.h, elemwise_binary_broadcast_op.h, elemwise_unary_op.h).
#pragma once

#include <string>

#include "operator/op_util.h"

namespace weft::opdef {

/// lhs, rhs -> output; gradient GradKind::kOp by `_backward_<name>` with backward_uses `uses`.
OpDef Binary(std::string name, std::string description, uint32_t uses);

/// A binary op on equal shapes (elemwise_add, _maximum): output = `formula` element by element,
/// in place over either input.
OpDef Elemwise(const std::string& name, const std::string& formula, uint32_t uses);

/// NumPy broadcasting of `lhs` and `rhs` to the output: shapes aligned from the right, extents
/// equal or one of them 1. Throws naming both shapes and the axis otherwise.
void BroadcastShape(ShapeIO& io);

/// A binary op with NumPy broadcasting (broadcast_add, broadcast_power); its backward sums the
/// gradient over the broadcast axes (temp space).
OpDef Broadcast(const std::string& name, const std::string& formula, uint32_t uses);

/// data -> output of the same shape, in place allowed, gradient `_backward_<name>`.
OpDef Unary(const std::string& name, std::string description, uint32_t uses);

/// Unary() whose gradient is zero by definition (floor, sign, comparisons): no backward op.
OpDef ZeroGrad(OpDef d);

/// A scalar op (MXNet's BinaryScalarOp: attributes scalar (default 1) and is_int): data -> output
/// = `formula` with backward `_backward<name>` (_mul_scalar -> _backward_mul_scalar).
OpDef Scalar(const std::string& name, const std::string& formula, uint32_t uses);

}  // namespace weft::opdef

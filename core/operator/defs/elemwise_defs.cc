// Builders of elemwise_defs.h.
#include "operator/defs/elemwise_defs.h"

#include <algorithm>

#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::opdef {

OpDef Binary(std::string name, std::string description, uint32_t uses) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  d.list_inputs = Fixed({"lhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  d.backward_uses = uses;
  return d;
}

OpDef Elemwise(const std::string& name, const std::string& formula, uint32_t uses) {
  OpDef d = Binary(name, "output = " + formula + " element by element; lhs and rhs have one shape.", uses);
  SetShapeFn(d, SameShapeAll);
  d.inplace = InplacePairs({{0, 0}, {1, 0}});
  return d;
}

void BroadcastShape(ShapeIO& io) {
  if (!io.in(0) || !io.in(1)) return;
  const Shape& l = *io.in(0);
  const Shape& r = *io.in(1);
  if (l == r) {
    io.AssignOut(0, l);
    return;
  }
  const size_t n = std::max(l.ndim(), r.ndim());
  Shape out = UnknownShape(n);
  const size_t bl = n - l.ndim(), br = n - r.ndim();
  for (size_t i = 0; i < n; ++i) {
    int64_t a = i >= bl ? l[i - bl] : 1;
    int64_t b = i >= br ? r[i - br] : 1;
    if (a < 0 || b < 0) continue;  // MXNet leaves the extent unknown
    if (a != b && a != 1 && b != 1) {
      io.Fail(fmt::format("inputs 'lhs' {} and 'rhs' {} cannot be broadcast together (axis {}: {} vs {})", l.ToString(),
                          r.ToString(), i, a, b));
    }
    out[i] = a == 1 ? b : a;
  }
  io.AssignOut(0, out);
}

OpDef Broadcast(const std::string& name, const std::string& formula, uint32_t uses) {
  OpDef d = Binary(name, "output = " + formula + " with NumPy broadcasting of lhs and rhs.", uses);
  SetShapeFn(d, BroadcastShape);
  // Backward sums the gradient over broadcast axes.
  d.resources = kResourceTempSpace;
  return d;
}

OpDef Unary(const std::string& name, std::string description, uint32_t uses) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  d.backward_uses = uses;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

OpDef ZeroGrad(OpDef d) {
  d.grad = GradKind::kZero;
  d.backward_op.clear();
  d.backward_uses = 0;
  return d;
}

OpDef Scalar(const std::string& name, const std::string& formula, uint32_t uses) {
  OpDef d = Unary(name, "output = " + formula + " element by element.", uses);
  d.backward_op = "_backward" + name;  // MXNet: _mul_scalar -> _backward_mul_scalar
  DeclareParams<sdk::ScalarParam>(d);
  return d;
}

}  // namespace weft::opdef

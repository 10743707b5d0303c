// MXNet's binary math and logic beyond the arithmetic of defs/elemwise.cc, in up to three forms
// each: _<op> (lhs and rhs of one shape), _<op>_scalar (data and the attribute `scalar`) and
// broadcast_<op> (NumPy broadcasting):
//   comparisons equal, not_equal, greater, greater_equal, lesser, lesser_equal and the logic
//   logical_and, logical_or, logical_xor: 1 where true, 0 elsewhere, in the input's dtype (MXNet's
//   classic, non-NumPy semantics); their gradient is zero by definition (MXNet's MakeZeroGradNodes);
//   mod (the sign of the divisor, as Python's %; 0 where the divisor is 0), power, maximum, minimum,
//   hypot with gradients (MXNet 1.9's mshadow_op functors);
// and _rmod_scalar, _rpower_scalar (scalar % data, scalar ^ data), logical_not, _grad_add and
// _contrib_allclose (the elemwise family of docs/adding-an-op.md, "Op families").
#include "weft/sdk/ops/elemwise_binary.hpp"
#include "operator/defs/builtin.h"
#include "operator/defs/elemwise_defs.h"

namespace weft::opdef {
namespace {

struct BinaryMath {
  const char* op;              // equal -> _equal, _equal_scalar, broadcast_equal
  const char* formula;         // in lhs and rhs
  const char* scalar_formula;  // in data and scalar; nullptr: the scalar form is defined elsewhere
  bool zero_grad;
  uint32_t uses;         // backward uses of _<op> and broadcast_<op>
  uint32_t scalar_uses;  // of _<op>_scalar
  const char* legacy;    // MXNet 0.x names kept as aliases
  const char* legacy_scalar;
  bool broadcast;  // false: broadcast_<op> is defined in defs/elemwise.cc
};

constexpr uint32_t I = kUsesInputs;

const BinaryMath kBinaryMathOps[] = {
    {"equal", "lhs == rhs", "data == scalar", true, 0, 0, "_Equal", "_EqualScalar", true},
    {"not_equal", "lhs != rhs", "data != scalar", true, 0, 0, "_Not_Equal", "_NotEqualScalar", true},
    {"greater", "lhs > rhs", "data > scalar", true, 0, 0, "_Greater", "_GreaterScalar", true},
    {"greater_equal", "lhs >= rhs", "data >= scalar", true, 0, 0, "_Greater_Equal", "_GreaterEqualScalar", true},
    {"lesser", "lhs < rhs", "data < scalar", true, 0, 0, "_Lesser", "_LesserScalar", true},
    {"lesser_equal", "lhs <= rhs", "data <= scalar", true, 0, 0, "_Lesser_Equal", "_LesserEqualScalar", true},
    {"logical_and", "lhs && rhs", "data && scalar", true, 0, 0, "_Logical_And", "_LogicalAndScalar", true},
    {"logical_or", "lhs || rhs", "data || scalar", true, 0, 0, "_Logical_Or", "_LogicalOrScalar", true},
    {"logical_xor", "(lhs != 0) xor (rhs != 0)", "(data != 0) xor (scalar != 0)", true, 0, 0, "_Logical_Xor",
     "_LogicalXorScalar", true},
    {"mod", "lhs mod rhs (Python's %: the sign of rhs; 0 where rhs is 0)", "data mod scalar", false, I, 0, "_Mod",
     "_ModScalar", true},
    {"power", "lhs ^ rhs", nullptr, false, I, 0, "_Power", nullptr, true},
    {"maximum", "max(lhs, rhs)", "max(data, scalar)", false, I, I, "_Maximum", "_MaximumScalar", false},
    {"minimum", "min(lhs, rhs)", "min(data, scalar)", false, I, I, "_Minimum", "_MinimumScalar", false},
    {"hypot", "√(lhs² + rhs²)", "√(data² + scalar²)", false, I, I, "_Hypot", "_HypotScalar", true},
};

std::string Truth(const BinaryMath& op, const char* formula) {
  return op.zero_grad ? std::string("1 where ") + formula + ", else 0," : formula;
}

void RegisterFamily(OpRegistry& r, const BinaryMath& op) {
  const std::string base = op.op;
  auto finish = [&](OpDef d) {
    if (op.zero_grad) d = ZeroGrad(std::move(d));
    r.Register(std::move(d));
  };
  OpDef elemwise = Elemwise("_" + base, Truth(op, op.formula), op.uses);
  elemwise.backward_op = "_backward_" + base;  // MXNet: _mod -> _backward_mod
  finish(std::move(elemwise));
  r.AddAlias(op.legacy, "_" + base);
  if (op.broadcast) finish(Broadcast("broadcast_" + base, Truth(op, op.formula), op.uses));
  if (op.scalar_formula != nullptr) {
    finish(Scalar("_" + base + "_scalar", Truth(op, op.scalar_formula), op.scalar_uses));
    r.AddAlias(op.legacy_scalar, "_" + base + "_scalar");
  }
}

// _contrib_allclose (mx.nd.contrib.allclose; MXNet's test_utils.assert_almost_equal calls it on
// two arrays of one context and dtype): numpy.allclose as one 0-d uint8 flag.
OpDef AllClose() {
  OpDef d;
  d.name = "_contrib_allclose";
  d.description =
      "output = 1 when every |a − b| <= atol + rtol·|b| (equal values, infinities included, always pass; a NaN "
      "matches a NaN only with equal_nan), else 0: a 0-d uint8 array. a and b have one shape and dtype.";
  DeclareParams<sdk::AllCloseParam>(d);
  d.list_inputs = Fixed({"a", "b"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(0)) io.AssignIn(1, *io.in(0));
    if (io.in(1)) io.AssignIn(0, *io.in(1));
    io.AssignOut(0, Shape{});
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    AssignType("_contrib_allclose", "input", "b", in[1], in[0]);
    AssignType("_contrib_allclose", "input", "a", in[0], in[1]);
    AssignType("_contrib_allclose", "output", "output", out[0], static_cast<int>(DType::kUint8));
  };
  d.grad = GradKind::kNone;
  return d;
}

}  // namespace

void RegisterElemwiseBinaryOps(OpRegistry& r) {
  r.Register(AllClose());
  for (const BinaryMath& op : kBinaryMathOps) RegisterFamily(r, op);
  r.Register(Scalar("_rmod_scalar", "scalar mod data (Python's %)", I));
  r.AddAlias("_RModScalar", "_rmod_scalar");
  r.Register(Scalar("_rpower_scalar", "scalar ^ data", I));
  r.AddAlias("_RPowerScalar", "_rpower_scalar");
  r.Register(ZeroGrad(Unary("logical_not", "output = 1 where data == 0, else 0, element by element.", 0)));
  // MXNet accumulates gradients with _grad_add: elemwise_add under another name, not differentiated.
  OpDef grad_add = Elemwise("_grad_add", "lhs + rhs", 0);
  grad_add.grad = GradKind::kNone;
  grad_add.backward_op.clear();
  r.Register(std::move(grad_add));
}

}  // namespace weft::opdef

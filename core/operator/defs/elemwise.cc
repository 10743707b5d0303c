// Element-wise ops: add_n, elemwise_* (same shapes), broadcast_* (NumPy broadcasting), the
// scalar ops, the unary math ops and clip. Shape rules are MXNet 1.9's (elemwise_binary_broadcast_op.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/defs/elemwise_defs.h"
#include "weft/sdk/ops/elemwise_binary.hpp"
#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::opdef {
namespace {

OpDef AddN() {
  OpDef d;
  d.name = "add_n";
  d.description = "Sum of num_args arrays of one shape.";
  DeclareParams<sdk::AddNParam>(d);
  d.list_inputs = Numbered("arg", "num_args");
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_add_n";
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

struct ScalarOp {
  const char* name;
  const char* formula;
  uint32_t uses;
  const char* legacy;  // MXNet 0.x name kept as an alias
};

const ScalarOp kScalarOps[] = {
    {"_plus_scalar", "data + scalar", 0, "_PlusScalar"},
    {"_minus_scalar", "data − scalar", 0, "_MinusScalar"},
    {"_rminus_scalar", "scalar − data", 0, "_RMinusScalar"},
    {"_mul_scalar", "data · scalar", 0, "_MulScalar"},
    {"_div_scalar", "data / scalar", 0, "_DivScalar"},
    {"_rdiv_scalar", "scalar / data", kUsesInputs, "_RDivScalar"},
    {"_power_scalar", "data ^ scalar", kUsesInputs, "_PowerScalar"},
};

struct UnaryMath {
  const char* name;
  const char* formula;
};

const UnaryMath kUnaryMath[] = {
    {"sin", "sin(x)"},      {"cos", "cos(x)"},
    {"exp", "exp(x)"},      {"log", "ln(x)"},
    {"sqrt", "√x"},         {"square", "x²"},
    {"abs", "|x|"},         {"negative", "−x"},
    {"relu", "max(x, 0)"},  {"sigmoid", "1 / (1 + exp(−x))"},
    {"tanh", "tanh(x)"},    {"rsqrt", "1 / √x"},
    {"log1p", "ln(1 + x)"}, {"expm1", "exp(x) − 1"},
};

// MXNet defines these gradients as zero (floor, round) or as a function that is zero wherever it
// exists (sign): weft states them as zero gradients, so no backward kernel is needed.
const UnaryMath kZeroGradMath[] = {
    {"floor", "⌊x⌋"},
    {"round", "x rounded to the nearest integer, halves away from zero"},
    {"sign", "−1, 0 or 1 by the sign of x"},
};

OpDef Clip() {
  OpDef d = Unary("clip", "output = min(max(x, a_min), a_max) element by element.", kUsesInputs);
  d.description += " The gradient passes where a_min ≤ x ≤ a_max and is 0 elsewhere (MXNet).";
  DeclareParams<sdk::ClipParam>(d);
  return d;
}

}  // namespace

void RegisterElemwiseOps(OpRegistry& r) {
  r.Register(AddN());
  r.AddAlias("ElementWiseSum", "add_n");
  r.AddAlias("_sum", "add_n");

  r.Register(Elemwise("elemwise_add", "lhs + rhs", 0));
  r.Register(Elemwise("elemwise_sub", "lhs − rhs", 0));
  r.Register(Elemwise("elemwise_mul", "lhs · rhs", kUsesInputs));
  r.Register(Elemwise("elemwise_div", "lhs / rhs", kUsesInputs));
  for (const char* a : {"_add", "_plus", "_Plus"}) r.AddAlias(a, "elemwise_add");
  for (const char* a : {"_sub", "_minus", "_Minus"}) r.AddAlias(a, "elemwise_sub");
  for (const char* a : {"_mul", "_Mul"}) r.AddAlias(a, "elemwise_mul");
  for (const char* a : {"_div", "_Div"}) r.AddAlias(a, "elemwise_div");

  r.Register(Broadcast("broadcast_add", "lhs + rhs", 0));
  r.Register(Broadcast("broadcast_sub", "lhs − rhs", 0));
  r.Register(Broadcast("broadcast_mul", "lhs · rhs", kUsesInputs));
  r.Register(Broadcast("broadcast_div", "lhs / rhs", kUsesInputs));
  // MXNet: the lhs gets the gradient where lhs ≥ rhs (maximum) / lhs ≤ rhs (minimum), the rhs
  // elsewhere, so a tie sends it to the lhs only.
  r.Register(Broadcast("broadcast_maximum", "max(lhs, rhs)", kUsesInputs));
  r.Register(Broadcast("broadcast_minimum", "min(lhs, rhs)", kUsesInputs));
  r.AddAlias("broadcast_plus", "broadcast_add");
  r.AddAlias("broadcast_minus", "broadcast_sub");

  for (const ScalarOp& op : kScalarOps) {
    r.Register(Scalar(op.name, op.formula, op.uses));
    r.AddAlias(op.legacy, op.name);
  }
  for (const UnaryMath& op : kUnaryMath) {
    r.Register(
        Unary(op.name, std::string("output = ") + op.formula + " element by element.", kUsesInputs | kUsesOutputs));
  }
  for (const UnaryMath& op : kZeroGradMath) {
    r.Register(ZeroGrad(Unary(op.name, std::string("output = ") + op.formula + " element by element.", 0)));
  }
  r.Register(Clip());
}

}  // namespace weft::opdef

// MXNet's element-wise unary math beyond defs/elemwise.cc: trigonometric and hyperbolic
// functions and their inverses, logarithms in base 2 and 10, cube roots, reciprocal, unit
// conversions, the error function and its inverse, gamma and log-gamma, softsign, and the rounding
// ops ceil, trunc, fix, rint (zero gradient, as MXNet defines it). Backward ops get out_grad, data
// and output (OPS.md: uses I O), as the unary ops of elemwise.cc.
#include "operator/defs/builtin.h"
#include "operator/defs/elemwise_defs.h"

namespace weft::opdef {
namespace {

struct UnaryMath {
  const char* name;
  const char* formula;
  const char* derivative;
};

const UnaryMath kUnaryMathOps[] = {
    {"tan", "tan(x)", "1 + y²"},
    {"arcsin", "asin(x)", "1 / √(1 − x²)"},
    {"arccos", "acos(x)", "−1 / √(1 − x²)"},
    {"arctan", "atan(x)", "1 / (1 + x²)"},
    {"sinh", "sinh(x)", "cosh(x)"},
    {"cosh", "cosh(x)", "sinh(x)"},
    {"arcsinh", "asinh(x)", "1 / √(x² + 1)"},
    {"arccosh", "acosh(x)", "1 / √(x² − 1)"},
    {"arctanh", "atanh(x)", "1 / (1 − x²)"},
    {"log2", "log₂(x)", "1 / (x·ln 2)"},
    {"log10", "log₁₀(x)", "1 / (x·ln 10)"},
    {"cbrt", "∛x", "1 / (3·y²)"},
    {"rcbrt", "1 / ∛x", "−y / (3·x)"},
    {"reciprocal", "1 / x", "−1 / x²"},
    {"degrees", "x·180/π", "180/π"},
    {"radians", "x·π/180", "π/180"},
    {"erf", "erf(x)", "2/√π·exp(−x²)"},
    {"erfinv", "erf⁻¹(x)", "√π/2·exp(y²)"},
    {"gamma", "Γ(x)", "y·ψ(x) (ψ: digamma)"},
    {"gammaln", "ln|Γ(x)|", "ψ(x)"},
    {"softsign", "x / (1 + |x|)", "1 / (1 + |x|)²"},
};

const UnaryMath kRounding[] = {
    {"ceil", "⌈x⌉", nullptr},
    {"trunc", "x rounded toward zero", nullptr},
    {"fix", "x rounded toward zero", nullptr},
    {"rint", "x rounded to the nearest integer, halves toward −∞ (MXNet's rint)", nullptr},
};

}  // namespace

void RegisterElemwiseUnaryOps(OpRegistry& r) {
  for (const UnaryMath& op : kUnaryMathOps) {
    r.Register(Unary(op.name,
                     std::string("output y = ") + op.formula + " element by element; gradient " + op.derivative + ".",
                     kUsesInputs | kUsesOutputs));
  }
  for (const UnaryMath& op : kRounding)
    r.Register(ZeroGrad(Unary(op.name, std::string("output = ") + op.formula + " element by element.", 0)));
}

}  // namespace weft::opdef

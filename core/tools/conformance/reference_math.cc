// References of MXNet's math beyond reference_elemwise.cc (the ops of core/operator/defs/
// math_binary.cc and math_unary.cc; amp_cast is in reference_index.cc), written from MXNet 1.9's documented
// semantics (its operator docs and mshadow_op.h functors), not from any plugin's kernels:
//   comparisons and logic give 1 where true, 0 elsewhere (in the output's dtype: the input's);
//   mod has the sign of the divisor, as Python's %, and is 0 where the divisor is 0;
//   maximum and minimum propagate NaN from either side (MXNet 1.9: nan where either is nan);
//   rint rounds halves toward −∞ (MXNet's docs: "for input n.5 rint returns n", "-n.5 ... -n-1"),
//   fix and trunc toward zero;
//   _contrib_allclose is numpy.allclose (NaN equal only with equal_nan), one 0-d flag.
#include <cmath>
#include <numbers>

#include "op_cases.h"
#include "reference.h"

namespace wconf::ref {
namespace {

double Truth(bool b) { return b ? 1.0 : 0.0; }

// Python's %: the remainder of a / b with b's sign (fmod has a's); 0 when b is 0 (MXNet's choice,
// where C leaves it NaN).
double Mod(double a, double b) {
  if (b == 0) return 0.0;
  const double r = std::fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

// mshadow_op::maximum/minimum: a NaN on either side is the result.
double Maximum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double Minimum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

struct BinaryMath {
  const char* name;  // equal -> _equal, broadcast_equal and (scalar) _equal_scalar
  Binary f;
  bool scalar;  // has _<name>_scalar (power's is _power_scalar, in reference_elemwise.cc)
};

const BinaryMath kBinary[] = {
    {"equal", [](double a, double b) { return Truth(a == b); }, true},
    {"not_equal", [](double a, double b) { return Truth(a != b); }, true},
    {"greater", [](double a, double b) { return Truth(a > b); }, true},
    {"greater_equal", [](double a, double b) { return Truth(a >= b); }, true},
    {"lesser", [](double a, double b) { return Truth(a < b); }, true},
    {"lesser_equal", [](double a, double b) { return Truth(a <= b); }, true},
    {"logical_and", [](double a, double b) { return Truth(a != 0 && b != 0); }, true},
    {"logical_or", [](double a, double b) { return Truth(a != 0 || b != 0); }, true},
    {"logical_xor", [](double a, double b) { return Truth((a != 0) != (b != 0)); }, true},
    {"mod", Mod, true},
    {"power", [](double a, double b) { return std::pow(a, b); }, false},
    {"maximum", Maximum, true},
    {"minimum", Minimum, true},
    {"hypot", [](double a, double b) { return std::hypot(a, b); }, true},
};

// erf⁻¹(x): Newton's method on erf (erfc near ±1, where 1 − |x| is exact in double and erf has
// no digits left) from Winitzki's closed-form approximation (about 2e-3 relative), so the result
// is correct to double precision. ±1 give ±∞, |x| > 1 NaN (MXNet: erfinv's domain).
double ErfInv(double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return NAN;
  if (std::fabs(x) == 1) return std::copysign(INFINITY, x);
  if (x == 0) return x;
  const double ax = std::fabs(x), l = std::log((1 - ax) * (1 + ax)), a = 0.147;
  const double t = 2 / (std::numbers::pi * a) + l / 2;
  double y = std::sqrt(std::sqrt(t * t - l / a) - t);
  for (int i = 0; i < 8; ++i) {
    // f(y) = erf(y) − |x|, written as (1 − |x|) − erfc(y) above 0.5 to keep its digits.
    const double f = ax > 0.5 ? (1 - ax) - std::erfc(y) : std::erf(y) - ax;
    const double step = f / (2 / std::sqrt(std::numbers::pi) * std::exp(-y * y));
    y -= step;
    if (std::fabs(step) <= 1e-17 * y) break;
  }
  return std::copysign(y, x);
}

// MXNet's rint: the nearer of floor and ceil, floor on a tie.
double Rint(double x) {
  const double lo = std::floor(x), hi = std::ceil(x);
  return x - lo <= hi - x ? lo : hi;
}

const std::pair<const char*, Unary> kUnary[] = {
    {"ceil", [](double x) { return std::ceil(x); }},         {"trunc", [](double x) { return std::trunc(x); }},
    {"fix", [](double x) { return std::trunc(x); }},         {"rint", Rint},
    {"logical_not", [](double x) { return Truth(x == 0); }},
    // The value itself: ReferenceForward rounds it to the output's dtype, which is the cast.
};

// mshadow_op's mod_grad and mod_rgrad: d(a mod b)/da = 1, d/db = −⌊a / b⌋ (a step function of the
// inputs, which finite differences cannot check across its jumps).
double ModRightGrad(double a, double b) { return -std::floor(a / b); }

// _contrib_allclose (numpy.allclose as MXNet documents it): 1 when every pair is equal (infinities
// too), both NaN with equal_nan, or finite with |a − b| <= atol + rtol·|b|; else 0.
void AllClose(Call& c) {
  const double rtol = c.attrs().GetFloat("rtol", 1e-5), atol = c.attrs().GetFloat("atol", 1e-8);
  const bool equal_nan = c.attrs().GetBool("equal_nan", true);
  bool all = true;
  for (size_t i = 0; i < c.in(0).v.size() && all; ++i) {
    const double a = c.in(0).v[i], b = c.in(1).v[i];
    if (std::isnan(a) || std::isnan(b)) {
      all = equal_nan && std::isnan(a) && std::isnan(b);
    } else {
      all = a == b || (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= atol + rtol * std::fabs(b));
    }
  }
  c.out[0].v[0] = Truth(all);
}

}  // namespace

std::optional<std::vector<HostTensor>> MathGradient(const RunSpec& f, const std::vector<HostTensor>& og) {
  const HostTensor& x = f.in[0];
  std::vector<HostTensor> g = {Filled(x.shape, x.dtype, 0.0)};
  if (f.op == "_mod" || f.op == "broadcast_mod") {
    const HostTensor& y = f.in[1];
    const Shape& out = og[0].shape;
    g.push_back(Filled(y.shape, y.dtype, 0.0));
    // Broadcast inputs sum the gradients of the outputs they feed.
    for (int64_t i = 0; i < out.Size(); ++i) {
      const size_t ia = static_cast<size_t>(BroadcastSource(i, out, x.shape));
      const size_t ib = static_cast<size_t>(BroadcastSource(i, out, y.shape));
      const double dy = og[0].v[static_cast<size_t>(i)];
      g[0].v[ia] += dy;
      g[1].v[ib] += dy * ModRightGrad(x.v[ia], y.v[ib]);
    }
  } else if (f.op == "_mod_scalar") {
    g[0].v = og[0].v;
  } else if (f.op == "_rmod_scalar") {
    const double s = RoundTo(x.dtype, f.attrs.GetFloat("scalar"));
    for (size_t i = 0; i < x.v.size(); ++i) g[0].v[i] = og[0].v[i] * ModRightGrad(s, x.v[i]);
  } else {
    return std::nullopt;
  }
  return g;
}

const std::vector<UnaryMathOp>& UnaryMathOps() {
  const Domain inside{-0.9, 0.9}, above_one{1.1, 3}, gamma{0.3, 4};
  static const std::vector<UnaryMathOp> ops = {
      {"tan", [](double x) { return std::tan(x); }, kSigned},
      {"arcsin", [](double x) { return std::asin(x); }, inside},
      {"arccos", [](double x) { return std::acos(x); }, inside},
      {"arctan", [](double x) { return std::atan(x); }, kSigned},
      {"sinh", [](double x) { return std::sinh(x); }, kSigned},
      {"cosh", [](double x) { return std::cosh(x); }, kSigned},
      {"arcsinh", [](double x) { return std::asinh(x); }, kSigned},
      {"arccosh", [](double x) { return std::acosh(x); }, above_one},
      {"arctanh", [](double x) { return std::atanh(x); }, inside},
      {"log2", [](double x) { return std::log2(x); }, kPositive},
      {"log10", [](double x) { return std::log10(x); }, kPositive},
      {"cbrt", [](double x) { return std::cbrt(x); }, kAwayFromZero},
      {"rcbrt", [](double x) { return 1 / std::cbrt(x); }, kPositive},
      {"reciprocal", [](double x) { return 1 / x; }, kAwayFromZero},
      {"degrees", [](double x) { return x * (180 / std::numbers::pi); }, kSigned},
      {"radians", [](double x) { return x * (std::numbers::pi / 180); }, kSigned},
      {"erf", [](double x) { return std::erf(x); }, kSigned},
      {"erfinv", ErfInv, inside},
      {"gamma", [](double x) { return std::tgamma(x); }, gamma},
      {"gammaln", [](double x) { return std::lgamma(x); }, gamma},  // ln|Γ(x)|
      {"softsign", [](double x) { return x / (1 + std::fabs(x)); }, kSigned},
  };
  return ops;
}

void RegisterMathReferences(Table& t) {
  for (const BinaryMath& op : kBinary) {
    const std::string name = op.name;
    t["_" + name] = [f = op.f](Call& c) { Broadcast(c, f); };
    t["broadcast_" + name] = [f = op.f](Call& c) { Broadcast(c, f); };
    if (op.scalar) t["_" + name + "_scalar"] = MapScalar(op.f);
  }
  // The scalar on the left: scalar % data, scalar ^ data.
  t["_rmod_scalar"] = MapScalar(Mod, true);
  t["_rpower_scalar"] = MapScalar([](double a, double b) { return std::pow(a, b); }, true);
  // MXNet's gradient accumulation: elemwise_add under another name.
  t["_grad_add"] = [](Call& c) { Broadcast(c, [](double a, double b) { return a + b; }); };
  for (const auto& [name, f] : kUnary) t[name] = MapUnary(f);
  for (const UnaryMathOp& u : UnaryMathOps()) t[u.op] = MapUnary(u.f);
  t["_contrib_allclose"] = AllClose;
}

}  // namespace wconf::ref

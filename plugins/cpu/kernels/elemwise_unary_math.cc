// The element-wise unary math of defs/elemwise_unary.cc (tan ... gammaln, softsign) forward and backward, and
// the rounding ops floor, round, sign (defs/elemwise.cc), ceil, trunc, fix, rint (zero gradient,
// forward only), float32 / float64, compiled for the baseline ISA only (elemwise_kernels.h: none is
// on the training hot path).
//
// Each op is a struct with Fwd(x) and the derivative Grad(x, y) in terms of the input x and the
// output y (backward inputs: out_grad, data, output). Formulas are MXNet 1.9's
// (src/operator/mshadow_op.h); the special functions are computed in double and rounded once:
// digamma (for the gradients of gamma and gammaln) by the recurrence ψ(x) = ψ(x + 1) − 1/x up to
// x ≥ 6, then its asymptotic series (Abramowitz & Stegun 6.3.18), with the reflection
// ψ(x) = ψ(1 − x) − π / tan(πx) below zero; erfinv by Giles' approximation ("Approximating the
// erfinv function", GPU Computing Gems, 2011) refined by two Newton steps on erf.
#include <cmath>
#include <numbers>

#include "elemwise_kernels.h"

namespace weft::cpu::tensor {
namespace {

double Digamma(double x) {
  if (x <= 0 && x == std::floor(x)) return NAN;  // poles at 0, −1, −2, ...
  if (x < 0) return Digamma(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * x);
  double r = 0;
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  const double f = 1 / (x * x);
  // −Σ B₂ₖ / (2k·x²ᵏ) for k = 1..6.
  const double series =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * 691.0 / 32760)))));
  return r + std::log(x) - 0.5 / x - series;
}

double ErfInv(double y) {
  if (!(y > -1 && y < 1)) return y == 1 ? INFINITY : y == -1 ? -INFINITY : NAN;
  double w = -std::log((1 - y) * (1 + y)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * y;
  // Newton on erf(x) = y: erf'(x) = 2/√π·exp(−x²).
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}

double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);  // std::lgamma writes the global signgam: not thread-safe
}

// clang-format off
struct Tan     { template <typename T> static T Fwd(T x) { return std::tan(x); }
                 template <typename T> static T Grad(T, T y) { return T(1) + y * y; } };
struct Arcsin  { template <typename T> static T Fwd(T x) { return std::asin(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / std::sqrt(T(1) - x * x); } };
struct Arccos  { template <typename T> static T Fwd(T x) { return std::acos(x); }
                 template <typename T> static T Grad(T x, T) { return T(-1) / std::sqrt(T(1) - x * x); } };
struct Arctan  { template <typename T> static T Fwd(T x) { return std::atan(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / (T(1) + x * x); } };
struct Sinh    { template <typename T> static T Fwd(T x) { return std::sinh(x); }
                 template <typename T> static T Grad(T x, T) { return std::cosh(x); } };
struct Cosh    { template <typename T> static T Fwd(T x) { return std::cosh(x); }
                 template <typename T> static T Grad(T x, T) { return std::sinh(x); } };
struct Arcsinh { template <typename T> static T Fwd(T x) { return std::asinh(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / std::sqrt(x * x + T(1)); } };
struct Arccosh { template <typename T> static T Fwd(T x) { return std::acosh(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / std::sqrt(x * x - T(1)); } };
struct Arctanh { template <typename T> static T Fwd(T x) { return std::atanh(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / (T(1) - x * x); } };
struct Log2    { template <typename T> static T Fwd(T x) { return std::log2(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / (x * T(std::numbers::ln2)); } };
struct Log10   { template <typename T> static T Fwd(T x) { return std::log10(x); }
                 template <typename T> static T Grad(T x, T) { return T(1) / (x * T(std::numbers::ln10)); } };
struct Cbrt    { template <typename T> static T Fwd(T x) { return std::cbrt(x); }
                 template <typename T> static T Grad(T, T y) { return T(1) / (T(3) * y * y); } };
struct Rcbrt   { template <typename T> static T Fwd(T x) { return T(1) / std::cbrt(x); }
                 template <typename T> static T Grad(T x, T y) { return -y / (T(3) * x); } };
struct Recip   { template <typename T> static T Fwd(T x) { return T(1) / x; }
                 template <typename T> static T Grad(T x, T) { return T(-1) / (x * x); } };
struct Degrees { template <typename T> static T Fwd(T x) { return x * T(180 / std::numbers::pi); }
                 template <typename T> static T Grad(T, T) { return T(180 / std::numbers::pi); } };
struct Radians { template <typename T> static T Fwd(T x) { return x * T(std::numbers::pi / 180); }
                 template <typename T> static T Grad(T, T) { return T(std::numbers::pi / 180); } };
struct Erf     { template <typename T> static T Fwd(T x) { return std::erf(x); }
                 template <typename T> static T Grad(T x, T) { return T(2 / std::sqrt(std::numbers::pi)) * std::exp(-x * x); } };
struct Erfinv  { template <typename T> static T Fwd(T x) { return static_cast<T>(ErfInv(x)); }
                 template <typename T> static T Grad(T, T y) { return T(std::sqrt(std::numbers::pi) / 2) * std::exp(y * y); } };
struct Gamma   { template <typename T> static T Fwd(T x) { return std::tgamma(x); }
                 template <typename T> static T Grad(T x, T y) { return y * static_cast<T>(Digamma(x)); } };
struct Gammaln { template <typename T> static T Fwd(T x) { return static_cast<T>(LogGamma(x)); }
                 template <typename T> static T Grad(T x, T) { return static_cast<T>(Digamma(x)); } };
// MXNet's mshadow_op::softsign and softsign_grad.
struct Softsign { template <typename T> static T Fwd(T x) { return x / (T(1) + std::abs(x)); }
                  template <typename T> static T Grad(T x, T) { const T d = T(1) + std::abs(x); return T(1) / (d * d); } };
// Zero-gradient ops: forward only.
struct Floor   { template <typename T> static T Fwd(T x) { return std::floor(x); } };
struct Round   { template <typename T> static T Fwd(T x) { return std::round(x); } };
struct Sign    { template <typename T> static T Fwd(T x) { return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)); } };
struct Ceil    { template <typename T> static T Fwd(T x) { return std::ceil(x); } };
struct Trunc   { template <typename T> static T Fwd(T x) { return std::trunc(x); } };
// MXNet's rint: the nearer of floor and ceil, a half going to the floor (rint(2.5) = 2, rint(−0.5) = −1).
struct Rint    { template <typename T> static T Fwd(T x) { const T f = std::floor(x), c = std::ceil(x); return x - f <= c - x ? f : c; } };
// clang-format on

template <typename Op>
void AddForward(KernelTable& t, const char* name) {
  AddAny<UnaryKernel<Op, ColdFloat>>(t, name, kFloatMask);
}

}  // namespace

void RegisterUnaryMathKernels(KernelTable& t) {
  AddUnary<Tan, ColdFloat>(t, "tan", "_backward_tan");
  AddUnary<Arcsin, ColdFloat>(t, "arcsin", "_backward_arcsin");
  AddUnary<Arccos, ColdFloat>(t, "arccos", "_backward_arccos");
  AddUnary<Arctan, ColdFloat>(t, "arctan", "_backward_arctan");
  AddUnary<Sinh, ColdFloat>(t, "sinh", "_backward_sinh");
  AddUnary<Cosh, ColdFloat>(t, "cosh", "_backward_cosh");
  AddUnary<Arcsinh, ColdFloat>(t, "arcsinh", "_backward_arcsinh");
  AddUnary<Arccosh, ColdFloat>(t, "arccosh", "_backward_arccosh");
  AddUnary<Arctanh, ColdFloat>(t, "arctanh", "_backward_arctanh");
  AddUnary<Log2, ColdFloat>(t, "log2", "_backward_log2");
  AddUnary<Log10, ColdFloat>(t, "log10", "_backward_log10");
  AddUnary<Cbrt, ColdFloat>(t, "cbrt", "_backward_cbrt");
  AddUnary<Rcbrt, ColdFloat>(t, "rcbrt", "_backward_rcbrt");
  AddUnary<Recip, ColdFloat>(t, "reciprocal", "_backward_reciprocal");
  AddUnary<Degrees, ColdFloat>(t, "degrees", "_backward_degrees");
  AddUnary<Radians, ColdFloat>(t, "radians", "_backward_radians");
  AddUnary<Erf, ColdFloat>(t, "erf", "_backward_erf");
  AddUnary<Erfinv, ColdFloat>(t, "erfinv", "_backward_erfinv");
  AddUnary<Gamma, ColdFloat>(t, "gamma", "_backward_gamma");
  AddUnary<Gammaln, ColdFloat>(t, "gammaln", "_backward_gammaln");
  AddUnary<Softsign, ColdFloat>(t, "softsign", "_backward_softsign");
  AddForward<Floor>(t, "floor");
  AddForward<Round>(t, "round");
  AddForward<Sign>(t, "sign");
  AddForward<Ceil>(t, "ceil");
  AddForward<Trunc>(t, "trunc");
  AddForward<Trunc>(t, "fix");
  AddForward<Rint>(t, "rint");
}

}  // namespace weft::cpu::tensor

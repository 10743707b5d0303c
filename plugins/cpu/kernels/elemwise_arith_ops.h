// weft CPU kernels — the op structs of the element-wise arithmetic (elemwise_* / broadcast_*
// add, sub, mul, div; the arithmetic scalar ops) and of the unary math of the hot path, shared by
// the files that register them: float32 compiled per ISA (elemwise_binary.cc,
// elemwise_broadcast.cc, elemwise_scalar.cc, elemwise_unary.cc) and every other dtype compiled
// once for the baseline ISA (elemwise_wide.cc). Issue 34: one file held them all, in every ISA and
// dtype, and was the build's slowest by far.
//
// Ops see values of Calc<T> (elemwise_kernels.h): float for float16, the element type otherwise.
// Integer semantics are MXNet 1.9's (mshadow_op.h), checked against MXNet 1.9.1 by
// tests/cpu_kernels/tensor_dtype_test.cc:
//   add, sub, mul   native integer arithmetic (wrapping: 3 - 4 is 255 in uint8);
//   div             C++ integer division, truncating toward zero (-7 / 2 = -3);
//                   x / 0 is 0 (MXNet's cpu dies of SIGFPE there; numpy also gives 0);
//   rdiv, power     computed in float, as MXNet's math ops (MXNET_BINARY_MATH_OP) do for every
//                   dtype but float64, then converted (out of range saturates: tensor_util.h);
//   scalar          converted to the array's dtype first (2.5 is 2 for an int32 array).
#pragma once

#include <cmath>
#include <type_traits>

#include "elemwise_kernels.h"
#include "tensor_util.h"
#include "vector_math.h"

namespace weft::cpu::tensor::arith {

/// a / b with MXNet's integer semantics above; floating point: IEEE division.
template <typename T>
T Divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      // INT_MIN / -1 traps on x86; its wrapped value is INT_MIN, as in two's complement.
      using U = std::make_unsigned_t<T>;
      if (b == T(-1)) return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

/// f(a, b) in MXNet's "math" type: double for double, float for everything else, converted back.
template <typename T, typename F>
T InMathType(T a, T b, F f) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  return Convert<T>(f(static_cast<M>(a), static_cast<M>(b)));
}

// clang-format off
// Binary: Fwd(a, b), the partial derivatives Da, Db; kUsesInputs: the backward gets lhs and rhs.
struct Add { static constexpr bool kUsesInputs = false;
             template <typename T> static T Fwd(T a, T b) { return a + b; }
             template <typename T> static T Da(T, T) { return T(1); }
             template <typename T> static T Db(T, T) { return T(1); } };
struct Sub { static constexpr bool kUsesInputs = false;
             template <typename T> static T Fwd(T a, T b) { return a - b; }
             template <typename T> static T Da(T, T) { return T(1); }
             template <typename T> static T Db(T, T) { return T(-1); } };
struct Mul { static constexpr bool kUsesInputs = true;
             template <typename T> static T Fwd(T a, T b) { return a * b; }
             template <typename T> static T Da(T, T b) { return b; }
             template <typename T> static T Db(T a, T) { return a; } };
struct Div { static constexpr bool kUsesInputs = true;
             template <typename T> static T Fwd(T a, T b) { return Divide(a, b); }
             template <typename T> static T Da(T, T b) { return T(1) / b; }
             template <typename T> static T Db(T a, T b) { return -a / (b * b); } };

// Scalar: Fwd(x, s) and the derivative in x; kUsesData: the backward gets the forward input.
struct PlusScalar   { static constexpr bool kUsesData = false;
                      template <typename T> static T Fwd(T x, T s) { return x + s; }
                      template <typename T> static T Grad(T, T) { return T(1); } };
struct MinusScalar  { static constexpr bool kUsesData = false;
                      template <typename T> static T Fwd(T x, T s) { return x - s; }
                      template <typename T> static T Grad(T, T) { return T(1); } };
struct RMinusScalar { static constexpr bool kUsesData = false;
                      template <typename T> static T Fwd(T x, T s) { return s - x; }
                      template <typename T> static T Grad(T, T) { return T(-1); } };
struct MulScalar    { static constexpr bool kUsesData = false;
                      template <typename T> static T Fwd(T x, T s) { return x * s; }
                      template <typename T> static T Grad(T, T s) { return s; } };
struct DivScalar    { static constexpr bool kUsesData = false;
                      template <typename T> static T Fwd(T x, T s) { return Divide(x, s); }
                      template <typename T> static T Grad(T, T s) { return T(1) / s; } };
struct RDivScalar   { static constexpr bool kUsesData = true;
                      template <typename T> static T Fwd(T x, T s) { return InMathType(s, x, [](auto a, auto b) { return a / b; }); }
                      template <typename T> static T Grad(T x, T s) { return -s / (x * x); } };
struct PowerScalar  { static constexpr bool kUsesData = true;
                      template <typename T> static T Fwd(T x, T s) { return InMathType(x, s, [](auto a, auto b) { return std::pow(a, b); }); }
                      template <typename T> static T Grad(T x, T s) { return s * std::pow(x, s - T(1)); } };

// Unary math: Fwd(x) and the derivative Grad(x, y) in terms of the input x and output y.
// float32 exp, sigmoid and tanh take vector_math.h's vectorisable versions (within 3 ulp of libm).
template <typename T>
inline constexpr bool kIsF32 = std::is_same_v<T, float>;

struct Sin      { template <typename T> static T Fwd(T x) { return std::sin(x); }
                  template <typename T> static T Grad(T x, T) { return std::cos(x); } };
struct Cos      { template <typename T> static T Fwd(T x) { return std::cos(x); }
                  template <typename T> static T Grad(T x, T) { return -std::sin(x); } };
struct Exp      { template <typename T> static T Fwd(T x) { if constexpr (kIsF32<T>) return vmath::Exp(x); else return std::exp(x); }
                  template <typename T> static T Grad(T, T y) { return y; } };
struct Log      { template <typename T> static T Fwd(T x) { return std::log(x); }
                  template <typename T> static T Grad(T x, T) { return T(1) / x; } };
struct Sqrt     { template <typename T> static T Fwd(T x) { return std::sqrt(x); }
                  template <typename T> static T Grad(T, T y) { return T(0.5) / y; } };
struct Square   { template <typename T> static T Fwd(T x) { return x * x; }
                  template <typename T> static T Grad(T x, T) { return T(2) * x; } };
struct Abs      { template <typename T> static T Fwd(T x) { return std::abs(x); }
                  template <typename T> static T Grad(T x, T) { return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)); } };
struct Negative { template <typename T> static T Fwd(T x) { return -x; }
                  template <typename T> static T Grad(T, T) { return T(-1); } };
struct Relu     { template <typename T> static T Fwd(T x) { return x > T(0) ? x : T(0); }
                  template <typename T> static T Grad(T x, T) { return x > T(0) ? T(1) : T(0); } };
struct Sigmoid  { template <typename T> static T Fwd(T x) { if constexpr (kIsF32<T>) return vmath::Sigmoid(x); else return T(1) / (T(1) + std::exp(-x)); }
                  template <typename T> static T Grad(T, T y) { return y * (T(1) - y); } };
struct Tanh     { template <typename T> static T Fwd(T x) { if constexpr (kIsF32<T>) return vmath::Tanh(x); else return std::tanh(x); }
                  template <typename T> static T Grad(T, T y) { return T(1) - y * y; } };
struct Rsqrt    { template <typename T> static T Fwd(T x) { return T(1) / std::sqrt(x); }
                  template <typename T> static T Grad(T x, T y) { return T(-0.5) * y / x; } };
struct Log1p    { template <typename T> static T Fwd(T x) { return std::log1p(x); }
                  template <typename T> static T Grad(T x, T) { return T(1) / (T(1) + x); } };
struct Expm1    { template <typename T> static T Fwd(T x) { return std::expm1(x); }
                  template <typename T> static T Grad(T x, T) { return std::exp(x); } };
// clang-format on

// Registration of the arithmetic ops' kernels of flavour Fl, in the groups the float32 files
// (HotFloat) split between them; elemwise_wide.cc registers every group for ColdWide.
template <typename Fl>
void AddElemwiseArith(KernelTable& t) {
  AddElemwise<Add, Fl>(t, "elemwise_add", "_backward_elemwise_add");
  AddElemwise<Sub, Fl>(t, "elemwise_sub", "_backward_elemwise_sub");
  AddElemwise<Mul, Fl>(t, "elemwise_mul", "_backward_elemwise_mul");
  AddElemwise<Div, Fl>(t, "elemwise_div", "_backward_elemwise_div");
}
template <typename Fl>
void AddBroadcastAddSub(KernelTable& t) {
  AddBroadcast<Add, Fl>(t, "broadcast_add", "_backward_broadcast_add");
  AddBroadcast<Sub, Fl>(t, "broadcast_sub", "_backward_broadcast_sub");
}
template <typename Fl>
void AddBroadcastMulDiv(KernelTable& t) {
  AddBroadcast<Mul, Fl>(t, "broadcast_mul", "_backward_broadcast_mul");
  AddBroadcast<Div, Fl>(t, "broadcast_div", "_backward_broadcast_div");
}
template <typename Fl>
void AddScalarArith(KernelTable& t) {
  AddScalar<PlusScalar, Fl>(t, "_plus_scalar", "_backward_plus_scalar");
  AddScalar<MinusScalar, Fl>(t, "_minus_scalar", "_backward_minus_scalar");
  AddScalar<RMinusScalar, Fl>(t, "_rminus_scalar", "_backward_rminus_scalar");
  AddScalar<MulScalar, Fl>(t, "_mul_scalar", "_backward_mul_scalar");
  AddScalar<DivScalar, Fl>(t, "_div_scalar", "_backward_div_scalar");
  AddScalar<RDivScalar, Fl>(t, "_rdiv_scalar", "_backward_rdiv_scalar");
  AddScalar<PowerScalar, Fl>(t, "_power_scalar", "_backward_power_scalar");
}

}  // namespace weft::cpu::tensor::arith

// Unary math of the training hot path (sin cos exp log sqrt square abs negative relu sigmoid tanh
// rsqrt log1p expm1), clip and the arithmetic scalar ops (_plus_scalar ... _power_scalar), forward
// and backward, float32 / float64, in every ISA variant (isa_dispatch.h); the rest of MXNet's
// unary math is elemwise_unary_math.cc, compiled once.
//
// Each op is a small struct: Fwd(x[, s]) and the derivative Grad(x, y[, s]) in terms of the input
// x and output y (backward inputs per OPS.md: unary ops get out_grad, data, output; scalar ops
// get out_grad and, for _rdiv_scalar and _power_scalar, data), run by elemwise_kernels.h. Derivatives at non-smooth
// points follow MXNet: relu'(0) = 0, abs'(0) = 0.
#include <cmath>
#include <type_traits>

#include "elemwise_kernels.h"
#include "vector_math.h"

namespace weft::cpu::tensor {
namespace {

// float32 exp, sigmoid and tanh take vector_math.h's vectorisable versions (within 3 ulp of libm).
template <typename T>
inline constexpr bool kIsF32 = std::is_same_v<T, float>;

// clang-format off
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

// Scalar ops: kUsesData says whether the backward gets the forward input.
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
                      template <typename T> static T Fwd(T x, T s) { return x / s; }
                      template <typename T> static T Grad(T, T s) { return T(1) / s; } };
struct RDivScalar   { static constexpr bool kUsesData = true;
                      template <typename T> static T Fwd(T x, T s) { return s / x; }
                      template <typename T> static T Grad(T x, T s) { return -s / (x * x); } };
struct PowerScalar  { static constexpr bool kUsesData = true;
                      template <typename T> static T Fwd(T x, T s) { return std::pow(x, s); }
                      template <typename T> static T Grad(T x, T s) { return s * std::pow(x, s - T(1)); } };
// clang-format on

// clip: attributes a_min, a_max. Backward inputs: out_grad, data; the gradient passes where
// a_min <= x <= a_max (MXNet's clip backward).
class ClipKernel {
 public:
  explicit ClipKernel(const KernelSetup& s)
      : backward_(s.op_name.rfind("_backward_", 0) == 0),
        lo_(s.attrs.GetFloat("a_min")),
        hi_(s.attrs.GetFloat("a_max")) {
    CheckElementwise<kFloatMask>(s, backward_ ? 2 : 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("clip", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
      if (backward_) {
        Map(
            OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], [lo, hi](T g, T x) { return x < lo || x > hi ? T(0) : g; },
            InPtr<T>(c, 0), InPtr<T>(c, 1));
      } else {
        Map(
            OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); },
            InPtr<T>(c, 0));
      }
    });
  }

 private:
  bool backward_;
  double lo_, hi_;
};

}  // namespace

void RegisterUnaryKernels(KernelTable& t) {
  AddUnary<Sin, HotFloat>(t, "sin", "_backward_sin");
  AddUnary<Cos, HotFloat>(t, "cos", "_backward_cos");
  AddUnary<Exp, HotFloat>(t, "exp", "_backward_exp");
  AddUnary<Log, HotFloat>(t, "log", "_backward_log");
  AddUnary<Sqrt, HotFloat>(t, "sqrt", "_backward_sqrt");
  AddUnary<Square, HotFloat>(t, "square", "_backward_square");
  AddUnary<Abs, HotFloat>(t, "abs", "_backward_abs");
  AddUnary<Negative, HotFloat>(t, "negative", "_backward_negative");
  AddUnary<Relu, HotFloat>(t, "relu", "_backward_relu");
  AddUnary<Sigmoid, HotFloat>(t, "sigmoid", "_backward_sigmoid");
  AddUnary<Tanh, HotFloat>(t, "tanh", "_backward_tanh");
  AddUnary<Rsqrt, HotFloat>(t, "rsqrt", "_backward_rsqrt");
  AddUnary<Log1p, HotFloat>(t, "log1p", "_backward_log1p");
  AddUnary<Expm1, HotFloat>(t, "expm1", "_backward_expm1");
  t.Add<ClipKernel>("clip", kFloatMask);
  t.Add<ClipKernel>("_backward_clip", kFloatMask);
  AddScalar<PlusScalar, HotFloat>(t, "_plus_scalar", "_backward_plus_scalar");
  AddScalar<MinusScalar, HotFloat>(t, "_minus_scalar", "_backward_minus_scalar");
  AddScalar<RMinusScalar, HotFloat>(t, "_rminus_scalar", "_backward_rminus_scalar");
  AddScalar<MulScalar, HotFloat>(t, "_mul_scalar", "_backward_mul_scalar");
  AddScalar<DivScalar, HotFloat>(t, "_div_scalar", "_backward_div_scalar");
  AddScalar<RDivScalar, HotFloat>(t, "_rdiv_scalar", "_backward_rdiv_scalar");
  AddScalar<PowerScalar, HotFloat>(t, "_power_scalar", "_backward_power_scalar");
}

}  // namespace weft::cpu::tensor

// Unary math (sin cos exp log sqrt square abs negative relu sigmoid tanh rsqrt log1p expm1; floor
// round sign, whose gradient is zero), clip and the scalar ops (_plus_scalar ... _power_scalar),
// forward and backward, float32 / float64.
//
// Each op is a small struct: Fwd(x[, s]) and the derivative Grad(x, y[, s]) in terms of the input
// x and output y (backward inputs per OPS.md: unary ops get out_grad, data, output; scalar ops
// get out_grad and, for _rdiv_scalar and _power_scalar, data). Four kernel templates serve them
// all through the Map driver. Derivatives at non-smooth points follow MXNet: relu'(0) = 0,
// abs'(0) = 0.
#include <cmath>
#include <type_traits>

#include "elemwise_driver.h"
#include "tensor_kernels.h"
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
// Zero-gradient ops (OPS.md): forward only.
struct Floor    { template <typename T> static T Fwd(T x) { return std::floor(x); } };
struct Round    { template <typename T> static T Fwd(T x) { return std::round(x); } };
struct Sign     { template <typename T> static T Fwd(T x) { return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)); } };

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

// Shared setup: one input (plus backward extras) of the output's element count and dtype.
void CheckElementwise(const KernelSetup& s, int inputs) {
  s.ExpectCounts(inputs, 1);
  RequireSameDType(s);
  DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.inputs[i].size() != s.outputs[0].size()) {
      Invalid(s, "input " + std::to_string(i) + " has shape " + sdk::FormatTuple(s.inputs[i].shape) + ", output " +
                     sdk::FormatTuple(s.outputs[0].shape) + "; element-wise ops keep the shape");
    }
  }
}

template <typename T>
const T* In(const KernelCall& c, size_t i) {
  return static_cast<const T*>(c.inputs[i].raw());
}
template <typename T>
T* Out(const KernelCall& c) {
  return static_cast<T*>(c.outputs[0].raw());
}

template <typename Op>
class UnaryKernel {
 public:
  explicit UnaryKernel(const KernelSetup& s) { CheckElementwise(s, 1); }
  void Compute(const KernelCall& c) const {
    DispatchFloat("unary", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Map(
          Out<T>(c), c.outputs[0].size(), c.req[0], [](T x) { return Op::Fwd(x); }, In<T>(c, 0));
    });
  }
};

// Inputs: out_grad, data, output.
template <typename Op>
class UnaryBackwardKernel {
 public:
  explicit UnaryBackwardKernel(const KernelSetup& s) { CheckElementwise(s, 3); }
  void Compute(const KernelCall& c) const {
    DispatchFloat("unary backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Map(
          Out<T>(c), c.outputs[0].size(), c.req[0], [](T g, T x, T y) { return g * Op::Grad(x, y); }, In<T>(c, 0),
          In<T>(c, 1), In<T>(c, 2));
    });
  }
};

template <typename Op>
class ScalarKernel {
 public:
  explicit ScalarKernel(const KernelSetup& s) : scalar_(s.attrs.GetFloat("scalar")) { CheckElementwise(s, 1); }
  void Compute(const KernelCall& c) const {
    DispatchFloat("scalar op", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T s = static_cast<T>(scalar_);
      Map(
          Out<T>(c), c.outputs[0].size(), c.req[0], [s](T x) { return Op::Fwd(x, s); }, In<T>(c, 0));
    });
  }

 private:
  double scalar_;
};

// Inputs: out_grad[, data].
template <typename Op>
class ScalarBackwardKernel {
 public:
  explicit ScalarBackwardKernel(const KernelSetup& s) : scalar_(s.attrs.GetFloat("scalar")) {
    CheckElementwise(s, Op::kUsesData ? 2 : 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("scalar op backward", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T s = static_cast<T>(scalar_);
      const int64_t n = c.outputs[0].size();
      if constexpr (Op::kUsesData) {
        Map(
            Out<T>(c), n, c.req[0], [s](T g, T x) { return g * Op::Grad(x, s); }, In<T>(c, 0), In<T>(c, 1));
      } else {
        const T d = Op::Grad(T(0), s);
        Map(
            Out<T>(c), n, c.req[0], [d](T g) { return g * d; }, In<T>(c, 0));
      }
    });
  }

 private:
  double scalar_;
};

// clip: attributes a_min, a_max. Backward inputs: out_grad, data; the gradient passes where
// a_min <= x <= a_max (MXNet's clip backward).
class ClipKernel {
 public:
  explicit ClipKernel(const KernelSetup& s)
      : backward_(s.op_name.rfind("_backward_", 0) == 0),
        lo_(s.attrs.GetFloat("a_min")),
        hi_(s.attrs.GetFloat("a_max")) {
    CheckElementwise(s, backward_ ? 2 : 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("clip", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
      if (backward_) {
        Map(
            Out<T>(c), c.outputs[0].size(), c.req[0], [lo, hi](T g, T x) { return x < lo || x > hi ? T(0) : g; },
            In<T>(c, 0), In<T>(c, 1));
      } else {
        Map(
            Out<T>(c), c.outputs[0].size(), c.req[0], [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); },
            In<T>(c, 0));
      }
    });
  }

 private:
  bool backward_;
  double lo_, hi_;
};

template <typename Op>
void AddUnary(KernelTable& t, const std::string& name) {
  t.Add<UnaryKernel<Op>>(name, kFloatMask);
  t.Add<UnaryBackwardKernel<Op>>("_backward_" + name, kFloatMask);
}

template <typename Op>
void AddScalar(KernelTable& t, const std::string& name) {
  t.Add<ScalarKernel<Op>>(name, kFloatMask);
  t.Add<ScalarBackwardKernel<Op>>("_backward" + name, kFloatMask);
}

}  // namespace

void RegisterUnaryKernels(KernelTable& t) {
  AddUnary<Sin>(t, "sin");
  AddUnary<Cos>(t, "cos");
  AddUnary<Exp>(t, "exp");
  AddUnary<Log>(t, "log");
  AddUnary<Sqrt>(t, "sqrt");
  AddUnary<Square>(t, "square");
  AddUnary<Abs>(t, "abs");
  AddUnary<Negative>(t, "negative");
  AddUnary<Relu>(t, "relu");
  AddUnary<Sigmoid>(t, "sigmoid");
  AddUnary<Tanh>(t, "tanh");
  AddUnary<Rsqrt>(t, "rsqrt");
  AddUnary<Log1p>(t, "log1p");
  AddUnary<Expm1>(t, "expm1");
  t.Add<UnaryKernel<Floor>>("floor", kFloatMask);
  t.Add<UnaryKernel<Round>>("round", kFloatMask);
  t.Add<UnaryKernel<Sign>>("sign", kFloatMask);
  t.Add<ClipKernel>("clip", kFloatMask);
  t.Add<ClipKernel>("_backward_clip", kFloatMask);
  AddScalar<PlusScalar>(t, "_plus_scalar");
  AddScalar<MinusScalar>(t, "_minus_scalar");
  AddScalar<RMinusScalar>(t, "_rminus_scalar");
  AddScalar<MulScalar>(t, "_mul_scalar");
  AddScalar<DivScalar>(t, "_div_scalar");
  AddScalar<RDivScalar>(t, "_rdiv_scalar");
  AddScalar<PowerScalar>(t, "_power_scalar");
}

}  // namespace weft::cpu::tensor

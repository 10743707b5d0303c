// Binary math beyond the arithmetic of elemwise_binary.cc: mod, power, maximum, minimum, hypot as
// _<op> (equal shapes), broadcast_<op> and _<op>_scalar, plus _rmod_scalar, _rpower_scalar and
// _grad_add, forward (float32, float64, int32, int64; hypot float only) and backward (float32,
// float64), compiled for the baseline ISA only (elemwise_kernels.h). Formulas are MXNet 1.9's
// mshadow_op functors:
//   mod(a, b)   Python's %: the result takes b's sign; 0 where b = 0 (computed in double).
//               d/da = 1, d/db = −⌊a / b⌋.
//   power       integer results out of range saturate (tensor_util.h Convert);
//               d/da = b·a^(b−1), d/db = a^b·ln a.
//   maximum     NaN where either side is NaN;
//               lhs gets the gradient where lhs ≥ rhs, rhs where rhs > lhs (ties go to lhs);
//   minimum     likewise with ≤ and <. The scalar forms pass it where data ≥ (≤) scalar.
//   hypot       √(a² + b²); d/da = a / hypot, d/db = b / hypot.
#include <cmath>
#include <type_traits>

#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {
namespace {

template <typename T>
T PyMod(T a, T b) {
  const double x = static_cast<double>(a), y = static_cast<double>(b);
  if (y == 0) return T(0);
  double r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return static_cast<T>(r);
}

// Integer results out of the dtype's range (an overflowing power, 0 to a negative power) saturate
// as every float-to-integer conversion in the plugin does (Convert); a plain cast is undefined.
template <typename T>
T Pow(T a, T b) {
  return Convert<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
}

// MXNet 1.9's maximum and minimum give NaN when either side is NaN (a plain a > b ? a : b would
// drop a NaN on the left).
template <typename T>
T Max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a)) return a;
  return a > b ? a : b;
}
template <typename T>
T Min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a)) return a;
  return a < b ? a : b;
}

// clang-format off
struct Mod     { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return PyMod(a, b); }
                 template <typename T> static T Da(T, T) { return T(1); }
                 template <typename T> static T Db(T a, T b) { return -std::floor(a / b); } };
struct Power   { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return Pow(a, b); }
                 template <typename T> static T Da(T a, T b) { return b * std::pow(a, b - T(1)); }
                 template <typename T> static T Db(T a, T b) { return std::pow(a, b) * std::log(a); } };
struct Maximum { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return Max(a, b); }
                 template <typename T> static T Da(T a, T b) { return a >= b ? T(1) : T(0); }
                 template <typename T> static T Db(T a, T b) { return a < b ? T(1) : T(0); } };
struct Minimum { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return Min(a, b); }
                 template <typename T> static T Da(T a, T b) { return a <= b ? T(1) : T(0); }
                 template <typename T> static T Db(T a, T b) { return a > b ? T(1) : T(0); } };
struct Hypot   { static constexpr bool kUsesInputs = true;
                 template <typename T> static T Fwd(T a, T b) { return std::hypot(a, b); }
                 template <typename T> static T Da(T a, T b) { return a / std::hypot(a, b); }
                 template <typename T> static T Db(T a, T b) { return b / std::hypot(a, b); } };

// Scalar forms: Fwd(data, scalar) and the derivative in data.
struct ModScalar  { static constexpr bool kUsesData = false;
                    template <typename T> static T Fwd(T x, T s) { return PyMod(x, s); }
                    template <typename T> static T Grad(T, T) { return T(1); } };
struct RModScalar { static constexpr bool kUsesData = true;
                    template <typename T> static T Fwd(T x, T s) { return PyMod(s, x); }
                    template <typename T> static T Grad(T x, T s) { return -std::floor(s / x); } };
struct RPowerScalar { static constexpr bool kUsesData = true;
                      template <typename T> static T Fwd(T x, T s) { return Pow(s, x); }
                      template <typename T> static T Grad(T x, T s) { return std::pow(s, x) * std::log(s); } };
struct MaximumScalar { static constexpr bool kUsesData = true;
                       template <typename T> static T Fwd(T x, T s) { return Max(x, s); }
                       template <typename T> static T Grad(T x, T s) { return x >= s ? T(1) : T(0); } };
struct MinimumScalar { static constexpr bool kUsesData = true;
                       template <typename T> static T Fwd(T x, T s) { return Min(x, s); }
                       template <typename T> static T Grad(T x, T s) { return x <= s ? T(1) : T(0); } };
struct HypotScalar { static constexpr bool kUsesData = true;
                     template <typename T> static T Fwd(T x, T s) { return std::hypot(x, s); }
                     template <typename T> static T Grad(T x, T s) { return x / std::hypot(x, s); } };
// clang-format on

}  // namespace

void RegisterMathKernels(KernelTable& t) {
  AddElemwise<Mod, ColdIndex>(t, "_mod", "_backward_mod");
  AddBroadcast<Mod, ColdIndex>(t, "broadcast_mod", "_backward_broadcast_mod");
  AddScalar<ModScalar, ColdIndex>(t, "_mod_scalar", "_backward_mod_scalar");
  AddScalar<RModScalar, ColdIndex>(t, "_rmod_scalar", "_backward_rmod_scalar");
  AddElemwise<Power, ColdIndex>(t, "_power", "_backward_power");
  AddBroadcast<Power, ColdIndex>(t, "broadcast_power", "_backward_broadcast_power");
  AddScalar<RPowerScalar, ColdIndex>(t, "_rpower_scalar", "_backward_rpower_scalar");
  AddElemwise<Maximum, ColdIndex>(t, "_maximum", "_backward_maximum");
  AddBroadcast<Maximum, ColdIndex>(t, "broadcast_maximum", "_backward_broadcast_maximum");
  AddScalar<MaximumScalar, ColdIndex>(t, "_maximum_scalar", "_backward_maximum_scalar");
  AddElemwise<Minimum, ColdIndex>(t, "_minimum", "_backward_minimum");
  AddBroadcast<Minimum, ColdIndex>(t, "broadcast_minimum", "_backward_broadcast_minimum");
  AddScalar<MinimumScalar, ColdIndex>(t, "_minimum_scalar", "_backward_minimum_scalar");
  AddElemwise<Hypot, ColdFloat>(t, "_hypot", "_backward_hypot");
  AddBroadcast<Hypot, ColdFloat>(t, "broadcast_hypot", "_backward_broadcast_hypot");
  AddScalar<HypotScalar, ColdFloat>(t, "_hypot_scalar", "_backward_hypot_scalar");
  AddAny<ElemwiseKernel<arith::Add, ColdFloat>>(t, "_grad_add", kFloatMask);
}

}  // namespace weft::cpu::tensor

// Comparisons (equal, not_equal, greater, greater_equal, lesser, lesser_equal), logic (logical_and,
// logical_or, logical_xor) and logical_not: 1 where true, 0 elsewhere, in the input's dtype
// (MXNet's classic semantics), each as _<op> (equal shapes), _<op>_scalar and broadcast_<op>, in
// every dtype MXNet 1.9's cpu has: float32, float64, float16 (compared in float), int32, int64,
// uint8, int8; the scalar is converted to the array's dtype first, as in MXNet (2.5 is 2 for an
// int32 array). Forward only: their gradient is zero by definition. Compiled for the baseline ISA
// only (elemwise_kernels.h). And _contrib_allclose, one flag for two whole arrays.
#include <cmath>
#include <type_traits>

#include "elemwise_kernels.h"
#include "weft/sdk/ops/elemwise_binary.hpp"

namespace weft::cpu::tensor {
namespace {

template <typename T>
bool True(T v) {
  return v != T(0);
}

// clang-format off
struct Equal        { template <typename T> static T Fwd(T a, T b) { return a == b ? T(1) : T(0); } };
struct NotEqual     { template <typename T> static T Fwd(T a, T b) { return a != b ? T(1) : T(0); } };
struct Greater      { template <typename T> static T Fwd(T a, T b) { return a > b ? T(1) : T(0); } };
struct GreaterEqual { template <typename T> static T Fwd(T a, T b) { return a >= b ? T(1) : T(0); } };
struct Lesser       { template <typename T> static T Fwd(T a, T b) { return a < b ? T(1) : T(0); } };
struct LesserEqual  { template <typename T> static T Fwd(T a, T b) { return a <= b ? T(1) : T(0); } };
struct LogicalAnd   { template <typename T> static T Fwd(T a, T b) { return True(a) && True(b) ? T(1) : T(0); } };
struct LogicalOr    { template <typename T> static T Fwd(T a, T b) { return True(a) || True(b) ? T(1) : T(0); } };
struct LogicalXor   { template <typename T> static T Fwd(T a, T b) { return True(a) != True(b) ? T(1) : T(0); } };
struct LogicalNot   { template <typename T> static T Fwd(T x) { return True(x) ? T(0) : T(1); } };
// clang-format on

// Forward kernels only: the gradient is zero by definition.
template <typename Op>
void AddCompare(KernelTable& t, const char* elemwise, const char* scalar, const char* broadcast) {
  AddAny<ElemwiseKernel<Op, ColdAll>>(t, elemwise, ColdAll::kMask);
  AddAny<ScalarKernel<Op, ColdAll>>(t, scalar, ColdAll::kMask);
  AddAny<BroadcastKernel<Op, ColdAll>>(t, broadcast, ColdAll::kMask);
}

// _contrib_allclose: one uint8 flag, MXNet's rule (contrib/allclose_op-inl.h): a NaN matches a
// NaN only with equal_nan; equal values (infinities too) pass; otherwise |a − b| <= atol + rtol·|b|
// with no infinity involved. Floats compare in their own precision (float16 in float), integers
// in double.
class AllCloseKernel {
 public:
  explicit AllCloseKernel(const KernelSetup& s) : AllCloseKernel(s, s.Params<sdk::AllCloseParam>()) {}
  AllCloseKernel(const KernelSetup& s, const sdk::AllCloseParam& p)
      : rtol_(p.rtol), atol_(p.atol), equal_nan_(p.equal_nan) {
    s.ExpectCounts(2, 1);
    if (s.inputs[0].dtype != s.inputs[1].dtype || s.inputs[0].shape != s.inputs[1].shape)
      Invalid(s, "a and b must have one shape and dtype");
    DispatchAll(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    if (s.outputs[0].dtype != WEFT_DTYPE_UINT8 || s.outputs[0].size() != 1)
      Invalid(s, "the output is one uint8 element");
  }
  void Compute(const KernelCall& c) const {
    bool all = true;
    DispatchAll("_contrib_allclose", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_floating_point_v<Calc<T>>, Calc<T>, double>;
      const T* a = InPtr<T>(c, 0);
      const T* b = InPtr<T>(c, 1);
      const C rtol = static_cast<C>(rtol_), atol = static_cast<C>(atol_);
      for (int64_t i = 0, n = c.inputs[0].size(); i < n && all; ++i) {
        const C x = static_cast<C>(ToCalc(a[i])), y = static_cast<C>(ToCalc(b[i]));
        if (std::isnan(x) || std::isnan(y)) {
          all = equal_nan_ && std::isnan(x) && std::isnan(y);
        } else {
          all = x == y || (!std::isinf(x) && !std::isinf(y) && std::fabs(x - y) <= atol + rtol * std::fabs(y));
        }
      }
    });
    const uint8_t flag = all ? 1 : 0;
    Map<false>(
        OutPtr<uint8_t>(c, 0), 1, c.req[0], [](uint8_t v) { return v; }, &flag);
  }

 private:
  double rtol_, atol_;
  bool equal_nan_;
};

}  // namespace

void RegisterCompareKernels(KernelTable& t) {
  AddAny<AllCloseKernel>(t, "_contrib_allclose", kAllMask);
  AddCompare<Equal>(t, "_equal", "_equal_scalar", "broadcast_equal");
  AddCompare<NotEqual>(t, "_not_equal", "_not_equal_scalar", "broadcast_not_equal");
  AddCompare<Greater>(t, "_greater", "_greater_scalar", "broadcast_greater");
  AddCompare<GreaterEqual>(t, "_greater_equal", "_greater_equal_scalar", "broadcast_greater_equal");
  AddCompare<Lesser>(t, "_lesser", "_lesser_scalar", "broadcast_lesser");
  AddCompare<LesserEqual>(t, "_lesser_equal", "_lesser_equal_scalar", "broadcast_lesser_equal");
  AddCompare<LogicalAnd>(t, "_logical_and", "_logical_and_scalar", "broadcast_logical_and");
  AddCompare<LogicalOr>(t, "_logical_or", "_logical_or_scalar", "broadcast_logical_or");
  AddCompare<LogicalXor>(t, "_logical_xor", "_logical_xor_scalar", "broadcast_logical_xor");
  AddAny<UnaryKernel<LogicalNot, ColdAll>>(t, "logical_not", ColdAll::kMask);
}

}  // namespace weft::cpu::tensor

// Comparisons (equal, not_equal, greater, greater_equal, lesser, lesser_equal), logic (logical_and,
// logical_or, logical_xor) and logical_not: 1 where true, 0 elsewhere, in the input's dtype
// (MXNet's classic semantics), each as _<op> (equal shapes), _<op>_scalar and broadcast_<op>, in
// every dtype MXNet 1.9's cpu has: float32, float64, float16 (compared in float), int32, int64,
// uint8, int8; the scalar is converted to the array's dtype first, as in MXNet (2.5 is 2 for an
// int32 array). Forward only: their gradient is zero by definition. Compiled for the baseline ISA
// only (elemwise_kernels.h).
#include "elemwise_kernels.h"

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
  t.Add<ElemwiseKernel<Op, ColdAll>>(elemwise, ColdAll::kMask);
  t.Add<ScalarKernel<Op, ColdAll>>(scalar, ColdAll::kMask);
  t.Add<BroadcastKernel<Op, ColdAll>>(broadcast, ColdAll::kMask);
}

}  // namespace

void RegisterCompareKernels(KernelTable& t) {
  AddCompare<Equal>(t, "_equal", "_equal_scalar", "broadcast_equal");
  AddCompare<NotEqual>(t, "_not_equal", "_not_equal_scalar", "broadcast_not_equal");
  AddCompare<Greater>(t, "_greater", "_greater_scalar", "broadcast_greater");
  AddCompare<GreaterEqual>(t, "_greater_equal", "_greater_equal_scalar", "broadcast_greater_equal");
  AddCompare<Lesser>(t, "_lesser", "_lesser_scalar", "broadcast_lesser");
  AddCompare<LesserEqual>(t, "_lesser_equal", "_lesser_equal_scalar", "broadcast_lesser_equal");
  AddCompare<LogicalAnd>(t, "_logical_and", "_logical_and_scalar", "broadcast_logical_and");
  AddCompare<LogicalOr>(t, "_logical_or", "_logical_or_scalar", "broadcast_logical_or");
  AddCompare<LogicalXor>(t, "_logical_xor", "_logical_xor_scalar", "broadcast_logical_xor");
  t.Add<UnaryKernel<LogicalNot, ColdAll>>("logical_not", ColdAll::kMask);
}

}  // namespace weft::cpu::tensor

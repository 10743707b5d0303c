// Unary math of the training hot path (exp sqrt square abs negative relu sigmoid tanh rsqrt) and
// clip, forward and backward: float32 in every ISA variant (isa_dispatch.h), float64 once for the
// baseline ISA. sin, cos, log, log1p and expm1 call libm, whose loops no ISA variant vectorises:
// one baseline copy of each (issue 34). The rest of MXNet's unary math is elemwise_unary_math.cc,
// the arithmetic scalar ops elemwise_scalar.cc. The ops are elemwise_arith_ops.h's.
//
// Backward inputs per OPS.md: out_grad, data, output. Derivatives at non-smooth points follow
// MXNet: relu'(0) = 0, abs'(0) = 0.
#include <type_traits>

#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"
#include "weft/sdk/ops/elemwise_unary.hpp"

namespace weft::cpu::tensor {
namespace {

using namespace arith;

/// float64 alone, baseline ISA: the hot ops' second dtype.
using ColdDouble = Flavor<false, WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64)>;

// The op in float32 per ISA and in float64 once (two kernel classes, disjoint dtypes).
template <typename Op>
void AddHotUnary(KernelTable& t, const char* name, const char* backward) {
  AddUnary<Op, HotFloat>(t, name, backward);
  AddUnary<Op, ColdDouble>(t, name, backward);
}

// clip: attributes a_min, a_max. Backward inputs: out_grad, data; the gradient passes where
// a_min <= x <= a_max (MXNet's clip backward).
class ClipKernel {
 public:
  explicit ClipKernel(const KernelSetup& s)
      : backward_(s.op_name.rfind("_backward_", 0) == 0),
        lo_(s.Params<sdk::ClipParam>().a_min),
        hi_(s.Params<sdk::ClipParam>().a_max) {
    CheckElementwise<kFloatMask>(s, backward_ ? 2 : 1);
  }
  void Compute(const KernelCall& c) const {
    DispatchFloat("clip", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr bool kIsa = std::is_same_v<T, float>;  // float64 is off the hot path
      const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
      if (backward_) {
        Map<kIsa>(
            OutPtr<T>(c, 0), c.outputs[0].size(), c.req[0], [lo, hi](T g, T x) { return x < lo || x > hi ? T(0) : g; },
            InPtr<T>(c, 0), InPtr<T>(c, 1));
      } else {
        Map<kIsa>(
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
  AddUnary<Sin, ColdFloat>(t, "sin", "_backward_sin");
  AddUnary<Cos, ColdFloat>(t, "cos", "_backward_cos");
  AddHotUnary<Exp>(t, "exp", "_backward_exp");
  AddUnary<Log, ColdFloat>(t, "log", "_backward_log");
  AddHotUnary<Sqrt>(t, "sqrt", "_backward_sqrt");
  AddHotUnary<Square>(t, "square", "_backward_square");
  AddHotUnary<Abs>(t, "abs", "_backward_abs");
  AddHotUnary<Negative>(t, "negative", "_backward_negative");
  AddHotUnary<Relu>(t, "relu", "_backward_relu");
  AddHotUnary<Sigmoid>(t, "sigmoid", "_backward_sigmoid");
  AddHotUnary<Tanh>(t, "tanh", "_backward_tanh");
  AddHotUnary<Rsqrt>(t, "rsqrt", "_backward_rsqrt");
  AddUnary<Log1p, ColdFloat>(t, "log1p", "_backward_log1p");
  AddUnary<Expm1, ColdFloat>(t, "expm1", "_backward_expm1");
  AddAny<ClipKernel>(t, "clip", kFloatMask);
  AddAny<ClipKernel>(t, "_backward_clip", kFloatMask);
}

}  // namespace weft::cpu::tensor

// The arithmetic scalar ops (_plus_scalar ... _power_scalar), forward and backward, float32 in every
// ISA variant (isa_dispatch.h); the other dtypes are elemwise_wide.cc's. Backward inputs per OPS.md:
// out_grad and, for _rdiv_scalar and _power_scalar, data. Split from elemwise_unary.cc so that the
// two compile in parallel (issue 34).
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterScalarKernels(KernelTable& t) {
  using namespace arith;
  AddScalar<PlusScalar, HotFloat>(t, "_plus_scalar", "_backward_plus_scalar");
  AddScalar<MinusScalar, HotFloat>(t, "_minus_scalar", "_backward_minus_scalar");
  AddScalar<RMinusScalar, HotFloat>(t, "_rminus_scalar", "_backward_rminus_scalar");
  AddScalar<MulScalar, HotFloat>(t, "_mul_scalar", "_backward_mul_scalar");
  AddScalar<DivScalar, HotFloat>(t, "_div_scalar", "_backward_div_scalar");
  AddScalar<RDivScalar, HotFloat>(t, "_rdiv_scalar", "_backward_rdiv_scalar");
  AddScalar<PowerScalar, HotFloat>(t, "_power_scalar", "_backward_power_scalar");
}

}  // namespace weft::cpu::tensor

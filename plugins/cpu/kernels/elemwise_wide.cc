// The dtypes of the arithmetic ops off the training hot path, compiled once for the baseline ISA
// (issue 34): elemwise_* and broadcast_* add/sub/mul/div and the arithmetic scalar ops in float64
// (forward and backward) and float16, int32, int64, uint8, int8 (forward: MXNet 1.9's cpu has
// them all; issue 28). Their float32 kernels, compiled per ISA, are elemwise_binary.cc's,
// elemwise_broadcast.cc's and elemwise_scalar.cc's; the ops and their integer semantics are
// elemwise_arith_ops.h's. float16 computes in float and rounds once per op, as MXNet does.
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterWideArithKernels(KernelTable& t) {
  using namespace arith;
  AddElemwise<Add, ColdWide>(t, "elemwise_add", "_backward_elemwise_add");
  AddElemwise<Sub, ColdWide>(t, "elemwise_sub", "_backward_elemwise_sub");
  AddElemwise<Mul, ColdWide>(t, "elemwise_mul", "_backward_elemwise_mul");
  AddElemwise<Div, ColdWide>(t, "elemwise_div", "_backward_elemwise_div");
  AddBroadcast<Add, ColdWide>(t, "broadcast_add", "_backward_broadcast_add");
  AddBroadcast<Sub, ColdWide>(t, "broadcast_sub", "_backward_broadcast_sub");
  AddBroadcast<Mul, ColdWide>(t, "broadcast_mul", "_backward_broadcast_mul");
  AddBroadcast<Div, ColdWide>(t, "broadcast_div", "_backward_broadcast_div");
  AddScalar<PlusScalar, ColdWide>(t, "_plus_scalar", "_backward_plus_scalar");
  AddScalar<MinusScalar, ColdWide>(t, "_minus_scalar", "_backward_minus_scalar");
  AddScalar<RMinusScalar, ColdWide>(t, "_rminus_scalar", "_backward_rminus_scalar");
  AddScalar<MulScalar, ColdWide>(t, "_mul_scalar", "_backward_mul_scalar");
  AddScalar<DivScalar, ColdWide>(t, "_div_scalar", "_backward_div_scalar");
  AddScalar<RDivScalar, ColdWide>(t, "_rdiv_scalar", "_backward_rdiv_scalar");
  AddScalar<PowerScalar, ColdWide>(t, "_power_scalar", "_backward_power_scalar");
}

}  // namespace weft::cpu::tensor

// The dtypes of the arithmetic ops off the training hot path, compiled once for the baseline ISA
// (issue 34): elemwise_* and broadcast_* add/sub/mul/div and the arithmetic scalar ops in float64
// and float16 (forward and backward) and int32, int64, uint8, int8 (forward: MXNet 1.9's cpu has
// them all; issue 28). Their float32 kernels, compiled per ISA, are elemwise_binary.cc's,
// elemwise_broadcast.cc's and elemwise_scalar.cc's; the ops and their integer semantics are
// elemwise_arith_ops.h's. float16 computes in float and rounds once per op, as MXNet does.
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterWideArithKernels(KernelTable& t) {
  arith::AddElemwiseArith<ColdWide>(t);
  arith::AddBroadcastAddSub<ColdWide>(t);
  arith::AddBroadcastMulDiv<ColdWide>(t);
  arith::AddScalarArith<ColdWide>(t);
}

}  // namespace weft::cpu::tensor

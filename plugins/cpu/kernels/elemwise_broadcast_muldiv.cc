// broadcast_mul and broadcast_div, forward and backward, float32 in every ISA variant
// (isa_dispatch.h): the other half of elemwise_broadcast.cc (which says why it is split). The
// backward gets lhs and rhs and sums out_grad * D over the axes an operand was repeated along.
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterBroadcastMulDivKernels(KernelTable& t) { arith::AddBroadcastMulDiv<HotFloat>(t); }

}  // namespace weft::cpu::tensor

// broadcast_add and broadcast_sub (NumPy broadcasting: shapes right-aligned, extent 1 repeats),
// forward and backward, float32 in every ISA variant (isa_dispatch.h); broadcast_mul and
// broadcast_div are elemwise_broadcast_muldiv.cc's, the other dtypes elemwise_wide.cc's. Split from
// elemwise_binary.cc, and in two, so that the parts compile in parallel (issue 34).
//
// The broadcast backward sums out_grad * D over the axes an operand was repeated along
// (reduce_driver.h); when the derivative is a constant (add, sub) that is one reduction of
// out_grad itself.
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterBroadcastBinaryKernels(KernelTable& t) { arith::AddBroadcastAddSub<HotFloat>(t); }

}  // namespace weft::cpu::tensor

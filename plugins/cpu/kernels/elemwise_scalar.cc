// The arithmetic scalar ops (_plus_scalar ... _power_scalar), forward and backward, float32 in every
// ISA variant (isa_dispatch.h); the other dtypes are elemwise_wide.cc's. Backward inputs per OPS.md:
// out_grad and, for _rdiv_scalar and _power_scalar, data. Split from elemwise_unary.cc so that the
// two compile in parallel (issue 34).
#include "elemwise_arith_ops.h"
#include "elemwise_kernels.h"

namespace weft::cpu::tensor {

void RegisterScalarKernels(KernelTable& t) { arith::AddScalarArith<HotFloat>(t); }

}  // namespace weft::cpu::tensor

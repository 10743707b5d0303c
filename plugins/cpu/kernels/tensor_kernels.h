// weft CPU kernels — tensor, element-wise and reduction ops (core/operator/OPS.md), internal to
// weft_cpu_kernels. weft::cpu::RegisterTensorKernels (cpu_kernels.h) calls every family below.
//
// dtypes: math (element-wise, reductions, dot) in float32 and float64; data movement (copy, reshape, concat,
// split, transpose, zeros_like / ones_like) and Cast in float32, float64, float16, uint8, int8, int32, int64; one_hot
// indices and argmax in float32, float64, int32, int64; random samplers (random_sample.cc) in float16/32/64, randint
// in int32 and int64. Every kernel honours req (write, write-inplace, add-to, null).
#pragma once

#include <string>

#include "tensor_any_kernel.h"
#include "tensor_util.h"
#include "weft/sdk/cpp/host_kernel.hpp"

namespace weft::cpu::tensor {

using sdk::KernelCall;
using sdk::KernelSetup;
using sdk::KernelTable;
using sdk::Tensor;
using sdk::TensorDesc;

/// "op: message" as WEFT_ERR_INVALID_ARGUMENT (inconsistent shapes or counts).
[[noreturn]] void Invalid(const KernelSetup& s, const std::string& message);
/// "op: message" as WEFT_ERR_UNSUPPORTED (values the kernels do not implement).
[[noreturn]] void Unsupported(const KernelSetup& s, const std::string& message);
/// Throws Invalid unless every input and output has the dtype of input 0.
void RequireSameDType(const KernelSetup& s);
/// An axis attribute value in [-ndim, ndim) made non-negative; Invalid otherwise.
int NormalizeAxis(const KernelSetup& s, int64_t axis, int ndim, const char* attr);

// One registration function per source file.
void RegisterCopyKernels(KernelTable& t);             // tensor_copy.cc: _copy, Reshape, reshape_like, _zeros, ...
void RegisterCastKernels(KernelTable& t);             // tensor_cast.cc: Cast, _backward_Cast
void RegisterConcatKernels(KernelTable& t);           // tensor_concat.cc: Concat, SliceChannel, stack
void RegisterTransposeKernels(KernelTable& t);        // tensor_transpose.cc: transpose, SwapAxis
void RegisterDotKernels(KernelTable& t);              // tensor_dot.cc: dot, batch_dot
void RegisterIndexKernels(KernelTable& t);            // index.cc: one_hot, argmax, Embedding
void RegisterSliceKernels(KernelTable& t);            // tensor_slice.cc: slice, slice_axis, slice_like
void RegisterReduceKernels(KernelTable& t);           // reduce_kernels.cc: sum, mean, max, min, prod, nansum, norm
void RegisterUnaryKernels(KernelTable& t);            // elemwise_unary.cc: sin ... tanh, clip
void RegisterScalarKernels(KernelTable& t);           // elemwise_scalar.cc: _plus_scalar ... (float32)
void RegisterBinaryKernels(KernelTable& t);           // elemwise_binary.cc: elemwise_*, add_n (float32)
void RegisterBroadcastBinaryKernels(KernelTable& t);  // elemwise_broadcast.cc: broadcast_add, _sub (float32)
void RegisterBroadcastMulDivKernels(KernelTable& t);  // elemwise_broadcast_muldiv.cc: broadcast_mul, _div
void RegisterWideArithKernels(KernelTable& t);        // elemwise_wide.cc: the above in the other dtypes
void RegisterGatherKernels(KernelTable& t);           // index_gather.cc: where, take, pick
void RegisterBroadcastKernels(KernelTable& t);        // tensor_broadcast.cc: tile, repeat, broadcast_to/like
void RegisterPadKernels(KernelTable& t);              // tensor_pad.cc: Pad
void RegisterNormKernels(KernelTable& t);             // norm.cc: LayerNorm, InstanceNorm, L2Normalization
void RegisterSortKernels(KernelTable& t);             // index_sort.cc: topk, sort, argsort
void RegisterUpSamplingKernels(KernelTable& t);       // tensor_upsampling.cc: UpSampling (nearest)
void RegisterCompareKernels(KernelTable& t);          // elemwise_compare.cc: _equal ... logical_not
void RegisterMathKernels(KernelTable& t);             // elemwise_math.cc: mod, power, maximum, minimum, hypot
void RegisterUnaryMathKernels(KernelTable& t);        // elemwise_unary_math.cc: tan ... gammaln, rounding
void RegisterAssignKernels(KernelTable& t);           // indexing.cc: _slice_assign, gather_nd, _histogram ...
void RegisterMatrixKernels(KernelTable& t);           // tensor_matrix.cc: reverse, diag, depth_to_space ...
void RegisterRandomKernels(KernelTable& t);           // random_sample.cc: _random_uniform, _random_normal ...
// random_multi.cc: _sample_*, _sample_multinomial, _shuffle.
void RegisterRandomMultiKernels(KernelTable& t);
// tensor_legacy.cc: batch_take, fill_element_0index.
void RegisterLegacyKernels(KernelTable& t);
// tensor_linalg.cc: _linalg_gelqf.
void RegisterLinalgKernels(KernelTable& t);

}  // namespace weft::cpu::tensor

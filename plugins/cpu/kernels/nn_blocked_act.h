// The executor's blocked activations (oneDNN's nChw8c / nChw16c, core/executor/fuse_conv.h) as the
// cpu kernels that read or write them see them: descriptions, relayouts, and Pooling's forward on
// them (nn_pooling_blocked.cc); internal to weft_cpu_kernels. The fused convolution is
// nn_conv_fused.cc, Concat's blocked join tensor_concat.cc.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::cpu {

/// The tensor's description: `plain` (NCHW) itself, or its dims in blocked format `f`.
dnnl::memory::desc ActDesc(const dnnl::memory::desc& plain, weft::sdk::ActFormat f);

/// The channel block of `f` (1 for plain) for `data`, which an element-wise kernel (BatchNorm,
/// Dropout) reads in that layout. Throws WEFT_ERR_INVALID_ARGUMENT naming the op (Invalid) unless
/// `data` is plain, or 4-D with a multiple of the block's channels.
int64_t CheckBlockedData(const weft::sdk::KernelSetup& s, const weft::sdk::TensorDesc& data, weft::sdk::ActFormat f);

/// `from` (description from_md) rewritten into `to` (to_md: the same dims, another layout).
void Relayout(const dnnl::memory::desc& from_md, const float* from, const dnnl::memory::desc& to_md, float* to);

/// y = (add: y +) the forward of a 2-D float32 Pooling (max, avg or sum; MXNet's windows,
/// PoolGeometry::Window) of x, both nChw<block>c (block 8 or 16; g.c a multiple of it: no padded
/// channels, so a 1x1 output lies as in NCHW). The values are the plain kernel's (nn_pooling.cc):
/// each window's cells row by row into the max (std::max from -inf: NaN is skipped; the plain
/// kernel's 2-D max loops take another order, so of a +0 and a -0 in one window either may be
/// returned) or the sum, which avg multiplies by the window's divisor; a window wholly in the
/// padding gives 0.
/// Deterministic at any thread count; runs on the calling thread's OpenMP team. Throws
/// WEFT_ERR_INVALID_ARGUMENT for another block or a 1-D / 3-D geometry (nn_pooling_blocked.cc).
void BlockedPoolForward(const weft::sdk::PoolGeometry& g, int64_t block, const float* x, float* y, bool add);

}  // namespace weft::cpu

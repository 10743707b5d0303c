// weft CPU kernels: the operator API of the CPU plugin (fp32 kernels for the ops in
// core/operator/OPS.md), built as the static library weft_cpu_kernels.
//
// Threading. The engine owns CPU parallelism: it runs kernels on its own worker threads, often
// several at once. The math libraries are therefore capped so they do not oversubscribe the
// machine: OpenBLAS (pthread build) and oneDNN (OpenMP) get the per-call thread counts of
// thread_plan.h's rule (cores of the affinity mask / engine workers, limited by
// WEFT_CPU_MATH_THREADS, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS), the WEFT_ settings read
// through the host's config_get (environment, else the runtime option). OpenBLAS's count is
// process-wide and set by the first MakeKernelTable(); the OpenMP count is per calling thread and
// set by each oneDNN/OpenMP kernel the first time it runs on a thread.
//
// Kernels are stateless across calls apart from their per-node setup, and their Compute is safe
// to run concurrently (sdk/cpp/kernel.hpp's contract).
//
// Other settings (host config, else environment): WEFT_CPU_CONV_ALGO = im2col | dnnl forces the
// convolution algorithm (default: chosen per pass, see nn_convolution.cc);
// WEFT_CPU_CONV_WINOGRAD = 0 | 1 lets the fused inference convolution use oneDNN's Winograd
// kernels for 3x3 stride-1 layers (default 1, nn_conv_fused.cc).
//
// NN kernels (nn_*.cc, float32; each forward with its _backward_ op): FullyConnected,
// Convolution and Deconvolution (1-D/2-D, groups, dilation), Pooling (max/avg/sum, 1-D/2-D,
// valid/full, global, count_include_pad), Activation, LeakyReLU (leaky, elu, selu, gelu, prelu,
// rrelu), BatchNorm, LRN, Dropout, SoftmaxOutput (multi_output too), softmax, log_softmax,
// LinearRegressionOutput, MakeLoss; sgd_update, sgd_mom_update, nag_mom_update, adam_update,
// rmsprop_update, rmspropalex_update; the KVStore's _quantize_2bit (float32) and _dequantize_2bit
// (uint32 words) in gradient_compression.cc. Setup reports
// WEFT_ERR_UNSUPPORTED (naming the attribute) for: other dtypes, 3-D convolution/pooling,
// non-NC(H)W layouts, pool_type lp, pooling_convention same, SoftmaxOutput preserve_shape, Dropout axes or mode always,
// MakeLoss normalization valid. Deviations from MXNet: a pooling window lying wholly in the padding (full convention)
// yields 0 instead of NaN / the lowest float.
#pragma once

#include <memory>

#include "thread_plan.h"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/operator.h"

namespace weft::cpu {

/// Registers every CPU kernel into `table`. A device whose memory the host can reach through a
/// resolver (the simulated device) calls this with its own table to reuse all CPU kernels.
void RegisterAllKernels(weft::sdk::KernelTable& table);

/// A new table holding every CPU kernel (device type "cpu", host-addressable pointers) whose
/// errors and settings go through `host` (NULL: the environment, errors without objects). The
/// first table made fixes the thread plan (thread_plan.h) and caps OpenBLAS's pool to it. The
/// table must outlive every use of its Api(). Throws weft::sdk::Error on a registration bug, and
/// WEFT_ERR_UNSUPPORTED when this CPU is below the lowest ISA level the build compiled loops for
/// (isa::MachineShortfall; WEFT_CPU_ISA_COPIES=host builds only). Wrap the call in weft::sdk::Guard.
std::unique_ptr<weft::sdk::KernelTable> MakeKernelTable(const weft_host_api* host);

/// Family registration hooks, one per source family, called by RegisterAllKernels.
void RegisterNNKernels(weft::sdk::KernelTable& table);      // nn_*.cc (layers, losses, optimizers, compression)
void RegisterTensorKernels(weft::sdk::KernelTable& table);  // tensor/element-wise/reduction kernels
/// The sparse kernels (SDK 2.1; tensor_sparse_dot.cc: dot of a csr lhs). Only the cpu plugin's own table
/// (MakeKernelTable) registers them: a device that reuses the CPU kernels through
/// RegisterAllKernels (the simulated device) claims no sparse storage, so its sparse calls take
/// the dense fallback or are refused by name.
void RegisterSparseKernels(weft::sdk::KernelTable& table);
void RegisterSparseRowOps(weft::sdk::KernelTable& table);      // tensor_sparse_ops.cc: sparse_retain
void RegisterSparseSquareSum(weft::sdk::KernelTable& table);   // reduce_sparse.cc: _square_sum
void RegisterSparseScatterOps(weft::sdk::KernelTable& table);  // tensor_sparse_scatter.cc: _scatter_*
void RegisterSparseProducts(weft::sdk::KernelTable& table);    // tensor_sparse_products.cc: dense·csr, csr·row_sparse
void RegisterSparseEmbedding(weft::sdk::KernelTable& table);   // index_sparse.cc: Embedding's row_sparse gradient

/// The oneDNN blocked layout in which the cpu's fused convolutions (`_sg_conv`) may pass
/// activations to each other: "nChw16c" with AVX-512, "nChw8c" with AVX2, "" below (both
/// WEFT_CPU_ISA and ONEDNN_MAX_CPU_ISA limit it). Fixed for the process. The cpu devices report
/// it as the attribute "blocked_activations" for the executor's fusion (core/executor/fuse_conv.h).
const char* BlockedActivationFormat();

/// The process's thread plan (thread_plan.h): made from the host config of the first table made,
/// else from the environment at the first call. Never changes afterwards. Thread-safe.
const ThreadPlan& CurrentThreadPlan();

/// CurrentThreadPlan().math: threads one kernel call may use, at least 1.
int MathThreads();

/// Caps the calling thread's OpenMP team to CurrentThreadPlan().omp; cheap after the first call
/// on a thread. Kernels that use oneDNN or OpenMP call it at the top of Compute.
void PrepareMathThread();

}  // namespace weft::cpu

// Helpers shared by the neural-network kernel files (nn_*.cc); internal to weft_cpu_kernels.
#pragma once

#include <cstdint>
#include <string>

#include "cpu_kernels.h"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/random_sampler.hpp"

namespace weft::cpu {

using weft::sdk::Error;
using weft::sdk::KernelCall;
using weft::sdk::KernelSetup;
using weft::sdk::KernelTable;
using weft::sdk::Tensor;
using weft::sdk::TensorDesc;

inline constexpr uint64_t kF32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

/// Throws WEFT_ERR_UNSUPPORTED naming the op unless every input/output/aux is float32.
void RequireFloat32(const KernelSetup& s);

/// "op: message" as WEFT_ERR_INVALID_ARGUMENT.
[[noreturn]] void Invalid(const KernelSetup& s, const std::string& message);
/// "op: message" as WEFT_ERR_UNSUPPORTED.
[[noreturn]] void Unsupported(const KernelSetup& s, const std::string& message);

/// "(2, 3)" for messages.
std::string ShapeString(const TensorDesc& t);

/// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", OOPSLA 2014),
/// the SDK's (weft/sdk/cpp/random_sampler.hpp), which the GPU layer and the samplers use too.
using sdk::random::SplitMix64;

/// Uniform in [0, 1) for element i of a call with `seed`, from the top 24 bits (exact in float):
/// a pure function of (seed, i), so random kernels are reproducible and thread-independent.
inline float UniformAt(uint64_t seed, uint64_t i) {
  return static_cast<float>(SplitMix64(seed ^ SplitMix64(i)) >> 40) * (1.0f / 16777216.0f);
}

/// Row-major C = alpha * op(A) * op(B) + beta * C, op(A) M x K, op(B) K x N (OpenBLAS sgemm).
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Registration of each nn family (called by RegisterNNKernels).
void RegisterFullyConnected(KernelTable& t);
void RegisterConvolution(KernelTable& t);
void RegisterDeconvolution(KernelTable& t);
void RegisterPooling(KernelTable& t);
void RegisterActivation(KernelTable& t);
void RegisterBatchNorm(KernelTable& t);
void RegisterLRN(KernelTable& t);
void RegisterDropout(KernelTable& t);
void RegisterSoftmax(KernelTable& t);
void RegisterLoss(KernelTable& t);
void RegisterCTCLoss(KernelTable& t);  // nn_ctc_loss.cc
void RegisterOptimizer(KernelTable& t);
void RegisterOptimizerMore(KernelTable& t);        // nn_optimizer_more.cc: mp_*, multi_*, signum, ftrl, LAMB, LARS
void RegisterGradientCompression(KernelTable& t);  // the KVStore's 2-bit compression

}  // namespace weft::cpu

// Helpers shared by the neural-network kernel files (nn_*.cc); internal to weft_cpu_kernels.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "cpu_kernels.h"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/random_sampler.hpp"
#include "weft/sdk/ops/activation.hpp"

namespace weft::cpu {

using weft::sdk::Error;
using weft::sdk::KernelCall;
using weft::sdk::KernelSetup;
using weft::sdk::KernelTable;
using weft::sdk::Tensor;
using weft::sdk::TensorDesc;

inline constexpr uint64_t kF32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

/// Calls f(float{}) or f(double{}) for a float32 or float64 `dtype`: a kernel's Compute picks its
/// typed body with `WithFloatType(dtype_, [&](auto t) { Run<decltype(t)>(c); });`.
template <class F>
void WithFloatType(int32_t dtype, F&& f) {
  if (dtype == WEFT_DTYPE_FLOAT64)
    f(double{});
  else
    f(float{});
}

/// Throws WEFT_ERR_UNSUPPORTED naming the op unless every input/output/aux is float32.
void RequireFloat32(const KernelSetup& s);

/// The one dtype of every input/output/aux, float32 or float64 (kernels with a double-precision
/// path: RNN, Convolution); throws WEFT_ERR_UNSUPPORTED naming the op for another dtype and
/// WEFT_ERR_INVALID_ARGUMENT when the tensors' dtypes differ.
int32_t RequireFloatDType(const KernelSetup& s);

/// Output i as T*, or nullptr when the call does not want it (req null): such an output may come
/// as a placeholder without memory (weft's host gives it the node's dtype; the SDK does not
/// promise that), so a kernel skips it rather than ask for its data.
template <typename T>
T* WantedOutput(const KernelCall& c, size_t i) {
  return c.req[i] == WEFT_REQ_NULL ? nullptr : c.outputs[i].data<T>();
}

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
/// The same in double precision (OpenBLAS dgemm, one call: the float64 paths are not hot).
void Dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc);
/// Sgemm or Dgemm by element type, for kernels templated on float / double.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    Dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// Registration of each nn family (called by RegisterNNKernels).
void RegisterFullyConnected(KernelTable& t);
void RegisterConvolution(KernelTable& t);
void RegisterSgConv(KernelTable& t);
void RegisterDeconvolution(KernelTable& t);
void RegisterPooling(KernelTable& t);
void RegisterActivation(KernelTable& t);
/// Activation's float32 forward in place over `n` floats of `y` on the calling thread, for
/// ActivationParam act_type `type` (relu, sigmoid, tanh, softrelu, softsign): the same loop and
/// values as the Activation kernel's, vectorised for the active ISA (nn_activation.cc). `_sg_conv`
/// applies its last tanh / sigmoid / softrelu with it.
void ActivationInPlace(weft::sdk::ActType type, float* y, int64_t n);
void RegisterBatchNorm(KernelTable& t);
void RegisterLRN(KernelTable& t);
void RegisterDropout(KernelTable& t);
void RegisterRNN(KernelTable& t);  // nn_rnn.cc: RNN, _backward_RNN
void RegisterSoftmax(KernelTable& t);
void RegisterLoss(KernelTable& t);
void RegisterCTCLoss(KernelTable& t);  // ctc_loss.cc
void RegisterOptimizer(KernelTable& t);
void RegisterOptimizerMore(KernelTable& t);        // optimizer_more.cc: mp_*, multi_*, signum, ftrl, LAMB, LARS
void RegisterGradientCompression(KernelTable& t);  // the KVStore's 2-bit compression

}  // namespace weft::cpu

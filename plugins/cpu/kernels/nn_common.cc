// Shared nn helpers and RegisterNNKernels.
#include "nn_common.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

namespace weft::cpu {

void RequireFloat32(const KernelSetup& s) {
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].dtype != WEFT_DTYPE_FLOAT32)
        Unsupported(s, std::string(what) + " " + std::to_string(i) + " is " + weft::sdk::DTypeName(ts[i].dtype) +
                           "; the CPU kernel supports float32 only (Cast it first)");
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
  check(s.aux, "aux state");
}

void Invalid(const KernelSetup& s, const std::string& message) {
  throw Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + ": " + message);
}

void Unsupported(const KernelSetup& s, const std::string& message) {
  throw Error(WEFT_ERR_UNSUPPORTED, s.op_name + ": " + message);
}

std::string ShapeString(const TensorDesc& t) { return weft::sdk::FormatTuple(t.shape); }

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // BLAS leaves C alone when k = 0 only if beta = 1; do the scaling ourselves.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  // One thread pool (thread_plan.h): with an OpenMP team of several threads, products large
  // enough to share run in oneDNN's sgemm on that team, and OpenBLAS stays at one thread, so no
  // second pool spins next to it. Below the size (about 0.2 ms on one core) threads cost more
  // than they save.
  constexpr int64_t kParallelMacs = int64_t{1} << 24;
  if (CurrentThreadPlan().omp > 1 && m * n * k >= kParallelMacs) {
    PrepareMathThread();
    if (dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
        dnnl_success)
      return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void RegisterNNKernels(KernelTable& t) {
  RegisterFullyConnected(t);
  RegisterConvolution(t);
  RegisterDeconvolution(t);
  RegisterPooling(t);
  RegisterActivation(t);
  RegisterBatchNorm(t);
  RegisterLRN(t);
  RegisterDropout(t);
  RegisterSoftmax(t);
  RegisterLoss(t);
  RegisterOptimizer(t);
  RegisterGradientCompression(t);
}

}  // namespace weft::cpu

// Shared nn helpers and RegisterNNKernels.
#include "nn_common.h"

#include "parallel.h"

#include <cblas.h>

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

int32_t RequireFloatDType(const KernelSetup& s) {
  const int32_t dtype = s.inputs.empty() ? WEFT_DTYPE_FLOAT32 : s.inputs[0].dtype;
  if (dtype != WEFT_DTYPE_FLOAT32 && dtype != WEFT_DTYPE_FLOAT64)
    Unsupported(s, "data is " + weft::sdk::DTypeName(dtype) + "; the CPU kernel supports float32 and float64");
  for (const auto* list : {&s.inputs, &s.outputs, &s.aux})
    for (const TensorDesc& t : *list)
      if (t.dtype != dtype)
        Invalid(s, "every input and output must have data's dtype " + weft::sdk::DTypeName(dtype) + ", one is " +
                       weft::sdk::DTypeName(t.dtype));
  return dtype;
}

void Invalid(const KernelSetup& s, const std::string& message) {
  throw Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + ": " + message);
}

void Unsupported(const KernelSetup& s, const std::string& message) {
  throw Error(WEFT_ERR_UNSUPPORTED, s.op_name + ": " + message);
}

std::string ShapeString(const TensorDesc& t) { return weft::sdk::FormatTuple(t.shape); }

namespace {

// The products BLAS is not asked for: nothing to write (m or n is 0), or C = beta·C (k = 0: BLAS
// leaves C alone then only if beta = 1, so the scaling is done here). True when handled.
template <typename T>
bool EmptyProduct(int64_t m, int64_t n, int64_t k, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  return true;
}

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (EmptyProduct(m, n, k, beta, c, ldc)) return;
  const auto blas = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    // op(A) rows m0..m1 and op(B) columns n0..n1: a transposed operand is addressed by column.
    const float* as = a + (trans_a ? m0 : m0 * lda);
    const float* bs = b + (trans_b ? n0 * ldb : n0);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m1 - m0), static_cast<blasint>(n1 - n0), static_cast<blasint>(k), alpha, as,
                static_cast<blasint>(lda), bs, static_cast<blasint>(ldb), beta, c + m0 * ldc + n0,
                static_cast<blasint>(ldc));
  };
  // One thread pool (thread_plan.h): with an OpenMP team of several threads OpenBLAS stays at one
  // thread, and products large enough to share are split into blocks of C's rows (or columns,
  // whichever dimension is longer) that the team's threads compute with single-threaded OpenBLAS
  // calls. Below the size (about 80 µs on one core) the team's hand-offs cost more than they save.
  // The MLP's 784-128 products at batch 100 (10 M multiply-adds) gain since the team spins 10 000
  // rounds between regions (core/include/weft/env.h): MLP training at 2 threads 140-153 k -> 151-184
  // k samples/s with 2^22 instead of 2^24 (4 interleaved rounds, bench/results/
  // 2026-11-30-fc_split.txt). With the old 1 000-round spin the team slept between products and
  // 2^21 had lost (110 k against 140 k with 2^24).
  // (oneDNN's dnnl_sgemm on the team was slower here: MLP inference 72 k vs 200 k samples/s.)
  constexpr int64_t kSplitMacs = int64_t{1} << 22;
  if (CurrentThreadPlan().omp > 1 && m * n * k >= kSplitMacs) {
    const bool rows = m >= n;
    ParallelChunks(rows ? m : n, m * n * k, [&](int64_t i0, int64_t i1, int) {
      if (rows)
        blas(i0, i1, 0, n);
      else
        blas(0, m, i0, i1);
    });
    return;
  }
  blas(0, m, 0, n);
}

void Dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (EmptyProduct(m, n, k, beta, c, ldc)) return;
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void RegisterNNKernels(KernelTable& t) {
  RegisterFullyConnected(t);
  RegisterConvolution(t);
  RegisterSgConv(t);
  RegisterDeconvolution(t);
  RegisterPooling(t);
  RegisterActivation(t);
  RegisterBatchNorm(t);
  RegisterLRN(t);
  RegisterDropout(t);
  RegisterRNN(t);
  RegisterSoftmax(t);
  RegisterLoss(t);
  RegisterCTCLoss(t);
  RegisterOptimizer(t);
  RegisterOptimizerMore(t);
  RegisterGradientCompression(t);
}

}  // namespace weft::cpu

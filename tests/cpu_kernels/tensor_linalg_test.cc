// _linalg_gelqf: MXNet's documented example (its published Q and L, signs included), the
// factorisation's defining properties on random batches, the backward against finite differences,
// and the shape error.
#include <gtest/gtest.h>

#include "tensor_test_util.h"

namespace ttest {
namespace {

TEST(TensorLinalg, GelqfMatchesMxnetsExample) {
  // mx.nd.linalg.gelqf's docstring (MXNet 1.9.1, src/operator/tensor/la_op.cc), batch of two.
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<double> q = {-0.26726124, -0.53452248, -0.80178373, 0.87287156, 0.21821789, -0.43643578,
                                 -0.50257071, -0.57436653, -0.64616234, 0.7620735,  0.05862104, -0.64483142};
  const std::vector<double> l = {-3.74165739, 0., -8.55235974, 1.96396101, -13.92838828, 0., -19.09768702, 0.52758934};
  for (int32_t dt : {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64}) {
    SCOPED_TRACE("dtype " + std::to_string(dt));
    ExpectOp("_linalg_gelqf", {}, {Make(dt, {2, 2, 3}, a)}, {Make(dt, {2, 2, 3}, q), Make(dt, {2, 2, 2}, l)}, 1e-12);
  }
}

TEST(TensorLinalg, GelqfFactorsRandomBatches) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 12; ++trial) {
    std::uniform_int_distribution<int> ext(1, 7);
    const int64_t m = ext(rng), n = m + ext(rng) - 1, batch = ext(rng);
    SCOPED_TRACE("batch " + std::to_string(batch) + " m " + std::to_string(m) + " n " + std::to_string(n));
    const std::vector<double> a = Uniform(rng, batch * m * n);
    std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT64, {batch, m, n}), Buf::Of(WEFT_DTYPE_FLOAT64, {batch, m, m})};
    ASSERT_EQ(RunKernel("_linalg_gelqf", {}, {Make(WEFT_DTYPE_FLOAT64, {batch, m, n}, a)}, out), "");
    const double* q = out[0].as<double>();
    const double* l = out[1].as<double>();
    for (int64_t b = 0; b < batch; ++b) {
      const double* qb = q + b * m * n;
      const double* lb = l + b * m * m;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          if (j > i) {
            EXPECT_EQ(lb[i * m + j], 0.0) << "L is lower triangular";
          }
          double qq = 0;
          for (int64_t k = 0; k < n; ++k) qq += qb[i * n + k] * qb[j * n + k];
          EXPECT_NEAR(qq, i == j ? 1.0 : 0.0, 1e-12) << "Q Q^T = I at " << i << "," << j;
        }
        for (int64_t k = 0; k < n; ++k) {
          double lq = 0;
          for (int64_t j = 0; j <= i; ++j) lq += lb[i * m + j] * qb[j * n + k];
          EXPECT_NEAR(lq, a[static_cast<size_t>(b * m * n + i * n + k)], 1e-12) << "L Q = A";
        }
      }
    }
  }
}

TEST(TensorLinalg, GelqfGradientMatchesFiniteDifferences) {
  const uint64_t seed = wtest::TestSeed();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (const Shape& s : {Shape{3, 5}, Shape{2, 2, 4}, Shape{4, 4}, Shape{1, 1}}) {
    SCOPED_TRACE(Str(s));
    GradSpec g;
    g.op = "_linalg_gelqf";
    g.backward = "_backward_linalg_gelqf";
    g.inputs = {Make(WEFT_DTYPE_FLOAT64, s, UniformF(rng, Prod(s)))};
    Shape l = s;
    l.back() = s[s.size() - 2];
    g.outputs = {s, l};
    g.uses_outputs = true;
    ExpectGradient(g, seed);
  }
}

TEST(TensorLinalg, GelqfRefusesTallMatrices) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {3, 2}), Buf::Of(WEFT_DTYPE_FLOAT32, {3, 3})};
  const std::string err = RunKernel("_linalg_gelqf", {}, {Buf::Of(WEFT_DTYPE_FLOAT32, {3, 2})}, out);
  EXPECT_NE(err.find("at least as long as the second to last"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttest

// dot and batch_dot: forward against a triple loop in double for every transpose_a/transpose_b
// combination (n-d, 1-d and batched operands), backward against finite differences.
#include <gtest/gtest.h>

#include "tensor_test_util.h"

namespace ttest {
namespace {

// Operand shapes for op(A) (m x k) and op(B) (k x n) as MXNet's dot reads them: lhs keeps its
// leading extents `lead` (product m) before k, or k first when transposed; rhs likewise.
struct DotCase {
  Shape lhs, rhs, out;
  int64_t m, k, n;
};

DotCase MakeDot(const Shape& lead, int64_t k, const Shape& trail, bool ta, bool tb) {
  DotCase c;
  c.m = Prod(lead);
  c.n = Prod(trail);
  c.k = k;
  c.lhs = lead;
  if (ta)
    c.lhs.insert(c.lhs.begin(), k);
  else
    c.lhs.push_back(k);
  c.rhs = trail;
  if (tb)
    c.rhs.push_back(k);
  else
    c.rhs.insert(c.rhs.begin(), k);
  c.out = lead;
  c.out.insert(c.out.end(), trail.begin(), trail.end());
  if (c.out.empty()) c.out = {1};
  return c;
}

// C[b, i, j] = Σ_p A[b, i, p] B[b, p, j] with A, B read through the transposes.
std::vector<double> GemmRef(const std::vector<double>& a, const std::vector<double>& b, int64_t batch, int64_t m,
                            int64_t k, int64_t n, bool ta, bool tb) {
  std::vector<double> c(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double av = a[static_cast<size_t>(q * m * k + (ta ? p * m + i : i * k + p))];
          const double bv = b[static_cast<size_t>(q * k * n + (tb ? j * k + p : p * n + j))];
          s += av * bv;
        }
        c[static_cast<size_t>(q * m * n + i * n + j)] = s;
      }
  return c;
}

std::string B(bool v) { return v ? "True" : "False"; }

TEST(TensorDot, DotEveryTransposeRandomShapes) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 24; ++trial) {
    const bool ta = trial & 1, tb = trial & 2;
    Shape lead = RandomShape(rng, trial % 8 < 4 ? 0 : 1, 2, 16);
    Shape trail = RandomShape(rng, 0, 2, 16);
    const int64_t k = std::uniform_int_distribution<int>(1, 9)(rng);
    DotCase c = MakeDot(lead, k, trail, ta, tb);
    SCOPED_TRACE("lhs " + Str(c.lhs) + " rhs " + Str(c.rhs) + " ta " + B(ta) + " tb " + B(tb));
    Attrs attrs = {{"transpose_a", B(ta)}, {"transpose_b", B(tb)}};
    for (int32_t dt : {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64}) {
      std::vector<double> a = UniformF(rng, Prod(c.lhs)), b = UniformF(rng, Prod(c.rhs));
      Buf want = Make(dt, c.out, GemmRef(a, b, 1, c.m, c.k, c.n, ta, tb));
      ExpectOp("dot", attrs, {Make(dt, c.lhs, a), Make(dt, c.rhs, b)}, {want});
    }
    GradSpec g;
    g.op = "dot";
    g.attrs = attrs;
    g.inputs = {Make(WEFT_DTYPE_FLOAT64, c.lhs, UniformF(rng, Prod(c.lhs))),
                Make(WEFT_DTYPE_FLOAT64, c.rhs, UniformF(rng, Prod(c.rhs)))};
    g.outputs = {c.out};
    g.uses_inputs = true;
    ExpectGradient(g, seed + static_cast<uint64_t>(trial));
  }
}

TEST(TensorDot, BatchDotEveryTranspose) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 16; ++trial) {
    const bool ta = trial & 1, tb = trial & 2;
    Shape batch = RandomShape(rng, 1, 2, 6);
    std::uniform_int_distribution<int> ext(1, 6);
    const int64_t m = ext(rng), k = ext(rng), n = ext(rng);
    Shape lhs = batch, rhs = batch, out = batch;
    lhs.push_back(ta ? k : m), lhs.push_back(ta ? m : k);
    rhs.push_back(tb ? n : k), rhs.push_back(tb ? k : n);
    out.push_back(m), out.push_back(n);
    SCOPED_TRACE("lhs " + Str(lhs) + " rhs " + Str(rhs));
    Attrs attrs = {{"transpose_a", B(ta)}, {"transpose_b", B(tb)}};
    std::vector<double> a = UniformF(rng, Prod(lhs)), b = UniformF(rng, Prod(rhs));
    Buf want = Make(WEFT_DTYPE_FLOAT32, out, GemmRef(a, b, Prod(batch), m, k, n, ta, tb));
    ExpectOp("batch_dot", attrs, {Make(WEFT_DTYPE_FLOAT32, lhs, a), Make(WEFT_DTYPE_FLOAT32, rhs, b)}, {want});
    GradSpec g;
    g.op = "batch_dot";
    g.attrs = attrs;
    g.inputs = {Make(WEFT_DTYPE_FLOAT64, lhs, a), Make(WEFT_DTYPE_FLOAT64, rhs, b)};
    g.outputs = {out};
    g.uses_inputs = true;
    ExpectGradient(g, seed + static_cast<uint64_t>(trial));
  }
}

TEST(TensorDot, LargerMatrixMatchesReference) {
  std::mt19937 rng(11);
  DotCase c = MakeDot({37}, 129, {65}, false, true);
  std::vector<double> a = UniformF(rng, Prod(c.lhs)), b = UniformF(rng, Prod(c.rhs));
  ExpectOp("dot", {{"transpose_b", "True"}}, {Make(WEFT_DTYPE_FLOAT32, c.lhs, a), Make(WEFT_DTYPE_FLOAT32, c.rhs, b)},
           {Make(WEFT_DTYPE_FLOAT32, c.out, GemmRef(a, b, 1, c.m, c.k, c.n, false, true))});
}

TEST(TensorDot, MismatchedInnerExtentsAreRejected) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 4})};
  std::string err =
      RunKernel("dot", {}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3}), Buf::Of(WEFT_DTYPE_FLOAT32, {5, 4})}, out);
  EXPECT_NE(err.find("inner extents differ"), std::string::npos) << err;
  std::vector<Buf> bout = {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2, 4})};
  err = RunKernel("batch_dot", {}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2, 3}), Buf::Of(WEFT_DTYPE_FLOAT32, {3, 3, 4})},
                  bout);
  EXPECT_NE(err.find("batch extents differ"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttest

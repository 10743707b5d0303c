// The reduce family: reductions (sum, mean, max with axis tuples, keepdims, exclude) and their
// backward ops. References loop over the input's multi-index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tensor_test_util.h"

namespace ttest {
namespace {

// Output position (over kept axes, row-major) of input element `flat`.
int64_t KeptIndex(const Shape& s, const std::vector<bool>& reduced, int64_t flat) {
  int64_t idx = 0, stride = 1;
  for (int a = static_cast<int>(s.size()) - 1; a >= 0; --a) {
    const int64_t coord = flat % s[static_cast<size_t>(a)];
    flat /= s[static_cast<size_t>(a)];
    if (!reduced[static_cast<size_t>(a)]) {
      idx += coord * stride;
      stride *= s[static_cast<size_t>(a)];
    }
  }
  return idx;
}

struct Reduction {
  Attrs attrs;
  std::vector<bool> reduced;
  Shape out;
};

// A random axis choice: empty tuple (all), some axes (negative spellings too), exclude.
Reduction RandomReduction(std::mt19937& rng, const Shape& s) {
  Reduction r;
  const int nd = static_cast<int>(s.size());
  std::bernoulli_distribution coin(0.5);
  const bool all = nd == 0 || std::uniform_int_distribution<int>(0, 4)(rng) == 0;
  const bool exclude = !all && std::uniform_int_distribution<int>(0, 3)(rng) == 0;
  const bool keepdims = coin(rng);
  std::string axes = "(";
  std::vector<bool> named(static_cast<size_t>(nd), false);
  if (!all) {
    bool any = false;
    for (int a = 0; a < nd; ++a) {
      if (coin(rng) || (!any && a == nd - 1)) {
        named[static_cast<size_t>(a)] = true;
        axes += (any ? ", " : "") + std::to_string(coin(rng) ? a - nd : a);
        any = true;
      }
    }
  }
  axes += ")";
  r.attrs = {{"axis", axes}, {"keepdims", keepdims ? "True" : "False"}};
  if (exclude) r.attrs["exclude"] = "True";
  for (int a = 0; a < nd; ++a) r.reduced.push_back(all ? true : named[static_cast<size_t>(a)] != exclude);
  for (int a = 0; a < nd; ++a) {
    if (!r.reduced[static_cast<size_t>(a)])
      r.out.push_back(s[static_cast<size_t>(a)]);
    else if (keepdims)
      r.out.push_back(1);
  }
  if (r.out.empty()) r.out = {1};
  return r;
}

// Distinct, well separated values (no ties, so max is differentiable under small steps).
std::vector<double> Distinct(std::mt19937& rng, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), rng);
  for (double& x : v) x = static_cast<float>(x * 0.125 - n * 0.0625);
  return v;
}

TEST(TensorReduce, SumMeanMaxForwardAndGradient) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 30; ++trial) {
    Shape s = RandomShape(rng, 0, 5, 200);
    Reduction r = RandomReduction(rng, s);
    SCOPED_TRACE("trial " + std::to_string(trial) + " shape " + Str(s) + " axis " + r.attrs["axis"] +
                 (r.attrs.count("exclude") ? " exclude" : ""));
    std::vector<double> x = Distinct(rng, Prod(s));
    const int64_t n_out = Prod(r.out);
    std::vector<double> sum(static_cast<size_t>(n_out), 0.0), mx(static_cast<size_t>(n_out), -INFINITY);
    std::vector<int64_t> count(static_cast<size_t>(n_out), 0);
    for (int64_t i = 0; i < Prod(s); ++i) {
      const size_t o = static_cast<size_t>(KeptIndex(s, r.reduced, i));
      sum[o] += x[static_cast<size_t>(i)];
      mx[o] = std::max(mx[o], x[static_cast<size_t>(i)]);
      ++count[o];
    }
    std::vector<double> mean(sum.size());
    for (size_t o = 0; o < sum.size(); ++o) mean[o] = sum[o] / static_cast<double>(count[o]);
    for (int32_t dt : {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64}) {
      Buf in = Make(dt, s, x);
      ExpectOp("sum", r.attrs, {in}, {Make(dt, r.out, sum)});
      ExpectOp("mean", r.attrs, {in}, {Make(dt, r.out, mean)});
      ExpectOp("max", r.attrs, {in}, {Make(dt, r.out, mx)});
    }
    for (const char* op : {"sum", "mean", "max"}) {
      GradSpec g;
      g.op = op;
      g.attrs = r.attrs;
      g.inputs = {Make(WEFT_DTYPE_FLOAT64, s, x)};
      g.outputs = {r.out};
      g.uses_inputs = g.uses_outputs = std::string(op) == "max";
      ExpectGradient(g, seed + static_cast<uint64_t>(trial));
    }
  }
}

// Reductions over long contiguous runs and over strided outer axes (the interleaved partial
// sums and the kept-innermost path).
TEST(TensorReduce, LargeAxes) {
  std::mt19937 rng(13);
  Shape s = {3, 1000, 5};
  std::vector<double> x = UniformF(rng, Prod(s));
  for (const char* axis : {"(1,)", "(0, 1)", "(2,)", "(0, 2)"}) {
    SCOPED_TRACE(axis);
    std::vector<bool> red = {std::string(axis).find('0') != std::string::npos,
                             std::string(axis).find('1') != std::string::npos,
                             std::string(axis).find('2') != std::string::npos};
    Shape out;
    for (size_t a = 0; a < 3; ++a)
      if (!red[a]) out.push_back(s[a]);
    std::vector<double> sum(static_cast<size_t>(Prod(out)), 0.0);
    for (int64_t i = 0; i < Prod(s); ++i) sum[static_cast<size_t>(KeptIndex(s, red, i))] += x[static_cast<size_t>(i)];
    ExpectOp("sum", {{"axis", axis}}, {Make(WEFT_DTYPE_FLOAT32, s, x)}, {Make(WEFT_DTYPE_FLOAT32, out, sum)});
  }
}

// Tied maxima all receive the gradient (MXNet: grad * (x == max)).
TEST(TensorReduce, MaxBackwardTies) {
  Buf x = Make(WEFT_DTYPE_FLOAT32, {2, 3}, {1, 5, 5, 2, 2, 0});
  Buf y = Make(WEFT_DTYPE_FLOAT32, {2}, {5, 2});
  Buf g = Make(WEFT_DTYPE_FLOAT32, {2}, {10, 20});
  ExpectOp("_backward_max", {{"axis", "(1,)"}}, {g, x, y}, {Make(WEFT_DTYPE_FLOAT32, {2, 3}, {0, 10, 10, 20, 20, 0})});
}

TEST(TensorReduce, NaNPropagatesThroughMax) {
  Buf x = Make(WEFT_DTYPE_FLOAT32, {2, 2}, {1, NAN, 3, 4});
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  ASSERT_EQ(RunKernel("max", {{"axis", "1"}}, {x}, out), "");
  EXPECT_TRUE(std::isnan(Get(out[0], 0)));
  EXPECT_EQ(Get(out[0], 1), 4.0);
}

TEST(TensorReduce, BadAxisIsRejected) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {2})};
  std::string err = RunKernel("sum", {{"axis", "(2,)"}}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})}, out);
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  err = RunKernel("sum", {{"axis", "(1, -1)"}}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})}, out);
  EXPECT_NE(err.find("twice"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttest

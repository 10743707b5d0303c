// The samplers with parameter arrays (_sample_uniform ... _sample_generalized_negative_binomial),
// _sample_multinomial, _shuffle, and the negative binomial creation samplers, through imperative
// invoke on the cpu plugin: output shapes and dtypes as MXNet 1.9.1 gives them, each parameter
// element's draws against its own law, reproducibility under weft::RandomSeed, and bad
// parameters of the creation forms reported at the wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace weft {
namespace {

using Params = std::map<std::string, std::string>;
using test::ErrorOf;

NDArray Array(const std::vector<float>& v, const Shape& s) {
  NDArray a(s, Context::cpu(0), false);
  a.SyncCopyFromCPU(v);
  return a;
}

std::vector<double> Values(const NDArray& a) {
  std::vector<double> v(a.Size());
  auto read = [&](auto zero) {
    std::vector<decltype(zero)> raw(a.Size());
    a.SyncCopyToCPUBytes(raw.data(), a.Bytes());
    std::copy(raw.begin(), raw.end(), v.begin());
  };
  if (a.GetDType() == DType::kFloat32) read(0.0f);
  if (a.GetDType() == DType::kFloat64) read(0.0);
  if (a.GetDType() == DType::kInt32) read(int32_t{0});
  return v;
}

// Mean and variance of draws [begin, end) within 6 standard errors of the law's (the variance's
// standard error from the fourth moment, bounded here by 10 σ⁴ / n for these laws).
void ExpectLaw(const std::vector<double>& v, size_t begin, size_t end, double mean, double variance) {
  const double n = static_cast<double>(end - begin);
  double s = 0, s2 = 0;
  for (size_t i = begin; i < end; ++i) s += v[i];
  const double m = s / n;
  for (size_t i = begin; i < end; ++i) s2 += (v[i] - m) * (v[i] - m);
  EXPECT_NEAR(m, mean, 6 * std::sqrt(variance / n)) << "draws " << begin << ".." << end;
  EXPECT_NEAR(s2 / n, variance, 6 * std::sqrt(10 * variance * variance / n)) << "draws " << begin << ".." << end;
}

struct MultiCase {
  std::string op;
  std::vector<float> p, q;  // q empty: a one-parameter law
  double (*mean)(double, double), (*variance)(double, double);
};

std::vector<MultiCase> MultiCases() {
  return {
      {"_sample_uniform",
       {0, 2.5},
       {1, 3.7},
       [](double a, double b) { return (a + b) / 2; },
       [](double a, double b) { return (b - a) * (b - a) / 12; }},
      {"_sample_normal",
       {0, -9.75},
       {1, 4.2},
       [](double a, double) { return a; },
       [](double, double b) { return b * b; }},
      {"_sample_gamma",
       {2.5, 9.75},
       {0.7, 0.5},
       [](double a, double b) { return a * b; },
       [](double a, double b) { return a * b * b; }},
      {"_sample_exponential",
       {1, 8.5},
       {},
       [](double l, double) { return 1 / l; },
       [](double l, double) { return 1 / (l * l); }},
      {"_sample_poisson", {25, 0.5}, {}, [](double l, double) { return l; }, [](double l, double) { return l; }},
      {"_sample_negative_binomial",
       {3, 6},
       {0.4, 0.84},
       [](double k, double p) { return k * (1 - p) / p; },
       [](double k, double p) { return k * (1 - p) / (p * p); }},
      {"_sample_generalized_negative_binomial",
       {2, 1.3},
       {1, 0.2},
       [](double mu, double) { return mu; },
       [](double mu, double a) { return mu + a * mu * mu; }},
  };
}

// Output shape = parameters' shape + shape; element j·m + s is draw s of parameter element j.
TEST(SampleOps, EachParameterElementDrawsFromItsLaw) {
  RandomSeed(20261128);
  constexpr size_t kDraws = 40000;
  for (const MultiCase& c : MultiCases()) {
    SCOPED_TRACE(c.op);
    std::vector<NDArray> in = {Array(c.p, Shape{2})};
    if (!c.q.empty()) in.push_back(Array(c.q, Shape{2}));
    const NDArray out = InvokeOne(c.op, in, {{"shape", "(40000,)"}});
    ASSERT_EQ(out.GetShape(), (Shape{2, 40000}));
    EXPECT_EQ(out.GetDType(), DType::kFloat32);  // dtype None is float32, as MXNet (not the parameters')
    const std::vector<double> v = Values(out);
    for (size_t j = 0; j < 2; ++j) {
      const double p = c.p[j], q = c.q.empty() ? 0 : c.q[j];
      ExpectLaw(v, j * kDraws, (j + 1) * kDraws, c.mean(p, q), c.variance(p, q));
    }
  }
}

TEST(SampleOps, ShapesDTypesAndSeeds) {
  const NDArray lo = Array({0, 1, 2, 3}, Shape{2, 2}), hi = Array({1, 2, 3, 4}, Shape{2, 2});
  // No shape: one draw per parameter element; dtype float64 when asked.
  const NDArray one = InvokeOne("_sample_uniform", {lo, hi}, {{"dtype", "float64"}});
  EXPECT_EQ(one.GetShape(), (Shape{2, 2}));
  EXPECT_EQ(one.GetDType(), DType::kFloat64);
  const std::vector<double> v = Values(one);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GE(v[i], static_cast<double>(i));
    EXPECT_LT(v[i], static_cast<double>(i) + 1);
  }
  RandomSeed(7);
  const std::vector<double> a = Values(InvokeOne("_sample_gamma", {lo, hi}, {{"shape", "(3, 5)"}}));
  RandomSeed(7);
  const std::vector<double> b = Values(InvokeOne("_sample_gamma", {lo, hi}, {{"shape", "(3, 5)"}}));
  const std::vector<double> c = Values(InvokeOne("_sample_gamma", {lo, hi}, {{"shape", "(3, 5)"}}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // alpha = 0 draws 0 (MXNet does not refuse it: test_random's gamma table has one).
  for (size_t i = 0; i < 15; ++i) EXPECT_EQ(a[i], 0.0);
  // Parameter arrays of different shapes are refused at the call.
  EXPECT_NE(ErrorOf([&] { InvokeOne("_sample_normal", {lo, Array({1, 1}, Shape{2})}, {}); }), "");
}

TEST(NegativeBinomialOps, MomentsAndBadParametersAtTheWait) {
  RandomSeed(3);
  const std::vector<double> nb =
      Values(InvokeOne("_random_negative_binomial", {}, {{"k", "3"}, {"p", "0.4"}, {"shape", "(100000,)"}}));
  ExpectLaw(nb, 0, nb.size(), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16);
  const std::vector<double> g = Values(
      InvokeOne("_random_generalized_negative_binomial", {}, {{"mu", "2"}, {"alpha", "0.3"}, {"shape", "(100000,)"}}));
  ExpectLaw(g, 0, g.size(), 2, 2 + 0.3 * 4);
  for (double x : g) ASSERT_EQ(x, std::floor(x));
  const std::vector<std::pair<std::string, Params>> bad = {
      {"_random_negative_binomial", {{"k", "-1"}}},
      {"_random_negative_binomial", {{"p", "0"}}},
      {"_random_generalized_negative_binomial", {{"mu", "-1"}}},
      {"_random_generalized_negative_binomial", {{"alpha", "-0.5"}}},
  };
  for (const auto& [op, params] : bad) {
    Params p = params;
    p["shape"] = "(3,)";
    NDArray out;
    ASSERT_NO_THROW(out = InvokeOne(op, {}, p));
    const std::string e = ErrorOf([&] { out.WaitToRead(); });
    EXPECT_NE(e.find("'" + params.begin()->first + "'"), std::string::npos) << e;
  }
}

TEST(MultinomialOp, FrequenciesLogProbabilitiesAndShapes) {
  RandomSeed(5);
  const std::vector<float> probs = {0.125f, 0.25f, 0.25f, 0.0625f, 0.125f, 0.1875f};
  const NDArray p = Array(probs, Shape{6});
  ImperativeCall call;
  call.op = "_sample_multinomial";
  call.params = {{"shape", "(100000,)"}, {"get_prob", "True"}};
  call.inputs = {p};
  const std::vector<NDArray> out = Invoke(call);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].GetShape(), (Shape{100000}));
  EXPECT_EQ(out[0].GetDType(), DType::kInt32);
  const std::vector<double> idx = Values(out[0]), logp = Values(out[1]);
  std::vector<double> count(6, 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    ASSERT_GE(idx[i], 0);
    ASSERT_LT(idx[i], 6);
    count[static_cast<size_t>(idx[i])] += 1;
    EXPECT_FLOAT_EQ(logp[i], std::log(probs[static_cast<size_t>(idx[i])]));
  }
  for (size_t c = 0; c < 6; ++c)
    EXPECT_NEAR(count[c] / 1e5, probs[c], 6 * std::sqrt(probs[c] * (1 - probs[c]) / 1e5)) << c;
  // 1-D data and no shape: one draw, shape (1,) (MXNet's rule); rows of 2-D data draw apart.
  EXPECT_EQ(InvokeOne("_sample_multinomial", {p}, {}).GetShape(), (Shape{1}));
  const NDArray rows = Array({0, 1, 1, 0}, Shape{2, 2});
  EXPECT_EQ(Values(InvokeOne("_sample_multinomial", {rows}, {{"shape", "(3,)"}})),
            (std::vector<double>{1, 1, 1, 0, 0, 0}));
}

TEST(ShuffleOp, PermutesFirstAxisSlices) {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const NDArray data = Array(v, Shape{8, 3});
  RandomSeed(1);
  const std::vector<double> a = Values(InvokeOne("_shuffle", {data}, {}));
  RandomSeed(1);
  EXPECT_EQ(a, Values(InvokeOne("_shuffle", {data}, {})));
  EXPECT_NE(a, Values(InvokeOne("_shuffle", {data}, {})));
  std::vector<double> firsts;
  for (size_t r = 0; r < 8; ++r) {
    const double start = a[r * 3];
    EXPECT_EQ(std::fmod(start, 3.0), 0.0);
    EXPECT_EQ(a[r * 3 + 1], start + 1);  // rows move whole
    EXPECT_EQ(a[r * 3 + 2], start + 2);
    firsts.push_back(start);
  }
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts, (std::vector<double>{0, 3, 6, 9, 12, 15, 18, 21}));
}

}  // namespace
}  // namespace weft

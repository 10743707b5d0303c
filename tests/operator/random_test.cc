// The random samplers (_random_uniform, _random_normal, _random_randint, _random_exponential,
// _random_gamma, _random_poisson, _random_uniform_like, _random_normal_like) through imperative
// invoke on the cpu plugin: their definitions against MXNet 1.9.1's lists, the moments of 100000
// draws, the bounds, reproducibility under weft::RandomSeed, and bad parameters reported at the
// wait (as MXNet reports them at asnumpy), not at the call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "operator/op_def.h"
#include "test_util.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace weft {
namespace {

using Params = std::map<std::string, std::string>;
using test::ErrorOf;

// The elements of `a` (float32, float64, int32 or int64) as double, after waiting for it.
std::vector<double> Values(const NDArray& a) {
  std::vector<double> v(a.Size());
  auto read = [&](auto zero) {
    std::vector<decltype(zero)> raw(a.Size());
    a.SyncCopyToCPUBytes(raw.data(), a.Bytes());
    for (size_t i = 0; i < raw.size(); ++i) v[i] = static_cast<double>(raw[i]);
  };
  switch (a.GetDType()) {
    case DType::kFloat32:
      read(0.0f);
      break;
    case DType::kFloat64:
      read(0.0);
      break;
    case DType::kInt32:
      read(int32_t{0});
      break;
    case DType::kInt64:
      read(int64_t{0});
      break;
    default:
      ADD_FAILURE() << "unexpected dtype " << DTypeName(a.GetDType());
  }
  return v;
}

std::vector<uint8_t> Bits(const NDArray& a) {
  std::vector<uint8_t> b(a.Bytes());
  a.SyncCopyToCPUBytes(b.data(), b.size());
  return b;
}

NDArray Sample(const std::string& op, Params p) { return InvokeOne(op, {}, p); }

// ---- definitions ----------------------------------------------------------------------------------

struct AttrRow {
  std::string name, type, default_value;  // "" default = required
};

// mx.operator.get_operator_arguments(op) in MXNet 1.9.1: names, order, defaults (types as weft
// spells them: MXNet's "long" is "long", its Shape(tuple) "shape", its choice lists "enum").
TEST(RandomOps, AttributesAreMXNets) {
  const std::vector<AttrRow> tail = {{"shape", "shape", "None"}, {"ctx", "string", ""}, {"dtype", "enum", "None"}};
  auto with_tail = [&](std::vector<AttrRow> head) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const std::map<std::string, std::vector<AttrRow>> want = {
      {"_random_uniform", with_tail({{"low", "float", "0"}, {"high", "float", "1"}})},
      {"_random_normal", with_tail({{"loc", "float", "0"}, {"scale", "float", "1"}})},
      {"_random_randint", with_tail({{"low", "long", ""}, {"high", "long", ""}})},
      {"_random_exponential", with_tail({{"lam", "float", "1"}})},
      {"_random_gamma", with_tail({{"alpha", "float", "1"}, {"beta", "float", "1"}})},
      {"_random_poisson", with_tail({{"lam", "float", "1"}})},
      {"_random_uniform_like", {{"low", "float", "0"}, {"high", "float", "1"}}},
      {"_random_normal_like", {{"loc", "float", "0"}, {"scale", "float", "1"}}},
  };
  for (const auto& [op, rows] : want) {
    SCOPED_TRACE(op);
    const OpDef& def = OpRegistry::Get().Lookup(op);
    ASSERT_EQ(def.attrs.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(def.attrs[i].name, rows[i].name);
      EXPECT_EQ(def.attrs[i].type, rows[i].type) << rows[i].name;
      EXPECT_EQ(def.attrs[i].default_value.value_or(""), rows[i].default_value) << rows[i].name;
      EXPECT_EQ(def.attrs[i].default_value.has_value(), op != "_random_randint" || i >= 2) << rows[i].name;
    }
    const bool like = op.ends_with("_like");
    const Params required = op == "_random_randint" ? Params{{"low", "0"}, {"high", "1"}} : Params{};
    EXPECT_EQ(def.list_inputs(def.Normalize(AttrMap(required))),
              like ? std::vector<std::string>{"data"} : std::vector<std::string>{});
    EXPECT_NE(def.resources & kResourceRandom, 0u);
  }
  // The dtype choices: floats, randint's integers.
  EXPECT_EQ(OpRegistry::Get().Lookup("_random_normal").FindAttr("dtype")->choices,
            (std::vector<std::string>{"None", "float16", "float32", "float64"}));
  EXPECT_EQ(OpRegistry::Get().Lookup("_random_randint").FindAttr("dtype")->choices,
            (std::vector<std::string>{"None", "int32", "int64"}));
}

// MXNet 1.9.1's aliases of these ops (NNGetOpHandle of the alias names the op), no more.
TEST(RandomOps, AliasesAreMXNets) {
  const std::map<std::string, std::string> aliases = {
      {"uniform", "_random_uniform"},        {"random_uniform", "_random_uniform"},
      {"normal", "_random_normal"},          {"random_normal", "_random_normal"},
      {"random_randint", "_random_randint"}, {"random_exponential", "_random_exponential"},
      {"random_gamma", "_random_gamma"},     {"random_poisson", "_random_poisson"},
  };
  for (const auto& [alias, op] : aliases) EXPECT_EQ(OpRegistry::Get().ResolveAlias(alias), op) << alias;
  for (const char* none : {"randint", "exponential", "poisson", "uniform_like", "random_uniform_like"})
    EXPECT_EQ(OpRegistry::Get().Find(none), nullptr) << none;
}

TEST(RandomOps, DTypeNoneIsFloat32AndRandintsInt32) {
  EXPECT_EQ(Sample("_random_uniform", {{"shape", "(2, 3)"}}).GetDType(), DType::kFloat32);
  EXPECT_EQ(Sample("normal", {{"shape", "(2,)"}, {"dtype", "float64"}}).GetDType(), DType::kFloat64);
  EXPECT_EQ(Sample("_random_randint", {{"low", "0"}, {"high", "4"}, {"shape", "(2,)"}}).GetDType(), DType::kInt32);
  const NDArray like =
      InvokeOne("_random_normal_like", {NDArray(Shape{4, 5}, Context::cpu(0), false, DType::kFloat64)});
  EXPECT_EQ(like.GetDType(), DType::kFloat64);
  EXPECT_EQ(like.GetShape(), (Shape{4, 5}));
  // Refused at the call, as MXNet's type inference refuses them.
  EXPECT_NE(ErrorOf([] {
              Sample("_random_uniform", {{"shape", "(2,)"}, {"dtype", "int32"}});
            }).find("dtype"),
            std::string::npos);
  const std::string e =
      ErrorOf([] { InvokeOne("_random_uniform_like", {NDArray(Shape{3}, Context::cpu(0), false, DType::kInt32)}); });
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
  // No shape: MXNet's "inferring shapes failed", at the call.
  EXPECT_FALSE(ErrorOf([] { Sample("_random_uniform", {}); }).empty());
  // dtype None with a given output takes the output's dtype (MXNet's SampleOpType; its
  // initializers draw into float64 parameters with out=); a dtype the sampler cannot draw is refused.
  std::vector<NDArray> out = {NDArray(Shape{1000}, Context::cpu(0), false, DType::kFloat64)};
  ImperativeCall uniform;
  uniform.op = "_random_uniform";
  uniform.params = {{"low", "2"}, {"high", "3"}};
  Invoke(uniform, &out);
  for (double v : Values(out[0])) ASSERT_TRUE(v >= 2 && v < 3) << v;
  std::vector<NDArray> ints = {NDArray(Shape{3}, Context::cpu(0), false, DType::kInt32)};
  ImperativeCall normal;
  normal.op = "_random_normal";
  EXPECT_NE(ErrorOf([&] { Invoke(normal, &ints); }).find("the output is int32"), std::string::npos);
}

// ---- distributions --------------------------------------------------------------------------------

struct Moments {
  double mean, variance, fourth;  // fourth central moment, for the standard error of the variance
};

struct DistCase {
  std::string op;
  Params params;
  Moments m;
};

std::vector<DistCase> DistCases() {
  auto uniform = [](double a, double b) {
    return Moments{(a + b) / 2, (b - a) * (b - a) / 12, std::pow(b - a, 4) / 80};
  };
  auto gamma = [](double k, double t) { return Moments{k * t, k * t * t, 3 * k * (k + 2) * std::pow(t, 4)}; };
  auto poisson = [](double l) { return Moments{l, l, l * (1 + 3 * l)}; };
  return {
      {"_random_uniform", {{"low", "-2"}, {"high", "3"}}, uniform(-2, 3)},
      {"_random_normal", {{"loc", "1.5"}, {"scale", "2"}}, {1.5, 4, 3 * 16}},
      {"_random_exponential", {{"lam", "4"}}, {0.25, 1.0 / 16, 9.0 / 256}},
      {"_random_gamma", {{"alpha", "0.5"}, {"beta", "2"}}, gamma(0.5, 2)},
      {"_random_gamma", {{"alpha", "9"}, {"beta", "0.5"}}, gamma(9, 0.5)},
      {"_random_poisson", {{"lam", "3.5"}}, poisson(3.5)},
      {"_random_poisson", {{"lam", "40"}}, poisson(40)},
      {"_random_poisson", {{"lam", "1000000"}}, poisson(1e6)},
  };
}

// Sample mean and variance of `v` within 5 standard errors of the distribution's.
void ExpectMoments(const std::vector<double>& v, const Moments& m) {
  const double n = static_cast<double>(v.size());
  double mean = 0;
  for (double x : v) mean += x;
  mean /= n;
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= n - 1;
  EXPECT_NEAR(mean, m.mean, 5 * std::sqrt(m.variance / n)) << "mean";
  EXPECT_NEAR(var, m.variance, 5 * std::sqrt((m.fourth - m.variance * m.variance) / n)) << "variance";
}

constexpr const char* kDraws = "(100000,)";

TEST(RandomOps, MomentsOf100000Draws) {
  RandomSeed(20261128);
  for (const DistCase& c : DistCases()) {
    for (const char* dtype : {"float32", "float64"}) {
      SCOPED_TRACE(c.op + " " + dtype + " " + c.params.begin()->second);
      Params p = c.params;
      p["shape"] = kDraws;
      p["dtype"] = dtype;
      const std::vector<double> v = Values(Sample(c.op, p));
      ExpectMoments(v, c.m);
      for (double x : v) ASSERT_TRUE(std::isfinite(x));
      if (c.op != "_random_uniform" && c.op != "_random_normal") {
        for (double x : v) ASSERT_GE(x, 0);
      }
      if (c.op == "_random_poisson") {
        for (double x : v) ASSERT_EQ(x, std::floor(x));
      }
    }
  }
}

TEST(RandomOps, LikeOpsTakeShapeAndDTypeFromData) {
  RandomSeed(11);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(t));
    const NDArray data(Shape{100, 1000}, Context::cpu(0), false, t);
    const NDArray u = InvokeOne("_random_uniform_like", {data}, {{"low", "5"}, {"high", "6"}});
    ASSERT_EQ(u.GetDType(), t);
    const std::vector<double> uv = Values(u);
    ExpectMoments(uv, {5.5, 1.0 / 12, 1.0 / 80});
    for (double x : uv) ASSERT_TRUE(x >= 5 && x < 6) << x;
    ExpectMoments(Values(InvokeOne("_random_normal_like", {data}, {{"loc", "-1"}, {"scale", "0.5"}})),
                  {-1, 0.25, 3 * 0.0625});
  }
}

TEST(RandomOps, RandintCoversLowToHighExclusive) {
  RandomSeed(5);
  for (const char* dtype : {"int32", "int64"}) {
    SCOPED_TRACE(dtype);
    const NDArray a = Sample("random_randint", {{"low", "-3"}, {"high", "5"}, {"shape", kDraws}, {"dtype", dtype}});
    EXPECT_EQ(a.GetDType(), std::string(dtype) == "int32" ? DType::kInt32 : DType::kInt64);
    const std::vector<double> v = Values(a);
    std::set<double> seen(v.begin(), v.end());
    EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3, 4}));
    // 8 equally likely values: variance (8² − 1)/12, fourth moment (m² − 1)(3m² − 7)/240.
    ExpectMoments(v, {0.5, 63.0 / 12, 63.0 * 185 / 240});
  }
  // A range wider than int32, in int64.
  const std::vector<double> wide = Values(Sample(
      "_random_randint", {{"low", "-5000000000"}, {"high", "5000000000"}, {"shape", "(1000,)"}, {"dtype", "int64"}}));
  for (double x : wide) ASSERT_TRUE(x >= -5e9 && x < 5e9) << x;
}

TEST(RandomOps, UniformStaysBelowHigh) {
  RandomSeed(3);
  // Every real value of [1 − 1e-7, 1) lies nearer to a float32 of 0.99999988 or 1.0: those that
  // round to high are drawn again.
  const std::vector<double> v =
      Values(Sample("_random_uniform", {{"low", "0.9999999"}, {"high", "1"}, {"shape", kDraws}}));
  for (double x : v) ASSERT_TRUE(x >= 0.9999999f && x < 1.0) << x;
  for (double x : Values(Sample("uniform", {{"low", "2"}, {"high", "2"}, {"shape", "(10,)"}}))) EXPECT_EQ(x, 2);
}

// ---- reproducibility ------------------------------------------------------------------------------

TEST(RandomOps, SameSeedSameBitsOtherSeedOthers) {
  const std::vector<std::pair<std::string, Params>> ops = {
      {"_random_uniform", {}},
      {"_random_normal", {}},
      {"_random_exponential", {}},
      {"_random_gamma", {{"alpha", "2.5"}}},
      {"_random_poisson", {{"lam", "20"}}},
      {"_random_randint", {{"low", "0"}, {"high", "1000"}}},
  };
  for (const auto& [op, params] : ops) {
    SCOPED_TRACE(op);
    Params p = params;
    p["shape"] = "(1000,)";
    RandomSeed(42);
    const std::vector<uint8_t> a = Bits(Sample(op, p));
    RandomSeed(42);
    const std::vector<uint8_t> b = Bits(Sample(op, p));
    RandomSeed(43);
    const std::vector<uint8_t> c = Bits(Sample(op, p));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    // Two calls in a row under one seed differ: each call gets the sequence's next seed.
    RandomSeed(42);
    Sample(op, p).WaitToRead();
    EXPECT_NE(Bits(Sample(op, p)), a);
  }
}

// Element i depends on the call's seed and i only: the same seed gives a (1000, 100) array whose
// flat elements are those of a (100000,) one, whatever the shape and however the loop is split.
TEST(RandomOps, ElementsArePureFunctionsOfSeedAndIndex) {
  RandomSeed(9);
  const std::vector<double> flat = Values(Sample("_random_gamma", {{"alpha", "0.7"}, {"shape", kDraws}}));
  RandomSeed(9);
  const std::vector<double> square = Values(Sample("_random_gamma", {{"alpha", "0.7"}, {"shape", "(1000, 100)"}}));
  EXPECT_EQ(flat, square);
  RandomSeed(9);
  const std::vector<double> head = Values(Sample("_random_gamma", {{"alpha", "0.7"}, {"shape", "(10,)"}}));
  EXPECT_EQ(head, std::vector<double>(flat.begin(), flat.begin() + 10));
}

// ---- bad parameters -------------------------------------------------------------------------------

// MXNet checks the parameters when it samples: the call returns, asnumpy raises. The message
// names the attribute.
TEST(RandomOps, BadParametersRaiseAtTheWaitNamingTheAttribute) {
  struct Bad {
    std::string op;
    Params params;
    std::string want;  // in the message: the attribute, quoted
  };
  const std::vector<Bad> bad = {
      {"_random_normal", {{"scale", "-1"}}, "'scale'"},
      {"_random_normal", {{"scale", "0"}}, "'scale'"},
      {"_random_uniform", {{"low", "1"}, {"high", "0"}}, "'high'"},
      {"_random_exponential", {{"lam", "0"}}, "'lam'"},
      {"_random_gamma", {{"alpha", "0"}}, "'alpha'"},
      {"_random_gamma", {{"beta", "-2"}}, "'beta'"},
      {"_random_poisson", {{"lam", "-1"}}, "'lam'"},
      {"_random_randint", {{"low", "3"}, {"high", "3"}}, "'high'"},
      // [0, 3e9) does not fit int32: the message says to choose int64.
      {"_random_randint", {{"low", "0"}, {"high", "3000000000"}}, "int64"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.op + " " + b.want);
    Params p = b.params;
    p["shape"] = "(4,)";
    NDArray out;
    ASSERT_NO_THROW(out = Sample(b.op, p));
    const std::string e = ErrorOf([&] { out.WaitToRead(); });
    EXPECT_NE(e.find(b.op), std::string::npos) << e;
    EXPECT_NE(e.find(b.want), std::string::npos) << e;
  }
  // The seed's example (architecture.exception_handling): a negative scale, through the _like op too.
  NDArray out;
  ASSERT_NO_THROW(
      out = InvokeOne("_random_normal_like", {NDArray(Shape{2, 2}, Context::cpu(0), false)}, {{"scale", "-1"}}));
  const std::string e = ErrorOf([&] { Values(out); });
  EXPECT_NE(e.find("attribute 'scale' = -1"), std::string::npos) << e;
}

// Imperative calls of one op with one signature share a prepared kernel. A failed call must not
// skip the next, unrelated call through it (nothing but the failed call's outputs carries the
// failure), and every new failure is reported, also by WaitAll, once.
TEST(RandomOps, AFailedCallDoesNotTaintTheNextCall) {
  const Params bad = {{"shape", "(4,)"}, {"scale", "-1"}};
  for (int round = 0; round < 2; ++round) {
    NDArray first = Sample("_random_normal", bad);
    EXPECT_NE(ErrorOf([&] { first.WaitToRead(); }).find("'scale'"), std::string::npos);
    NDArray again = Sample("_random_normal", bad);  // fails anew: reported anew
    NDArray other = Sample("_random_exponential", {{"shape", "(4,)"}, {"lam", "-1"}});
    EXPECT_NE(ErrorOf([] { NDArray::WaitAll(); }).find("attribute '"), std::string::npos);
    EXPECT_NO_THROW(again.WaitToRead()) << "WaitAll rethrows one failure and clears every other";
    EXPECT_NO_THROW(other.WaitToRead());
    EXPECT_NO_THROW(NDArray::WaitAll());
  }
  auto array = [](std::vector<float> v) {
    NDArray a(Shape{static_cast<int64_t>(v.size())}, Context::cpu(0), false);
    a.SyncCopyFromCPU(v);
    return a;
  };
  NDArray failed = InvokeOne("take", {array({1, 2, 3}), array({5})}, {{"mode", "raise"}});
  NDArray good = InvokeOne("take", {array({1, 2, 3}), array({1})}, {{"mode", "raise"}});
  EXPECT_EQ(Values(good), std::vector<double>({2})) << "a call after a failed one must run";
  EXPECT_NE(ErrorOf([&] { failed.WaitToRead(); }).find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace weft

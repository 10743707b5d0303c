// Conformance cases of MXNet's classic operators that its Python frontend needs (issue 28), by
// family: comparisons and logic, binary math, unary math. What each op computes is checked
// against MXNet itself by tests/compat (gen_op_fixtures.py); these cases check every device
// against the cpu, and the cpu's gradients against finite differences.
#include "op_cases.h"

namespace wconf {
namespace {

const Domain kSmallInts{-2, 3, true};  // ties occur: comparisons see equal elements

void CompareCases(std::vector<OpCase>& v) {
  for (const char* op : {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
                         "logical_or", "logical_xor"}) {
    const std::string base = op;
    v.push_back(Case("_" + base, {}, {In(Shape{3, 4}, kSmallInts), In(Shape{3, 4}, kSmallInts)}));
    v.push_back(Case("broadcast_" + base, {}, {In(Shape{2, 3, 4}, kSmallInts), In(Shape{1, 3, 1}, kSmallInts)}));
    v.push_back(Case("_" + base + "_scalar", {{"scalar", "1"}}, {In(Shape{7}, kSmallInts)}));
  }
  v.push_back(Case("logical_not", {}, {In(Shape{3, 4}, kSmallInts)}));
}

void BinaryMathCases(std::vector<OpCase>& v) {
  const Domain wide{-5, 5}, divisor{-3, 3, false, 0.5};
  // mod's gradient is a step function of the inputs: checked against MXNet (tests/compat) rather
  // than by finite differences.
  v.push_back(NoGrad(Case("_mod", {}, {In(Shape{3, 4}, wide), In(Shape{3, 4}, divisor)})));
  v.push_back(NoGrad(Case("broadcast_mod", {}, {In(Shape{2, 3, 4}, wide), In(Shape{3, 1}, divisor)})));
  v.push_back(NoGrad(Case("_mod_scalar", {{"scalar", "-1.5"}}, {In(Shape{7}, wide)})));
  v.push_back(NoGrad(Case("_rmod_scalar", {{"scalar", "2.5"}}, {In(Shape{7}, Domain{0.5, 3})})));
  v.push_back(Case("_power", {}, {In(Shape{3, 4}, kPositive), In(Shape{3, 4})}));
  v.push_back(Case("broadcast_power", {}, {In(Shape{2, 3}, kPositive), In(Shape{1, 3})}));
  v.push_back(Case("_rpower_scalar", {{"scalar", "1.7"}}, {In(Shape{7})}));
  for (const char* op : {"maximum", "minimum"}) {
    const std::string base = op;
    v.push_back(Case("_" + base, {}, {In(Shape{3, 4}, kDistinct), In(Shape{3, 4}, kDistinct)}));
    v.push_back(Case("_" + base + "_scalar", {{"scalar", "0.1"}}, {In(Shape{7}, kDistinct)}));
  }
  v.push_back(Case("_hypot", {}, {In(Shape{3, 4}, kAwayFromZero), In(Shape{3, 4}, kAwayFromZero)}));
  v.push_back(Case("broadcast_hypot", {}, {In(Shape{2, 3}, kAwayFromZero), In(Shape{2, 1}, kAwayFromZero)}));
  v.push_back(Case("_hypot_scalar", {{"scalar", "0.5"}}, {In(Shape{7})}));
  v.push_back(Case("_grad_add", {}, {In(Shape{3, 4}), In(Shape{3, 4})}));
}

void UnaryMathCases(std::vector<OpCase>& v) {
  const Domain inside{-0.9, 0.9}, above_one{1.1, 3}, gamma{0.3, 4};
  const std::pair<const char*, Domain> ops[] = {
      {"tan", kSigned},     {"arcsin", inside},
      {"arccos", inside},   {"arctan", kSigned},
      {"sinh", kSigned},    {"cosh", kSigned},
      {"arcsinh", kSigned}, {"arccosh", above_one},
      {"arctanh", inside},  {"log2", kPositive},
      {"log10", kPositive}, {"cbrt", kAwayFromZero},
      {"rcbrt", kPositive}, {"reciprocal", kAwayFromZero},
      {"degrees", kSigned}, {"radians", kSigned},
      {"erf", kSigned},     {"erfinv", inside},
      {"gamma", gamma},     {"gammaln", gamma},
  };
  for (const auto& [op, domain] : ops)
    for (const Shape& s : {Shape{7}, Shape{3, 1, 5}}) v.push_back(Case(op, {}, {In(s, domain)}));
  for (const char* op : {"ceil", "trunc", "fix", "rint"}) v.push_back(Case(op, {}, {In(Shape{3, 5}, Domain{-3, 3})}));
}

// random sampling (randops)
// The samplers' draws are a pure function of the call's seed and the element index, so every
// device must match the cpu; the cpu's draws are checked against their distribution
// (reference_random.cc). 10000 draws per case: the mean check is then tight enough to mean
// something. No gradient: the creation ops have none, the _like ones a zero one.
void RandomCases(std::vector<OpCase>& v) {
  using Attrs = std::map<std::string, std::string>;
  const std::pair<const char*, Attrs> creation[] = {
      {"_random_uniform", {{"low", "-2"}, {"high", "3"}}},
      {"_random_normal", {{"loc", "1.5"}, {"scale", "2"}}},
      {"_random_randint", {{"low", "-3"}, {"high", "5"}}},
      {"_random_exponential", {{"lam", "4"}}},
      {"_random_gamma", {{"alpha", "0.5"}, {"beta", "2"}}},
      {"_random_gamma", {{"alpha", "9"}, {"beta", "0.5"}}},
      {"_random_poisson", {{"lam", "3.5"}}},
      {"_random_poisson", {{"lam", "40"}}},
  };
  for (const auto& [op, params] : creation) {
    Attrs a = params;
    a["shape"] = "(100, 100)";
    v.push_back(NoGrad(Case(op, a, {})));
  }
  for (const char* dtype : {"float64", "float16"}) {
    v.push_back(NoGrad(Case("_random_uniform", {{"shape", "(10000,)"}, {"dtype", dtype}}, {})));
    v.push_back(NoGrad(Case("_random_normal", {{"shape", "(10000,)"}, {"dtype", dtype}}, {})));
  }
  v.push_back(NoGrad(
      Case("_random_randint", {{"low", "0"}, {"high", "1000000"}, {"shape", "(1000,)"}, {"dtype", "int64"}}, {})));
  v.push_back(NoGrad(Case("_random_uniform_like", {{"low", "5"}, {"high", "6"}}, {In(Shape{20, 50})})));
  v.push_back(NoGrad(Case("_random_normal_like", {{"loc", "-1"}, {"scale", "0.5"}}, {In(Shape{10, 10, 10})})));
}

}  // namespace

void AddFrontendCases(std::vector<OpCase>& v) {
  CompareCases(v);
  BinaryMathCases(v);
  UnaryMathCases(v);
  RandomCases(v);
}

}  // namespace wconf

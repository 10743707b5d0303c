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
  // Exponents below 0.1: the int32/int64 runs (values x·50, bases 10..100) get exponents up to 4,
  // so no power leaves int32's range (where results saturate and add-to would overflow).
  const Domain exponent{-1, 0.1};
  v.push_back(Case("_power", {}, {In(Shape{3, 4}, kPositive), In(Shape{3, 4}, exponent)}));
  v.push_back(Case("broadcast_power", {}, {In(Shape{2, 3}, kPositive), In(Shape{1, 3}, exponent)}));
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
  // math ops (fixref1)
  // amp_cast: float32 to a narrower and a wider float (the values change, then do not).
  for (const char* dt : {"float16", "float64"})
    v.push_back(NoGrad(Case("amp_cast", {{"dtype", dt}}, {In(Shape{3, 5})})));
}

}  // namespace

void AddFrontendCases(std::vector<OpCase>& v) {
  CompareCases(v);
  BinaryMathCases(v);
  UnaryMathCases(v);
}

}  // namespace wconf

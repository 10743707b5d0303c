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

// indexing and shape ops (fixgrad)
// Positions drawn as a shuffled grid of the whole numbers 0 … n−1 (n elements): no position twice,
// so scatters are defined (MXNet keeps one unspecified value of repeated positions).
Domain DistinctPositions(int n) { return Domain{-0.5, n - 0.5, true, 0, true}; }

void IndexCases(std::vector<OpCase>& v) {
  const Domain positions{-3, 3, true};  // gather_nd wraps negative positions
  v.push_back(Case("_slice_assign", {{"begin", "(1, None)"}, {"end", "(3, None)"}, {"step", "(1, 2)"}},
                   {In(Shape{4, 5}), In(Shape{2, 3})}));
  v.push_back(Case("_slice_assign", {{"begin", "(None, -1)"}, {"end", "(None, 0)"}, {"step", "(2, -2)"}},
                   {In(Shape{3, 5}), In(Shape{2, 2})}));
  v.push_back(
      Case("_slice_assign_scalar", {{"scalar", "7"}, {"begin", "(0, 1)"}, {"end", "(2, 3)"}}, {In(Shape{3, 4})}));
  v.push_back(
      Case("_slice_assign_scalar", {{"scalar", "-2"}, {"begin", "(-1,)"}, {"end", "(None,)"}}, {In(Shape{3, 1, 2})}));
  v.push_back(Case("gather_nd", {}, {In(Shape{3, 3, 2}), In(Shape{2, 4}, positions)}));
  v.push_back(Case("gather_nd", {}, {In(Shape{3, 4}), In(Shape{2, 2, 3}, positions)}));
  v.push_back(Case("scatter_nd", {{"shape", "(3, 4)"}}, {In(Shape{3, 4}), In(Shape{1, 3}, DistinctPositions(3))}));
  v.push_back(Case("scatter_nd", {{"shape", "(4, 4, 2)"}}, {In(Shape{2, 2}), In(Shape{2, 2}, DistinctPositions(4))}));
  v.push_back(Case("_scatter_set_nd", {{"shape", "(4, 4, 2)"}},
                   {In(Shape{4, 4, 2}), In(Shape{2, 2}), In(Shape{2, 2}, DistinctPositions(4))}));
  OpCase set_value = NoGrad(Case("_set_value", {{"src", "-1.5"}}, {}));
  set_value.out = {Shape{3, 4}};
  v.push_back(set_value);
  v.push_back(NoGrad(Case("_onehot_encode", {}, {In(Shape{5}, Domain{0, 4, true}), In(Shape{5, 4})})));
  v.push_back(NoGrad(Case("_histogram", {{"bin_cnt", "5"}, {"range", "(-1, 1)"}}, {In(Shape{20}, Domain{-1.2, 1.2})})));
  v.push_back(NoGrad(Case("_eye", {{"N", "3"}, {"M", "4"}, {"k", "1"}}, {})));
  v.push_back(NoGrad(Case("_eye", {{"N", "3"}, {"k", "-1"}, {"dtype", "int32"}}, {})));
  v.push_back(NoGrad(Case("_linspace", {{"start", "1"}, {"stop", "2"}, {"num", "5"}}, {})));
  v.push_back(NoGrad(Case(
      "_linspace", {{"start", "-1"}, {"stop", "2"}, {"num", "4"}, {"endpoint", "False"}, {"dtype", "float64"}}, {})));
  v.push_back(NoGrad(Case("argmin", {{"axis", "1"}}, {In(Shape{3, 5}, kDistinct)})));
  v.push_back(NoGrad(Case("argmin", {}, {In(Shape{2, 3}, kDistinct)})));
  v.push_back(NoGrad(Case("argmax_channel", {}, {In(Shape{3, 5}, kDistinct)})));
  v.push_back(NoGrad(Case("argmax_channel", {}, {In(Shape{2, 3, 4}, kDistinct)})));
  v.push_back(Case("nanprod", {{"axis", "(1,)"}}, {In(Shape{2, 3, 4}, kAwayFromZero)}));
  v.push_back(Case("nanprod", {}, {In(Shape{3, 5}, kAwayFromZero)}));
}

void ShapeOpCases(std::vector<OpCase>& v) {
  v.push_back(Case("squeeze", {}, {In(Shape{3, 1, 5})}));
  v.push_back(Case("squeeze", {{"axis", "(1,)"}}, {In(Shape{2, 1, 1, 3})}));
  v.push_back(Case("squeeze", {}, {In(Shape{1, 1})}));
  v.push_back(Case("reverse", {{"axis", "(0,)"}}, {In(Shape{3, 4})}));
  v.push_back(Case("reverse", {{"axis", "(0, 2)"}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("diag", {{"k", "1"}}, {In(Shape{4})}));
  v.push_back(Case("diag", {{"k", "-2"}}, {In(Shape{3})}));
  v.push_back(Case("diag", {}, {In(Shape{3, 4})}));
  v.push_back(Case("diag", {{"k", "-1"}}, {In(Shape{3, 4})}));
  v.push_back(Case("diag", {{"k", "1"}, {"axis1", "1"}, {"axis2", "2"}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("diag", {{"k", "1"}, {"axis1", "-1"}, {"axis2", "0"}}, {In(Shape{2, 3, 4})}));
  for (const Shape& s : {Shape{3, 4}, Shape{2, 1, 3}}) {
    v.push_back(Case("shape_array", {}, {In(s)}));
    v.push_back(Case("size_array", {}, {In(s)}));
  }
  v.push_back(Case("broadcast_axis", {{"axis", "(1,)"}, {"size", "(4,)"}}, {In(Shape{2, 1, 3})}));
  v.push_back(Case("broadcast_axis", {{"axis", "(0, 2)"}, {"size", "(2, 3)"}}, {In(Shape{1, 3, 1})}));
  v.push_back(Case("_split_v2", {{"indices", "()"}, {"sections", "3"}}, {In(Shape{3, 6, 2})}));
  v.push_back(Case("_split_v2", {{"indices", "(0, 2, 5)"}, {"axis", "1"}}, {In(Shape{3, 6, 2})}));
  v.push_back(Case("_split_v2", {{"indices", "()"}, {"sections", "4"}, {"axis", "0"}, {"squeeze_axis", "True"}},
                   {In(Shape{4, 3})}));
  v.push_back(Case("depth_to_space", {{"block_size", "2"}}, {In(Shape{1, 8, 2, 3})}));
  v.push_back(Case("depth_to_space", {{"block_size", "3"}}, {In(Shape{2, 9, 1, 2})}));
  v.push_back(Case("space_to_depth", {{"block_size", "2"}}, {In(Shape{1, 2, 4, 6})}));
  v.push_back(Case("space_to_depth", {{"block_size", "3"}}, {In(Shape{2, 1, 3, 3})}));
  // Through float16 the finite differences see the rounding: checked against the cast alone.
  v.push_back(NoGrad(Case("amp_cast", {{"dtype", "float16"}}, {In(Shape{3, 4})})));
  v.push_back(Case("amp_cast", {{"dtype", "float64"}}, {In(Shape{2, 3})}));
}
}  // namespace

void AddFrontendCases(std::vector<OpCase>& v) {
  CompareCases(v);
  BinaryMathCases(v);
  UnaryMathCases(v);
  IndexCases(v);
  ShapeOpCases(v);
}

}  // namespace wconf

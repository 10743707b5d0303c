// Conformance cases of MXNet's classic operators that its Python frontend needs (issue 28), by
// family: comparisons and logic, binary math, unary math. What each op computes is checked
// against MXNet itself by tests/compat (gen_op_fixtures.py); these cases check every device
// against the cpu, and the cpu's gradients against finite differences.
#include "op_cases.h"
#include "reference.h"

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
  // The ops and their input domains are reference_math.cc's table (one row per op).
  for (const ref::UnaryMathOp& u : ref::UnaryMathOps())
    for (const Shape& s : {Shape{7}, Shape{3, 1, 5}}) v.push_back(Case(u.op, {}, {In(s, u.domain)}));
  for (const char* op : {"ceil", "trunc", "fix", "rint"}) v.push_back(Case(op, {}, {In(Shape{3, 5}, Domain{-3, 3})}));
}

// optimizer updates (fixref2): the ops of core/operator/defs/optimizer_more.cc, against
// reference_update_more.cc. States are aux states, as op_cases.cc's sgd/adam cases. The mp_ ops
// take float16 weights and grads with float32 states (their cases are float16 natively); they
// accept float32 weights too (MXNet's kernels are typed on the weight), so each has both cases.
const Domain kHalf{-1, 1, false, 0, false, DType::kFloat16};
const Domain kSingle{-1, 1, false, 0, false, DType::kFloat32};

void MixedPrecisionSgdCases(std::vector<OpCase>& v) {
  const Shape s{5, 3};
  for (const Domain& w : {kHalf, kSingle}) {
    v.push_back(NoGrad(Case("mp_sgd_update", {{"lr", "0.1"}, {"wd", "0.01"}, {"clip_gradient", "0.5"}},
                            {In(s, w), In(s, w)}, {In(s)})));
    v.push_back(NoGrad(Case("mp_sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
                            {In(s, w), In(s, w)}, {In(s), In(s)})));
    v.push_back(NoGrad(Case("mp_nag_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}, {"rescale_grad", "0.5"}},
                            {In(s, w), In(s, w)}, {In(s), In(s)})));
  }
}

// multi_* and preloaded_multi_*: two weights of different shapes, positional inputs weight0,
// grad0, weight1, grad1[, lrs, wds]; aux per weight [mom][, weight32].
void MultiSgdCases(std::vector<OpCase>& v) {
  const Shape a{5, 3}, b{4};
  for (bool preloaded : {false, true})
    for (bool mp : {false, true})
      for (bool mom : {false, true}) {
        const std::string op = std::string(preloaded ? "preloaded_" : "") + "multi_" + (mp ? "mp_" : "") +
                               (mom ? "sgd_mom_update" : "sgd_update");
        std::map<std::string, std::string> attrs = {{"num_weights", "2"}, {"clip_gradient", "0.5"}};
        if (!preloaded) attrs.insert({{"lrs", "(0.1, 0.2)"}, {"wds", "(0.01, 0)"}});
        if (mom) attrs["momentum"] = "0.9";
        for (const Domain& d : mp ? std::vector<Domain>{kHalf, kSingle} : std::vector<Domain>{kSigned}) {
          std::vector<Input> in = {In(a, d), In(a, d), In(b, d), In(b, d)};
          if (preloaded) in.insert(in.end(), {In(Shape{2}, Domain{0.05, 0.2}), In(Shape{2}, Domain{0, 0.05})});
          std::vector<Input> aux;
          for (const Shape& s : {a, b}) {
            if (mom) aux.push_back(In(s));
            if (mp) aux.push_back(In(s));
          }
          v.push_back(NoGrad(Case(op, attrs, in, aux)));
        }
      }
}

void RuleUpdateCases(std::vector<OpCase>& v) {
  const Shape s{5, 3};
  v.push_back(NoGrad(Case("signsgd_update", {{"lr", "0.1"}, {"wd", "0.01"}}, {In(s), In(s)})));
  // MXNet's signsgd takes the sign of the raw gradient: a negative rescale_grad shows it.
  v.push_back(NoGrad(Case("signsgd_update", {{"lr", "0.05"}, {"rescale_grad", "-0.5"}}, {In(s), In(s)})));
  v.push_back(
      NoGrad(Case("signum_update",
                  {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}, {"wd_lh", "0.02"}, {"clip_gradient", "0.5"}},
                  {In(s), In(s)}, {In(s)})));
  v.push_back(NoGrad(Case("ftrl_update", {{"lr", "0.1"}, {"lamda1", "0.01"}, {"wd", "0.01"}, {"rescale_grad", "2"}},
                          {In(s), In(s)}, {In(s), In(s, kPositive)})));
  v.push_back(NoGrad(Case("ftrl_update", {{"lr", "0.05"}, {"beta", "0.5"}, {"clip_gradient", "0.3"}}, {In(s), In(s)},
                          {In(s), In(s, kPositive)})));
  v.push_back(NoGrad(Case("_sparse_adagrad_update", {{"lr", "0.1"}, {"rescale_grad", "2"}, {"clip_gradient", "0.5"}},
                          {In(s), In(s)}, {In(s, kPositive)})));
  v.push_back(NoGrad(Case("ftml_update", {{"lr", "0.1"}, {"t", "3"}, {"wd", "0.01"}, {"clip_grad", "0.5"}},
                          {In(s), In(s)}, {In(s, kPositive), In(s, kPositive), In(s)})));
  v.push_back(NoGrad(Case("ftml_update", {{"lr", "0.05"}, {"t", "1"}, {"beta1", "0.7"}, {"rescale_grad", "0.5"}},
                          {In(s), In(s)}, {In(s, kPositive), In(s, kPositive), In(s)})));
}

void LambCases(std::vector<OpCase>& v) {
  const Shape s{5, 3}, one{1};
  const Domain norm{0.1, 2};
  v.push_back(
      NoGrad(Case("lamb_update_phase1", {{"t", "3"}, {"wd", "0.01"}, {"clip_gradient", "0.5"}, {"rescale_grad", "2"}},
                  {In(s), In(s)}, {In(s), In(s, kPositive)})));
  v.push_back(NoGrad(Case("lamb_update_phase1", {{"t", "2"}, {"wd", "0"}, {"bias_correction", "False"}}, {In(s), In(s)},
                          {In(s), In(s, kPositive)})));
  for (const Domain& w : {kHalf, kSingle})
    v.push_back(NoGrad(Case("mp_lamb_update_phase1", {{"t", "3"}, {"wd", "0.01"}, {"clip_gradient", "0.5"}},
                            {In(s, w), In(s, w)}, {In(s), In(s, kPositive), In(s)})));
  v.push_back(NoGrad(Case("lamb_update_phase2", {{"lr", "0.1"}}, {In(s), In(s), In(one, norm), In(one, norm)})));
  v.push_back(NoGrad(Case("lamb_update_phase2", {{"lr", "0.1"}, {"lower_bound", "0.5"}, {"upper_bound", "1.2"}},
                          {In(s), In(s), In(one, norm), In(one, norm)})));
  for (const Domain& w : {kHalf, kSingle})
    v.push_back(NoGrad(Case("mp_lamb_update_phase2", {{"lr", "0.1"}, {"upper_bound", "1.2"}},
                            {In(s, w), In(s), In(one, norm), In(one, norm)}, {In(s)})));
}

void LarsCases(std::vector<OpCase>& v) {
  v.push_back(NoGrad(Case("multi_sum_sq", {{"num_arrays", "3"}}, {In(Shape{5, 3}), In(Shape{4}), In(Shape{2, 1, 3})})));
  const Shape n{6};
  const Domain lrs{0.05, 0.5}, wds{0, 0.01};
  v.push_back(NoGrad(Case("multi_lars", {{"eta", "0.5"}, {"eps", "0.001"}, {"rescale_grad", "0.5"}},
                          {In(n, lrs), In(n, kPositive), In(n, kPositive), In(n, wds)})));
  // Sums of squares of 0 or 1: some norms are 0 and take lrs[i] as it is.
  v.push_back(NoGrad(Case("multi_lars", {{"eta", "0.1"}, {"eps", "0"}},
                          {In(n, lrs), In(n, Domain{0, 2, true}), In(n, Domain{0, 2, true}), In(n, wds)})));
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
  v.push_back(NoGrad(Case("_random_exponential_like", {{"lam", "2"}}, {In(Shape{100, 100})})));
  v.push_back(NoGrad(Case("_random_gamma_like", {{"alpha", "2"}, {"beta", "0.5"}}, {In(Shape{100, 100})})));
  v.push_back(NoGrad(Case("_random_poisson_like", {{"lam", "3"}}, {In(Shape{100, 100})})));
  v.push_back(NoGrad(Case("_random_negative_binomial_like", {{"k", "3"}, {"p", "0.4"}}, {In(Shape{100, 100})})));
  v.push_back(NoGrad(
      Case("_random_generalized_negative_binomial_like", {{"mu", "2"}, {"alpha", "0.3"}}, {In(Shape{100, 100})})));
  v.push_back(NoGrad(Case("_random_negative_binomial", {{"k", "3"}, {"p", "0.4"}, {"shape", "(100, 100)"}}, {})));
  v.push_back(NoGrad(
      Case("_random_generalized_negative_binomial", {{"mu", "2"}, {"alpha", "0.3"}, {"shape", "(100, 100)"}}, {})));
}

// The samplers with parameter arrays: 5000 draws per parameter element, each element's draws
// checked against its own law (reference_random.cc); their gradient is zero.
void SampleCases(std::vector<OpCase>& v) {
  const Shape p{2};
  const std::map<std::string, std::string> draws = {{"shape", "(5000,)"}};
  const Domain low{-2, -1}, high{1, 2}, rate{0.5, 4}, count{1, 7, true}, prob{0.3, 0.9}, disp{0, 1};
  v.push_back(NoGrad(Case("_sample_uniform", draws, {In(p, low), In(p, high)})));
  v.push_back(NoGrad(Case("_sample_normal", draws, {In(p), In(p, kPositive)})));
  v.push_back(NoGrad(Case("_sample_gamma", draws, {In(p, kPositive), In(p, kPositive)})));
  v.push_back(NoGrad(Case("_sample_exponential", draws, {In(p, rate)})));
  v.push_back(NoGrad(Case("_sample_poisson", draws, {In(p, Domain{0.5, 30})})));
  v.push_back(NoGrad(Case("_sample_negative_binomial", draws, {In(p, count), In(p, prob)})));
  v.push_back(NoGrad(Case("_sample_generalized_negative_binomial", draws, {In(p, rate), In(p, disp)})));
  v.push_back(NoGrad(Case("_sample_uniform", {{"shape", "(3000,)"}, {"dtype", "float64"}}, {In(p, low), In(p, high)})));
  // Four equally likely categories per row; the log-probabilities' gradient is 1/p at each draw,
  // a step function of data that finite differences cannot see.
  const Domain quarter{0.25, 0.25};
  v.push_back(NoGrad(Case("_sample_multinomial", {{"shape", "(4000,)"}}, {In(Shape{2, 4}, quarter)})));
  v.push_back(
      NoGrad(Case("_sample_multinomial", {{"shape", "(2000,)"}, {"get_prob", "True"}}, {In(Shape{3, 4}, quarter)})));
  v.push_back(NoGrad(Case("_shuffle", {}, {In(Shape{7, 3})})));
}

// Older ops MXNet's unit tests call (defs/tensor_legacy.cc). batch_take's and fill_element_0index's
// positions reach past both ends of the row (clipped, resp. ignored).
void LegacyCases(std::vector<OpCase>& v) {
  const Domain positions{-1, 6, true, 0, false, DType::kInt32};
  v.push_back(NoGrad(Case("batch_take", {}, {In(Shape{4, 5}), In(Shape{4}, positions)})));
  v.push_back(
      NoGrad(Case("fill_element_0index", {}, {In(Shape{4, 5}), In(Shape{4}), In(Shape{4}, Domain{-1, 6, true})})));
  v.push_back(Case("_identity_with_attr_like_rhs", {}, {In(Shape{3, 4}), In(Shape{3, 4})}));
}

}  // namespace

void AddFrontendCases(std::vector<OpCase>& v) {
  CompareCases(v);
  BinaryMathCases(v);
  UnaryMathCases(v);
  // optimizer updates (fixref2)
  MixedPrecisionSgdCases(v);
  MultiSgdCases(v);
  RuleUpdateCases(v);
  LambCases(v);
  LarsCases(v);
  IndexCases(v);
  ShapeOpCases(v);
  RandomCases(v);
  SampleCases(v);
  LegacyCases(v);
}

}  // namespace wconf

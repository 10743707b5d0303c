// The gradient wiring of the built-in ops (backward op, what it receives, in-place pairs, loss and
// random flags), written down by hand for each op that had it when the table was made and checked
// against the definitions; and the backward-node description the executor uses. The complete,
// current list is generated from the definitions into OPS.md's "Contracts" (ops_md_current keeps it
// current), so a new op needs no row here; a row here is a second statement that a change to a
// definition must also change.
#include <set>

#include "operator/gradient.h"
#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;
using test::Norm;
using Pairs = std::vector<std::pair<int, int>>;

constexpr uint32_t I = kUsesInputs, O = kUsesOutputs, A = kUsesAux;

struct Row {
  std::string op;
  test::Attrs attrs;  // required attributes, to ask for attribute-dependent columns
  GradKind grad;
  std::string backward;
  uint32_t uses;
  Pairs inplace;
  bool loss = false;
  bool random = false;
};

// Written from the contracts as first documented (core/operator/OPS.md before it was generated).
const std::vector<Row>& Table() {
  static const std::vector<Row> rows = [] {
    const GradKind K = GradKind::kOp, Z = GradKind::kZero, N = GradKind::kNone;
    std::vector<Row> r = {
        {"FullyConnected", {{"num_hidden", "1"}}, K, "_backward_FullyConnected", I, {}},
        {"Convolution", {{"kernel", "(1, 1)"}, {"num_filter", "1"}}, K, "_backward_Convolution", I, {}},
        {"Pooling", {}, K, "_backward_Pooling", I | O, {}},
        {"Activation", {{"act_type", "relu"}}, K, "_backward_Activation", O, {{0, 0}}},
        {"Activation", {{"act_type", "softsign"}}, K, "_backward_Activation", I | O, {{0, 0}}},
        {"LeakyReLU", {}, K, "_backward_LeakyReLU", I | O, {}, false, true},
        {"BatchNorm", {}, K, "_backward_BatchNorm", I | O | A, {}},
        {"Dropout", {}, K, "_backward_Dropout", O, {{0, 0}}, false, true},
        {"RNN",
         {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "1"}},
         K,
         "_backward_RNN",
         I | O,
         {},
         false,
         true},
        {"SoftmaxOutput", {}, K, "_backward_SoftmaxOutput", I | O, {}, true},
        {"softmax", {}, K, "_backward_softmax", O, {}},
        {"log_softmax", {}, K, "_backward_log_softmax", O, {}},
        {"LinearRegressionOutput", {}, K, "_backward_LinearRegressionOutput", I | O, {}, true},
        {"LogisticRegressionOutput", {}, K, "_backward_LogisticRegressionOutput", I | O, {}, true},
        {"MAERegressionOutput", {}, K, "_backward_MAERegressionOutput", I | O, {}, true},
        {"MakeLoss", {}, K, "_backward_MakeLoss", 0, {{0, 0}}, true},
        {"BlockGrad", {}, Z, "", 0, {{0, 0}}},
        {"Flatten", {}, K, "_backward_copy", 0, {{0, 0}}},
        {"Reshape", {{"shape", "(-1,)"}}, K, "_backward_copy", 0, {{0, 0}}},
        {"expand_dims", {{"axis", "0"}}, K, "_backward_copy", 0, {{0, 0}}},
        {"_copy", {}, K, "_backward_copy", 0, {}},
        {"Concat", {{"num_args", "2"}}, K, "_backward_Concat", 0, {}},
        {"_rnn_param_concat", {{"num_args", "2"}}, K, "_backward_Concat", 0, {}},
        {"SliceChannel", {{"num_outputs", "2"}}, K, "_backward_SliceChannel", 0, {}},
        {"transpose", {}, K, "_backward_transpose", 0, {}},
        {"dot", {}, K, "_backward_dot", I, {}},
        {"batch_dot", {}, K, "_backward_batch_dot", I, {}},
        {"Cast", {{"dtype", "float16"}}, K, "_backward_Cast", 0, {}},
        {"zeros_like", {}, Z, "", 0, {}},
        {"ones_like", {}, Z, "", 0, {}},
        {"one_hot", {{"depth", "2"}}, N, "", 0, {}},
        {"argmax", {}, N, "", 0, {}},
        {"sum", {}, K, "_backward_sum", 0, {}},
        {"mean", {}, K, "_backward_mean", 0, {}},
        {"max", {}, K, "_backward_max", I | O, {}},
        {"add_n", {{"num_args", "2"}}, K, "_backward_add_n", 0, {{0, 0}}},
        {"elemwise_add", {}, K, "_backward_elemwise_add", 0, {{0, 0}, {1, 0}}},
        {"elemwise_sub", {}, K, "_backward_elemwise_sub", 0, {{0, 0}, {1, 0}}},
        {"elemwise_mul", {}, K, "_backward_elemwise_mul", I, {{0, 0}, {1, 0}}},
        {"elemwise_div", {}, K, "_backward_elemwise_div", I, {{0, 0}, {1, 0}}},
        {"broadcast_add", {}, K, "_backward_broadcast_add", 0, {}},
        {"broadcast_sub", {}, K, "_backward_broadcast_sub", 0, {}},
        {"broadcast_mul", {}, K, "_backward_broadcast_mul", I, {}},
        {"broadcast_div", {}, K, "_backward_broadcast_div", I, {}},
        {"sgd_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"sgd_mom_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"nag_mom_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"adam_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"rmsprop_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"rmspropalex_update", {{"lr", "1"}}, N, "", 0, {{0, 0}}},
        {"_quantize_2bit", {}, N, "", 0, {}},
        {"_dequantize_2bit", {{"shape", "(3,)"}}, N, "", 0, {}},
        {"Deconvolution", {{"kernel", "(1, 1)"}, {"num_filter", "1"}}, K, "_backward_Deconvolution", I, {}},
        {"LRN", {{"nsize", "3"}}, K, "_backward_LRN", I | O, {}},
        {"Embedding", {{"input_dim", "2"}, {"output_dim", "2"}}, K, "_backward_Embedding", I, {}},
        {"SwapAxis", {}, K, "_backward_SwapAxis", 0, {}},
        {"slice", {{"begin", "(0,)"}, {"end", "(1,)"}}, K, "_backward_slice", 0, {}},
        {"slice_axis", {{"axis", "0"}, {"begin", "0"}, {"end", "1"}}, K, "_backward_slice_axis", 0, {}},
        {"broadcast_maximum", {}, K, "_backward_broadcast_maximum", I, {}},
        {"broadcast_minimum", {}, K, "_backward_broadcast_minimum", I, {}},
        {"clip", {{"a_min", "0"}, {"a_max", "1"}}, K, "_backward_clip", I, {{0, 0}}},
        {"floor", {}, Z, "", 0, {{0, 0}}},
        {"round", {}, Z, "", 0, {{0, 0}}},
        {"sign", {}, Z, "", 0, {{0, 0}}},
        {"where", {}, K, "_backward_where", I, {}},
        {"take", {}, K, "_backward_take", I, {}},
        {"pick", {}, K, "_backward_pick", I, {}},
        {"stack", {{"num_args", "2"}}, K, "_backward_stack", 0, {}},
        {"tile", {{"reps", "(2,)"}}, K, "_backward_tile", 0, {}},
        {"repeat", {{"repeats", "2"}}, K, "_backward_repeat", 0, {}},
        {"broadcast_to", {}, K, "_backward_broadcast_to", 0, {}},
        {"broadcast_like", {}, K, "_backward_broadcast_like", 0, {}},
        {"reshape_like", {}, K, "_backward_reshape_like", 0, {{0, 0}}},
        {"slice_like", {}, K, "_backward_slice_like", 0, {}},
        {"Pad", {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 1, 1, 1, 1)"}}, K, "_backward_Pad", 0, {}},
        {"min", {}, K, "_backward_min", I | O, {}},
        {"prod", {}, K, "_backward_prod", I | O, {}},
        {"nansum", {}, K, "_backward_nansum", I, {}},
        {"norm", {}, K, "_backward_norm", I | O, {}},
        {"_square_sum", {}, K, "_backward_square_sum", I, {}},
        {"_zeros", {}, N, "", 0, {}},
        {"_ones", {}, N, "", 0, {}},
        {"_full", {{"value", "1"}}, N, "", 0, {}},
        {"_arange", {{"start", "3"}}, N, "", 0, {}},
        {"LayerNorm", {}, K, "_backward_LayerNorm", I, {}},
        {"InstanceNorm", {}, K, "_backward_InstanceNorm", I, {}},
        {"L2Normalization", {}, K, "_backward_L2Normalization", I, {}},
        {"topk", {}, K, "_backward_topk", O, {}},
        {"sort", {}, K, "_backward_sort", O, {}},
        {"argsort", {}, N, "", 0, {}},
        {"_contrib_allclose", {}, N, "", 0, {}},
        {"_linalg_gelqf", {}, K, "_backward_linalg_gelqf", O, {}},
        {"UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}}, K, "_backward_UpSampling", 0, {}},
        {"UpSampling",
         {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "3"}},
         K,
         "_backward_UpSampling",
         I,
         {}},
    };
    for (const char* op : {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar"}) {
      r.push_back({op, {{"scalar", "1"}}, K, std::string("_backward") + op, 0, {{0, 0}}});
    }
    for (const char* op : {"_rdiv_scalar", "_power_scalar"}) {
      r.push_back({op, {{"scalar", "1"}}, K, std::string("_backward") + op, I, {{0, 0}}});
    }
    for (const char* op :
         {"sin",        "cos",     "exp",     "log",     "sqrt",    "square", "abs",    "negative", "relu",
          "sigmoid",    "tanh",    "rsqrt",   "log1p",   "expm1",   "tan",    "arcsin", "arccos",   "arctan",
          "sinh",       "cosh",    "arcsinh", "arccosh", "arctanh", "log2",   "log10",  "cbrt",     "rcbrt",
          "reciprocal", "degrees", "radians", "erf",     "erfinv",  "gamma",  "gammaln"}) {
      r.push_back({op, {}, K, std::string("_backward_") + op, I | O, {{0, 0}}});
    }
    for (const char* op : {"ceil", "trunc", "fix", "rint", "logical_not"}) r.push_back({op, {}, Z, "", 0, {{0, 0}}});
    for (const char* base : {"equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
                             "logical_or", "logical_xor"}) {
      r.push_back({std::string("_") + base, {}, Z, "", 0, {{0, 0}, {1, 0}}});
      r.push_back({std::string("broadcast_") + base, {}, Z, "", 0, {}});
      r.push_back({std::string("_") + base + "_scalar", {}, Z, "", 0, {{0, 0}}});
    }
    for (const char* base : {"mod", "power", "maximum", "minimum", "hypot"})
      r.push_back({std::string("_") + base, {}, K, std::string("_backward_") + base, I, {{0, 0}, {1, 0}}});
    for (const char* base : {"mod", "power", "hypot"})
      r.push_back({std::string("broadcast_") + base, {}, K, std::string("_backward_broadcast_") + base, I, {}});
    r.push_back({"_mod_scalar", {}, K, "_backward_mod_scalar", 0, {{0, 0}}});
    for (const char* op : {"_rmod_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar", "_hypot_scalar"})
      r.push_back({op, {}, K, std::string("_backward") + op, I, {{0, 0}}});
    r.push_back({"_grad_add", {}, N, "", 0, {{0, 0}, {1, 0}}});
    // Indexing, assignment and layout ops of MXNet's frontend.
    const test::Attrs slice = {{"begin", "(0,)"}, {"end", "(1,)"}}, block = {{"block_size", "2"}};
    const std::vector<Row> frontend = {
        {"_eye", {{"N", "2"}}, N, "", 0, {}},
        {"_linspace", {{"start", "0"}, {"stop", "1"}, {"num", "3"}}, N, "", 0, {}},
        {"_histogram", {}, N, "", 0, {}},
        {"_onehot_encode", {}, N, "", 0, {}},
        {"_scatter_set_nd", {{"shape", "(2,)"}}, N, "", 0, {{0, 0}}},
        {"_set_value", {{"src", "1"}}, N, "", 0, {}},
        {"_slice_assign", slice, N, "", 0, {{0, 0}}},
        {"_slice_assign_scalar", slice, N, "", 0, {{0, 0}}},
        {"_split_v2", {{"indices", "(0,)"}}, K, "_backward_split_v2", 0, {}},
        {"amp_cast", {{"dtype", "float16"}}, K, "_backward_amp_cast", 0, {}},
        {"argmax_channel", {}, N, "", 0, {}},
        {"argmin", {}, N, "", 0, {}},
        {"broadcast_axis", {}, K, "_backward_broadcast_axis", 0, {}},
        {"depth_to_space", block, K, "_backward_depth_to_space", 0, {}},
        {"space_to_depth", block, K, "_backward_space_to_depth", 0, {}},
        {"diag", {}, K, "_backward_diag", 0, {}},
        {"gather_nd", {}, K, "_backward_gather_nd", I, {}},
        {"scatter_nd", {{"shape", "(2,)"}}, K, "_backward_scatter_nd", I, {}},
        {"nanprod", {}, K, "_backward_nanprod", I | O, {}},
        {"reverse", {{"axis", "(0,)"}}, K, "_backward_reverse", 0, {}},
        {"shape_array", {}, Z, "", 0, {}},
        {"size_array", {}, Z, "", 0, {}},
        {"squeeze", {}, K, "_backward_copy", 0, {{0, 0}}},
    };
    r.insert(r.end(), frontend.begin(), frontend.end());
    // The optimizer updates added for MXNet's frontend: no gradient.
    const test::Attrs lr = {{"lr", "1"}}, multi = {{"lrs", "(1,)"}, {"wds", "(0,)"}};
    const std::vector<Row> updates = {
        {"ftml_update", {{"lr", "1"}, {"t", "1"}}, N, "", 0, {{0, 0}}},
        {"ftrl_update", lr, N, "", 0, {{0, 0}}},
        {"_sparse_adagrad_update", lr, N, "", 0, {{0, 0}}},
        {"signsgd_update", lr, N, "", 0, {{0, 0}}},
        {"signum_update", lr, N, "", 0, {{0, 0}}},
        {"mp_sgd_update", lr, N, "", 0, {{0, 0}}},
        {"mp_sgd_mom_update", lr, N, "", 0, {{0, 0}}},
        {"mp_nag_mom_update", lr, N, "", 0, {{0, 0}}},
        {"lamb_update_phase1", {{"t", "1"}, {"wd", "0"}}, N, "", 0, {}},
        {"mp_lamb_update_phase1", {{"t", "1"}, {"wd", "0"}}, N, "", 0, {}},
        {"lamb_update_phase2", lr, N, "", 0, {{0, 0}}},
        {"mp_lamb_update_phase2", lr, N, "", 0, {{0, 0}}},
        {"multi_lars", {{"eta", "1"}, {"eps", "0"}}, N, "", 0, {}},
        {"multi_sum_sq", {{"num_arrays", "1"}}, N, "", 0, {}},
        {"multi_sgd_update", multi, N, "", 0, {{0, 0}}},
        {"multi_sgd_mom_update", multi, N, "", 0, {{0, 0}}},
        {"multi_mp_sgd_update", multi, N, "", 0, {{0, 0}}},
        {"multi_mp_sgd_mom_update", multi, N, "", 0, {{0, 0}}},
        {"preloaded_multi_sgd_update", {}, N, "", 0, {{0, 0}}},
        {"preloaded_multi_sgd_mom_update", {}, N, "", 0, {{0, 0}}},
        {"preloaded_multi_mp_sgd_update", {}, N, "", 0, {{0, 0}}},
        {"preloaded_multi_mp_sgd_mom_update", {}, N, "", 0, {{0, 0}}},
    };
    r.insert(r.end(), updates.begin(), updates.end());
    // random sampling (randops): creation ops without a gradient, _like ones with a zero one.
    for (const char* op :
         {"_random_uniform", "_random_normal", "_random_exponential", "_random_gamma", "_random_poisson"})
      r.push_back({op, {}, N, "", 0, {}, false, true});
    r.push_back({"_random_randint", {{"low", "0"}, {"high", "2"}}, N, "", 0, {}, false, true});
    for (const char* op : {"_random_uniform_like", "_random_normal_like"})
      r.push_back({op, {}, Z, "", 0, {}, false, true});
    for (const char* op : {"_random_negative_binomial", "_random_generalized_negative_binomial", "_shuffle"})
      r.push_back({op, {}, N, "", 0, {}, false, true});
    // The samplers with parameter arrays (mxops2): a zero gradient, as MXNet's; multinomial's
    // reaches data through its log-probabilities.
    for (const char* op : {"_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential",
                           "_sample_poisson", "_sample_negative_binomial", "_sample_generalized_negative_binomial"})
      r.push_back({op, {}, Z, "", 0, {}, false, true});
    r.push_back({"_sample_multinomial", {}, K, "_backward_sample_multinomial", I | O, {}, false, true});
    // Older ops of MXNet's frontend (mxops2).
    r.push_back({"batch_take", {}, N, "", 0, {}});
    r.push_back({"fill_element_0index", {}, N, "", 0, {}});
    r.push_back({"_identity_with_attr_like_rhs", {}, K, "_backward_identity_with_attr_like_rhs", 0, {{0, 0}}});
    return r;
  }();
  return rows;
}

TEST(GradientTable, MatchesOpsMd) {
  for (const Row& row : Table()) {
    SCOPED_TRACE(row.op);
    const OpDef& def = OpRegistry::Get().Lookup(row.op);
    AttrMap a = def.Normalize(AttrMap(row.attrs));
    EXPECT_EQ(def.grad, row.grad);
    EXPECT_EQ(def.backward_op, row.backward);
    EXPECT_EQ(BackwardUses(def, a), row.uses);
    EXPECT_EQ(BackwardUses(def, a) & ~def.backward_uses, 0u) << "narrowed uses must be a subset";
    EXPECT_EQ(OpInplacePairs(def, a), row.inplace);
    EXPECT_EQ(def.is_loss, row.loss);
    EXPECT_EQ((def.resources & kResourceRandom) != 0, row.random);
  }
}

TEST(GradientTable, RowsNameBuiltinOps) {
  // A row for an op the registry lost, or for an alias, would check nothing.
  for (const Row& row : Table()) {
    const OpDef* def = OpRegistry::Get().Find(row.op);
    EXPECT_TRUE(def != nullptr && def->source == "core" && def->name == row.op)
        << row.op << " is not a built-in op's name";
  }
}

using B = BackwardInput;
constexpr BackwardSource G = BackwardSource::kOutGrad, In = BackwardSource::kInput, Out = BackwardSource::kOutput,
                         Ax = BackwardSource::kAux;

std::optional<BackwardNode> Describe(const std::string& op, const test::Attrs& attrs) {
  const OpDef& def = OpRegistry::Get().Lookup(op);
  AttrMap a = def.Normalize(AttrMap(attrs));
  return DescribeBackward(def, a, static_cast<int>(OpInputNames(def, a).size()),
                          static_cast<int>(OpOutputNames(def, a).size()), static_cast<int>(OpAuxNames(def, a).size()));
}

TEST(BackwardNode, FullyConnectedWithAndWithoutBias) {
  auto n = Describe("FullyConnected", {{"num_hidden", "4"}, {"no_bias", "True"}});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op, "_backward_FullyConnected");
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {In, 0}, {In, 1}}));
  EXPECT_EQ(n->num_outputs, 2);
  n = Describe("FullyConnected", {{"num_hidden", "4"}});
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {In, 0}, {In, 1}, {In, 2}}));
  EXPECT_EQ(n->num_outputs, 3);
}

TEST(BackwardNode, BatchNormReadsEverythingIncludingHiddenOutputs) {
  auto n = Describe("BatchNorm", {});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->inputs,
            (std::vector<B>{
                {G, 0}, {G, 1}, {G, 2}, {In, 0}, {In, 1}, {In, 2}, {Out, 0}, {Out, 1}, {Out, 2}, {Ax, 0}, {Ax, 1}}));
  EXPECT_EQ(n->num_outputs, 3);
}

TEST(BackwardNode, ActivationReadsItsInputOnlyForSoftsign) {
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu"}) {
    auto n = Describe("Activation", {{"act_type", act}});
    ASSERT_TRUE(n);
    EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {Out, 0}})) << act;
  }
  auto n = Describe("Activation", {{"act_type", "softsign"}});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {In, 0}, {Out, 0}}));
}

TEST(BackwardNode, UpSamplingReadsDataAndWeightOnlyForBilinear) {
  auto n = Describe("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}}));
  EXPECT_EQ(n->num_outputs, 2);
  n = Describe("UpSampling", {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "4"}});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {In, 0}, {In, 1}}));
  EXPECT_EQ(n->num_outputs, 2);
}

TEST(BackwardNode, DropoutReadsItsMask) {
  auto n = Describe("Dropout", {});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {G, 1}, {Out, 0}, {Out, 1}}));
  EXPECT_EQ(n->num_outputs, 1);
}

TEST(BackwardNode, MultiInputMultiOutputOps) {
  auto n = Describe("Concat", {{"num_args", "3"}});
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}}));
  EXPECT_EQ(n->num_outputs, 3);
  n = Describe("SliceChannel", {{"num_outputs", "3"}});
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}, {G, 1}, {G, 2}}));
  EXPECT_EQ(n->num_outputs, 1);
  n = Describe("Reshape", {{"shape", "(-1,)"}});
  EXPECT_EQ(n->op, "_backward_copy");
  EXPECT_EQ(n->inputs, (std::vector<B>{{G, 0}}));
}

TEST(BackwardNode, NoneForZeroAndNoGradient) {
  EXPECT_FALSE(Describe("BlockGrad", {}));
  EXPECT_FALSE(Describe("zeros_like", {}));
  EXPECT_FALSE(Describe("argmax", {}));
  EXPECT_FALSE(Describe("sgd_update", {{"lr", "1"}}));
}

TEST(BackwardNode, CountsMustFitTheDefinition) {
  const OpDef& def = OpRegistry::Get().Lookup("FullyConnected");
  AttrMap a = def.Normalize(AttrMap(test::Attrs{{"num_hidden", "4"}, {"no_bias", "True"}}));
  ExpectContains(ErrorOf([&] { DescribeBackward(def, a, 3, 1, 0); }), {"FullyConnected", "3 inputs"});
}

TEST(BackwardNode, GatherPicksForwardValues) {
  auto n = Describe("elemwise_mul", {});
  ASSERT_TRUE(n);
  std::vector<std::string> got = GatherBackwardInputs<std::string>(*n, {"dy"}, {"a", "b"}, {"y"}, {});
  EXPECT_EQ(got, (std::vector<std::string>{"dy", "a", "b"}));
  n = Describe("sigmoid", {});
  got = GatherBackwardInputs<std::string>(*n, {"dy"}, {"x"}, {"y"}, {});
  EXPECT_EQ(got, (std::vector<std::string>{"dy", "x", "y"}));
  ExpectContains(ErrorOf([&] { GatherBackwardInputs<std::string>(*n, {"dy"}, {}, {"y"}, {}); }),
                 {"_backward_sigmoid", "out of range"});
  EXPECT_STREQ(BackwardSourceName(BackwardSource::kAux), "aux");
}

}  // namespace
}  // namespace weft

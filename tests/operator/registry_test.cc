// OpRegistry: every OPS.md op is there, aliases, unknown names, duplicates, concurrent use.
#include <atomic>
#include <set>
#include <thread>

#include "operator/op_util.h"
#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;

// Every row of core/operator/OPS.md.
const char* const kOpsMd[] = {
    "FullyConnected",
    "Convolution",
    "Pooling",
    "Activation",
    "LeakyReLU",
    "BatchNorm",
    "Dropout",
    "SoftmaxOutput",
    "softmax",
    "log_softmax",
    "LinearRegressionOutput",
    "MakeLoss",
    "BlockGrad",
    "Flatten",
    "Reshape",
    "expand_dims",
    "_copy",
    "Concat",
    "SliceChannel",
    "transpose",
    "dot",
    "batch_dot",
    "Cast",
    "zeros_like",
    "ones_like",
    "one_hot",
    "argmax",
    "sum",
    "mean",
    "max",
    "add_n",
    "elemwise_add",
    "elemwise_sub",
    "elemwise_mul",
    "elemwise_div",
    "broadcast_add",
    "broadcast_sub",
    "broadcast_mul",
    "broadcast_div",
    "_plus_scalar",
    "_minus_scalar",
    "_rminus_scalar",
    "_mul_scalar",
    "_div_scalar",
    "_rdiv_scalar",
    "_power_scalar",
    "sin",
    "cos",
    "exp",
    "log",
    "sqrt",
    "square",
    "abs",
    "negative",
    "relu",
    "sigmoid",
    "tanh",
    "sgd_update",
    "sgd_mom_update",
    "nag_mom_update",
    "adam_update",
    "rmsprop_update",
    "rmspropalex_update",
    "_quantize_2bit",
    "_dequantize_2bit",
    "Deconvolution",
    "LRN",
    "Embedding",
    "_contrib_allclose",
    "SwapAxis",
    "slice",
    "slice_axis",
    "broadcast_maximum",
    "broadcast_minimum",
    "clip",
    "rsqrt",
    "log1p",
    "expm1",
    "floor",
    "round",
    "sign",
    "where",
    "take",
    "pick",
    "stack",
    "tile",
    "repeat",
    "broadcast_to",
    "broadcast_like",
    "reshape_like",
    "slice_like",
    "Pad",
    "min",
    "prod",
    "nansum",
    "norm",
    "_square_sum",
    "_zeros",
    "_ones",
    "_full",
    "_arange",
    "LayerNorm",
    "InstanceNorm",
    "L2Normalization",
    "topk",
    "sort",
    "argsort",
    "UpSampling",
    "_equal",
    "_equal_scalar",
    "_grad_add",
    "_greater",
    "_greater_equal",
    "_greater_equal_scalar",
    "_greater_scalar",
    "_hypot",
    "_hypot_scalar",
    "_lesser",
    "_lesser_equal",
    "_lesser_equal_scalar",
    "_lesser_scalar",
    "_logical_and",
    "_logical_and_scalar",
    "_logical_or",
    "_logical_or_scalar",
    "_logical_xor",
    "_logical_xor_scalar",
    "_maximum",
    "_maximum_scalar",
    "_minimum",
    "_minimum_scalar",
    "_mod",
    "_mod_scalar",
    "_not_equal",
    "_not_equal_scalar",
    "_power",
    "_rmod_scalar",
    "_rpower_scalar",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "broadcast_equal",
    "broadcast_greater",
    "broadcast_greater_equal",
    "broadcast_hypot",
    "broadcast_lesser",
    "broadcast_lesser_equal",
    "broadcast_logical_and",
    "broadcast_logical_or",
    "broadcast_logical_xor",
    "broadcast_mod",
    "broadcast_not_equal",
    "broadcast_power",
    "cbrt",
    "ceil",
    "cosh",
    "degrees",
    "erf",
    "erfinv",
    "fix",
    "gamma",
    "gammaln",
    "log10",
    "log2",
    "logical_not",
    "radians",
    "rcbrt",
    "reciprocal",
    "rint",
    "sinh",
    "tan",
    "trunc",
    // random sampling (randops)
    "_random_uniform",
    "_random_normal",
    "_random_randint",
    "_random_exponential",
    "_random_gamma",
    "_random_poisson",
    "_random_uniform_like",
    "_random_normal_like",
    "_random_negative_binomial",
    "_random_generalized_negative_binomial",
    // samplers with parameter arrays, multinomial, shuffle (mxops2)
    "_sample_uniform",
    "_sample_normal",
    "_sample_gamma",
    "_sample_exponential",
    "_sample_poisson",
    "_sample_negative_binomial",
    "_sample_generalized_negative_binomial",
    "_sample_multinomial",
    "_shuffle",
    // older ops of MXNet's frontend (mxops2)
    "batch_take",
    "fill_element_0index",
    "_identity_with_attr_like_rhs",
    // Indexing, layout and reduction ops and optimizer updates of MXNet's frontend.
    "_eye",
    "_histogram",
    "_linspace",
    "_onehot_encode",
    "_scatter_set_nd",
    "_set_value",
    "_slice_assign",
    "_slice_assign_scalar",
    "_split_v2",
    "amp_cast",
    "argmax_channel",
    "argmin",
    "broadcast_axis",
    "depth_to_space",
    "diag",
    "ftml_update",
    "ftrl_update",
    "_sparse_adagrad_update",
    "gather_nd",
    "lamb_update_phase1",
    "lamb_update_phase2",
    "mp_lamb_update_phase1",
    "mp_lamb_update_phase2",
    "mp_nag_mom_update",
    "mp_sgd_mom_update",
    "mp_sgd_update",
    "multi_lars",
    "multi_mp_sgd_mom_update",
    "multi_mp_sgd_update",
    "multi_sgd_mom_update",
    "multi_sgd_update",
    "multi_sum_sq",
    "nanprod",
    "preloaded_multi_mp_sgd_mom_update",
    "preloaded_multi_mp_sgd_update",
    "preloaded_multi_sgd_mom_update",
    "preloaded_multi_sgd_update",
    "reverse",
    "scatter_nd",
    "shape_array",
    "signsgd_update",
    "signum_update",
    "size_array",
    "space_to_depth",
    "squeeze",
    "_linalg_gelqf",
};

TEST(OpRegistry, HasEveryOpOfTheTable) {
  for (const char* name : kOpsMd) {
    const OpDef* def = OpRegistry::Get().Find(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->name, name);
    EXPECT_EQ(def->source, "core");
  }
}

TEST(OpRegistry, BuiltinsComeFromCoreOnly) {
  // Nothing but the table's ops (and test ops registered by other tests) is built in.
  std::set<std::string> table(std::begin(kOpsMd), std::end(kOpsMd));
  for (const std::string& name : OpRegistry::Get().ListNames()) {
    const OpDef& def = OpRegistry::Get().Lookup(name);
    if (def.source == "core") {
      EXPECT_TRUE(table.count(name)) << name << " is built in but not in OPS.md";
    }
  }
}

TEST(OpRegistry, AliasesResolve) {
  const OpRegistry& r = OpRegistry::Get();
  EXPECT_EQ(r.Find("ElementWiseSum"), r.Find("add_n"));
  EXPECT_EQ(&r.Lookup("ElementWiseSum"), &r.Lookup("add_n"));
  EXPECT_EQ(r.ResolveAlias("ElementWiseSum"), "add_n");
  EXPECT_EQ(r.ResolveAlias("add_n"), "add_n");
  // MXNet 0.x spellings found in old symbol files.
  EXPECT_EQ(r.Find("_Plus"), r.Find("elemwise_add"));
  EXPECT_EQ(r.Find("_MulScalar"), r.Find("_mul_scalar"));
  EXPECT_EQ(r.Find("Softmax"), r.Find("SoftmaxOutput"));
  EXPECT_EQ(r.Find("flatten"), r.Find("Flatten"));
  bool listed = false;
  for (const auto& [alias, target] : r.ListAliases()) listed |= alias == "ElementWiseSum" && target == "add_n";
  EXPECT_TRUE(listed);
}

TEST(OpRegistry, UnknownOpNamesCloseOnes) {
  EXPECT_EQ(OpRegistry::Get().Find("FullyConected"), nullptr);
  std::string msg = ErrorOf([] { OpRegistry::Get().Lookup("FullyConected"); });
  ExpectContains(msg, {"unknown operator 'FullyConected'", "FullyConnected"});
  msg = ErrorOf([] { OpRegistry::Get().Lookup("batchnorm"); });
  ExpectContains(msg, {"unknown operator 'batchnorm'", "BatchNorm"});
  msg = ErrorOf([] { OpRegistry::Get().Lookup("Qqqqqqqqqqqqqqqq"); });
  ExpectContains(msg, {"unknown operator 'Qqqqqqqqqqqqqqqq'"});
}

OpDef TestOp(const std::string& name, const std::string& source) {
  OpDef d;
  d.name = name;
  d.source = source;
  d.list_inputs = opdef::Fixed({"data"});
  d.list_outputs = opdef::Fixed({"output"});
  opdef::SetShapeFn(d, opdef::SameShapeAll);
  return d;
}

TEST(OpRegistry, DuplicateRegistrationNamesBothSources) {
  OpRegistry& r = OpRegistry::Get();
  r.Register(TestOp("opdef_test_dup", "plugin_a"));
  std::string msg = ErrorOf([&] { r.Register(TestOp("opdef_test_dup", "plugin_b")); });
  ExpectContains(msg, {"opdef_test_dup", "plugin_a", "plugin_b"});
  EXPECT_EQ(r.Lookup("opdef_test_dup").source, "plugin_a");

  msg = ErrorOf([&] { r.Register(TestOp("FullyConnected", "plugin_c")); });
  ExpectContains(msg, {"FullyConnected", "core", "plugin_c"});
  msg = ErrorOf([&] { r.Register(TestOp("ElementWiseSum", "plugin_d")); });
  ExpectContains(msg, {"ElementWiseSum", "alias", "add_n"});
}

TEST(OpRegistry, AliasErrors) {
  OpRegistry& r = OpRegistry::Get();
  ExpectContains(ErrorOf([&] { r.AddAlias("opdef_test_alias", "no_such_op"); }), {"no_such_op", "not registered"});
  ExpectContains(ErrorOf([&] { r.AddAlias("Convolution", "Pooling"); }), {"Convolution", "core"});
  ExpectContains(ErrorOf([&] { r.AddAlias("ElementWiseSum", "Pooling"); }), {"ElementWiseSum", "add_n"});
}

TEST(OpRegistry, RejectsIncompleteDefinitions) {
  OpDef d = TestOp("opdef_test_incomplete", "t");
  d.infer_shape = nullptr;
  ExpectContains(ErrorOf([&] { OpRegistry::Get().Register(d); }), {"opdef_test_incomplete", "infer_shape"});
  d = TestOp("opdef_test_incomplete", "t");
  d.grad = GradKind::kOp;
  ExpectContains(ErrorOf([&] { OpRegistry::Get().Register(d); }), {"opdef_test_incomplete", "backward_op"});
}

TEST(OpRegistry, ConcurrentLookupsAndRegistrations) {
  OpRegistry& r = OpRegistry::Get();
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t == 0 && i % 10 == 0) r.Register(TestOp("opdef_test_conc_" + std::to_string(i), "t"));
        if (r.Find("Convolution") && r.Find("ElementWiseSum")) found.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(found.load(), 800);
  for (int i = 0; i < 200; i += 10) EXPECT_NE(r.Find("opdef_test_conc_" + std::to_string(i)), nullptr);
}

}  // namespace
}  // namespace weft

// OpDef::Normalize and the name lists (ListArguments / ListOutputs / ListAuxiliaryStates of
// MXNet 1.9.1, checked there with mx.sym.<op>(...).list_*()).
#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;
using test::Norm;
using Names = std::vector<std::string>;

std::string Get(const AttrMap& a, const std::string& k) {
  const std::string* v = a.Find(k);
  return v ? *v : "<absent>";
}

TEST(Normalize, FillsDefaults) {
  AttrMap a = Norm("FullyConnected", {{"num_hidden", "64"}});
  EXPECT_EQ(Get(a, "num_hidden"), "64");
  EXPECT_EQ(Get(a, "no_bias"), "False");
  EXPECT_EQ(Get(a, "flatten"), "True");

  a = Norm("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}});
  EXPECT_EQ(a.GetTuple("kernel"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Get(a, "stride"), "()");
  EXPECT_EQ(Get(a, "num_group"), "1");
  EXPECT_EQ(Get(a, "layout"), "None");

  a = Norm("BatchNorm", {});
  EXPECT_DOUBLE_EQ(a.GetFloat("eps"), 0.001);
  EXPECT_DOUBLE_EQ(a.GetFloat("momentum"), 0.9);
  EXPECT_TRUE(a.GetBool("fix_gamma"));
  EXPECT_FALSE(a.GetBool("use_global_stats"));
  EXPECT_EQ(a.GetInt("axis"), 1);

  a = Norm("Pooling", {});
  EXPECT_EQ(Get(a, "pool_type"), "max");
  EXPECT_EQ(Get(a, "pooling_convention"), "valid");
  EXPECT_FALSE(a.GetBool("global_pool"));

  EXPECT_DOUBLE_EQ(Norm("Dropout", {}).GetFloat("p"), 0.5);
  a = Norm("SoftmaxOutput", {});
  EXPECT_DOUBLE_EQ(a.GetFloat("grad_scale"), 1);
  EXPECT_DOUBLE_EQ(a.GetFloat("ignore_label"), -1);
  EXPECT_EQ(Get(a, "normalization"), "null");
  a = Norm("softmax", {});
  EXPECT_EQ(a.GetInt("axis"), -1);
  EXPECT_EQ(a.GetOptionalFloat("temperature"), std::nullopt);
  EXPECT_EQ(Get(Norm("LeakyReLU", {}), "act_type"), "leaky");
  EXPECT_DOUBLE_EQ(Norm("LeakyReLU", {}).GetFloat("slope"), 0.25);
  EXPECT_EQ(Norm("Concat", {{"num_args", "2"}}).GetInt("dim"), 1);
  EXPECT_EQ(Norm("SliceChannel", {{"num_outputs", "2"}}).GetInt("axis"), 1);
  a = Norm("one_hot", {{"depth", "4"}});
  EXPECT_DOUBLE_EQ(a.GetFloat("on_value"), 1);
  EXPECT_DOUBLE_EQ(a.GetFloat("off_value"), 0);
  EXPECT_EQ(Get(a, "dtype"), "float32");
  EXPECT_EQ(Norm("argmax", {}).GetOptionalInt("axis"), std::nullopt);
  EXPECT_FALSE(Norm("sum", {}).GetBool("keepdims"));
  a = Norm("adam_update", {{"lr", "0.01"}});
  EXPECT_DOUBLE_EQ(a.GetFloat("beta1"), 0.9);
  EXPECT_DOUBLE_EQ(a.GetFloat("beta2"), 0.999);
  EXPECT_DOUBLE_EQ(a.GetFloat("epsilon"), 1e-8);
  EXPECT_DOUBLE_EQ(a.GetFloat("wd"), 0);
  EXPECT_DOUBLE_EQ(a.GetFloat("rescale_grad"), 1);
  EXPECT_DOUBLE_EQ(a.GetFloat("clip_gradient"), -1);
  EXPECT_DOUBLE_EQ(Norm("sgd_mom_update", {{"lr", "0.1"}}).GetFloat("momentum"), 0);
  EXPECT_FALSE(Norm("dot", {}).GetBool("transpose_a"));
  EXPECT_FALSE(Norm("Reshape", {{"shape", "(2, -1)"}}).GetBool("reverse"));
}

TEST(Normalize, AcceptsMxnetSpellings) {
  // MXNet JSON writes tuples as "(3, 3)", "[3,3]", "(3,)" or a bare "3"; bools as True/true/1.
  for (const char* k : {"(3, 3)", "[3,3]", "(3,3)"}) {
    EXPECT_EQ(Norm("Convolution", {{"kernel", k}, {"num_filter", "1"}}).GetTuple("kernel"),
              (std::vector<int64_t>{3, 3}))
        << k;
  }
  EXPECT_EQ(Norm("Convolution", {{"kernel", "(3,)"}, {"num_filter", "1"}}).GetTuple("kernel"),
            (std::vector<int64_t>{3}));
  for (const char* b : {"True", "true", "1"})
    EXPECT_TRUE(Norm("FullyConnected", {{"num_hidden", "1"}, {"no_bias", b}}).GetBool("no_bias"));
  for (const char* b : {"False", "false", "0"})
    EXPECT_FALSE(Norm("FullyConnected", {{"num_hidden", "1"}, {"no_bias", b}}).GetBool("no_bias"));
  EXPECT_EQ(Norm("sum", {{"axis", "None"}}).GetTuple("axis", {}), std::vector<int64_t>{});
  EXPECT_DOUBLE_EQ(Norm("softmax", {{"temperature", "2.5"}}).GetFloat("temperature"), 2.5);
  EXPECT_EQ(Get(Norm("Cast", {{"dtype", "float16"}}), "dtype"), "float16");
  // Given strings are kept as given (symbol JSON round-trips them).
  EXPECT_EQ(Get(Norm("FullyConnected", {{"num_hidden", "1"}, {"no_bias", "true"}}), "no_bias"), "true");
}

TEST(Normalize, HiddenAttributesPassThrough) {
  AttrMap a = Norm("FullyConnected", {{"num_hidden", "4"}, {"__lr_mult__", "2.0"}, {"__ctx_group__", "dev1"}});
  EXPECT_EQ(Get(a, "__lr_mult__"), "2.0");
  EXPECT_EQ(Get(a, "__ctx_group__"), "dev1");
}

TEST(Normalize, UnknownAttributeListsValidOnes) {
  std::string msg = ErrorOf([] { Norm("FullyConnected", {{"num_hiden", "4"}}); });
  ExpectContains(msg, {"FullyConnected", "num_hiden", "did you mean 'num_hidden'", "num_hidden, no_bias, flatten"});
}

// MXNet's ops without a parameter struct keep what they are given (Gluon's cosine loss passes
// broadcast_maximum an axis); the ops declaring attributes still refuse unknown ones.
TEST(Normalize, OpsWithoutAttributesKeepUndeclaredOnes) {
  EXPECT_EQ(Get(Norm("broadcast_maximum", {{"axis", "1"}}), "axis"), "1");
  EXPECT_EQ(Get(Norm("BlockGrad", {{"foo", "bar"}}), "foo"), "bar");
  ExpectContains(ErrorOf([] { Norm("sum", {{"foo", "1"}}); }), {"sum", "has no attribute 'foo'"});
}

TEST(Normalize, MissingRequiredAttribute) {
  ExpectContains(ErrorOf([] { Norm("FullyConnected", {}); }), {"FullyConnected", "num_hidden", "required"});
  ExpectContains(ErrorOf([] { Norm("Activation", {}); }), {"Activation", "act_type", "required"});
  ExpectContains(ErrorOf([] { Norm("one_hot", {}); }), {"one_hot", "depth", "required"});
  // MXNet 1.9's scalar ops default `scalar` to 1 (mx.nd._plus_scalar(x) adds 1): not required.
  EXPECT_EQ(Norm("_plus_scalar", {}).GetFloat("scalar"), 1.0);
}

TEST(Normalize, ValuesAreValidatedByType) {
  ExpectContains(ErrorOf([] {
                   Norm("FullyConnected", {{"num_hidden", "many"}});
                 }),
                 {"FullyConnected", "num_hidden", "many", "integer"});
  ExpectContains(ErrorOf([] {
                   Norm("FullyConnected", {{"num_hidden", "3"}, {"no_bias", "maybe"}});
                 }),
                 {"no_bias", "maybe", "boolean"});
  ExpectContains(ErrorOf([] {
                   Norm("Convolution", {{"kernel", "(3, x)"}, {"num_filter", "1"}});
                 }),
                 {"Convolution", "kernel", "(3, x)", "tuple"});
  ExpectContains(ErrorOf([] { Norm("Dropout", {{"p", "half"}}); }), {"Dropout", "p", "half", "number"});
  ExpectContains(ErrorOf([] {
                   Norm("Activation", {{"act_type", "swish"}});
                 }),
                 {"Activation", "act_type", "swish", "relu, sigmoid, tanh, softrelu, softsign"});
  ExpectContains(ErrorOf([] { Norm("Cast", {{"dtype", "float8"}}); }), {"Cast", "float8"});
  // Op-specific checks.
  ExpectContains(ErrorOf([] { Norm("FullyConnected", {{"num_hidden", "0"}}); }), {"FullyConnected", "num_hidden"});
  ExpectContains(ErrorOf([] {
                   Norm("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"num_group", "4"}});
                 }),
                 {"Convolution", "num_group"});
  ExpectContains(ErrorOf([] {
                   Norm("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"stride", "(1, 1, 1)"}});
                 }),
                 {"Convolution", "stride"});
  ExpectContains(ErrorOf([] { Norm("Concat", {{"num_args", "0"}}); }), {"Concat", "num_args"});
  ExpectContains(ErrorOf([] { Norm("Dropout", {{"p", "1.5"}}); }), {"Dropout", "p"});
}

TEST(Normalize, UnimplementedMxnetOptionsOnlyAtDefault) {
  // Accepted so that MXNet JSON loads, but only with the default value.
  EXPECT_NO_THROW(Norm("Dropout", {{"mode", "training"}}));
  ExpectContains(ErrorOf([] { Norm("Dropout", {{"mode", "always"}}); }), {"Dropout", "mode", "always", "training"});
  EXPECT_NO_THROW(Norm("SoftmaxOutput", {{"out_grad", "0"}}));
  ExpectContains(ErrorOf([] { Norm("SoftmaxOutput", {{"out_grad", "True"}}); }), {"out_grad", "not supported"});
  // Implemented since issue 13, in every spelling MXNet writes.
  for (const char* v : {"True", "False", "1", "0", "None"})
    EXPECT_NO_THROW(Norm("Pooling", {{"count_include_pad", v}}));
  EXPECT_NO_THROW(Norm("SoftmaxOutput", {{"multi_output", "True"}}));
  EXPECT_NO_THROW(Norm("SoftmaxOutput", {{"preserve_shape", "True"}}));  // softmax over the last axis
  // Implemented for MXNet's frontend (reduces the axes not listed).
  EXPECT_NO_THROW(Norm("sum", {{"axis", "(1,)"}, {"exclude", "True"}}));
  // Performance hints: any valid value.
  EXPECT_NO_THROW(Norm("Convolution", {{"kernel", "(3, 3)"},
                                       {"num_filter", "1"},
                                       {"cudnn_off", "True"},
                                       {"workspace", "512"},
                                       {"cudnn_tune", "fastest"}}));
  EXPECT_NO_THROW(Norm("sgd_update", {{"lr", "0.1"}, {"lazy_update", "False"}}));
}

struct ListCase {
  std::string op;
  test::Attrs attrs;
  Names inputs, outputs, aux;
  int visible;
};

// From MXNet 1.9.1: list_arguments() / list_outputs() / list_auxiliary_states() of a node named
// "n" (names without the "n_" prefix). Hidden outputs (not in MXNet's list_outputs) follow the
// visible ones.
const ListCase kLists[] = {
    {"FullyConnected", {{"num_hidden", "2"}}, {"data", "weight", "bias"}, {"output"}, {}, 1},
    {"FullyConnected", {{"num_hidden", "2"}, {"no_bias", "True"}}, {"data", "weight"}, {"output"}, {}, 1},
    {"Convolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}}, {"data", "weight", "bias"}, {"output"}, {}, 1},
    {"Convolution",
     {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"no_bias", "1"}},
     {"data", "weight"},
     {"output"},
     {},
     1},
    {"Pooling", {}, {"data"}, {"output"}, {}, 1},
    {"Activation", {{"act_type", "relu"}}, {"data"}, {"output"}, {}, 1},
    {"LeakyReLU", {}, {"data"}, {"output"}, {}, 1},
    {"LeakyReLU", {{"act_type", "prelu"}}, {"data", "gamma"}, {"output"}, {}, 1},
    {"LeakyReLU", {{"act_type", "rrelu"}}, {"data"}, {"output", "mask"}, {}, 2},
    {"BatchNorm", {}, {"data", "gamma", "beta"}, {"output", "mean", "var"}, {"moving_mean", "moving_var"}, 1},
    {"BatchNorm",
     {{"output_mean_var", "True"}},
     {"data", "gamma", "beta"},
     {"output", "mean", "var"},
     {"moving_mean", "moving_var"},
     3},
    {"Dropout", {}, {"data"}, {"output", "mask"}, {}, 1},
    {"SoftmaxOutput", {}, {"data", "label"}, {"output"}, {}, 1},
    {"softmax", {}, {"data"}, {"output"}, {}, 1},
    {"log_softmax", {}, {"data"}, {"output"}, {}, 1},
    {"LinearRegressionOutput", {}, {"data", "label"}, {"output"}, {}, 1},
    {"LogisticRegressionOutput", {}, {"data", "label"}, {"output"}, {}, 1},
    {"MAERegressionOutput", {}, {"data", "label"}, {"output"}, {}, 1},
    {"MakeLoss", {}, {"data"}, {"output"}, {}, 1},
    {"BlockGrad", {}, {"data"}, {"output"}, {}, 1},
    {"Flatten", {}, {"data"}, {"output"}, {}, 1},
    {"Reshape", {{"shape", "(-1,)"}}, {"data"}, {"output"}, {}, 1},
    {"expand_dims", {{"axis", "0"}}, {"data"}, {"output"}, {}, 1},
    {"_copy", {}, {"data"}, {"output"}, {}, 1},
    {"Concat", {{"num_args", "3"}}, {"arg0", "arg1", "arg2"}, {"output"}, {}, 1},
    {"SliceChannel", {{"num_outputs", "3"}}, {"data"}, {"output0", "output1", "output2"}, {}, 3},
    {"transpose", {}, {"data"}, {"output"}, {}, 1},
    {"dot", {}, {"lhs", "rhs"}, {"output"}, {}, 1},
    {"batch_dot", {}, {"lhs", "rhs"}, {"output"}, {}, 1},
    {"Cast", {{"dtype", "int32"}}, {"data"}, {"output"}, {}, 1},
    {"zeros_like", {}, {"data"}, {"output"}, {}, 1},
    {"ones_like", {}, {"data"}, {"output"}, {}, 1},
    {"one_hot", {{"depth", "3"}}, {"indices"}, {"output"}, {}, 1},
    {"argmax", {}, {"data"}, {"output"}, {}, 1},
    {"sum", {}, {"data"}, {"output"}, {}, 1},
    {"add_n", {{"num_args", "2"}}, {"arg0", "arg1"}, {"output"}, {}, 1},
    {"ElementWiseSum", {{"num_args", "2"}}, {"arg0", "arg1"}, {"output"}, {}, 1},
    {"elemwise_add", {}, {"lhs", "rhs"}, {"output"}, {}, 1},
    {"broadcast_mul", {}, {"lhs", "rhs"}, {"output"}, {}, 1},
    {"_rdiv_scalar", {{"scalar", "2"}}, {"data"}, {"output"}, {}, 1},
    {"sqrt", {}, {"data"}, {"output"}, {}, 1},
    {"sgd_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {}, 1},
    {"sgd_mom_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {"mom"}, 1},
    {"adam_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {"mean", "var"}, 1},
    {"nag_mom_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {"mom"}, 1},
    {"rmsprop_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {"n"}, 1},
    {"rmspropalex_update", {{"lr", "0.1"}}, {"weight", "grad"}, {"output"}, {"n", "g", "delta"}, 1},
    {"_quantize_2bit", {}, {"data"}, {"output"}, {"residual"}, 1},
    {"_dequantize_2bit", {{"shape", "(2, 3)"}}, {"data"}, {"output"}, {}, 1},
};

TEST(OpLists, InputsOutputsAuxAsMxnet) {
  for (const ListCase& c : kLists) {
    const OpDef& def = OpRegistry::Get().Lookup(c.op);
    AttrMap a = def.Normalize(AttrMap(c.attrs));
    EXPECT_EQ(OpInputNames(def, a), c.inputs) << c.op;
    EXPECT_EQ(OpOutputNames(def, a), c.outputs) << c.op;
    EXPECT_EQ(OpAuxNames(def, a), c.aux) << c.op;
    EXPECT_EQ(OpNumVisibleOutputs(def, a), c.visible) << c.op;
  }
}

}  // namespace
}  // namespace weft

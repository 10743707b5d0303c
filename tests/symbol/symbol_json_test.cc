// MXNet symbol files: loading every fixture, legacy upgrades, byte-exact re-saving.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "test_util.h"
#include "weft/op.h"
#include "weft/symbol.h"

namespace weft {
namespace {

using Strings = std::vector<std::string>;

// Equal line for line except the version line (the only line mentioning mxnet_version).
void ExpectSameExceptVersion(const std::string& actual, const std::string& expected) {
  std::vector<std::string> a = test::Lines(actual), e = test::Lines(expected);
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (e[i].find("mxnet_version") != std::string::npos) {
      EXPECT_EQ(a[i], "  \"attrs\": {\"mxnet_version\": [\"int\", 10901]}");
      continue;
    }
    EXPECT_EQ(a[i], e[i]) << "line " << i + 1;
  }
}

// example/image-classification/symbols/mlp.py, as written with weft's C++ API.
Symbol BuildMlp() {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = FullyConnected("fc1", data, Symbol(), Symbol(), 128);
  Symbol act1 = Activation("relu1", fc1, ActivationActType::kRelu);
  Symbol fc2 = FullyConnected("fc2", act1, Symbol(), Symbol(), 64);
  Symbol act2 = Activation("relu2", fc2, ActivationActType::kRelu);
  Symbol fc3 = FullyConnected("fc3", act2, Symbol(), Symbol(), 10);
  return SoftmaxOutput("softmax", fc3, Symbol());
}

TEST(SymbolJson, MlpBuiltWithTheApiReproducesMXNetFile) {
  std::string file = test::ReadText(test::Fixture("mlp_v1.4.0-symbol.json"));
  ASSERT_FALSE(file.empty());
  ExpectSameExceptVersion(BuildMlp().ToJSON(), file);
}

TEST(SymbolJson, MlpLoadSaveReproducesMXNetFile) {
  std::string path = test::Fixture("mlp_v1.4.0-symbol.json");
  Symbol mlp = Symbol::Load(path);
  // MXNet 1.9.1: ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'fc3_weight',
  // 'fc3_bias', 'softmax_label'] ['softmax_output']
  EXPECT_EQ(mlp.ListArguments(), (Strings{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight",
                                          "fc3_bias", "softmax_label"}));
  EXPECT_EQ(mlp.ListOutputs(), Strings{"softmax_output"});
  EXPECT_TRUE(mlp.ListAuxiliaryStates().empty());
  ExpectSameExceptVersion(mlp.ToJSON(), test::ReadText(path));

  // Save / Load through a file keep the graph.
  std::string tmp = (std::filesystem::temp_directory_path() / "weft_symbol_mlp_test.json").string();
  mlp.Save(tmp);
  EXPECT_EQ(test::ReadText(tmp), mlp.ToJSON());
  EXPECT_EQ(Symbol::Load(tmp).ToJSON(), mlp.ToJSON());
  std::remove(tmp.c_str());
}

TEST(SymbolJson, LegacyFileIsUpgradedLikeMXNet) {
  Symbol s = Symbol::Load(test::Fixture("save_000800.json"));
  // MXNet 1.9.1 after its upgrade:
  EXPECT_EQ(s.ListArguments(), (Strings{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight",
                                        "fc3_bias", "batchnorm0_gamma", "batchnorm0_beta", "softmax_label"}));
  EXPECT_EQ(s.ListOutputs(), Strings{"softmax_output"});
  EXPECT_EQ(s.ListAuxiliaryStates(), (Strings{"batchnorm0_moving_mean", "batchnorm0_moving_var"}));
  auto attrs = s.AttrDict();
  EXPECT_EQ(attrs.at("data").at("__ctx_group__"), "stage1");
  EXPECT_EQ(attrs.at("data").at("__lr_mult__"), "0.2");
  EXPECT_EQ(attrs.at("fc1").at("__wd_mult__"), "0.3");
  EXPECT_EQ(attrs.at("fc1").count("weight_lr_mult"), 0u);  // moved to fc1_weight
  EXPECT_EQ(attrs.at("fc1_weight").at("__lr_mult__"), "1.2");
  EXPECT_EQ(attrs.at("batchnorm0_moving_var").at("__init__"), "[\"one\", {}]");
  EXPECT_EQ(attrs.at("batchnorm0_moving_mean").at("__ctx_group__"), "stage2");
  // The whole re-saved file equals MXNet 1.9.1's (recorded by data/make_expected.py).
  EXPECT_EQ(s.ToJSON(), test::ReadText(test::Expected("save_000800_mxnet191.json")));
}

TEST(SymbolJson, VggLikeFileLoads) {
  Symbol v = Symbol::Load(test::Fixture("model1_vgg_like.json"));
  Strings args = v.ListArguments();
  // MXNet 1.9.1 lists 34 arguments: data, conv1_1_weight, ..., fc8_bias, softmax_label.
  ASSERT_EQ(args.size(), 34u);
  EXPECT_EQ(args.front(), "data");
  EXPECT_EQ(args[1], "conv1_1_weight");
  EXPECT_EQ(args[32], "fc8_bias");
  EXPECT_EQ(args.back(), "softmax_label");
  EXPECT_EQ(v.ListOutputs(), Strings{"softmax_output"});
  EXPECT_TRUE(v.ListAuxiliaryStates().empty());
  Strings internals = v.GetInternals().ListOutputs();
  EXPECT_EQ(internals.size(), 73u);  // MXNet: 73, 'pool1_output' at index 9
  EXPECT_EQ(internals[9], "pool1_output");
  // Round trip is stable.
  EXPECT_EQ(Symbol::LoadJSON(v.ToJSON()).ToJSON(), v.ToJSON());
}

TEST(SymbolJson, ReaderAcceptsOldSpellings) {
  // 2-element inputs, "param" + "attr" keys, no node_row_ptr / arg_nodes / attrs, an MXNet alias.
  const char* json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "_MulScalar", "name": "m", "param": {"scalar": "3"}, "attr": {"ctx_group": "g"}, "inputs": [[0, 0]]}],
    "heads": [[1, 0]]})";
  Symbol s = Symbol::LoadJSON(json);
  EXPECT_EQ(s.ListArguments(), Strings{"x"});
  EXPECT_EQ(s.GetAttr("scalar"), "3");
  EXPECT_EQ(s.GetAttr("__ctx_group__"), "g");
  EXPECT_NE(s.ToJSON().find("\"op\": \"_mul_scalar\""), std::string::npos);
}

TEST(SymbolJson, StringsAreEscaped) {
  Symbol x("x");
  x.SetAttr("note", "a \"quoted\"\\ line\nnext");
  Symbol back = Symbol::LoadJSON(x.ToJSON());
  EXPECT_EQ(back.GetAttr("note"), "a \"quoted\"\\ line\nnext");
}

}  // namespace
}  // namespace weft

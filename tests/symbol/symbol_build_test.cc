// Building symbols with the mxnet-cpp-style API: names, listing orders, attributes, copies.
// Expected names and orders were checked against MXNet 1.9.1 (Python front end).
#include <gtest/gtest.h>

#include "test_util.h"
#include "weft/op.h"
#include "weft/symbol.h"

namespace weft {
namespace {

using Strings = std::vector<std::string>;

TEST(SymbolBuild, ScalarTimesPlusMatchesMXNetJSON) {
  NameManager::Scope names;
  Symbol a = Symbol::Variable("a");
  Symbol b = Symbol::Variable("b");
  Symbol c = 2 * a + b;
  // mx.sym.Variable('a'); b = ...; (2 * a + b).tojson() in MXNet 1.9.1:
  const char* expected = R"({
  "nodes": [
    {
      "op": "null", 
      "name": "a", 
      "inputs": []
    }, 
    {
      "op": "_mul_scalar", 
      "name": "_mulscalar0", 
      "attrs": {"scalar": "2"}, 
      "inputs": [[0, 0, 0]]
    }, 
    {
      "op": "null", 
      "name": "b", 
      "inputs": []
    }, 
    {
      "op": "elemwise_add", 
      "name": "_plus0", 
      "inputs": [[1, 0, 0], [2, 0, 0]]
    }
  ], 
  "arg_nodes": [0, 2], 
  "node_row_ptr": [0, 1, 2, 3, 4], 
  "heads": [[3, 0, 0]], 
  "attrs": {"mxnet_version": ["int", 10901]}
})";
  EXPECT_EQ(c.ToJSON(), expected);
  EXPECT_EQ(c.GetName(), "_plus0");
  EXPECT_EQ(c.ListOutputs(), Strings{"_plus0_output"});
  EXPECT_EQ(c.ListArguments(), (Strings{"a", "b"}));
  // MXNet: ['a', '_mulscalar0_output', 'b', '_plus0_output']
  EXPECT_EQ(c.GetInternals().ListOutputs(), (Strings{"a", "_mulscalar0_output", "b", "_plus0_output"}));
  EXPECT_EQ(c.GetInternals()["_mulscalar0_output"].GetAttr("scalar"), "2");
}

TEST(SymbolBuild, ArithmeticOpsAndNamesFollowMXNet) {
  NameManager::Scope names;
  Symbol a("a"), b("b");
  // MXNet 1.9.1 names/ops: a-2 _minusscalar0/_minus_scalar, 2-a _rminusscalar0, a/2 _divscalar0,
  // 2/a _rdivscalar0, a*b _mul0/elemwise_mul, a-b _minus0, a/b _div0, a+2 and 2+a _plusscalar0/1.
  struct Case {
    Symbol s;
    const char* name;
    const char* op;
  };
  std::vector<Case> cases = {{a - 2, "_minusscalar0", "_minus_scalar"},
                             {2 - a, "_rminusscalar0", "_rminus_scalar"},
                             {a / 2, "_divscalar0", "_div_scalar"},
                             {2 / a, "_rdivscalar0", "_rdiv_scalar"},
                             {a * b, "_mul0", "elemwise_mul"},
                             {a - b, "_minus0", "elemwise_sub"},
                             {a / b, "_div0", "elemwise_div"},
                             {a + 2, "_plusscalar0", "_plus_scalar"},
                             {2 + a, "_plusscalar1", "_plus_scalar"},
                             {sin(a), "sin0", "sin"},
                             {exp(a), "exp0", "exp"}};
  for (const Case& c : cases) {
    EXPECT_EQ(c.s.GetName(), c.name);
    EXPECT_NE(c.s.ToJSON().find(std::string("\"op\": \"") + c.op + "\""), std::string::npos) << c.name;
  }
  EXPECT_EQ((a * 0.5f).GetAttr("scalar"), "0.5");
  EXPECT_EQ((-a).GetAttr("scalar"), "-1");
}

TEST(SymbolBuild, AutoNamesAndCreatedVariablesCopyAttributes) {
  NameManager::Scope names;
  Symbol data = Symbol::Variable("data");
  Symbol fc = FullyConnected(data, Symbol(), Symbol(), 4);
  // MXNet: fullyconnected0 ['data', 'fullyconnected0_weight', 'fullyconnected0_bias']
  EXPECT_EQ(fc.GetName(), "fullyconnected0");
  EXPECT_EQ(fc.ListArguments(), (Strings{"data", "fullyconnected0_weight", "fullyconnected0_bias"}));
  Symbol fc2 = FullyConnected(data, Symbol(), Symbol(), 4, /*no_bias=*/true);
  EXPECT_EQ(fc2.GetName(), "fullyconnected1");
  EXPECT_EQ(fc2.ListArguments(), (Strings{"data", "fullyconnected1_weight"}));
  // MXNet copies the op's attributes onto the variables it creates.
  Symbol w = fc2.GetInternals()["fullyconnected1_weight"];
  EXPECT_EQ(w.ListAttributes(), (std::map<std::string, std::string>{{"no_bias", "True"}, {"num_hidden", "4"}}));
  EXPECT_EQ(Activation(fc, ActivationActType::kRelu).GetName(), "activation0");
  EXPECT_EQ(Activation("relu1", fc, ActivationActType::kRelu).GetAttr("act_type"), "relu");
}

TEST(SymbolBuild, BatchNormAuxStatesOutputsAndInit) {
  NameManager::Scope names;
  Symbol bn = BatchNorm("bn", Symbol::Variable("data"), Symbol(), Symbol(), Symbol(), Symbol());
  // MXNet: ['data', 'bn_gamma', 'bn_beta'] ['bn_output'] ['bn_moving_mean', 'bn_moving_var']
  EXPECT_EQ(bn.ListArguments(), (Strings{"data", "bn_gamma", "bn_beta"}));
  EXPECT_EQ(bn.ListOutputs(), Strings{"bn_output"});
  EXPECT_EQ(bn.ListAuxiliaryStates(), (Strings{"bn_moving_mean", "bn_moving_var"}));
  EXPECT_EQ(bn.ListInputs(), (Strings{"data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"}));
  // MXNet: ['data', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'bn_output']
  EXPECT_EQ(bn.GetInternals().ListOutputs(),
            (Strings{"data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output"}));
  EXPECT_EQ(bn.GetChildren().ListOutputs(),
            (Strings{"data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"}));
  EXPECT_EQ(bn.GetInternals()["bn_moving_mean"].GetAttr("__init__"), "[\"zero\", {}]");
  EXPECT_EQ(bn.GetInternals()["bn_moving_var"].GetAttr("__init__"), "[\"one\", {}]");
  EXPECT_FALSE(bn.GetInternals()["bn_gamma"].GetAttr("__init__").has_value());
}

TEST(SymbolBuild, GroupJsonMatchesMXNet) {
  NameManager::Scope names;
  Symbol d = Symbol::Variable("data");
  Symbol bn = BatchNorm("bn", d, Symbol(), Symbol(), Symbol(), Symbol());
  Symbol fc = FullyConnected(d, Symbol(), Symbol(), 4, true);
  Symbol g = Symbol::Group({bn, fc});
  EXPECT_EQ(g.ListOutputs(), (Strings{"bn_output", "fullyconnected0_output"}));
  EXPECT_EQ(g.GetNumOutputs(), 2u);
  EXPECT_EQ(g.GetName(), "");
  EXPECT_EQ(g.ToJSON(), test::ReadText(test::Expected("group_bn_fc_mxnet191.json")));
  EXPECT_EQ(g[1].GetName(), "fullyconnected0");
  EXPECT_THROW(g[2], Error);
  EXPECT_THROW(g["nope"], Error);
}

TEST(SymbolBuild, MultiOutputNamesAndHiddenOutputs) {
  NameManager::Scope names;
  Symbol d("data");
  Symbol sc = SliceChannel("sc", d, 3);
  // MXNet: ['sc_output0', 'sc_output1', 'sc_output2'], sc[1] -> ['sc_output1']
  EXPECT_EQ(sc.ListOutputs(), (Strings{"sc_output0", "sc_output1", "sc_output2"}));
  EXPECT_EQ(sc[1].ListOutputs(), Strings{"sc_output1"});
  EXPECT_EQ(sc["sc_output2"].GetName(), "sc");
  Symbol drop = Dropout("drop", d);
  // MXNet: ['drop_output'] (the mask is hidden); internals ['data', 'drop_output']
  EXPECT_EQ(drop.ListOutputs(), Strings{"drop_output"});
  EXPECT_EQ(drop.GetInternals().ListOutputs(), (Strings{"data", "drop_output"}));
}

TEST(SymbolBuild, ConcatWithElevenInputsWritesMultiLineInputs) {
  NameManager::Scope names;
  std::vector<Symbol> vars;
  for (int i = 0; i < 11; ++i) vars.push_back(Symbol::Variable("v" + std::to_string(i)));
  Symbol cat = Concat("cat", vars, 11);
  EXPECT_EQ(cat.ToJSON(), test::ReadText(test::Expected("concat11_mxnet191.json")));
  // Operator sets num_args from the positional inputs when not given.
  Symbol sum = Operator("add_n")(vars).CreateSymbol("s");
  EXPECT_EQ(sum.GetAttr("num_args"), "11");
  EXPECT_EQ(sum.ListArguments().size(), 11u);
}

// MXNet's Symbol.__call__ on a graph's internals (what Gluon's SymbolBlock does when called with
// a symbol): a variable listed among the outputs is replaced too, as in MXNet 1.9.1 (its outputs
// become ['in', 'fc_weight', 'fc_bias', 'fc_output']); a lone variable cannot be composed.
TEST(SymbolBuild, ComposingInternalsReplacesVariableOutputs) {
  NameManager::Scope names;
  Symbol internals = FullyConnected("fc", Symbol::Variable("data"), Symbol(), Symbol(), 3).GetInternals();
  internals.Compose({}, {{"data", Symbol::Variable("in")}});
  EXPECT_EQ(internals.ListOutputs(), (Strings{"in", "fc_weight", "fc_bias", "fc_output"}));
  EXPECT_EQ(internals.ListArguments(), (Strings{"in", "fc_weight", "fc_bias"}));
  Symbol lone = Symbol::Variable("a");
  EXPECT_THROW(lone.Compose({}, {{"a", Symbol::Variable("b")}}), Error);
}

TEST(SymbolBuild, AttributesHiddenKeysAndAttrDict) {
  Symbol x = Symbol::Variable("x");
  x.SetAttr("lr_mult", "2");  // MXNet's C API stores bare hidden keys as __key__
  x.SetAttr("__shape__", "(2, 3)");
  x.SetAttr("foo", "bar");
  EXPECT_EQ(x.ListAttributes(),
            (std::map<std::string, std::string>{{"__lr_mult__", "2"}, {"__shape__", "(2, 3)"}, {"foo", "bar"}}));
  EXPECT_EQ(x.GetAttr("lr_mult"), "2");
  EXPECT_EQ(x.GetAttr("__lr_mult__"), "2");
  EXPECT_FALSE(x.GetAttr("wd_mult").has_value());
  Symbol fc = FullyConnected("f", x, Symbol(), Symbol(), 3);
  fc.SetAttr("__ctx_group__", "dev1");
  auto dict = fc.AttrDict();
  EXPECT_EQ(dict.at("f").at("__ctx_group__"), "dev1");
  EXPECT_EQ(dict.at("x").at("foo"), "bar");
  EXPECT_EQ(dict.at("f_weight").at("num_hidden"), "3");
  // Op parameters are validated when changed; a bad value leaves the node untouched.
  EXPECT_THROW(fc.SetAttr("num_hidden", "abc"), Error);
  EXPECT_EQ(fc.GetAttr("num_hidden"), "3");
  fc.SetAttr("num_hidden", "5");
  EXPECT_EQ(fc.InferShapePartial({{"x", Shape(2, 4)}}).out_shapes[0], Shape(2, 5));
  EXPECT_THROW(Symbol::Group({x, fc}).SetAttr("a", "b"), Error);
}

TEST(SymbolBuild, CopyIsIndependent) {
  Symbol a("a");
  Symbol s = a * 3;
  Symbol c = s.Copy();
  c.SetAttr("scalar", "4");
  c.SetAttr("name", "renamed");
  EXPECT_EQ(s.GetAttr("scalar"), "3");
  EXPECT_EQ(c.GetAttr("scalar"), "4");
  EXPECT_EQ(c.GetName(), "renamed");
  EXPECT_EQ(c.ListArguments(), Strings{"a"});
  // Plain copies share the node, as mxnet-cpp handles do.
  Symbol shared = s;
  shared.SetAttr("scalar", "5");
  EXPECT_EQ(s.GetAttr("scalar"), "5");
}

TEST(SymbolBuild, OperatorErrorsNameTheProblem) {
  Symbol d("data");
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { Operator("NoSuchOp"); }).find("NoSuchOp"), std::string::npos);
  EXPECT_NE(message([&] {
              Operator("FullyConnected").SetInput("dat", d).SetParam("num_hidden", 2).CreateSymbol("f");
            }).find("no input named 'dat'"),
            std::string::npos);
  EXPECT_NE(message([&] { Operator("FullyConnected").SetInput("data", d).CreateSymbol("f"); }).find("num_hidden"),
            std::string::npos);
  Symbol sc = SliceChannel(d, 2);
  EXPECT_NE(message([&] { sin(sc); }).find("one output"), std::string::npos);
  EXPECT_THROW(Symbol::Variable(""), Error);
  EXPECT_THROW(Symbol().ListArguments(), Error);
  EXPECT_THROW(Operator("sin")(d)(d).CreateSymbol(), Error);
}

}  // namespace
}  // namespace weft

// Parameter structs (weft/sdk/cpp/params.hpp, weft/sdk/ops/*.hpp): one declaration per attribute
// serves core's registry and every backend's kernels. Checks the parser (defaults, ranges, words,
// None, DefaultOnly), the declarations core registers, and MXNet's type spellings as MXNet 1.9.1
// prints them (MXSymbolGetAtomicSymbolInfo, transcribed from the real MXNet).
#include <map>
#include <string>

#include "test_util.h"
#include "weft/op_info.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/convolution.hpp"
#include "weft/sdk/ops/dropout.hpp"
#include "weft/sdk/ops/indexing.hpp"
#include "weft/sdk/ops/optimizer.hpp"
#include "weft/sdk/ops/pooling.hpp"
#include "weft/sdk/ops/random.hpp"
#include "weft/sdk/ops/rnn.hpp"
#include "weft/sdk/ops/sort.hpp"

namespace weft {
namespace {

using test::ExpectContains;

sdk::AttrMap AttrsOf(std::map<std::string, std::string> m) { return sdk::AttrMap(std::move(m)); }

std::string SdkErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const sdk::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a weft::sdk::Error";
  return "";
}

TEST(Params, DefaultsFillAndValidateCompletesTuples) {
  const auto p = sdk::ParseParams<sdk::ConvolutionParam>(AttrsOf({{"kernel", "(3, 5)"}, {"num_filter", "8"}}));
  EXPECT_EQ(p.kernel, (sdk::Tuple{3, 5}));
  EXPECT_EQ(p.stride, (sdk::Tuple{1, 1}));  // "()" completed to the kernel's length
  EXPECT_EQ(p.dilate, (sdk::Tuple{1, 1}));
  EXPECT_EQ(p.pad, (sdk::Tuple{0, 0}));
  EXPECT_EQ(p.num_group, 1);
  EXPECT_FALSE(p.no_bias);
  EXPECT_EQ(p.layout, sdk::ConvLayout::kNone);
}

TEST(Params, ErrorsNameTheAttributeAndWhatWasExpected) {
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::ConvolutionParam>(AttrsOf({{"kernel", "(3, 3)"}}));
                 }),
                 {"num_filter", "required"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::ConvolutionParam>(AttrsOf({{"kernel", "(3, 3)"}, {"num_filter", "0"}}));
                 }),
                 {"num_filter", "'0'", "at least 1"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::DropoutParam>(AttrsOf({{"p", "1.5"}}));
                 }),
                 {"'p'", "in [0, 1]"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::PoolingParam>(AttrsOf({{"pool_type", "median"}}));
                 }),
                 {"pool_type", "median", "max, avg, sum"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::ConvolutionParam>(
                       AttrsOf({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"stride", "(1, 1, 1)"}}));
                 }),
                 {"stride", "(1, 1, 1)", "kernel"});
}

TEST(Params, DefaultOnlyAttributesRefuseOtherValues) {
  EXPECT_EQ(sdk::ParseParams<sdk::DropoutParam>(AttrsOf({{"mode", "training"}})).mode, sdk::DropoutMode::kTraining);
  try {
    sdk::ParseParams<sdk::DropoutParam>(AttrsOf({{"mode", "always"}}));
    ADD_FAILURE() << "mode=always parsed";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_UNSUPPORTED);
    ExpectContains(e.what(), {"mode", "always", "training"});
  }
}

// RNN: MXNet's flat parameter layout (all weights, then all biases) and the features weft refuses
// by name. Sizes from MXNet 1.9.1: mx.sym.RNN(...).infer_shape(data=(T, N, I)).
// 3-D geometry is given only to a backend that asks for it (max_spatial 3: the cpu); the others
// keep refusing 3-D by name rather than computing it as 2-D.
TEST(Params, ThreeDGeometryOnlyForBackendsThatImplementIt) {
  const test::Attrs attrs = {{"kernel", "(2, 3, 2)"},
                             {"num_filter", "4"},
                             {"stride", "(2, 1, 1)"},
                             {"pad", "(1, 0, 1)"},
                             {"dilate", "(1, 2, 1)"}};
  const test::Inferred inf = test::Infer("Convolution", attrs, {Shape{2, 3, 5, 9, 7}});
  ASSERT_TRUE(inf.out[0]);
  const auto p = sdk::ParseParams<sdk::ConvolutionParam>(sdk::AttrMap(attrs));
  const std::vector<int64_t> x = {2, 3, 5, 9, 7}, w = {4, 3, 2, 3, 2}, b = {4}, y = inf.out[0]->dims();
  const sdk::ConvGeometry g = sdk::ConvolutionGeometry("Convolution", p, x, w, b, true, y, 3);
  EXPECT_EQ((std::vector<int64_t>{g.n, g.f, g.od, g.oh, g.ow}), y);
  EXPECT_EQ(g.col_rows(), 3 * 2 * 3 * 2);
  EXPECT_EQ(g.in_plane(), 5 * 9 * 7);
  try {
    sdk::ConvolutionGeometry("Convolution", p, x, w, b, true, y);
    ADD_FAILURE() << "3-D convolution accepted by a 2-D backend";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_UNSUPPORTED);
    ExpectContains(e.what(), {"Convolution", "(2, 3, 2)"});
  }
  const test::Attrs pool = {{"kernel", "(2, 2, 3)"}, {"stride", "(2, 1, 3)"}, {"pooling_convention", "full"}};
  const test::Inferred pinf = test::Infer("Pooling", pool, {Shape{1, 2, 5, 4, 7}});
  ASSERT_TRUE(pinf.out[0]);
  const auto pp = sdk::ParseParams<sdk::PoolingParam>(sdk::AttrMap(pool));
  const std::vector<int64_t> px = {1, 2, 5, 4, 7}, py = pinf.out[0]->dims();
  const sdk::PoolGeometry pg = sdk::PoolingGeometry("Pooling", pp, px, py, 3);
  EXPECT_EQ((std::vector<int64_t>{pg.n, pg.c, pg.od, pg.oh, pg.ow}), py);
  EXPECT_EQ(pg.kd, 2);
  EXPECT_EQ(pg.kw, 3);
  ExpectContains(SdkErrorOf([&] { sdk::PoolingGeometry("Pooling", pp, px, py); }), {"Pooling", "(1, 2, 5, 4, 7)"});
}

TEST(Params, RnnGeometryFollowsMXNetsParameterLayout) {
  const auto p = sdk::ParseParams<sdk::RNNParam>(
      AttrsOf({{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "2"}, {"bidirectional", "True"}}));
  const sdk::RnnGeometry g = sdk::RnnGeometry::Make(p, 5, 3, 2);
  EXPECT_EQ(g.ParamSize(), 704);
  EXPECT_EQ(g.WeightOffset(0, 1), 16 * (2 + 4));                 // after l0's Wx (16, 2) and Wh (16, 4)
  EXPECT_EQ(g.WeightOffset(1, 0), 2 * 16 * (2 + 4));             // after both directions of layer 0
  EXPECT_EQ(g.BiasOffset(0, 0), 2 * 16 * 6 + 2 * 16 * (8 + 4));  // every weight first
  EXPECT_EQ(g.BiasOffset(1, 1) + 2 * 16, g.ParamSize());         // the last bh ends the vector
  const auto gru =
      sdk::ParseParams<sdk::RNNParam>(AttrsOf({{"mode", "gru"}, {"state_size", "3"}, {"num_layers", "1"}}));
  EXPECT_EQ(sdk::RnnGeometry::Make(gru, 2, 1, 5).ParamSize(), 90);
  EXPECT_EQ(gru.NumVisibleOutputs(), 1);
  for (const auto& [attr, value] : std::map<std::string, std::string>{
           {"projection_size", "2"}, {"lstm_state_clip_min", "-1"}, {"use_sequence_length", "True"}}) {
    try {
      sdk::ParseParams<sdk::RNNParam>(
          AttrsOf({{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}, {attr, value}}));
      ADD_FAILURE() << attr << " parsed";
    } catch (const sdk::Error& e) {
      EXPECT_EQ(e.code(), WEFT_ERR_UNSUPPORTED);
      ExpectContains(e.what(), {attr, value});
    }
  }
  ExpectContains(SdkErrorOf([&] {
                   sdk::RnnGeometryOf("RNN", p, std::vector<int64_t>{5, 3, 2}, std::vector<int64_t>{700},
                                      std::vector<int64_t>{4, 3, 4});
                 }),
                 {"RNN", "parameters", "(700,)", "704"});
  ExpectContains(SdkErrorOf([&] {
                   sdk::RnnGeometryOf("RNN", p, std::vector<int64_t>{0, 3, 2}, std::vector<int64_t>{704},
                                      std::vector<int64_t>{4, 3, 4});
                 }),
                 {"RNN", "(0, 3, 2)", "no time steps"});
}

TEST(Params, OptionalValuesAcceptNone) {
  EXPECT_FALSE(sdk::ParseParams<sdk::TopkParam>(AttrsOf({{"axis", "None"}})).axis.has_value());
  EXPECT_EQ(sdk::ParseParams<sdk::TopkParam>(AttrsOf({})).axis, std::optional<int64_t>(-1));
  EXPECT_FALSE(sdk::ParseParams<sdk::PoolingParam>(AttrsOf({})).count_include_pad.has_value());
  EXPECT_EQ(sdk::ParseParams<sdk::PoolingParam>(AttrsOf({{"count_include_pad", "False"}})).count_include_pad,
            std::optional<bool>(false));
}

// A kernel's setup error names its op (the kernel's message prefix).
TEST(Params, KernelSetupPrefixesTheOpName) {
  sdk::KernelSetup s;
  s.op_name = "_backward_Pooling";
  s.attrs = AttrsOf({{"pool_type", "lp"}});
  ExpectContains(SdkErrorOf([&] { s.Params<sdk::PoolingParam>(); }), {"_backward_Pooling: ", "pool_type"});
}

// Core registers exactly what the structs declare: names, order, defaults, words, ranges.
TEST(Params, TheRegistryListsTheDeclarations) {
  const std::vector<sdk::AttrDecl> decls = sdk::DeclaredAttrs<sdk::ConvolutionParam>();
  const OpDef& def = OpRegistry::Get().Lookup("Convolution");
  ASSERT_EQ(def.attrs.size(), decls.size());
  for (size_t i = 0; i < decls.size(); ++i) {
    SCOPED_TRACE(decls[i].name);
    EXPECT_EQ(def.attrs[i].name, decls[i].name);
    EXPECT_EQ(def.attrs[i].type, decls[i].type);
    EXPECT_EQ(def.attrs[i].default_value, decls[i].default_value);
    EXPECT_EQ(def.attrs[i].choices, decls[i].choices);
    EXPECT_EQ(def.attrs[i].min, decls[i].min);
    EXPECT_EQ(def.attrs[i].use, decls[i].use);
  }
}

// What MXNet 1.9.1's MXSymbolGetAtomicSymbolInfo prints as each attribute's type (before ", required"
// or ", optional, default=..."), for attributes whose declared C++ type and range give the spelling.
TEST(Params, MxnetTypeSpellingsAsMxnetPrintsThem) {
  const std::map<std::string, std::map<std::string, std::string>> mxnet = {
      {"Convolution",
       {{"kernel", "Shape(tuple)"},
        {"num_filter", "int (non-negative)"},
        {"num_group", "int (non-negative)"},
        {"workspace", "long (non-negative)"},
        {"no_bias", "boolean"},
        {"cudnn_tune", "{None, 'fastest', 'limited_workspace', 'off'}"}}},
      {"Pooling", {{"p_value", "int or None"}, {"count_include_pad", "boolean or None"}}},
      {"LRN", {{"alpha", "float"}, {"nsize", "int (non-negative)"}}},
      {"softmax", {{"axis", "int"}, {"temperature", "double or None"}}},
      {"topk", {{"axis", "int or None"}, {"ret_typ", "{'both', 'indices', 'mask', 'value'}"}}},
      {"one_hot", {{"depth", "int"}, {"on_value", "double"}}},
      {"Activation", {{"act_type", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}"}}},
      {"Cast", {{"dtype", "{'bfloat16', 'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}"}}},
  };
  for (const auto& [op, attrs] : mxnet) {
    const std::optional<OpInfo> info = FindOpInfo(op);
    ASSERT_TRUE(info) << op;
    for (const auto& [name, spelling] : attrs) {
      const auto it =
          std::find_if(info->attrs.begin(), info->attrs.end(), [&](const OpAttrInfo& a) { return a.name == name; });
      ASSERT_NE(it, info->attrs.end()) << op << "." << name;
      EXPECT_EQ(it->mxnet_type, spelling) << op << "." << name;
    }
  }
}

// Output sizes come from one place: core's shape inference and a kernel's geometry agree.
TEST(Params, ConvolutionGeometryMatchesShapeInference) {
  const test::Attrs attrs = {
      {"kernel", "(3, 2)"}, {"num_filter", "4"}, {"stride", "(2, 1)"}, {"pad", "(1, 0)"}, {"dilate", "(1, 2)"}};
  const test::Inferred inf = test::Infer("Convolution", attrs, {Shape{2, 3, 9, 7}});
  ASSERT_TRUE(inf.out[0]);
  const auto p = sdk::ParseParams<sdk::ConvolutionParam>(sdk::AttrMap(attrs));
  const std::vector<int64_t> x = {2, 3, 9, 7}, w = {4, 3, 3, 2}, b = {4};
  const std::vector<int64_t> y = inf.out[0]->dims();
  const sdk::ConvGeometry g = sdk::ConvolutionGeometry("Convolution", p, x, w, b, true, y);
  EXPECT_EQ((std::vector<int64_t>{g.n, g.f, g.oh, g.ow}), y);
}

// Tuples of numbers (multi_sgd_update's lrs and wds, _histogram's range) parse as doubles, their
// counts and order are checked against the other attributes, and core registers them as MXNet's
// "string"-typed attributes ("tuple of <float>"); randint's bounds keep MXNet's "long".
TEST(Params, FloatTuplesAndLongBoundsAreDeclaredAndChecked) {
  using Multi = sdk::MultiSgdParam<false, true>;
  const auto p = sdk::ParseParams<Multi>(AttrsOf({{"lrs", "(0.1, 0.25)"}, {"wds", "[0, 1e-4]"}, {"num_weights", "2"}}));
  EXPECT_EQ(p.lrs, (sdk::FloatTuple{0.1, 0.25}));
  EXPECT_EQ(p.wds, (sdk::FloatTuple{0.0, 1e-4}));
  EXPECT_FLOAT_EQ(p.momentum, 0.0f);
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<Multi>(AttrsOf({{"lrs", "(0.1, 0.2)"}, {"wds", "(0, 0)"}, {"num_weights", "3"}}));
                 }),
                 {"lrs has 2 values", "num_weights is 3"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<Multi>(AttrsOf({{"lrs", "(0.1, x)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}}));
                 }),
                 {"lrs", "x"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::HistogramParam>(AttrsOf({{"bin_cnt", "4"}}));
                 }),
                 {"range", "required"});
  ExpectContains(SdkErrorOf([] {
                   sdk::ParseParams<sdk::HistogramParam>(AttrsOf({{"bin_cnt", "4"}, {"range", "(1, 0)"}}));
                 }),
                 {"min < max"});
  EXPECT_FALSE(sdk::ParseParams<sdk::HistogramParam>(AttrsOf({})).bin_cnt.has_value());  // edges from the bins input

  const std::vector<sdk::AttrDecl> multi = sdk::DeclaredAttrs<Multi>();
  ASSERT_FALSE(multi.empty());
  EXPECT_EQ(multi[0].name, "lrs");
  EXPECT_EQ(multi[0].type, "string");
  EXPECT_EQ(multi[0].mxnet_type, "tuple of <float>");
  const auto randint = sdk::DeclaredAttrs<sdk::SampleParam<sdk::RandintParam, true>>();
  ASSERT_GE(randint.size(), 2u);
  EXPECT_EQ(randint[0].type, "long");
  EXPECT_FALSE(randint[0].default_value.has_value());
  EXPECT_EQ(sdk::ParseParams<sdk::RandintParam>(AttrsOf({{"low", "-3"}, {"high", "9000000000"}})).high.value,
            9000000000);
}

}  // namespace
}  // namespace weft

// Shape and dtype inference over symbols (values checked against MXNet 1.9.1).
#include <gtest/gtest.h>

#include "test_util.h"
#include "weft/op.h"
#include "weft/symbol.h"

namespace weft {
namespace {

using Shapes = std::vector<std::vector<mx_uint>>;
using Strings = std::vector<std::string>;

TEST(SymbolInfer, VggLikeFromDataShape) {
  Symbol v = Symbol::Load(test::Fixture("model1_vgg_like.json"));
  Shapes in, aux, out;
  ASSERT_TRUE(v.InferShape({{"data", {32, 3, 300, 300}}}, &in, &aux, &out));
  // MXNet 1.9.1 infer_shape(data=(32,3,300,300)): outputs [(32, 1000)], no aux; arguments
  // (32,3,300,300), (64,3,3,3), (64,), (64,64,3,3), (64,), (128,64,3,3), ..., conv5_3 (512,512,3,3),
  // fc6 (1024,512,3,3), fc7 (1024,1024,1,1), fc8 (1000,1024,1,1), (1000,), label (32,).
  EXPECT_EQ(out, (Shapes{{32, 1000}}));
  EXPECT_TRUE(aux.empty());
  ASSERT_EQ(in.size(), 34u);
  Shapes expected = {{32, 3, 300, 300},
                     {64, 3, 3, 3},
                     {64},
                     {64, 64, 3, 3},
                     {64},
                     {128, 64, 3, 3},
                     {128},
                     {128, 128, 3, 3},
                     {128},
                     {256, 128, 3, 3},
                     {256},
                     {256, 256, 3, 3},
                     {256},
                     {256, 256, 3, 3},
                     {256},
                     {512, 256, 3, 3},
                     {512},
                     {512, 512, 3, 3},
                     {512},
                     {512, 512, 3, 3},
                     {512},
                     {512, 512, 3, 3},
                     {512},
                     {512, 512, 3, 3},
                     {512},
                     {512, 512, 3, 3},
                     {512},
                     {1024, 512, 3, 3},
                     {1024},
                     {1024, 1024, 1, 1},
                     {1024},
                     {1000, 1024, 1, 1},
                     {1000},
                     {32}};
  EXPECT_EQ(in, expected);
}

TEST(SymbolInfer, PartialResultsReportUnknownArguments) {
  NameManager::Scope names;
  Symbol a("a"), b("b");
  Symbol c = 2 * a + b;
  // MXNet infer_shape_partial(a=(2,3)): ([(2, 3), (2, 3)], [(2, 3)], [])
  ShapeInference r = c.InferShapePartial({{"a", Shape(2, 3)}});
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.arg_shapes, (std::vector<std::optional<Shape>>{Shape(2, 3), Shape(2, 3)}));
  EXPECT_EQ(r.out_shapes[0], Shape(2, 3));
  // MXNet infer_shape_partial(): everything unknown.
  r = c.InferShapePartial({});
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.unknown_args, (Strings{"a", "b"}));
  EXPECT_FALSE(r.out_shapes[0].has_value());

  Symbol f = FullyConnected("f", Symbol("data"), Symbol(), Symbol(), 10);
  // MXNet infer_shape_partial(f_weight=(10,5)): ([(), (10, 5), ()], [()], []) — the bias is
  // known in weft (num_hidden gives it), data's batch size is not.
  r = f.InferShapePartial({{"f_weight", Shape(10, 5)}});
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.arg_shapes[1], Shape(10, 5));
  EXPECT_EQ(r.unknown_args.front(), "data");
  Shapes in, aux, out;
  EXPECT_FALSE(f.InferShape({{"f_weight", {10, 5}}}, &in, &aux, &out));
  EXPECT_EQ(in[1], (std::vector<mx_uint>{10, 5}));
  // MXNet infer_shape(data=(4,5)): ([(4, 5), (10, 5), (10,)], [(4, 10)], [])
  EXPECT_TRUE(f.InferShape({{"data", {4, 5}}}, &in, &aux, &out));
  EXPECT_EQ(in, (Shapes{{4, 5}, {10, 5}, {10}}));
  EXPECT_EQ(out, (Shapes{{4, 10}}));
}

TEST(SymbolInfer, AuxShapesAndShapeAttributes) {
  Symbol bn = BatchNorm("bn", Symbol("data"), Symbol(), Symbol(), Symbol(), Symbol());
  Shapes in, aux, out;
  // MXNet: ([(2, 3, 4, 4), (3,), (3,)], [(2, 3, 4, 4)], [(3,), (3,)])
  ASSERT_TRUE(bn.InferShape({{"data", {2, 3, 4, 4}}}, &in, &aux, &out));
  EXPECT_EQ(in, (Shapes{{2, 3, 4, 4}, {3}, {3}}));
  EXPECT_EQ(aux, (Shapes{{3}, {3}}));
  EXPECT_EQ(out, (Shapes{{2, 3, 4, 4}}));

  // A variable's __shape__ attribute stands in for a shape not given.
  Symbol x("x");
  x.SetAttr("__shape__", "(2, 3)");
  EXPECT_EQ((x * 2).InferShapePartial({}).out_shapes[0], Shape(2, 3));
  // 0 extents in mxnet-cpp shapes mean "unknown".
  Symbol s = Symbol("p") + Symbol("q");
  EXPECT_TRUE(s.InferShape({{"p", {0, 3}}, {"q", {5, 0}}}, &in, &aux, &out));
  EXPECT_EQ(out, (Shapes{{5, 3}}));
}

TEST(SymbolInfer, ConflictsAndBadNamesAreClearErrors) {
  NameManager::Scope names;
  Symbol c = 2 * Symbol("a") + Symbol("b");
  try {
    c.InferShapePartial({{"a", Shape(2, 3)}, {"b", Shape(3, 2)}});
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("_plus0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3, 2)"), std::string::npos) << msg;
  }
  try {
    c.InferShapePartial({{"nope", Shape(1)}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope' is not an argument"), std::string::npos) << e.what();
  }
}

TEST(SymbolInfer, Types) {
  Symbol f = FullyConnected("f", Symbol("data"), Symbol(), Symbol(), 10);
  std::vector<int> in, aux, out;
  // MXNet infer_type(data='float16'): all float16.
  ASSERT_TRUE(f.InferType({{"data", static_cast<int>(DType::kFloat16)}}, &in, &aux, &out));
  EXPECT_EQ(in, (std::vector<int>(3, static_cast<int>(DType::kFloat16))));
  EXPECT_EQ(out, std::vector<int>{static_cast<int>(DType::kFloat16)});
  TypeInference t = f.InferTypePartial({});
  EXPECT_FALSE(t.complete);
  EXPECT_EQ(t.unknown_args.size(), 3u);
  Symbol x("x");
  x.SetAttr("__dtype__", "1");  // float64 by MXNet's dtype code
  EXPECT_EQ(sin(x).InferTypePartial({}).out_types[0], static_cast<int>(DType::kFloat64));
}

}  // namespace
}  // namespace weft

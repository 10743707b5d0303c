// Dtype inference. Expected dtypes from MXNet 1.9.1 (mx.sym.<op>(...).infer_type(...)).
#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;

constexpr int kF32 = static_cast<int>(DType::kFloat32);
constexpr int kF16 = static_cast<int>(DType::kFloat16);
constexpr int kF64 = static_cast<int>(DType::kFloat64);
constexpr int kI32 = static_cast<int>(DType::kInt32);

struct Types {
  std::vector<int> in, out, aux;
};

Types InferT(const std::string& op, const test::Attrs& attrs, std::vector<int> in, std::vector<int> out = {},
             std::vector<int> aux = {}) {
  const OpDef& def = OpRegistry::Get().Lookup(op);
  AttrMap a = def.Normalize(AttrMap(attrs));
  in.resize(OpInputNames(def, a).size(), -1);
  out.resize(OpOutputNames(def, a).size(), -1);
  aux.resize(OpAuxNames(def, a).size(), -1);
  InferTypes(def, a, in, out, aux);
  return {in, out, aux};
}

TEST(TypeInference, DefaultRuleSpreadsTheKnownDtype) {
  Types t = InferT("FullyConnected", {{"num_hidden", "2"}}, {kF64});
  EXPECT_EQ(t.in, (std::vector<int>{kF64, kF64, kF64}));
  EXPECT_EQ(t.out, (std::vector<int>{kF64}));
  t = InferT("elemwise_add", {}, {-1, kF16});
  EXPECT_EQ(t.in, (std::vector<int>{kF16, kF16}));
  t = InferT("adam_update", {{"lr", "1"}}, {kF32});
  EXPECT_EQ(t.aux, (std::vector<int>{kF32, kF32}));
  // 2-bit compression: float32 values, uint32 words.
  t = InferT("_quantize_2bit", {}, {-1});
  EXPECT_EQ(t.in, (std::vector<int>{kF32}));
  EXPECT_EQ(t.aux, (std::vector<int>{kF32}));
  EXPECT_EQ(t.out, (std::vector<int>{static_cast<int>(DType::kUint32)}));
  t = InferT("_dequantize_2bit", {{"shape", "(3,)"}}, {-1});
  EXPECT_EQ(t.in, (std::vector<int>{static_cast<int>(DType::kUint32)}));
  EXPECT_EQ(t.out, (std::vector<int>{kF32}));
  // Backwards from the output.
  t = InferT("Activation", {{"act_type", "relu"}}, {-1}, {kF16});
  EXPECT_EQ(t.in, (std::vector<int>{kF16}));
  t = InferT("sum", {}, {});
  EXPECT_EQ(t.out, (std::vector<int>{-1}));
}

TEST(TypeInference, MismatchNamesOpSlotAndDtypes) {
  ExpectContains(ErrorOf([] {
                   InferT("elemwise_add", {}, {kF32, kF64});
                 }),
                 {"elemwise_add", "'rhs'", "float64", "float32"});
}

TEST(TypeInference, Cast) {
  // MXNet: Cast(dtype='int32').infer_type(data='float32') -> [float32], [int32].
  Types t = InferT("Cast", {{"dtype", "int32"}}, {kF32});
  EXPECT_EQ(t.in, (std::vector<int>{kF32}));
  EXPECT_EQ(t.out, (std::vector<int>{kI32}));
  EXPECT_EQ(InferT("Cast", {{"dtype", "float16"}}, {-1}).out, (std::vector<int>{kF16}));
}

TEST(TypeInference, OneHotTakesItsDtypeAttribute) {
  // MXNet: one_hot(depth=3).infer_type(data='int32') -> [int32], [float32].
  Types t = InferT("one_hot", {{"depth", "3"}}, {kI32});
  EXPECT_EQ(t.in, (std::vector<int>{kI32}));
  EXPECT_EQ(t.out, (std::vector<int>{kF32}));
  EXPECT_EQ(InferT("one_hot", {{"depth", "3"}, {"dtype", "int32"}}, {kF32}).out, (std::vector<int>{kI32}));
}

TEST(TypeInference, ArgmaxKeepsTheInputDtype) {
  // MXNet: argmax(x).infer_type(x='float16') -> float16 output (indices stored as floats).
  EXPECT_EQ(InferT("argmax", {}, {kF16}).out, (std::vector<int>{kF16}));
  EXPECT_EQ(InferT("argmax", {{"axis", "1"}}, {kF64}).out, (std::vector<int>{kF64}));
}

TEST(TypeInference, BatchNormKeepsParametersInFloat32ForHalfData) {
  // MXNet: BatchNorm.infer_type(x='float16') -> inputs [f16, f32, f32], output f16, aux [f32, f32].
  Types t = InferT("BatchNorm", {}, {kF16});
  EXPECT_EQ(t.in, (std::vector<int>{kF16, kF32, kF32}));
  EXPECT_EQ(t.out, (std::vector<int>{kF16, kF32, kF32}));
  EXPECT_EQ(t.aux, (std::vector<int>{kF32, kF32}));
  t = InferT("BatchNorm", {}, {kF64});
  EXPECT_EQ(t.in, (std::vector<int>{kF64, kF64, kF64}));
  ExpectContains(ErrorOf([] {
                   InferT("BatchNorm", {}, {kF16, kF16});
                 }),
                 {"BatchNorm", "'gamma'", "float16", "float32"});
}

TEST(TypeInference, DropoutMaskHasTheDataDtype) {
  // MXNet: Dropout.infer_type(x='float16') -> outputs float16 (mask included).
  EXPECT_EQ(InferT("Dropout", {}, {kF16}).out, (std::vector<int>{kF16, kF16}));
}

TEST(TypeInference, NdIndexingIndicesKeepTheirOwnDtype) {
  // MXNet: gather_nd(d, i).infer_type(d='float32', i='int32') -> [float32, int32], [float32];
  // infer_type(d='float32') leaves i undecided; scatter_nd likewise; _scatter_set_nd(l, r, i)
  // with r='float64', i='int64' -> [float64, float64, int64], [float64].
  constexpr int kI64 = static_cast<int>(DType::kInt64);
  constexpr int kU8 = static_cast<int>(DType::kUint8);
  Types t = InferT("gather_nd", {}, {kF32, kI32});
  EXPECT_EQ(t.in, (std::vector<int>{kF32, kI32}));
  EXPECT_EQ(t.out, (std::vector<int>{kF32}));
  EXPECT_EQ(InferT("gather_nd", {}, {kF32}).in, (std::vector<int>{kF32, -1}));
  EXPECT_EQ(InferT("gather_nd", {}, {kF16, kF32}).out, (std::vector<int>{kF16}));
  EXPECT_EQ(InferT("gather_nd", {}, {-1, kI64}, {kF64}).in, (std::vector<int>{kF64, kI64}));
  t = InferT("scatter_nd", {{"shape", "(3,)"}}, {kU8, kI64});
  EXPECT_EQ(t.in, (std::vector<int>{kU8, kI64}));
  EXPECT_EQ(t.out, (std::vector<int>{kU8}));
  t = InferT("_scatter_set_nd", {{"shape", "(3,)"}}, {-1, kF64, kI64});
  EXPECT_EQ(t.in, (std::vector<int>{kF64, kF64, kI64}));
  EXPECT_EQ(t.out, (std::vector<int>{kF64}));
  ExpectContains(ErrorOf([] {
                   InferT("_scatter_set_nd", {{"shape", "(3,)"}}, {kF32, kF64, kI32});
                 }),
                 {"_scatter_set_nd", "'rhs'", "float64", "float32"});
}

}  // namespace
}  // namespace weft

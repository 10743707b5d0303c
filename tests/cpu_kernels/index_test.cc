// The index family's kernels (docs/adding-an-op.md, "Op families"). Embedding forward and
// backward against hand-computed expectations: indices are truncated toward zero and clipped to
// [0, input_dim − 1] (MXNet's forward); the weight gradient sums the out_grad rows of repeated
// indices; the data gradient is zero. argmax and one_hot against references over random shapes
// and dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor_test_util.h"

namespace wtest {
namespace {

// weight (4, 3) with w[r][j] = 10·r + j, so every output value names the row it came from.
Buf EmbeddingWeight() {
  std::vector<float> w;
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 3; ++j) w.push_back(static_cast<float>(10 * r + j));
  return Buf::F({4, 3}, w);
}

const Attrs kEmbeddingAttrs = {{"input_dim", "4"}, {"output_dim", "3"}};

TEST(IndexKernels, EmbeddingForwardTruncatesAndClipsFloatIndices) {
  // -1.5 → -1 → 0; 0.7 → 0; 3.9 → 3; 5 → 3 (clipped); 2 → 2; -7 → 0.
  Buf data = Buf::F({2, 3}, {-1.5f, 0.7f, 3.9f, 5.0f, 2.0f, -7.0f});
  auto out = RunOp("Embedding", kEmbeddingAttrs, {data, EmbeddingWeight()}, {{2, 3, 3}});
  const std::vector<float> want = {0, 1, 2, 0, 1, 2, 30, 31, 32, 30, 31, 32, 20, 21, 22, 0, 1, 2};
  EXPECT_EQ(out[0].floats(), want);
}

TEST(IndexKernels, EmbeddingForwardClipsIntegerIndices) {
  Buf data = Buf::Of(WEFT_DTYPE_INT32, {4});
  const int32_t idx[] = {-3, 4, 1, 100};  // rows 0, 3, 1, 3
  for (int i = 0; i < 4; ++i) data.as<int32_t>()[i] = idx[i];
  auto out = RunOp("Embedding", kEmbeddingAttrs, {data, EmbeddingWeight()}, {{4, 3}});
  const std::vector<float> want = {0, 1, 2, 30, 31, 32, 10, 11, 12, 30, 31, 32};
  EXPECT_EQ(out[0].floats(), want);
}

// Indices {1, 3, 1, 1, 0, 9, -2} (9 clips to 3, -2 to 0) with out_grad row i = (i + 1, 10·(i + 1)):
// row 0 gets rows 4 and 6 = (5 + 7, 50 + 70), row 1 rows 0, 2, 3 = (1 + 3 + 4, 10 + 30 + 40),
// row 2 nothing, row 3 rows 1 and 5 = (2 + 6, 20 + 60).
TEST(IndexKernels, EmbeddingBackwardSumsRepeatedIndices) {
  const Attrs attrs = {{"input_dim", "4"}, {"output_dim", "2"}};
  Buf data = Buf::F({7}, {1, 3, 1, 1, 0, 9, -2});
  std::vector<float> g;
  for (int i = 0; i < 7; ++i) g.insert(g.end(), {static_cast<float>(i + 1), static_cast<float>(10 * (i + 1))});
  Buf out_grad = Buf::F({7, 2}, g), weight = Buf::F({4, 2}, std::vector<float>(8, 9.0f));
  const std::vector<float> want = {12, 120, 8, 80, 0, 0, 8, 80};
  for (int32_t req : {WEFT_REQ_WRITE, WEFT_REQ_ADD}) {
    SCOPED_TRACE(req == WEFT_REQ_ADD ? "req add" : "req write");
    // Outputs start at 0.5 so that write must overwrite and add must keep it.
    Buf dgrad = Buf::F({7}, std::vector<float>(7, 0.5f)), wgrad = Buf::F({4, 2}, std::vector<float>(8, 0.5f));
    Kernel k("_backward_Embedding", attrs, {out_grad, data, weight}, {dgrad, wgrad});
    ASSERT_TRUE(k.ok()) << k.error();
    Call call;
    call.inputs = {&out_grad, &data, &weight};
    call.outputs = {&dgrad, &wgrad};
    call.req = {req, req};
    ASSERT_EQ(k.Run(call, "_backward_Embedding"), "");
    const float base = req == WEFT_REQ_ADD ? 0.5f : 0.0f;
    EXPECT_EQ(dgrad.floats(), std::vector<float>(7, base)) << "indices have no gradient";
    std::vector<float> want_w = want;
    for (float& v : want_w) v += base;
    EXPECT_EQ(wgrad.floats(), want_w);
  }
}

}  // namespace
}  // namespace wtest

namespace ttest {
namespace {

// ---- argmax -----------------------------------------------------------------------------------

TEST(TensorIndex, ArgmaxAxesAndDTypes) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 20; ++trial) {
    const int32_t dt = std::vector<int32_t>{WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64, WEFT_DTYPE_INT32,
                                            WEFT_DTYPE_INT64}[static_cast<size_t>(trial % 4)];
    Shape s = RandomShape(rng, 1, 4, 200);
    const int nd = static_cast<int>(s.size());
    // Small integers: plenty of ties, which must resolve to the first index.
    std::vector<double> x(static_cast<size_t>(Prod(s)));
    std::uniform_int_distribution<int> u(0, 4);
    for (double& v : x) v = u(rng);
    const bool flat = trial % 5 == 0;
    const int axis = std::uniform_int_distribution<int>(0, nd - 1)(rng);
    const bool keepdims = trial % 2;
    Attrs attrs = {{"keepdims", keepdims ? "True" : "False"}};
    Shape out;
    std::vector<double> want;
    if (flat) {
      out = keepdims ? Shape(s.size(), 1) : Shape{1};
      want = {static_cast<double>(std::max_element(x.begin(), x.end()) - x.begin())};
    } else {
      attrs["axis"] = std::to_string(trial % 3 ? axis : axis - nd);
      int64_t outer = 1, inner = 1;
      for (int a = 0; a < axis; ++a) outer *= s[static_cast<size_t>(a)];
      for (int a = axis + 1; a < nd; ++a) inner *= s[static_cast<size_t>(a)];
      const int64_t n = s[static_cast<size_t>(axis)];
      for (int a = 0; a < nd; ++a)
        if (a != axis || keepdims) out.push_back(a == axis ? 1 : s[static_cast<size_t>(a)]);
      if (out.empty()) out = {1};
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t best = 0;
          for (int64_t k = 1; k < n; ++k)
            if (x[static_cast<size_t>((o * n + k) * inner + i)] > x[static_cast<size_t>((o * n + best) * inner + i)])
              best = k;
          want.push_back(static_cast<double>(best));
        }
    }
    SCOPED_TRACE("shape " + Str(s) + (flat ? " flat" : " axis " + attrs["axis"]));
    ExpectOp("argmax", attrs, {Make(dt, s, x)}, {Make(dt, out, want)}, 0.0);
  }
}

// ---- one_hot ----------------------------------------------------------------------------------

TEST(TensorIndex, OneHotIndicesAndOutputDTypes) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int32_t in_types[] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64, WEFT_DTYPE_INT32, WEFT_DTYPE_INT64};
  const int32_t out_types[] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64, WEFT_DTYPE_INT32, WEFT_DTYPE_UINT8};
  for (int trial = 0; trial < 16; ++trial) {
    const int32_t it = in_types[trial % 4], ot = out_types[(trial / 4) % 4];
    Shape s = RandomShape(rng, 0, 3, 30);
    const int64_t depth = std::uniform_int_distribution<int>(1, 6)(rng);
    std::vector<double> idx(static_cast<size_t>(Prod(s)));
    std::uniform_int_distribution<int> u(-2, static_cast<int>(depth) + 1);  // some out of range
    for (double& v : idx) v = u(rng);
    const double on = trial % 2 ? 1 : 5, off = trial % 2 ? 0 : 2;
    Shape out = s;
    out.push_back(depth);
    std::vector<double> want;
    for (double v : idx)
      for (int64_t j = 0; j < depth; ++j) want.push_back(static_cast<int64_t>(v) == j ? on : off);
    Attrs attrs = {{"depth", std::to_string(depth)},
                   {"on_value", std::to_string(on)},
                   {"off_value", std::to_string(off)},
                   {"dtype", "float32"}};
    SCOPED_TRACE("indices " + Str(s) + " depth " + std::to_string(depth));
    ExpectOp("one_hot", attrs, {Make(it, s, idx)}, {Make(ot, out, want)}, 0.0);
  }
  // Float indices truncate toward zero, as MXNet's cast to int.
  ExpectOp("one_hot", {{"depth", "3"}}, {Make(WEFT_DTYPE_FLOAT32, {2}, {1.7, 2.2})},
           {Make(WEFT_DTYPE_FLOAT32, {2, 3}, {0, 1, 0, 0, 0, 1})}, 0.0);
}

}  // namespace
}  // namespace ttest

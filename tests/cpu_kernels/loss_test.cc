// The loss family: the regression outputs and MakeLoss forward and their own head gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

TEST(NNKernels, LinearRegressionAndMakeLoss) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  Buf x = Buf::F({4, 3}, Random(rng, 12)), label = Buf::F({4, 3}, Random(rng, 12));
  Attrs a = {{"grad_scale", "2"}};
  auto y = RunOp("LinearRegressionOutput", a, {x, label}, {{4, 3}});
  EXPECT_EQ(y[0].bytes, x.bytes);
  std::vector<Buf> bin = {Buf::F({4, 3}), x, label, y[0]};
  auto g = RunOp("_backward_LinearRegressionOutput", a, bin, {{4, 3}, {4, 3}});
  std::vector<float> ref(12);
  for (size_t i = 0; i < 12; ++i) ref[i] = (x.as<float>()[i] - label.as<float>()[i]) * 2.0f / 3.0f;
  EXPECT_LE(Nmse(ref, g[0].floats()), 1e-7);
  CheckReqModes("_backward_LinearRegressionOutput", a, bin, {{4, 3}, {4, 3}});

  auto m = RunOp("MakeLoss", a, {x}, {{4, 3}});
  EXPECT_EQ(m[0].bytes, x.bytes);
  CheckReqModes("MakeLoss", a, {x}, {{4, 3}}, {}, true, 1, 0);
  for (const char* norm : {"null", "batch"}) {
    Attrs b = {{"grad_scale", "2"}, {"normalization", norm}};
    auto mg = RunOp("_backward_MakeLoss", b, {Buf::F({4, 3}, Random(rng, 12))}, {{4, 3}});
    for (float v : mg[0].floats()) EXPECT_FLOAT_EQ(v, std::string(norm) == "batch" ? 0.5f : 2.0f);
  }
}

// The logistic and MAE heads against MXNet 1.9.1's numbers (the real libmxnet, an executor with
// grad_scale=2 on this data, printed to float32 precision): the sigmoid forward, the gradients
// (sigmoid − label)·2/3 and sign(x − label)·2/3 with −1 where x equals the label (elements 0 and
// 5 for MAE).
TEST(NNKernels, LogisticAndMaeRegressionMatchMXNet) {
  Buf x = Buf::F({2, 3}, {0.5f, -1.0f, 0.25f, 0.0f, 2.0f, -0.5f});
  Buf label = Buf::F({2, 3}, {0.5f, 1.0f, 0.0f, 1.0f, 0.0f, -0.5f});
  Attrs a = {{"grad_scale", "2"}};
  auto expect_near = [](const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6f) << "element " << i;
  };
  auto y = RunOp("LogisticRegressionOutput", a, {x, label}, {{2, 3}});
  expect_near(y[0].floats(), {0.62245935f, 0.26894143f, 0.56217653f, 0.5f, 0.88079703f, 0.37754068f});
  std::vector<Buf> bin = {Buf::F({2, 3}), x, label, y[0]};
  auto g = RunOp("_backward_LogisticRegressionOutput", a, bin, {{2, 3}, {2, 3}});
  expect_near(g[0].floats(), {0.08163957f, -0.4873724f, 0.37478435f, -0.33333334f, 0.58719802f, 0.58502716f});
  for (float v : g[1].floats()) EXPECT_EQ(v, 0.0f);
  CheckReqModes("_backward_LogisticRegressionOutput", a, bin, {{2, 3}, {2, 3}});

  auto m = RunOp("MAERegressionOutput", a, {x, label}, {{2, 3}});
  EXPECT_EQ(m[0].bytes, x.bytes);
  std::vector<Buf> mbin = {Buf::F({2, 3}), x, label, m[0]};
  auto mg = RunOp("_backward_MAERegressionOutput", a, mbin, {{2, 3}, {2, 3}});
  const float t = 2.0f / 3.0f;
  expect_near(mg[0].floats(), {-t, -t, t, -t, t, -t});
  CheckReqModes("_backward_MAERegressionOutput", a, mbin, {{2, 3}, {2, 3}});
}

}  // namespace
}  // namespace wtest

// The loss family: LinearRegressionOutput and MakeLoss forward and their own head gradients.
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

}  // namespace
}  // namespace wtest

// The nn family's Dropout kernel: a seeded mask, scaled by 1/(1 − p), off in inference; req
// modes and the backward through the mask.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

TEST(NNKernels, DropoutMaskIsSeededScaledAndOffInInference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int64_t n = 20000;
  Buf x = Buf::F({n}, Random(rng, n, 0.5f, 1.5f));
  Attrs a = {{"p", "0.3"}};
  auto o1 = RunOp("Dropout", a, {x}, {{n}, {n}}, nullptr, true, seed);
  auto o2 = RunOp("Dropout", a, {x}, {{n}, {n}}, nullptr, true, seed);
  auto o3 = RunOp("Dropout", a, {x}, {{n}, {n}}, nullptr, true, seed + 1);
  EXPECT_EQ(o1[1].bytes, o2[1].bytes) << "same seed, same mask";
  EXPECT_NE(o1[1].bytes, o3[1].bytes) << "another seed, another mask";
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    float mk = o1[1].as<float>()[i];
    ASSERT_TRUE(mk == 0.0f || std::fabs(mk - 1.0f / 0.7f) < 1e-6f) << mk;
    kept += mk != 0.0f;
    EXPECT_FLOAT_EQ(o1[0].as<float>()[i], x.as<float>()[i] * mk);
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.02);
  auto inf = RunOp("Dropout", a, {x}, {{n}, {n}}, nullptr, false, seed);
  EXPECT_EQ(inf[0].bytes, x.bytes);
  CheckReqModes("Dropout", a, {x}, {{n}, {n}}, {}, true, seed);
  GradCase g("Dropout", "_backward_Dropout", a, {Buf::F({3, 7}, Random(rng, 21))}, {{3, 7}, {3, 7}});
  g.uses_inputs = false;
  g.uses_outputs = true;
  g.seed = seed;
  CheckGradient(g);
}

}  // namespace
}  // namespace wtest

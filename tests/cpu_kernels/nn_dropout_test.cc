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

// The executor keeps SqueezeNet's activations in nChw16c through its Dropout (data_format): the
// identity copies the bytes, a training pass draws the plain kernel's mask for the NCHW positions
// (the mask output stays NCHW); channels must come in whole blocks, and there is no gradient.
TEST(NNKernels, DropoutOnBlockedActivations) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int64_t n = 3, c = 32, hw = 5 * 7, count = n * c * hw;
  const std::vector<float> x = Random(rng, count, 0.5f, 1.5f);
  const std::vector<int64_t> shape = {n, c, 5, 7};
  const Attrs plain = {{"p", "0.4"}}, blocked = {{"p", "0.4"}, {"data_format", "nChw16c"}};
  auto want = RunOp("Dropout", plain, {Buf::F(shape, x)}, {shape, shape}, nullptr, true, seed);
  auto got =
      RunOp("Dropout", blocked, {Buf::F(shape, ToBlocked(x, n, c, hw, 16))}, {shape, shape}, nullptr, true, seed);
  EXPECT_EQ(got[0].floats(), ToBlocked(want[0].floats(), n, c, hw, 16));
  EXPECT_EQ(got[1].bytes, want[1].bytes) << "the mask stays NCHW";
  auto inf = RunOp("Dropout", blocked, {Buf::F(shape, x)}, {shape, shape}, nullptr, false, seed);
  EXPECT_EQ(inf[0].bytes, Buf::F(shape, x).bytes);
  const std::vector<int64_t> odd = {2, 12, 3, 3};
  Kernel k("Dropout", blocked, {Buf::F(odd, std::vector<float>(2 * 12 * 9, 1.0f))}, {Buf::F(odd, {}), Buf::F(odd, {})});
  EXPECT_NE(k.error().find("multiple of 16"), std::string::npos) << k.error();
  Kernel b("_backward_Dropout", blocked, {Buf::F(shape, x), Buf::F(shape, x)}, {Buf::F(shape, {})});
  EXPECT_NE(b.error().find("no gradient"), std::string::npos) << b.error();
}

}  // namespace
}  // namespace wtest

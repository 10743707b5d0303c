// The norm family's kernels (docs/adding-an-op.md, "Op families"): BatchNorm in training and
// inference against a double reference, its moving statistics, req modes and finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

struct BnCase {
  std::vector<int64_t> shape;
  int axis;
  bool fix_gamma;
};

TEST(NNKernels, BatchNormTrainingInferenceAndGradients) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const std::vector<BnCase> cases = {{{4, 3}, 1, false},     {{2, 3, 4, 5}, 1, false}, {{3, 2, 5}, 1, true},
                                     {{2, 4, 3}, -1, false}, {{5, 1, 2, 2}, 1, false}, {{1, 2, 1, 3}, 1, false}};
  for (const BnCase& bc : cases) {
    SCOPED_TRACE(::testing::PrintToString(bc.shape) + " axis " + std::to_string(bc.axis));
    int nd = static_cast<int>(bc.shape.size());
    int ax = bc.axis < 0 ? bc.axis + nd : bc.axis;
    int64_t c = bc.shape[static_cast<size_t>(ax)], inner = 1;
    for (int i = ax + 1; i < nd; ++i) inner *= bc.shape[static_cast<size_t>(i)];
    Attrs a = {{"eps", "0.001"},
               {"momentum", "0.8"},
               {"fix_gamma", bc.fix_gamma ? "True" : "False"},
               {"axis", std::to_string(bc.axis)}};
    Buf x = Buf::F(bc.shape, Random(rng, Prod(bc.shape), -2, 3));
    Buf gamma = Buf::F({c}, Random(rng, c, 0.5f, 1.5f)), beta = Buf::F({c}, Random(rng, c));
    std::vector<Buf> aux = {Buf::F({c}, Random(rng, c)), Buf::F({c}, Random(rng, c, 0.5f, 2.0f))};
    const std::vector<Buf> aux0 = aux;
    std::vector<std::vector<int64_t>> oshapes = {bc.shape, {c}, {c}};
    auto out = RunOp("BatchNorm", a, {x, gamma, beta}, oshapes, &aux, true);
    // Reference in double.
    std::vector<double> mean(static_cast<size_t>(c), 0), var(static_cast<size_t>(c), 0);
    const int64_t m = x.size() / c;
    for (int64_t i = 0; i < x.size(); ++i) mean[static_cast<size_t>((i / inner) % c)] += x.as<float>()[i] / double(m);
    for (int64_t i = 0; i < x.size(); ++i) {
      double d = x.as<float>()[i] - mean[static_cast<size_t>((i / inner) % c)];
      var[static_cast<size_t>((i / inner) % c)] += d * d / double(m);
    }
    std::vector<float> ref(static_cast<size_t>(x.size())), ref_inf(static_cast<size_t>(x.size()));
    for (int64_t i = 0; i < x.size(); ++i) {
      size_t ch = static_cast<size_t>((i / inner) % c);
      double gm = bc.fix_gamma ? 1.0 : gamma.as<float>()[ch];
      ref[static_cast<size_t>(i)] =
          static_cast<float>(gm * (x.as<float>()[i] - mean[ch]) / std::sqrt(var[ch] + 1e-3) + beta.as<float>()[ch]);
      ref_inf[static_cast<size_t>(i)] = static_cast<float>(gm * (x.as<float>()[i] - aux0[0].as<float>()[ch]) /
                                                               std::sqrt(aux0[1].as<float>()[ch] + 1e-3) +
                                                           beta.as<float>()[ch]);
    }
    EXPECT_LE(Nmse(ref, out[0].floats()), 1e-7);
    for (size_t ch = 0; ch < static_cast<size_t>(c); ++ch) {
      EXPECT_NEAR(out[1].as<float>()[ch], mean[ch], 1e-5);
      EXPECT_NEAR(out[2].as<float>()[ch], 1.0 / std::sqrt(var[ch] + 1e-3), 1e-4);
      EXPECT_NEAR(aux[0].as<float>()[ch], 0.8 * aux0[0].as<float>()[ch] + 0.2 * mean[ch], 1e-5);
      EXPECT_NEAR(aux[1].as<float>()[ch], 0.8 * aux0[1].as<float>()[ch] + 0.2 * var[ch], 1e-5);
    }
    // Inference (is_train = 0) and use_global_stats use the moving statistics and leave them.
    for (bool global : {false, true}) {
      Attrs b = a;
      if (global) b["use_global_stats"] = "True";
      std::vector<Buf> ax = aux0;
      auto inf = RunOp("BatchNorm", b, {x, gamma, beta}, oshapes, &ax, global);
      EXPECT_LE(Nmse(ref_inf, inf[0].floats()), 1e-7) << (global ? "use_global_stats" : "is_train=0");
      EXPECT_EQ(ax[0].bytes, aux0[0].bytes);
      EXPECT_EQ(ax[1].bytes, aux0[1].bytes);
    }
    CheckReqModes("BatchNorm", a, {x, gamma, beta}, oshapes, aux0, true, seed);
    for (bool global : {false, true}) {
      Attrs b = a;
      if (global) b["use_global_stats"] = "True";
      GradCase g("BatchNorm", "_backward_BatchNorm", b, {x, gamma, beta}, oshapes, aux0);
      g.uses_outputs = g.uses_aux = true;
      g.seed = seed;
      auto grads = CheckGradient(g);
      if (bc.fix_gamma) {
        for (float v : grads[1].floats()) EXPECT_EQ(v, 0.0f) << "fix_gamma gives gamma no gradient";
      }
    }
  }
}

// `_sg_batch_norm` (the executor's inference BatchNorm + relu) on blocked data (nChw8c, nChw16c)
// gives the bytes of the same op on NCHW data, relayouted: the blocked loop takes 8 channels a
// vector, the plain one a channel at a time, through the same x·scale + shift, relu and add.
TEST(NNKernels, SgBatchNormOnBlockedDataMatchesPlain) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int64_t n = 2, c = 32, h = 5, w = 7;
  const std::vector<int64_t> shape = {n, c, h, w};
  const std::vector<float> x = Random(rng, n * c * h * w, -2.0f, 3.0f);
  const Buf gamma = Buf::F({c}, Random(rng, c, 0.5f, 1.5f)), beta = Buf::F({c}, Random(rng, c));
  const std::vector<Buf> aux = {Buf::F({c}, Random(rng, c)), Buf::F({c}, Random(rng, c, 0.5f, 2.0f))};
  for (const char* act : {"relu", "None"}) {
    const Attrs plain = {{"eps", "0.001"}, {"fix_gamma", "False"}, {"act_type", act}};
    std::vector<Buf> aux_plain = aux;
    auto want = RunOp("_sg_batch_norm", plain, {Buf::F(shape, x), gamma, beta}, {shape}, &aux_plain, false);
    for (const int64_t block : {8, 16}) {
      SCOPED_TRACE(std::string(act) + " block " + std::to_string(block));
      Attrs blocked = plain;
      blocked["data_format"] = block == 8 ? "nChw8c" : "nChw16c";
      const Buf bx = Buf::F(shape, ToBlocked(x, n, c, h * w, block));
      std::vector<Buf> aux_blocked = aux;
      auto got = RunOp("_sg_batch_norm", blocked, {bx, gamma, beta}, {shape}, &aux_blocked, false);
      EXPECT_EQ(got[0].bytes, Buf::F(shape, ToBlocked(want[0].floats(), n, c, h * w, block)).bytes);
      CheckReqModes("_sg_batch_norm", blocked, {bx, gamma, beta}, {shape}, aux, false);
    }
  }
}

}  // namespace
}  // namespace wtest

// The optimizer family's update kernels against references of MXNet's formulas, with and without
// gradient clipping, and their req modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "nn_test_util.h"

namespace wtest {
namespace {

// ------------------------------------------------------------------ optimizers
float Clip(float g, float c) { return c >= 0 ? std::min(std::max(g, -c), c) : g; }

// One update test: weight and gradient, the attributes all update ops share (lr 0.1, wd 0.01,
// rescale_grad 0.5, clip_gradient = clip), the generator for states and the test's seed.
struct UpdateCase {
  Buf w, g;
  Attrs common;
  float clip;
  std::mt19937& rng;
  uint64_t seed;
};

// Runs body for n elements without clipping (clip_gradient -1), then with clip_gradient 0.3.
void ForEachClip(int64_t n, float w_range, const std::function<void(const UpdateCase&)>& body) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (const char* clip : {"-1", "0.3"}) {
    SCOPED_TRACE(std::string("clip ") + clip);
    Buf w = Buf::F({n}, Random(rng, n, -w_range, w_range)), g = Buf::F({n}, Random(rng, n, -2, 2));
    body(UpdateCase{w,
                    g,
                    {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}, {"clip_gradient", clip}},
                    std::stof(clip),
                    rng,
                    seed});
  }
}

// Two steps of a one-state update op with momentum 0.9 from a random state, each checked
// against ref(w, mom, g), which advances one element's reference weight and state; then req modes.
void CheckMomentumSteps(const std::string& op, const UpdateCase& c,
                        const std::function<void(float& w, float& mom, float g)>& ref) {
  SCOPED_TRACE(op);
  const int64_t n = c.w.size();
  Attrs a = c.common;
  a["momentum"] = "0.9";
  std::vector<Buf> mom = {Buf::F({n}, Random(c.rng, n, -0.1f, 0.1f))};
  const std::vector<Buf> mom0 = mom;
  std::vector<float> rm = mom[0].floats(), rw = c.w.floats();
  Buf cur = c.w;
  for (int step = 0; step < 2; ++step) {
    cur = RunOp(op, a, {cur, c.g}, {{n}}, &mom)[0];
    for (int64_t i = 0; i < n; ++i) ref(rw[i], rm[i], c.g.as<float>()[i]);
    EXPECT_LE(Nmse(rm, mom[0].floats()), 1e-10) << "step " << step;
    EXPECT_LE(Nmse(rw, cur.floats()), 1e-10) << "step " << step;
  }
  CheckReqModes(op, a, {c.w, c.g}, {{n}}, mom0, true, c.seed, 0);
}

TEST(NNKernels, OptimizerUpdatesFollowMxnet) {
  const int64_t n = 37;
  ForEachClip(n, 1.0f, [&](const UpdateCase& c) {
    const Buf &w = c.w, &g = c.g;
    const Attrs& common = c.common;
    const float cg = c.clip;
    std::mt19937& rng = c.rng;
    const uint64_t seed = c.seed;
    {  // sgd
      auto out = RunOp("sgd_update", common, {w, g}, {{n}});
      std::vector<float> ref(n);
      for (int64_t i = 0; i < n; ++i)
        ref[i] = (1 - 0.1f * 0.01f) * w.as<float>()[i] - 0.1f * Clip(0.5f * g.as<float>()[i], cg);
      EXPECT_LE(Nmse(ref, out[0].floats()), 1e-10);
      CheckReqModes("sgd_update", common, {w, g}, {{n}}, {}, true, seed, 0);
    }
    {  // sgd with momentum
      CheckMomentumSteps("sgd_mom_update", c, [&](float& wi, float& m, float gi) {
        m = 0.9f * m - 0.1f * 0.01f * wi - 0.1f * Clip(0.5f * gi, cg);
        wi += m;
      });
    }
    {  // adam: MXNet clips after adding weight decay
      Attrs a = common;
      a["beta1"] = "0.8";
      a["beta2"] = "0.95";
      a["epsilon"] = "1e-6";
      std::vector<Buf> st = {Buf::F({n}, Random(rng, n, -0.1f, 0.1f)), Buf::F({n}, Random(rng, n, 0.0f, 0.1f))};
      std::vector<float> rm = st[0].floats(), rv = st[1].floats(), rw = w.floats();
      auto out = RunOp("adam_update", a, {w, g}, {{n}}, &st);
      for (int64_t i = 0; i < n; ++i) {
        float gi = Clip(0.5f * g.as<float>()[i] + 0.01f * rw[i], cg);
        rm[i] = 0.8f * rm[i] + 0.2f * gi;
        rv[i] = 0.95f * rv[i] + 0.05f * gi * gi;
        rw[i] -= 0.1f * rm[i] / (std::sqrt(rv[i]) + 1e-6f);
      }
      EXPECT_LE(Nmse(rm, st[0].floats()), 1e-10);
      EXPECT_LE(Nmse(rv, st[1].floats()), 1e-10);
      EXPECT_LE(Nmse(rw, out[0].floats()), 1e-10);
      CheckReqModes("adam_update", a, {w, g}, {{n}}, st, true, seed, 0);
    }
  });
}

TEST(NNKernels, NagAndRmsPropUpdatesFollowMxnet) {
  const int64_t n = 41;
  ForEachClip(n, 1.5f, [&](const UpdateCase& c) {
    const Buf &w = c.w, &g = c.g;
    const float* gv = g.as<float>();
    const Attrs& common = c.common;
    const float cg = c.clip;
    std::mt19937& rng = c.rng;
    const uint64_t seed = c.seed;
    {  // nag: clip before the weight decay; the state is −lr·(textbook momentum)
      CheckMomentumSteps("nag_mom_update", c, [&](float& wi, float& m, float gi) {
        const float gd = Clip(0.5f * gi, cg) + 0.01f * wi;
        m = 0.9f * m - 0.1f * gd;
        wi += 0.9f * m - 0.1f * gd;
      });
    }
    {  // rmsprop: clip after the weight decay, then clip the weight
      Attrs a = common;
      a["gamma1"] = "0.8";
      a["epsilon"] = "1e-6";
      a["clip_weights"] = "1.2";
      std::vector<Buf> st = {Buf::F({n}, Random(rng, n, 0.0f, 0.1f))};
      std::vector<float> rn = st[0].floats(), rw(n);
      auto out = RunOp("rmsprop_update", a, {w, g}, {{n}}, &st);
      for (int64_t i = 0; i < n; ++i) {
        const float wi = w.as<float>()[i], gi = Clip(0.5f * gv[i] + 0.01f * wi, cg);
        rn[i] = 0.2f * gi * gi + 0.8f * rn[i];
        rw[i] = Clip(wi - 0.1f * gi / std::sqrt(rn[i] + 1e-6f), 1.2f);
      }
      EXPECT_LE(Nmse(rn, st[0].floats()), 1e-10);
      EXPECT_LE(Nmse(rw, out[0].floats()), 1e-10);
      CheckReqModes("rmsprop_update", a, {w, g}, {{n}}, st, true, seed, 0);
    }
    {  // rmspropalex (centered): n, g and delta states
      Attrs a = common;
      a["gamma1"] = "0.8";
      a["gamma2"] = "0.7";
      a["clip_weights"] = "1.2";
      std::vector<Buf> st = {Buf::F({n}, Random(rng, n, 0.2f, 0.4f)), Buf::F({n}, Random(rng, n, -0.1f, 0.1f)),
                             Buf::F({n}, Random(rng, n, -0.1f, 0.1f))};
      std::vector<float> rn = st[0].floats(), rg = st[1].floats(), rd = st[2].floats(), rw(n);
      auto out = RunOp("rmspropalex_update", a, {w, g}, {{n}}, &st);
      for (int64_t i = 0; i < n; ++i) {
        const float wi = w.as<float>()[i], gi = Clip(0.5f * gv[i] + 0.01f * wi, cg);
        rn[i] = 0.2f * gi * gi + 0.8f * rn[i];
        rg[i] = 0.2f * gi + 0.8f * rg[i];
        rd[i] = 0.7f * rd[i] - 0.1f * gi / std::sqrt(rn[i] - rg[i] * rg[i] + 1e-8f);
        rw[i] = Clip(wi + rd[i], 1.2f);
      }
      EXPECT_LE(Nmse(rn, st[0].floats()), 1e-10);
      EXPECT_LE(Nmse(rg, st[1].floats()), 1e-10);
      EXPECT_LE(Nmse(rd, st[2].floats()), 1e-10);
      EXPECT_LE(Nmse(rw, out[0].floats()), 1e-10);
      CheckReqModes("rmspropalex_update", a, {w, g}, {{n}}, st, true, seed, 0);
    }
  });
}

TEST(NNKernels, OptimizerRequiresLearningRate) {
  Kernel k("sgd_update", {}, {Buf::F({3}), Buf::F({3})}, {Buf::F({3})});
  EXPECT_FALSE(k.ok());
  EXPECT_NE(k.error().find("lr"), std::string::npos) << k.error();
}

}  // namespace
}  // namespace wtest

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

// ------------------------------------------------------------------ float64 updates
Buf ToF64(const Buf& f) {
  Buf d = Buf::Of(WEFT_DTYPE_FLOAT64, f.shape);
  for (int64_t i = 0; i < f.size(); ++i) d.as<double>()[i] = f.as<float>()[i];
  return d;
}

std::vector<float> FromF64(const Buf& d) { return {d.as<double>(), d.as<double>() + d.size()}; }

// `op` on float64 copies of float32 operands (weights, grads, states): the new weights and
// states as float64 buffers.
std::vector<Buf> RunF64(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs, size_t outputs,
                        std::vector<Buf>* aux) {
  std::vector<Buf> in, out, st;
  for (const Buf& b : inputs) in.push_back(ToF64(b));
  for (size_t o = 0; o < outputs; ++o) out.push_back(Buf::Of(WEFT_DTYPE_FLOAT64, inputs[2 * o].shape));
  for (const Buf& b : *aux) st.push_back(ToF64(b));
  Kernel k(op, attrs, in, out, st, WEFT_DTYPE_FLOAT64);
  EXPECT_TRUE(k.ok()) << op << ": " << k.error();
  if (!k.ok()) return out;
  Call c;
  for (Buf& b : in) c.inputs.push_back(&b);
  for (Buf& b : out) c.outputs.push_back(&b);
  for (Buf& b : st) c.aux.push_back(&b);
  EXPECT_EQ(k.Run(c, op), "") << op;
  *aux = std::move(st);
  return out;
}

// MXNet's cpu updates take float64 weights (its test_optimizer.py runs them): every float64 update
// op gives its float32 result to float32 rounding, with float64 states.
TEST(NNKernels, Float64UpdatesMatchFloat32) {
  const int64_t n = 29;
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const Buf w = Buf::F({n}, Random(rng, n)), g = Buf::F({n}, Random(rng, n, -2, 2)), w2 = Buf::F({n}, Random(rng, n)),
            g2 = Buf::F({n}, Random(rng, n, -2, 2));
  auto state = [&](float lo, float hi) { return Buf::F({n}, Random(rng, n, lo, hi)); };
  const Attrs common = {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}, {"clip_gradient", "0.7"}};
  struct Case {
    std::string op;
    Attrs extra;
    std::vector<Buf> inputs, aux;
  };
  const std::vector<Case> cases = {
      {"sgd_update", {}, {w, g}, {}},
      {"sgd_mom_update", {{"momentum", "0.9"}}, {w, g}, {state(-0.1f, 0.1f)}},
      {"nag_mom_update", {{"momentum", "0.9"}}, {w, g}, {state(-0.1f, 0.1f)}},
      {"adam_update", {{"beta1", "0.8"}}, {w, g}, {state(-0.1f, 0.1f), state(0, 0.1f)}},
      {"rmsprop_update", {}, {w, g}, {state(0.1f, 0.2f)}},
      {"rmspropalex_update", {}, {w, g}, {state(0.5f, 0.6f), state(-0.1f, 0.1f), state(-0.1f, 0.1f)}},
      {"signsgd_update", {}, {w, g}, {}},
      {"signum_update", {{"momentum", "0.9"}}, {w, g}, {state(-0.1f, 0.1f)}},
      {"ftrl_update", {}, {w, g}, {state(-0.1f, 0.1f), state(0, 0.1f)}},
      {"_sparse_adagrad_update", {}, {w, g}, {state(0, 0.1f)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Attrs a = common;
    a.insert(c.extra.begin(), c.extra.end());
    if (c.op == "_sparse_adagrad_update") a.erase("wd");
    std::vector<Buf> st32 = c.aux, st64 = c.aux;
    const std::vector<Buf> out32 = RunOp(c.op, a, c.inputs, {{n}}, &st32);
    const std::vector<Buf> out64 = RunF64(c.op, a, c.inputs, 1, &st64);
    EXPECT_LE(Nmse(out32[0].floats(), FromF64(out64[0])), 1e-11);
    for (size_t k = 0; k < st32.size(); ++k) EXPECT_LE(Nmse(st32[k].floats(), FromF64(st64[k])), 1e-11) << k;
  }
  // Two weights of a multi-tensor update, each with its own lr and wd.
  const Attrs multi = {{"lrs", "(0.1, 0.2)"}, {"wds", "(0.01, 0.0)"}, {"momentum", "0.9"}, {"num_weights", "2"}};
  std::vector<Buf> mom32 = {state(-0.1f, 0.1f), state(-0.1f, 0.1f)}, mom64 = mom32;
  const auto out32 = RunOp("multi_sgd_mom_update", multi, {w, g, w2, g2}, {{n}, {n}}, &mom32);
  const auto out64 = RunF64("multi_sgd_mom_update", multi, {w, g, w2, g2}, 2, &mom64);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_LE(Nmse(out32[k].floats(), FromF64(out64[k])), 1e-11) << k;
    EXPECT_LE(Nmse(mom32[k].floats(), FromF64(mom64[k])), 1e-11) << k;
  }
  // And the arithmetic is double's: sgd against a float64 reference (lr and wd are float attributes).
  std::vector<Buf> none;
  const Buf sgd = RunF64("sgd_update", common, {w, g}, 1, &none)[0];
  const double lr = 0.1f, wd = 0.01f;
  for (int64_t i = 0; i < n; ++i) {
    const double gi = std::clamp(0.5 * static_cast<double>(g.as<float>()[i]), -double{0.7f}, double{0.7f});
    EXPECT_DOUBLE_EQ(sgd.as<double>()[i], (1 - lr * wd) * w.as<float>()[i] - lr * gi) << i;
  }
}

TEST(NNKernels, OptimizerRequiresLearningRate) {
  Kernel k("sgd_update", {}, {Buf::F({3}), Buf::F({3})}, {Buf::F({3})});
  EXPECT_FALSE(k.ok());
  EXPECT_NE(k.error().find("lr"), std::string::npos) << k.error();
}

}  // namespace
}  // namespace wtest

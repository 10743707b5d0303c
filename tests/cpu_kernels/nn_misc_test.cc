// BatchNorm, Dropout, the optimizer updates and the KVStore's 2-bit compression against
// references, finite differences and req modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

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

// ------------------------------------------------------------------ 2-bit compression
// Reference encoding: element i in byte (i % 16) / 4 of word i / 16, highest bit pair first.
uint32_t RefCode(const std::vector<uint32_t>& words, int64_t i) {
  return (words[static_cast<size_t>(i / 16)] >> (8 * ((i % 16) / 4) + 6 - 2 * (i % 4))) & 3u;
}

TEST(NNKernels, TwoBitQuantizeKeepsResidualsAndDecodes) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const float t = 0.3f;
  const Attrs attrs = {{"threshold", "0.3"}};
  for (int64_t n : {1, 16, 37}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t nw = (n + 15) / 16;
    Buf data = Buf::F({n}, Random(rng, n, -0.5f, 0.5f));
    Buf residual = Buf::F({n}, Random(rng, n, -0.25f, 0.25f));
    Buf words = Buf::Of(WEFT_DTYPE_UINT32, {nw});
    std::fill(words.bytes.begin(), words.bytes.end(), 0xab);  // write must overwrite every bit
    const std::vector<float> r0 = residual.floats();
    Kernel q("_quantize_2bit", attrs, {data}, {words}, {residual});
    ASSERT_TRUE(q.ok()) << q.error();
    Call qc;
    qc.inputs = {&data};
    qc.outputs = {&words};
    qc.aux = {&residual};
    ASSERT_EQ(q.Run(qc, "_quantize_2bit"), "");
    const std::vector<uint32_t> packed(words.as<uint32_t>(), words.as<uint32_t>() + nw);
    std::vector<float> decoded_ref(n);
    for (int64_t i = 0; i < n; ++i) {
      const float r = r0[i] + data.as<float>()[i];
      const uint32_t want = r >= t ? 3u : r <= -t ? 2u : 0u;
      EXPECT_EQ(RefCode(packed, i), want) << i;
      decoded_ref[i] = want == 3u ? t : want == 2u ? -t : 0.0f;
      EXPECT_FLOAT_EQ(residual.as<float>()[i], r - decoded_ref[i]) << i;
    }
    for (int64_t i = n; i < nw * 16; ++i) EXPECT_EQ(RefCode(packed, i), 0u) << "padding " << i;

    // Decode with write, then add onto previous contents.
    Buf out = Buf::F({n}, Random(rng, n));
    const std::vector<float> before = out.floats();
    Kernel d("_dequantize_2bit", {{"threshold", "0.3"}, {"shape", weft_tuple({n})}}, {words}, {out}, {},
             WEFT_DTYPE_UINT32);
    ASSERT_TRUE(d.ok()) << d.error();
    for (int32_t req : {WEFT_REQ_WRITE, WEFT_REQ_ADD}) {
      Buf o = out;
      Call dc;
      dc.inputs = {&words};
      dc.outputs = {&o};
      dc.req = {req};
      ASSERT_EQ(d.Run(dc, "_dequantize_2bit"), "");
      for (int64_t i = 0; i < n; ++i)
        EXPECT_FLOAT_EQ(o.as<float>()[i], decoded_ref[i] + (req == WEFT_REQ_ADD ? before[i] : 0.0f)) << i;
    }
  }
}

TEST(NNKernels, TwoBitRefusesBadSetups) {
  Buf data = Buf::F({20}), residual = Buf::F({20}), words = Buf::Of(WEFT_DTYPE_UINT32, {2});
  Kernel bad_t("_quantize_2bit", {{"threshold", "0"}}, {data}, {words}, {residual});
  EXPECT_NE(bad_t.error().find("threshold"), std::string::npos) << bad_t.error();
  Buf short_words = Buf::Of(WEFT_DTYPE_UINT32, {1});
  Kernel bad_out("_quantize_2bit", {}, {data}, {short_words}, {residual});
  EXPECT_NE(bad_out.error().find("1 words for 20 values; they need 2"), std::string::npos) << bad_out.error();
  Kernel bad_type("_quantize_2bit", {}, {data}, {Buf::F({2})}, {residual});
  EXPECT_NE(bad_type.error().find("uint32"), std::string::npos) << bad_type.error();
  Kernel bad_in("_dequantize_2bit", {{"shape", "(40,)"}}, {words}, {Buf::F({40})}, {}, WEFT_DTYPE_UINT32);
  EXPECT_NE(bad_in.error().find("2 words for 40 values; they need 3"), std::string::npos) << bad_in.error();
}

TEST(NNKernels, OptimizerRequiresLearningRate) {
  Kernel k("sgd_update", {}, {Buf::F({3}), Buf::F({3})}, {Buf::F({3})});
  EXPECT_FALSE(k.ok());
  EXPECT_NE(k.error().find("lr"), std::string::npos) << k.error();
}

}  // namespace
}  // namespace wtest

// weft's Winograd F(4x4, 3x3) in Convolution's training passes (plugins/cpu/kernels/
// nn_conv_winograd_train.cc): the float weight transform against the transform in double, and the
// forward, data, weight and bias gradients, for write and add-to requests, against sums in double,
// each element within a bound scaled by the magnitude of its terms; bit-identical run to run and
// on one thread; taken by the Convolution algorithm exactly where it pays. cpu_kernels_winograd_avx2_test
// runs these again with weft and oneDNN limited to AVX2 (where oneDNN has no Winograd kernel).
#include <gtest/gtest.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "kernel_harness.h"
#include "nn_conv_winograd.h"
#include "winograd_test_util.h"

#ifndef WEFT_WINOGRAD_TRAIN_SUITE
#define WEFT_WINOGRAD_TRAIN_SUITE ConvWinogradTrain
#endif

namespace {

using weft::cpu::ConvAlgo;
using weft::cpu::ConvGeom;

// Winograd's G for F(4x4, 3x3) (points 0, ±1, ±2, ∞), exact in double.
constexpr double kG[6][3] = {{0.25, 0, 0},
                             {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                             {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                             {1.0 / 24, 1.0 / 12, 1.0 / 6},
                             {1.0 / 24, -1.0 / 12, 1.0 / 6},
                             {0, 0, 1}};

int64_t Up8(int64_t v) { return (v + 7) / 8 * 8; }

// U in float against G·g·Gᵀ in double for both ways of reading the weights; within 16 float
// epsilons of Σ|G||g||G| (each element carries a handful of roundings), the padding exactly 0.
TEST(WEFT_WINOGRAD_TRAIN_SUITE, WeightTransformWithinRoundingOfDouble) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const int64_t F = 13, C = 11;  // neither a multiple of 8
  const std::vector<float> w = wtest::Random(rng, F * C * 9);
  for (const bool rotate : {false, true}) {
    SCOPED_TRACE(rotate ? "rotated, channels swapped" : "forward");
    const int64_t f = rotate ? C : F, c = rotate ? F : C, cp = Up8(c), kp = Up8(f);
    const weft::cpu::WinoWeights src =
        rotate ? weft::cpu::WinoWeights{w.data(), 9, C * 9, true} : weft::cpu::WinoWeights{w.data(), C * 9, 9, false};
    std::vector<float> u(static_cast<size_t>(36 * cp * kp), 7.0f);
    weft::cpu::WinogradF4TransformWeights(src, f, c, u.data());
    size_t bad = 0;
    for (int64_t k = 0; k < kp; ++k)
      for (int64_t ch = 0; ch < cp; ++ch) {
        // The 3x3 kernel of filter k, channel ch as `src` reads it.
        auto g = [&](int64_t a, int64_t b) {
          const int64_t e = rotate ? 8 - (a * 3 + b) : a * 3 + b;
          return static_cast<double>(w[static_cast<size_t>(k * src.k_stride + ch * src.c_stride + e)]);
        };
        for (int64_t i = 0; i < 6; ++i)
          for (int64_t j = 0; j < 6; ++j) {
            double ref = 0, mag = 0;
            if (k < f && ch < c)
              for (int64_t a = 0; a < 3; ++a)
                for (int64_t b = 0; b < 3; ++b) {
                  ref += kG[i][a] * g(a, b) * kG[j][b];
                  mag += std::abs(kG[i][a] * g(a, b) * kG[j][b]);
                }
            const float got = u[static_cast<size_t>((i * 6 + j) * cp * kp + ch * kp + k)];
            if (!(std::abs(got - ref) <= 16 * FLT_EPSILON * mag) && ++bad <= 3)
              ADD_FAILURE() << "filter " << k << " channel " << ch << " position " << i * 6 + j << ": " << got
                            << ", want " << ref;
          }
      }
    EXPECT_EQ(bad, 0u);
  }
}

ConvGeom Geom(int64_t n, int64_t c, int64_t hw, int64_t f, bool bias) {
  ConvGeom g;
  g.spatial = 2;
  g.n = n, g.c = c, g.h = hw, g.w = hw, g.f = f;
  g.kh = g.kw = 3;
  g.ph = g.pw = 1;
  g.oh = g.ow = hw;
  g.bias = bias;
  return g;
}

// One pass's outputs in double: values and, per element, the sum of its terms' magnitudes.
struct Ref {
  std::vector<double> y, gx, gw, gb, my, mgx, mgw, mgb;
};

Ref TrainReference(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w,
                   const std::vector<float>& b, const std::vector<float>& gy) {
  Ref r;
  r.y.assign(gy.size(), 0.0), r.my = r.y;
  r.gx.assign(x.size(), 0.0), r.mgx = r.gx;
  r.gw.assign(w.size(), 0.0), r.mgw = r.gw;
  r.gb.assign(static_cast<size_t>(g.f), 0.0), r.mgb = r.gb;
  auto add = [](double& s, double& m, double t) { s += t, m += std::abs(t); };
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t o = 0; o < g.f; ++o)
      for (int64_t p = 0; p < g.oh * g.ow; ++p) {
        const size_t yi = static_cast<size_t>((i * g.f + o) * g.oh * g.ow + p);
        const double d = gy[yi];
        if (g.bias) add(r.y[yi], r.my[yi], b[static_cast<size_t>(o)]);
        add(r.gb[static_cast<size_t>(o)], r.mgb[static_cast<size_t>(o)], d);
        for (int64_t ch = 0; ch < g.c; ++ch)
          for (int64_t e = 0; e < 9; ++e) {
            const int64_t iy = p / g.ow - 1 + e / 3, ix = p % g.ow - 1 + e % 3;
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
            const size_t xi = static_cast<size_t>(((i * g.c + ch) * g.h + iy) * g.w + ix),
                         wi = static_cast<size_t>((o * g.c + ch) * 9 + e);
            add(r.y[yi], r.my[yi], static_cast<double>(x[xi]) * w[wi]);
            add(r.gx[xi], r.mgx[xi], d * w[wi]);
            add(r.gw[wi], r.mgw[wi], d * x[xi]);
          }
      }
  return r;
}

// got[i] within `tol` of base[i] + ref[i], relative to mag[i] + |base[i]| (base: what an add-to
// request started from; empty for write).
void ExpectNear(const char* what, const std::vector<float>& got, const std::vector<double>& ref,
                const std::vector<double>& mag, const std::vector<float>& base, double tol) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double b = base.empty() ? 0.0 : base[i];
    if (!(std::abs(got[i] - (b + ref[i])) <= tol * (mag[i] + std::abs(b)) + 1e-30) && ++bad <= 3)
      ADD_FAILURE() << what << " " << i << ": " << got[i] << ", want " << b + ref[i];
  }
  EXPECT_EQ(bad, 0u) << what;
}

struct Outs {
  std::vector<float> y, gx, gw, gb;
  bool operator==(const Outs&) const = default;
};

// Forward and backward with req `req` on outputs that start as `start` (add-to) or garbage (write).
Outs RunPasses(const ConvAlgo& a, const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& b, const std::vector<float>& gy, int32_t req, const Outs& start) {
  Outs o = start;
  std::vector<char> buf(std::max(a.ForwardWorkspace(), a.BackwardWorkspace()) + 16);
  void* ws = buf.data() + 16 - reinterpret_cast<uintptr_t>(buf.data()) % 16 + 4;  // not 64-byte aligned
  a.Forward(x.data(), w.data(), g.bias ? b.data() : nullptr, o.y.data(), req, ws);
  a.Backward(gy.data(), x.data(), w.data(), o.gx.data(), req, o.gw.data(), req, g.bias ? o.gb.data() : nullptr,
             g.bias ? req : WEFT_REQ_NULL, ws);
  return o;
}

TEST(WEFT_WINOGRAD_TRAIN_SUITE, PassesMatchReferenceForWriteAndAdd) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  // Odd channel counts with a bias and partial tiles (13x13); ResNet-like; several chunks of tiles
  // (400 tiles) with more filters than channels.
  for (const ConvGeom& g : {Geom(2, 12, 13, 20, true), Geom(4, 16, 12, 16, false), Geom(4, 8, 40, 24, false)}) {
    SCOPED_TRACE("n " + std::to_string(g.n) + " c " + std::to_string(g.c) + " hw " + std::to_string(g.h) + " f " +
                 std::to_string(g.f));
    ASSERT_TRUE(weft::cpu::WinogradTrainFits(g));
    const std::vector<float> x = wtest::Random(rng, g.n * g.c * g.h * g.w), w = wtest::Random(rng, g.f * g.c * 9),
                             b = wtest::Random(rng, g.f), gy = wtest::Random(rng, g.n * g.f * g.oh * g.ow);
    const Ref ref = TrainReference(g, x, w, b, gy);
    const std::unique_ptr<ConvAlgo> a = weft::cpu::MakeWinogradTrainConv(g);
    const Outs garbage{std::vector<float>(gy.size(), NAN), std::vector<float>(x.size(), NAN),
                       std::vector<float>(w.size(), NAN), std::vector<float>(g.bias ? g.f : 0, NAN)};
    const uint64_t before = weft::cpu::WinogradF4Runs();
    const Outs got = RunPasses(*a, g, x, w, b, gy, WEFT_REQ_WRITE, garbage);
    EXPECT_EQ(weft::cpu::WinogradF4Runs() - before, 3u);  // forward, data and weight gradients
    // F(4x4, 3x3)'s transforms scale rounding errors by up to ~100 float epsilons.
    ExpectNear("y", got.y, ref.y, ref.my, {}, 1e-5);
    ExpectNear("gx", got.gx, ref.gx, ref.mgx, {}, 1e-5);
    ExpectNear("gw", got.gw, ref.gw, ref.mgw, {}, 1e-5);
    if (g.bias) ExpectNear("gb", got.gb, ref.gb, ref.mgb, {}, 1e-6);
    EXPECT_TRUE(RunPasses(*a, g, x, w, b, gy, WEFT_REQ_WRITE, garbage) == got) << "not bit-identical run to run";
    Outs one;
    wtest::OnOneThread([&] { one = RunPasses(*a, g, x, w, b, gy, WEFT_REQ_WRITE, garbage); });
    EXPECT_TRUE(one == got) << "one thread gave other bits than " << weft::cpu::CurrentThreadPlan().omp;

    const Outs start{wtest::Random(rng, g.n * g.f * g.oh * g.ow), wtest::Random(rng, g.n * g.c * g.h * g.w),
                     wtest::Random(rng, g.f * g.c * 9), wtest::Random(rng, g.f)};
    const Outs added = RunPasses(*a, g, x, w, b, gy, WEFT_REQ_ADD, start);
    ExpectNear("y += ", added.y, ref.y, ref.my, start.y, 1e-5);
    ExpectNear("gx += ", added.gx, ref.gx, ref.mgx, start.gx, 1e-5);
    ExpectNear("gw += ", added.gw, ref.gw, ref.mgw, start.gw, 1e-5);
    if (g.bias) ExpectNear("gb += ", added.gb, ref.gb, ref.mgb, start.gb, 1e-6);
  }
}

// The Convolution algorithm (MakeDnnlConv with Winograd allowed) takes weft's training Winograd
// where oneDNN has none (below AVX-512) and the layer pays; never with Winograd off.
TEST(WEFT_WINOGRAD_TRAIN_SUITE, TakenWhereItPays) {
  // ResNet-18's stride-1 3x3 layers at batch 32 pay; strided and unpadded layers do not fit, and
  // with few tiles the direct kernels read fewer weights.
  EXPECT_TRUE(weft::cpu::WinogradTrainFits(Geom(32, 256, 14, 256, false)));
  EXPECT_TRUE(weft::cpu::WinogradTrainFits(Geom(32, 64, 56, 64, false)));
  EXPECT_TRUE(weft::cpu::WinogradTrainFits(Geom(32, 512, 7, 512, false)));
  ConvGeom strided = Geom(32, 64, 56, 64, false);
  strided.sh = strided.sw = 2, strided.oh = strided.ow = 28;
  EXPECT_FALSE(weft::cpu::WinogradTrainFits(strided));
  ConvGeom unpadded = Geom(32, 64, 56, 64, false);
  unpadded.ph = unpadded.pw = 0, unpadded.oh = unpadded.ow = 54;
  EXPECT_FALSE(weft::cpu::WinogradTrainFits(unpadded));
  EXPECT_FALSE(weft::cpu::WinogradTrainFits(Geom(1, 16, 8, 16, false)));  // 4 tiles

  const ConvGeom g = Geom(2, 16, 16, 16, false);
  const bool onednn = static_cast<int>(dnnl::get_effective_cpu_isa()) >= static_cast<int>(dnnl::cpu_isa::avx512_core);
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const std::vector<float> x = wtest::Random(rng, g.n * g.c * g.h * g.w), w = wtest::Random(rng, g.f * g.c * 9),
                           gy = wtest::Random(rng, g.n * g.f * g.oh * g.ow);
  for (const bool allowed : {true, false}) {
    const std::unique_ptr<ConvAlgo> a = weft::cpu::MakeDnnlConv(g, nullptr, allowed);
    ASSERT_TRUE(a);
    const Outs o{std::vector<float>(gy.size()), std::vector<float>(x.size()), std::vector<float>(w.size()), {}};
    const uint64_t before = weft::cpu::WinogradF4Runs();
    RunPasses(*a, g, x, w, {}, gy, WEFT_REQ_WRITE, o);
    EXPECT_EQ(weft::cpu::WinogradF4Runs() - before, allowed && !onednn ? 3u : 0u) << "allowed " << allowed;
  }
}

}  // namespace

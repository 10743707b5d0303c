// weft's 1-D Winograd F(m, r) (plugins/cpu/kernels/nn_conv_winograd_1d.h) for 1xr and rx1 layers:
// against a direct convolution in double for both orientations, kernel sizes 3, 5, 7, tiles of 2
// and 4 outputs, plain and blocked layouts, partial tiles, epilogues; bit-identical run to run and
// on one thread; taken by `_sg_conv` exactly where expected. cpu_kernels_winograd_avx2_test runs
// these cases again with oneDNN and weft limited to AVX2 (suite NNWinograd1DAvx2).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"
#include "nn_conv_winograd_1d.h"
#include "winograd_test_util.h"

#ifndef WEFT_WINOGRAD_1D_SUITE
#define WEFT_WINOGRAD_1D_SUITE NNWinograd1D
#endif

namespace {

using weft::cpu::ConvGeom;

struct Layer {
  int64_t n, c, h, w, f, kh, kw, ph, pw;
  std::string act = "None", post = "None";
  bool sum = false;
  int64_t in_block = 1, out_block = 1;
  ConvGeom Geom() const {
    ConvGeom g;
    g.n = n, g.c = c, g.h = h, g.w = w, g.f = f, g.kh = kh, g.kw = kw, g.ph = ph, g.pw = pw;
    g.oh = h + 2 * ph - kh + 1, g.ow = w + 2 * pw - kw + 1;
    return g;
  }
  std::string Name() const {
    return "n" + std::to_string(n) + " c" + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w) +
           " f" + std::to_string(f) + " k" + std::to_string(kh) + "x" + std::to_string(kw) + " act " + act +
           (sum ? " sum" : "") + " post " + post + " blocks " + std::to_string(in_block) + "/" +
           std::to_string(out_block);
  }
};

// Index of (image i, channel ch, pixel p) in an (N, C, P) tensor, plain (b 1) or nChw<b>c.
size_t At(int64_t i, int64_t ch, int64_t p, int64_t c, int64_t plane, int64_t b) {
  return static_cast<size_t>(((i * (c / b) + ch / b) * plane + p) * b + ch % b);
}

std::vector<float> ToBlocked(const std::vector<float>& v, int64_t n, int64_t c, int64_t plane, int64_t b) {
  std::vector<float> o(v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) o[At(i, ch, p, c, plane, b)] = v[At(i, ch, p, c, plane, 1)];
  return o;
}

std::vector<float> ToPlain(const std::vector<float>& v, int64_t n, int64_t c, int64_t plane, int64_t b) {
  std::vector<float> o(v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) o[At(i, ch, p, c, plane, 1)] = v[At(i, ch, p, c, plane, b)];
  return o;
}

weft::cpu::WinoAct WinoActOf(const std::string& a) {
  if (a == "relu") return {weft::cpu::WinoAct::kRelu};
  if (a == "clip") return {weft::cpu::WinoAct::kClip, -0.5f, 0.75f};
  return {};
}

struct Data {
  std::vector<float> x, w, b, sum;  // plain
};

Data Random(const Layer& l, std::mt19937& rng) {
  const ConvGeom g = l.Geom();
  Data d{wtest::Random(rng, l.n * l.c * l.h * l.w),
         wtest::Random(rng, l.f * l.c * l.kh * l.kw),
         wtest::Random(rng, l.f),
         {}};
  if (l.sum) d.sum = wtest::Random(rng, l.n * l.f * g.oh * g.ow);
  return d;
}

// post(act(conv + b) + sum) in double, and per output the sum of its terms' magnitudes.
void Reference(const Layer& l, const Data& d, std::vector<double>& y, std::vector<double>& mag) {
  const ConvGeom g = l.Geom();
  y.assign(static_cast<size_t>(l.n * l.f * g.oh * g.ow), 0.0);
  mag.assign(y.size(), 0.0);
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t f = 0; f < l.f; ++f)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          double s = d.b[static_cast<size_t>(f)], m = std::abs(s);
          for (int64_t c = 0; c < l.c; ++c)
            for (int64_t u = 0; u < l.kh; ++u)
              for (int64_t v = 0; v < l.kw; ++v) {
                const int64_t iy = oy - l.ph + u, ix = ox - l.pw + v;
                if (iy < 0 || iy >= l.h || ix < 0 || ix >= l.w) continue;
                const double t = static_cast<double>(d.x[static_cast<size_t>(((i * l.c + c) * l.h + iy) * l.w + ix)]) *
                                 d.w[static_cast<size_t>(((f * l.c + c) * l.kh + u) * l.kw + v)];
                s += t;
                m += std::abs(t);
              }
          const size_t at = static_cast<size_t>(((i * l.f + f) * g.oh + oy) * g.ow + ox);
          s = wtest::ActRef(l.act, s);
          if (l.sum) s += d.sum[at];
          y[at] = wtest::ActRef(l.post, s);
          mag[at] = m + (l.sum ? std::abs(d.sum[at]) : 0.0);
        }
}

// The largest |got - ref| / mag; fails where it exceeds `tol`.
double ExpectNear(const std::vector<float>& got, const std::vector<double>& ref, const std::vector<double>& mag,
                  double tol) {
  EXPECT_EQ(got.size(), ref.size());
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    const double err = std::abs(got[i] - ref[i]) / (mag[i] + 1e-30);
    worst = std::max(worst, err);
    if (!(err <= tol) && ++bad <= 3) ADD_FAILURE() << "output " << i << ": " << got[i] << ", want " << ref[i];
  }
  EXPECT_EQ(bad, 0u) << "worst relative error " << worst;
  return worst;
}

// The class on l's layouts: the output as plain floats.
std::vector<float> RunConv(const weft::cpu::Winograd1DConv& conv, const Layer& l, const Data& d) {
  const ConvGeom g = l.Geom();
  const int64_t out_plane = g.oh * g.ow;
  const std::vector<float> x = ToBlocked(d.x, l.n, l.c, l.h * l.w, l.in_block);
  std::vector<float> y = l.sum ? ToBlocked(d.sum, l.n, l.f, out_plane, l.out_block)
                               : std::vector<float>(static_cast<size_t>(l.n * l.f * out_plane), NAN);
  conv.Run(x.data(), l.sum ? y.data() : nullptr, y.data());  // the sum in place, as the executor gives it
  return ToPlain(y, l.n, l.f, out_plane, l.out_block);
}

// Worst relative error of F(m, r) on l; also checks the bits run to run and on one thread.
double Check(const Layer& l, int64_t m, std::mt19937& rng, double tol) {
  SCOPED_TRACE(l.Name() + " m " + std::to_string(m));
  const ConvGeom g = l.Geom();
  EXPECT_TRUE(weft::cpu::Winograd1DFits(g));
  const weft::cpu::WinoEpilogue e{WinoActOf(l.act), WinoActOf(l.post), l.sum};
  weft::cpu::Winograd1DConv conv(g, l.in_block, l.out_block, e, m);
  const Data d = Random(l, rng);
  conv.SetWeights(d.w.data(), d.b.data());
  std::vector<double> ref, mag;
  Reference(l, d, ref, mag);
  const uint64_t before = weft::cpu::Winograd1DRuns();
  const std::vector<float> got = RunConv(conv, l, d);
  EXPECT_EQ(weft::cpu::Winograd1DRuns() - before, 1u);
  const double worst = ExpectNear(got, ref, mag, tol);
  EXPECT_EQ(RunConv(conv, l, d), got) << "not bit-identical run to run";
  std::vector<float> one;
  wtest::OnOneThread([&] { one = RunConv(conv, l, d); });
  EXPECT_EQ(one, got) << "one thread gave other bits than " << omp_get_max_threads();
  return worst;
}

// Bounds on the error relative to the sum of the terms' magnitudes (a direct float sum stays
// within a few 1e-7): the transforms' constants (up to 3^5 and 1/f_j) scale the rounding errors.
// Seen: ~5e-6 for n 12, ~2e-6 for n 10, ~5e-7 for n 8, ~4e-7 below (F(4x4, 3x3)'s bound is 1e-5).
double Tolerance(int64_t m, int64_t r) {
  const int64_t n = m + r - 1;
  return n >= 12 ? 2e-5 : n >= 10 ? 1e-5 : n >= 8 ? 3e-6 : 1e-6;
}

TEST(WEFT_WINOGRAD_1D_SUITE, MatchesDirectBothAxesEachTileAndEpilogue) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  // Inception v3's 17x17 (a partial tile for m 2 and 4), odd channels (padded to 8 inside), batch 2.
  const std::vector<Layer> layers = {{2, 13, 17, 17, 11, 1, 7, 0, 3, "relu"},
                                     {2, 13, 17, 17, 11, 7, 1, 3, 0, "relu"},
                                     {1, 9, 10, 23, 16, 1, 7, 0, 0, "None", "None", true},
                                     {3, 16, 19, 6, 8, 7, 1, 2, 0, "clip", "relu", true},
                                     {2, 12, 9, 13, 10, 1, 3, 0, 1, "relu"},
                                     {2, 12, 13, 9, 10, 5, 1, 2, 0, "None", "clip", true}};
  for (int64_t m : {2, 4, 6})
    for (const Layer& l : layers) {
      const int64_t r = std::max(l.kh, l.kw);
      const double worst = Check(l, m, rng, Tolerance(m, r));
      std::printf("F(%lld, %lld) %s: worst error %.3g of the terms' magnitude\n", static_cast<long long>(m),
                  static_cast<long long>(r), l.Name().c_str(), worst);
    }
}

TEST(WEFT_WINOGRAD_1D_SUITE, BlockedAndMixedLayouts) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  for (auto [in, out] : {std::pair{8, 8}, std::pair{1, 8}, std::pair{8, 1}, std::pair{16, 16}, std::pair{16, 1}}) {
    const Layer row{1, 32, 17, 17, 48, 1, 7, 0, 3, "relu", "None", true, in, out};
    Layer column = row;
    std::swap(column.kh, column.kw), std::swap(column.ph, column.pw);
    // 51 tiles: two chunks, one per thread of a team of 2.
    EXPECT_EQ(weft::cpu::Winograd1DConv(row.Geom(), in, out, {}).ChunkTiles(), 26);
    for (const Layer& l : {row, column}) Check(l, weft::cpu::Winograd1DTile(7, 17), rng, Tolerance(6, 7));
  }
}

// 16 tiles (a 3x1 at 8x8): one chunk whose filters run as two halves, one per thread of a team of 2.
TEST(WEFT_WINOGRAD_1D_SUITE, OneChunkAsTwoHalvesOfTheFilters) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const Layer l{1, 40, 8, 8, 48, 3, 1, 1, 0, "relu", "None", true, 8, 8};
  EXPECT_EQ(weft::cpu::Winograd1DConv(l.Geom(), 8, 8, {}).FilterHalves(), 2);
  Check(l, weft::cpu::Winograd1DTile(3, 8), rng, Tolerance(4, 3));
}

// 17x17 at batch 4 with 128 channels: several chunks of tiles, split over the team; then a single
// chunk of 3 tiles with 4096 channels, which the team does not split, so that the one-thread
// guard keeps sgemm from splitting the product (oneDNN 2.6 was not seen to split these even
// without the guard: the check is there for a version that does).
TEST(WEFT_WINOGRAD_1D_SUITE, SeveralChunksOfTilesOrOne) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const Layer l{4, 128, 17, 17, 96, 7, 1, 3, 0, "relu", "None", false, 8, 8};
  weft::cpu::Winograd1DConv conv(l.Geom(), 8, 8, {}, 4);
  EXPECT_LT(conv.ChunkTiles() * 2, 4 * 17 * 5);
  Check(l, 4, rng, Tolerance(4, 7));
  const Layer one{1, 4096, 1, 17, 16, 1, 7, 0, 3, "None", "None", false, 16, 16};
  EXPECT_EQ(weft::cpu::Winograd1DConv(one.Geom(), 16, 16, {}, 6).ChunkTiles(), 3);
  Check(one, 6, rng, Tolerance(6, 7));
}

// The transforms are exact on polynomial data: a constant filter over a linear input gives the
// same number from every position; here the matrices themselves: Aᵀ·diag(G·g)·Bᵀ is the
// correlation matrix of g for every unit filter.
// y a channel slice of a wider tensor (a Concat's output written in place): each image's outputs
// land out_image floats apart, the same bits as into a tensor of its own, and the floats between
// them (the other inputs' channels) stay as they were.
TEST(WEFT_WINOGRAD_1D_SUITE, WritesIntoAChannelSliceOfAWiderTensor) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  for (int64_t block : {1, 8, 16}) {
    const Layer l{3, 16, 17, 17, 32, 7, 1, 3, 0, "relu", "None", false, block, block};
    SCOPED_TRACE(l.Name());
    const ConvGeom g = l.Geom();
    const int64_t image = l.f * g.oh * g.ow, stride = image + 48 * g.oh * g.ow;
    const Data d = Random(l, rng);
    const std::vector<float> x = ToBlocked(d.x, l.n, l.c, l.h * l.w, block);
    weft::cpu::Winograd1DConv own(g, block, block, {WinoActOf("relu"), {}, false});
    weft::cpu::Winograd1DConv slice(g, block, block, {WinoActOf("relu"), {}, false}, 0, stride);
    own.SetWeights(d.w.data(), d.b.data());
    slice.SetWeights(d.w.data(), d.b.data());
    std::vector<float> alone(static_cast<size_t>(l.n * image)), wide(static_cast<size_t>(l.n * stride), -7.0f);
    own.Run(x.data(), nullptr, alone.data());
    slice.Run(x.data(), nullptr, wide.data() + 16 * g.oh * g.ow);  // after 16 channels of another input
    for (int64_t i = 0; i < l.n; ++i)
      for (int64_t e = 0; e < stride; ++e) {
        const int64_t at = e - 16 * g.oh * g.ow;
        const float want = at >= 0 && at < image ? alone[static_cast<size_t>(i * image + at)] : -7.0f;
        ASSERT_EQ(wide[static_cast<size_t>(i * stride + e)], want) << "image " << i << " float " << e;
      }
  }
}

TEST(WEFT_WINOGRAD_1D_SUITE, TransformsComposeToCorrelation) {
  ConvGeom g;
  g.n = 1, g.c = 8, g.f = 8, g.h = 17, g.w = 17, g.kh = 1, g.kw = 7, g.pw = 3, g.oh = 17, g.ow = 17;
  for (int64_t m : {2, 4, 6}) {
    const weft::cpu::Winograd1DConv conv(g, 1, 1, {}, m);
    const int64_t n = m + 6;
    // Aᵀ and Bᵀ run in float: the points (dyadic but for ±3) keep their entries exact.
    for (const std::vector<double>* t : {&conv.AT(), &conv.BT()})
      for (double e : *t) EXPECT_EQ(static_cast<double>(static_cast<float>(e)), e) << "m " << m;
    for (int64_t k = 0; k < 7; ++k)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t q = 0; q < n; ++q) {
          double s = 0;
          for (int64_t p = 0; p < n; ++p)
            s += conv.AT()[static_cast<size_t>(i * n + p)] * conv.G()[static_cast<size_t>(p * 7 + k)] *
                 conv.BT()[static_cast<size_t>(p * n + q)];
          EXPECT_NEAR(s, q == i + k ? 1.0 : 0.0, 1e-12) << "m " << m << " k " << k << " i " << i << " q " << q;
        }
  }
}

TEST(WEFT_WINOGRAD_1D_SUITE, FitsOnlyOneAxisKernelsStrideOne) {
  ConvGeom g;
  g.n = 1, g.c = 16, g.h = g.w = 17, g.f = 16, g.kh = 1, g.kw = 7, g.pw = 3, g.oh = g.ow = 17;
  EXPECT_TRUE(weft::cpu::Winograd1DFits(g));
  auto with = [&](auto change) {
    ConvGeom h = g;
    change(h);
    return weft::cpu::Winograd1DFits(h);
  };
  EXPECT_TRUE(with([](auto& h) { std::swap(h.kh, h.kw), std::swap(h.ph, h.pw); }));
  EXPECT_TRUE(with([](auto& h) { h.kw = 3, h.pw = 1; }));
  EXPECT_TRUE(with([](auto& h) { h.kw = 5, h.pw = 0, h.ow = 13; }));
  EXPECT_FALSE(with([](auto& h) { h.sw = 2; }));
  EXPECT_FALSE(with([](auto& h) { h.dw = 2; }));
  EXPECT_FALSE(with([](auto& h) { h.groups = 2; }));
  EXPECT_FALSE(with([](auto& h) { h.ph = 1; }));  // padding across the kernel's axis
  EXPECT_FALSE(with([](auto& h) { h.kw = 9, h.pw = 4; }));
  EXPECT_FALSE(with([](auto& h) { h.kh = 3, h.ph = 1; }));
  EXPECT_FALSE(with([](auto& h) { h.spatial = 1; }));
  // The fewest multiplications per line: 17 outputs of a 1x7 as 3 tiles of 6 (36, not 50 or 72).
  EXPECT_EQ(weft::cpu::Winograd1DTile(7, 17), 6);
  EXPECT_EQ(weft::cpu::Winograd1DTile(7, 8), 4);  // 2 tiles of 4 (20), not 2 of 6 (24)
  EXPECT_EQ(weft::cpu::Winograd1DTile(3, 8), 4);
  EXPECT_EQ(weft::cpu::Winograd1DTile(3, 2), 2);
}

// Through `_sg_conv` (its fold of the bias, its layouts, its selection).
std::vector<float> RunSgConv(const Layer& l, const Data& d) {
  const ConvGeom g = l.Geom();
  const wtest::Attrs a = wtest::SgConvAttrs(l.kh, l.kw, l.f, l.ph, l.pw, l.act, l.sum, l.post, l.in_block, l.out_block);
  std::vector<wtest::Buf> in = {wtest::Buf::F({l.n, l.c, l.h, l.w}, ToBlocked(d.x, l.n, l.c, l.h * l.w, l.in_block)),
                                wtest::Buf::F({l.f, l.c, l.kh, l.kw}, d.w), wtest::Buf::F({l.f}, d.b)};
  if (l.sum) in.push_back(wtest::Buf::F({l.n, l.f, g.oh, g.ow}, ToBlocked(d.sum, l.n, l.f, g.oh * g.ow, l.out_block)));
  std::vector<wtest::Buf> out = wtest::RunOp("_sg_conv", a, in, {{l.n, l.f, g.oh, g.ow}}, nullptr, false);
  return ToPlain(out[0].floats(), l.n, l.f, g.oh * g.ow, l.out_block);
}

void CheckSgConv(const Layer& l, bool expect_1d, std::mt19937& rng) {
  SCOPED_TRACE(l.Name());
  const Data d = Random(l, rng);
  std::vector<double> ref, mag;
  Reference(l, d, ref, mag);
  const uint64_t before = weft::cpu::Winograd1DRuns();
  const std::vector<float> got = RunSgConv(l, d);
  EXPECT_EQ(weft::cpu::Winograd1DRuns() - before, expect_1d ? 1u : 0u);
  const int64_t r = std::max(l.kh, l.kw);
  ExpectNear(got, ref, mag, Tolerance(weft::cpu::Winograd1DTile(r, l.kh == 1 ? l.Geom().ow : l.Geom().oh), r));
}

TEST(WEFT_WINOGRAD_1D_SUITE, SgConvTakesItWhereItFitsAndPays) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const Layer row{1, 32, 17, 17, 48, 1, 7, 0, 3, "relu", "None", false, 8, 8};
  Layer column = row;
  std::swap(column.kh, column.kw), std::swap(column.ph, column.pw);
  CheckSgConv(row, true, rng);
  CheckSgConv(column, true, rng);
  Layer plain = column;
  plain.in_block = plain.out_block = 1, plain.c = 36, plain.f = 44, plain.sum = true;
  CheckSgConv(plain, true, rng);
  CheckSgConv(Layer{2, 32, 8, 8, 32, 3, 1, 1, 0, "relu", "None", true}, true, rng);  // 3x1, 32 tiles
  Layer across = row;
  across.ph = 1, across.h = 15;  // padding across the axis: not this kernel's
  CheckSgConv(across, false, rng);
  CheckSgConv(Layer{1, 32, 4, 4, 32, 1, 7, 0, 3}, false, rng);   // 4 tiles: too few to pay
  CheckSgConv(Layer{1, 4, 17, 17, 16, 1, 7, 0, 3}, false, rng);  // 4 channels
  setenv("WEFT_CPU_CONV_WINOGRAD", "0", 1);
  CheckSgConv(row, false, rng);
  unsetenv("WEFT_CPU_CONV_WINOGRAD");
}

}  // namespace

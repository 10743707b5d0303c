// weft's own Winograd F(4x4, 3x3) (plugins/cpu/kernels/nn_conv_winograd.h) as `_sg_conv` runs it
// where oneDNN has no Winograd kernel (every 3x3 layer on AVX2; on AVX-512, channel counts that
// are not multiples of 16): against a direct convolution in double, for each epilogue, on plain and
// blocked layouts, with partial tiles and several chunks of tiles; bit-identical run to run; taken
// exactly where expected and never with WEFT_CPU_CONV_WINOGRAD=0. cpu_kernels_winograd_avx2_test
// runs these cases again with oneDNN and weft limited to AVX2 (suite NNWinogradF4Avx2).
#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"
#include "nn_conv_winograd.h"
#include "winograd_test_util.h"

#ifndef WEFT_WINOGRAD_SUITE
#define WEFT_WINOGRAD_SUITE NNWinogradF4
#endif

namespace {

using wtest::Attrs;
using wtest::Buf;

struct Case {
  int64_t n, c, h, w, f, pad;
  std::string act = "None", post = "None";  // act_type, postsum_act_type (with_sum when not None or `sum`)
  bool sum = false;
  int64_t in_block = 1, out_block = 1;  // 1 plain, 8 nChw8c, 16 nChw16c
  int64_t oh() const { return h + 2 * pad - 2; }
  int64_t ow() const { return w + 2 * pad - 2; }
  std::string Name() const {
    return "n" + std::to_string(n) + " c" + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w) +
           " f" + std::to_string(f) + " pad" + std::to_string(pad) + " act " + act + (sum ? " sum" : "") + " post " +
           post + " blocks " + std::to_string(in_block) + "/" + std::to_string(out_block);
  }
};

// (N, C, P) plain to (N, C / b, P, b) blocked, or back when `back`.
std::vector<float> Relayout(const std::vector<float>& v, int64_t n, int64_t c, int64_t plane, int64_t b,
                            bool back = false) {
  if (b == 1) return v;
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const size_t plain = static_cast<size_t>((i * c + ch) * plane + p),
                     blocked = static_cast<size_t>(((i * (c / b) + ch / b) * plane + p) * b + ch % b);
        if (back)
          out[plain] = v[blocked];
        else
          out[blocked] = v[plain];
      }
  return out;
}

struct Operands {
  std::vector<float> x, w, b, sum;  // plain
};

// The reference in double: y = post(act(conv(x, w) + b) + sum); `mag` the same sums of |terms|,
// the scale of each output's rounding error.
void Reference(const Case& k, const Operands& o, std::vector<double>& y, std::vector<double>& mag) {
  const int64_t oh = k.oh(), ow = k.ow();
  y.assign(static_cast<size_t>(k.n * k.f * oh * ow), 0.0);
  mag.assign(y.size(), 0.0);
  for (int64_t i = 0; i < k.n; ++i)
    for (int64_t f = 0; f < k.f; ++f)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double s = o.b[static_cast<size_t>(f)], m = std::abs(s);
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t v = 0; v < 3; ++v) {
                const int64_t iy = oy - k.pad + u, ix = ox - k.pad + v;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                const double t = static_cast<double>(o.x[static_cast<size_t>(((i * k.c + c) * k.h + iy) * k.w + ix)]) *
                                 o.w[static_cast<size_t>(((f * k.c + c) * 3 + u) * 3 + v)];
                s += t;
                m += std::abs(t);
              }
          const size_t at = static_cast<size_t>(((i * k.f + f) * oh + oy) * ow + ox);
          s = wtest::ActRef(k.act, s);
          if (k.sum) s += o.sum[at];
          y[at] = wtest::ActRef(k.post, s);
          mag[at] = m + (k.sum ? std::abs(o.sum[at]) : 0.0);
        }
}

Attrs SgAttrs(const Case& k) {
  Attrs a = wtest::SgConvAttrs(3, 3, k.f, k.pad, k.pad, k.act, k.sum, k.post, k.in_block, k.out_block);
  for (const char* p : {"act", "postsum_act"}) {
    a[std::string(p) + "_min"] = "-0.5";
    a[std::string(p) + "_max"] = "0.75";
  }
  return a;
}

// `_sg_conv` in inference mode; the output as plain floats.
std::vector<float> RunSgConv(const Case& k, const Operands& o) {
  const int64_t out_plane = k.oh() * k.ow();
  std::vector<Buf> in = {Buf::F({k.n, k.c, k.h, k.w}, Relayout(o.x, k.n, k.c, k.h * k.w, k.in_block)),
                         Buf::F({k.f, k.c, 3, 3}, o.w), Buf::F({k.f}, o.b)};
  if (k.sum) in.push_back(Buf::F({k.n, k.f, k.oh(), k.ow()}, Relayout(o.sum, k.n, k.f, out_plane, k.out_block)));
  std::vector<Buf> out = wtest::RunOp("_sg_conv", SgAttrs(k), in, {{k.n, k.f, k.oh(), k.ow()}}, nullptr, false);
  return Relayout(out[0].floats(), k.n, k.f, out_plane, k.out_block, true);
}

Operands Random(const Case& k, std::mt19937& rng) {
  Operands o;
  o.x = wtest::Random(rng, k.n * k.c * k.h * k.w);
  o.w = wtest::Random(rng, k.f * k.c * 9);
  o.b = wtest::Random(rng, k.f);
  if (k.sum) o.sum = wtest::Random(rng, k.n * k.f * k.oh() * k.ow());
  return o;
}

// Whether `_sg_conv` should take weft's Winograd for k: oneDNN has Winograd kernels (AVX-512 only)
// for whole 16-channel blocks, on plain or nChw16c activations (not nChw8c); every case below has
// enough tiles and channels to pay.
bool ExpectOwn(const Case& k) {
  const bool avx512 = static_cast<int>(dnnl::get_effective_cpu_isa()) >= static_cast<int>(dnnl::cpu_isa::avx512_core);
  return !(avx512 && k.c % 16 == 0 && k.f % 16 == 0 && k.in_block != 8 && k.out_block != 8);
}

// Runs k twice; checks each output against the reference within 1e-5 of the sum of its terms'
// magnitudes (F(4x4, 3x3)'s transforms scale rounding errors by up to ~100 float epsilons, where a
// direct sum's stay within a few), the second run's bits equal to the first's, and that the
// Winograd path was (not) taken as expected.
void Check(const Case& k, std::mt19937& rng, bool expect_own) {
  SCOPED_TRACE(k.Name());
  const Operands o = Random(k, rng);
  std::vector<double> ref, mag;
  Reference(k, o, ref, mag);
  const uint64_t before = weft::cpu::WinogradF4Runs();
  const std::vector<float> got = RunSgConv(k, o);
  EXPECT_EQ(weft::cpu::WinogradF4Runs() - before, expect_own ? 1u : 0u);
  ASSERT_EQ(got.size(), ref.size());
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - ref[i]) / (mag[i] + 1e-30);
    worst = std::max(worst, err);
    if (!(err <= 1e-5) && ++bad <= 3) ADD_FAILURE() << "output " << i << ": " << got[i] << ", want " << ref[i];
  }
  EXPECT_EQ(bad, 0u) << "worst relative error " << worst;
  EXPECT_EQ(RunSgConv(k, o), got) << "not bit-identical run to run";
}

TEST(WEFT_WINOGRAD_SUITE, MatchesDirectConvolutionForEachEpilogue) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  // Partial tiles on both axes (output 18x18, 11x19), pad 0 and 1, odd channel counts (padded to
  // 8 inside), more filters than channels and the reverse.
  const std::vector<Case> geoms = {{2, 8, 18, 18, 16, 1}, {3, 24, 13, 21, 8, 0}, {1, 9, 23, 25, 11, 1}};
  for (const Case& g : geoms)
    for (const auto& [act, sum, post] :
         std::vector<std::tuple<std::string, bool, std::string>>{{"None", false, "None"},
                                                                 {"relu", false, "None"},
                                                                 {"clip", false, "None"},
                                                                 {"None", true, "None"},
                                                                 {"relu", true, "relu"},
                                                                 {"clip", true, "clip"}}) {
      Case k = g;
      k.act = act, k.sum = sum, k.post = post;
      Check(k, rng, ExpectOwn(k));
    }
}

TEST(WEFT_WINOGRAD_SUITE, BlockedAndMixedLayouts) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  for (auto [in, out] : {std::pair{8, 8}, std::pair{1, 8}, std::pair{8, 1}, std::pair{16, 16}}) {
    Case k{2, 16, 15, 17, 32, 1, "relu", "relu", true, in, out};
    Check(k, rng, ExpectOwn(k));
    Case p0{1, 24, 26, 27, 40, 0, "None", "None", false, in == 16 ? 8 : in, out == 16 ? 8 : out};
    Check(p0, rng, ExpectOwn(p0));
  }
}

// 200 tiles: more than one chunk (128 tiles at most), split over the OpenMP team.
TEST(WEFT_WINOGRAD_SUITE, SeveralChunksOfTiles) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  Case k{2, 8, 40, 40, 24, 1, "relu", "None", false, 8, 8};
  Check(k, rng, ExpectOwn(k));
}

// The input transform reads blocked data a pixel's 8 channels at a time (256-bit loads, the next
// tile prefetched) and plain data lane by lane, through the same arithmetic, whose products are all
// by powers of two (no multiply-add fusion changes its bits): the same layer on the same values
// gives the same bits from plain and from nChw8c / nChw16c data, into a plain or a blocked output (nChw8c: the filters
// are multiples of 8, not of 16, so that weft's Winograd runs every case on AVX-512 too). Tiles wholly inside, on every
// edge and corner, partial at the right and bottom, a 7x7 image (edge tiles only), pad 0 and 1, several chunks.
TEST(WEFT_WINOGRAD_SUITE, BlockedInputBitIdenticalToPlain) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const std::vector<Case> geoms = {{2, 16, 15, 17, 24, 1},
                                   {1, 16, 26, 27, 8, 0},
                                   {2, 32, 40, 41, 40, 1},
                                   {8, 16, 7, 7, 24, 1},
                                   {32, 16, 6, 6, 8, 0}};
  for (const Case& g : geoms)
    for (int64_t block : {8, 16})
      for (int64_t out_block : {1, 8}) {
        Case plain = g;
        plain.act = "relu";
        plain.out_block = out_block;
        Case blocked = plain;
        blocked.in_block = block;
        SCOPED_TRACE(blocked.Name());
        const Operands o = Random(plain, rng);
        const uint64_t before = weft::cpu::WinogradF4Runs();
        const std::vector<float> want = RunSgConv(plain, o), got = RunSgConv(blocked, o);
        EXPECT_EQ(weft::cpu::WinogradF4Runs() - before, 2u);
        ASSERT_EQ(got.size(), want.size());
        size_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i)
          if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && ++differ <= 3)
            ADD_FAILURE() << "output " << i << ": blocked " << got[i] << ", plain " << want[i];
        EXPECT_EQ(differ, 0u);
      }
}

// Blocked outputs larger than the last-level cache are written with non-temporal stores
// (WinogradF4Conv::StreamsOutput): the same bits as cached stores, into a tensor of its own (with a
// sum in place and without) and into a channel slice of a wider tensor (whose other channels stay
// as they were), nChw8c and nChw16c. Small layers and plain outputs never stream.
TEST(WEFT_WINOGRAD_SUITE, StreamedOutputBitIdenticalToCached) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  weft::cpu::ConvGeom g;
  g.n = 2, g.c = 16, g.h = 20, g.w = 21, g.f = 32, g.kh = g.kw = 3, g.ph = g.pw = 1, g.oh = 20, g.ow = 21;
  const int64_t plane = g.oh * g.ow, wide = (g.f + 16) * plane;  // the slice: channels 16..47 of 48
  const std::vector<float> x = wtest::Random(rng, g.n * g.c * g.h * g.w), w = wtest::Random(rng, g.f * g.c * 9),
                           b = wtest::Random(rng, g.f), sum = wtest::Random(rng, g.n * g.f * plane);
  for (int64_t block : {8, 16})
    for (const auto& [slice, with_sum] : {std::pair{false, false}, std::pair{false, true}, std::pair{true, false}}) {
      SCOPED_TRACE("block " + std::to_string(block) + (slice ? " slice" : "") + (with_sum ? " sum" : ""));
      weft::cpu::WinoEpilogue e;
      e.act.kind = weft::cpu::WinoAct::kRelu;
      e.with_sum = with_sum;
      std::vector<float> y[2];
      for (bool stream : {false, true}) {
        weft::cpu::WinogradF4Conv conv(g, 8, block, e, slice ? wide : 0);
        EXPECT_FALSE(conv.StreamsOutput()) << "a 100 KB output streamed";
        conv.SetStreamsOutput(stream);
        EXPECT_EQ(conv.StreamsOutput(), stream);
        conv.SetWeights(w.data(), b.data());
        std::vector<float>& out = y[stream];
        out = slice ? std::vector<float>(static_cast<size_t>(g.n * wide), 7.0f) : sum;  // a sum in place
        float* at = out.data() + (slice ? 16 * plane : 0);
        conv.Run(x.data(), with_sum ? at : nullptr, at);
      }
      EXPECT_EQ(std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float)), 0) << "streamed bits differ";
      EXPECT_EQ(y[1][0], slice ? 7.0f : y[1][0]) << "the slice's neighbours were written";
    }
  weft::cpu::WinogradF4Conv plain_out(g, 8, 1, {}, 0);
  plain_out.SetStreamsOutput(true);
  EXPECT_FALSE(plain_out.StreamsOutput());
}

// One kernel state, new weights for the second call (the harness gives no content stamps, so every
// call refolds): the transformed weights follow.
TEST(WEFT_WINOGRAD_SUITE, FollowsNewWeights) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  const Case k{2, 8, 18, 18, 16, 1, "relu"};
  const Operands first = Random(k, rng), second = Random(k, rng);
  Buf x = Buf::F({k.n, k.c, k.h, k.w}, first.x), w = Buf::F({k.f, k.c, 3, 3}, first.w), b = Buf::F({k.f}, first.b),
      y = Buf::F({k.n, k.f, k.oh(), k.ow()});
  wtest::Kernel kernel("_sg_conv", SgAttrs(k), {x, w, b}, {y});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  const uint64_t before = weft::cpu::WinogradF4Runs();
  for (const Operands* o : {&first, &second}) {
    Operands now = first;
    now.w = o->w, now.b = o->b;
    w = Buf::F({k.f, k.c, 3, 3}, now.w);
    b = Buf::F({k.f}, now.b);
    wtest::Call call;
    call.inputs = {&x, &w, &b};
    call.outputs = {&y};
    call.is_train = false;
    ASSERT_EQ(kernel.Run(call), "");
    std::vector<double> ref, mag;
    Reference(k, now, ref, mag);
    const std::vector<float> got = y.floats();
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += !(std::abs(got[i] - ref[i]) <= 1e-5 * (mag[i] + 1e-30));
    EXPECT_EQ(bad, 0u) << (o == &first ? "first" : "second") << " weights";
  }
  EXPECT_EQ(weft::cpu::WinogradF4Runs() - before, 2u);
}

TEST(WEFT_WINOGRAD_SUITE, NotTakenWhenDisabledOrNotPaying) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  setenv("WEFT_CPU_CONV_WINOGRAD", "0", 1);
  Check(Case{2, 8, 18, 18, 16, 1}, rng, false);
  unsetenv("WEFT_CPU_CONV_WINOGRAD");
  Check(Case{1, 8, 14, 10, 16, 1}, rng, false);  // 12 tiles: the direct kernel reads 4x fewer weights
  Check(Case{2, 4, 18, 18, 16, 1}, rng, false);  // 4 channels
  Check(Case{2, 8, 18, 18, 16, 1}, rng, true);
}

TEST(WEFT_WINOGRAD_SUITE, FitsOnlyThreeByThreeStrideOneSmallPadding) {
  weft::cpu::ConvGeom g;
  g.n = 1, g.c = 16, g.h = g.w = 10, g.f = 16, g.kh = g.kw = 3, g.ph = g.pw = 1, g.oh = g.ow = 10;
  EXPECT_TRUE(weft::cpu::WinogradF4Fits(g));
  auto without = [&](auto change) {
    weft::cpu::ConvGeom h = g;
    change(h);
    return weft::cpu::WinogradF4Fits(h);
  };
  EXPECT_FALSE(without([](auto& h) { h.sh = h.sw = 2; }));
  EXPECT_FALSE(without([](auto& h) { h.dh = h.dw = 2; }));
  EXPECT_FALSE(without([](auto& h) { h.groups = 2; }));
  EXPECT_FALSE(without([](auto& h) { h.ph = h.pw = 2; }));
  EXPECT_FALSE(without([](auto& h) { h.pw = 0; }));
  EXPECT_FALSE(without([](auto& h) { h.kh = h.kw = 5; }));
  EXPECT_FALSE(without([](auto& h) { h.spatial = 1; }));
}

}  // namespace

// The oneDNN convolution's Winograd algorithm (plugins/cpu/kernels/nn_conv_dnnl.cc): 3x3 stride-1
// layers with whole 16-channel blocks, forward and both gradients, against references in double,
// run to run bit for bit, and (where oneDNN has the kernel: AVX-512) really taken: its rounding
// differs from the direct kernels'. The op-level cases (req modes, finite differences, agreement
// with im2col) are in nn_dense_test.cc's ConvCases.
#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"
#include "nn_conv.h"
#include "nn_conv_winograd.h"

namespace {

using weft::cpu::ConvAlgo;
using weft::cpu::ConvGeom;
using wtest::Nmse;

ConvGeom Geom3x3(int64_t n, int64_t c, int64_t hw, int64_t f, int64_t pad, bool bias) {
  ConvGeom g;
  g.spatial = 2;
  g.n = n, g.c = c, g.h = hw, g.w = hw, g.f = f;
  g.kh = g.kw = 3;
  g.ph = g.pw = pad;
  g.oh = g.ow = hw + 2 * pad - 2;
  g.bias = bias;
  return g;
}

// x (n, c, h, w), w (f, c, 3, 3), y (n, f, oh, ow); one pixel's index.
struct Idx {
  const ConvGeom& g;
  size_t X(int64_t i, int64_t ch, int64_t y, int64_t x) const {
    return static_cast<size_t>(((i * g.c + ch) * g.h + y) * g.w + x);
  }
  size_t W(int64_t o, int64_t ch, int64_t u, int64_t v) const {
    return static_cast<size_t>(((o * g.c + ch) * 3 + u) * 3 + v);
  }
  size_t Y(int64_t i, int64_t o, int64_t y, int64_t x) const {
    return static_cast<size_t>(((i * g.f + o) * g.oh + y) * g.ow + x);
  }
};

struct Grads {
  std::vector<float> y, gx, gw, gb;
};

// y = conv(x, w) + b and, for out-grad gy, gx, gw, gb: every product summed in double.
Grads Reference(const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w,
                const std::vector<float>& b, const std::vector<float>& gy) {
  const Idx at{g};
  std::vector<double> y(gy.size()), gx(x.size()), gw(w.size()), gb(static_cast<size_t>(g.f));
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t o = 0; o < g.f; ++o)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const size_t yi = at.Y(i, o, oy, ox);
          double s = g.bias ? b[static_cast<size_t>(o)] : 0.0;
          gb[static_cast<size_t>(o)] += gy[yi];
          for (int64_t ch = 0; ch < g.c; ++ch)
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t v = 0; v < 3; ++v) {
                const int64_t iy = oy - g.ph + u, ix = ox - g.pw + v;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const size_t xi = at.X(i, ch, iy, ix), wi = at.W(o, ch, u, v);
                s += static_cast<double>(x[xi]) * w[wi];
                gx[xi] += static_cast<double>(gy[yi]) * w[wi];
                gw[wi] += static_cast<double>(gy[yi]) * x[xi];
              }
          y[yi] = s;
        }
  auto f = [](const std::vector<double>& d) { return std::vector<float>(d.begin(), d.end()); };
  return {f(y), f(gx), f(gw), f(gb)};
}

Grads RunAlgo(const ConvAlgo& a, const ConvGeom& g, const std::vector<float>& x, const std::vector<float>& w,
              const std::vector<float>& b, const std::vector<float>& gy) {
  Grads r{std::vector<float>(gy.size()), std::vector<float>(x.size()), std::vector<float>(w.size()),
          std::vector<float>(static_cast<size_t>(g.f))};
  // A workspace 16 bytes past a 64-byte boundary: the algorithm aligns its buffers itself.
  std::vector<char> buf(std::max(a.ForwardWorkspace(), a.BackwardWorkspace()) + 128);
  char* ws = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) + 16;
  a.Forward(x.data(), w.data(), g.bias ? b.data() : nullptr, r.y.data(), WEFT_REQ_WRITE, ws);
  a.Backward(gy.data(), x.data(), w.data(), r.gx.data(), WEFT_REQ_WRITE, r.gw.data(), WEFT_REQ_WRITE,
             g.bias ? r.gb.data() : nullptr, g.bias ? WEFT_REQ_WRITE : WEFT_REQ_NULL, ws);
  return r;
}

bool OneDnnHasWinograd() {
  return static_cast<int>(dnnl::get_effective_cpu_isa()) >= static_cast<int>(dnnl::cpu_isa::avx512_core);
}

TEST(ConvWinograd, MatchesReferenceRunToRunAndDiffersFromDirect) {
  std::mt19937 rng(static_cast<unsigned>(wtest::TestSeed()));
  // ResNet-like (padding 1, bias off), no padding with a bias, and more filters than channels.
  const std::vector<ConvGeom> cases = {Geom3x3(3, 16, 12, 16, 1, false), Geom3x3(2, 32, 9, 16, 0, true),
                                       Geom3x3(2, 16, 7, 48, 1, true)};
  for (const ConvGeom& g : cases) {
    SCOPED_TRACE("n " + std::to_string(g.n) + " c " + std::to_string(g.c) + " hw " + std::to_string(g.h) + " f " +
                 std::to_string(g.f) + " pad " + std::to_string(g.ph));
    ASSERT_TRUE(weft::cpu::DnnlWinogradConv(g));
    const std::vector<float> x = wtest::Random(rng, g.n * g.c * g.h * g.w), w = wtest::Random(rng, g.f * g.c * 9),
                             b = wtest::Random(rng, g.f), gy = wtest::Random(rng, g.n * g.f * g.oh * g.ow);
    const Grads ref = Reference(g, x, w, b, gy);
    std::unique_ptr<ConvAlgo> wino = weft::cpu::MakeDnnlConv(g, nullptr, true);
    std::unique_ptr<ConvAlgo> direct = weft::cpu::MakeDnnlConv(g, nullptr, false);
    ASSERT_TRUE(wino && direct);
    const Grads a = RunAlgo(*wino, g, x, w, b, gy), again = RunAlgo(*wino, g, x, w, b, gy),
                d = RunAlgo(*direct, g, x, w, b, gy);
    EXPECT_LE(Nmse(ref.y, a.y), 1e-10);
    EXPECT_LE(Nmse(ref.gx, a.gx), 1e-10);
    EXPECT_LE(Nmse(ref.gw, a.gw), 1e-10);
    if (g.bias) {
      EXPECT_LE(Nmse(ref.gb, a.gb), 1e-10);
    }
    EXPECT_EQ(a.y, again.y);
    EXPECT_EQ(a.gx, again.gx);
    EXPECT_EQ(a.gw, again.gw);
    EXPECT_EQ(a.gb, again.gb);
    if (OneDnnHasWinograd()) {
      // Winograd's transforms round differently from the direct sums: equal bits would mean the
      // direct kernels ran.
      EXPECT_NE(a.y, d.y);
      EXPECT_NE(a.gx, d.gx);
      EXPECT_NE(a.gw, d.gw);
    } else if (weft::cpu::WinogradTrainFits(g)) {
      EXPECT_NE(a.y, d.y);  // no oneDNN Winograd kernel: weft's (nn_conv_winograd_train_test.cc)
      EXPECT_NE(a.gx, d.gx);
      EXPECT_NE(a.gw, d.gw);
    } else {
      EXPECT_EQ(a.y, d.y);  // neither: the same direct kernels
      EXPECT_EQ(a.gw, d.gw);
    }
  }
}

TEST(ConvWinograd, OnlyThreeByThreeStrideOneWholeBlocks) {
  ConvGeom g = Geom3x3(2, 16, 8, 16, 1, false);
  EXPECT_TRUE(weft::cpu::DnnlWinogradConv(g));
  ConvGeom odd = g;
  odd.c = 24;
  EXPECT_FALSE(weft::cpu::DnnlWinogradConv(odd));
  ConvGeom strided = g;
  strided.sh = strided.sw = 2;
  EXPECT_FALSE(weft::cpu::DnnlWinogradConv(strided));
  ConvGeom grouped = g;
  grouped.groups = 2;
  EXPECT_FALSE(weft::cpu::DnnlWinogradConv(grouped));
}

}  // namespace

// FullyConnected, Convolution and Pooling against plain-loop references, finite differences and
// req modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "nn_test_util.h"

namespace wtest {
namespace {

// ---------------------------------------------------------------- FullyConnected
std::vector<float> FcRef(const Buf& x, const Buf& w, const Buf* b, int64_t n, int64_t k, int64_t h) {
  std::vector<float> y(static_cast<size_t>(n * h));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double s = b ? b->as<float>()[j] : 0.0;
      for (int64_t q = 0; q < k; ++q) s += static_cast<double>(x.as<float>()[i * k + q]) * w.as<float>()[j * k + q];
      y[static_cast<size_t>(i * h + j)] = static_cast<float>(s);
    }
  return y;
}

struct FcShape {
  std::vector<int64_t> data;
  int64_t hidden;
  bool flatten, no_bias;
};

TEST(NNKernels, FullyConnectedMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<FcShape> shapes = {{{1, 1}, 1, true, false},      {{3, 5}, 7, true, false},
                                 {{4, 2, 3}, 5, true, true},    {{2, 3, 5}, 4, false, false},
                                 {{64, 784}, 128, true, false}, {{7, 1, 1}, 3, true, false}};
  for (const FcShape& s : shapes) {
    int64_t n = s.flatten ? s.data[0] : Prod(s.data) / s.data.back();
    int64_t k = Prod(s.data) / n;
    Attrs a = {{"num_hidden", std::to_string(s.hidden)},
               {"no_bias", s.no_bias ? "True" : "False"},
               {"flatten", s.flatten ? "True" : "False"}};
    std::vector<Buf> in = {Buf::F(s.data, Random(rng, Prod(s.data))), Buf::F({s.hidden, k}, Random(rng, s.hidden * k))};
    if (!s.no_bias) in.push_back(Buf::F({s.hidden}, Random(rng, s.hidden)));
    std::vector<int64_t> oshape = s.flatten ? std::vector<int64_t>{n, s.hidden} : s.data;
    if (!s.flatten) oshape.back() = s.hidden;
    auto out = RunOp("FullyConnected", a, in, {oshape});
    std::vector<float> ref = FcRef(in[0], in[1], s.no_bias ? nullptr : &in[2], n, k, s.hidden);
    EXPECT_LE(Nmse(ref, out[0].floats()), 1e-7) << "data " << ::testing::PrintToString(s.data);
    EXPECT_TRUE(AllFinite(out[0].floats()));
    CheckReqModes("FullyConnected", a, in, {oshape});
    if (Prod(s.data) <= 64) {
      GradCase g("FullyConnected", "_backward_FullyConnected", a, in, {oshape});
      g.seed = seed;
      CheckGradient(g);
    }
  }
}

TEST(NNKernels, FullyConnectedRejectsWrongWeight) {
  std::vector<Buf> in = {Buf::F({2, 3}), Buf::F({4, 2}), Buf::F({4})};
  Kernel k("FullyConnected", {{"num_hidden", "4"}}, in, {Buf::F({2, 4})});
  EXPECT_FALSE(k.ok());
  EXPECT_NE(k.error().find("weight"), std::string::npos) << k.error();
}

// The SoftmaxOutput example of MXNet's documentation: FC(num_hidden=6) on ones(1,4), weight
// ones(6,4), bias [1,4,4,4,5,6] -> relu -> softmax.
TEST(NNKernels, MxnetDocFullyConnectedReluSoftmax) {
  std::vector<Buf> in = {Buf::F({1, 4}, std::vector<float>(4, 1.0f)), Buf::F({6, 4}, std::vector<float>(24, 1.0f)),
                         Buf::F({6}, {1, 4, 4, 4, 5, 6})};
  auto fc = RunOp("FullyConnected", {{"num_hidden", "6"}}, in, {{1, 6}});
  auto relu = RunOp("Activation", {{"act_type", "relu"}}, {fc[0]}, {{1, 6}});
  auto sm = RunOp("SoftmaxOutput", {}, {relu[0], Buf::F({1}, {0})}, {{1, 6}});
  std::vector<float> want = {0.00378404f, 0.07600445f, 0.07600445f, 0.07600445f, 0.20660152f, 0.5616011f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(sm[0].as<float>()[i], want[i], 1e-6) << i;
}

// ---------------------------------------------------------------- Convolution
struct ConvCase {
  std::vector<int64_t> data;  // N, C, [H,] W
  int64_t filters, groups;
  std::vector<int64_t> kernel, stride, pad, dilate;
  bool no_bias;
};

Buf ConvRef(const ConvCase& cc, const Buf& x, const Buf& w, const Buf* b, std::vector<int64_t>& oshape) {
  bool two = cc.kernel.size() == 2;
  int64_t n = cc.data[0], c = cc.data[1], h = two ? cc.data[2] : 1, wd = cc.data.back();
  int64_t kh = two ? cc.kernel[0] : 1, kw = cc.kernel.back();
  int64_t sh = two ? cc.stride[0] : 1, sw = cc.stride.back(), ph = two ? cc.pad[0] : 0, pw = cc.pad.back();
  int64_t dh = two ? cc.dilate[0] : 1, dw = cc.dilate.back();
  int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (wd + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  int64_t f = cc.filters, cg = c / cc.groups, fg = f / cc.groups;
  oshape = two ? std::vector<int64_t>{n, f, oh, ow} : std::vector<int64_t>{n, f, ow};
  Buf y = Buf::F(oshape);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double s = b ? b->as<float>()[o] : 0.0;
          int64_t grp = o / fg;
          for (int64_t q = 0; q < cg; ++q)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                int64_t iy = yy * sh - ph + u * dh, ix = xx * sw - pw + v * dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                s += static_cast<double>(x.as<float>()[((i * c + grp * cg + q) * h + iy) * wd + ix]) *
                     w.as<float>()[((o * cg + q) * kh + u) * kw + v];
              }
          y.as<float>()[((i * f + o) * oh + yy) * ow + xx] = static_cast<float>(s);
        }
  return y;
}

Attrs ConvAttrs(const ConvCase& c) {
  return {{"kernel", weft_tuple(c.kernel)},
          {"stride", weft_tuple(c.stride)},
          {"pad", weft_tuple(c.pad)},
          {"dilate", weft_tuple(c.dilate)},
          {"num_filter", std::to_string(c.filters)},
          {"num_group", std::to_string(c.groups)},
          {"no_bias", c.no_bias ? "True" : "False"}};
}

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {{1, 1, 5, 5}, 1, 1, {3, 3}, {1, 1}, {0, 0}, {1, 1}, false},
      {{2, 3, 7, 6}, 4, 1, {3, 2}, {2, 1}, {1, 0}, {1, 1}, false},
      {{2, 4, 6, 5}, 6, 2, {3, 3}, {1, 2}, {1, 1}, {1, 1}, true},
      {{1, 2, 9, 9}, 3, 1, {3, 3}, {1, 1}, {2, 2}, {2, 2}, false},
      {{3, 3, 4, 4}, 5, 1, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false},
      {{2, 3, 11}, 4, 1, {3}, {2}, {1}, {1}, false},
      {{2, 1, 28, 28}, 20, 1, {5, 5}, {1, 1}, {0, 0}, {1, 1}, false},   // LeNet conv1
      {{2, 20, 12, 12}, 50, 1, {5, 5}, {1, 1}, {0, 0}, {1, 1}, false},  // LeNet conv2
      {{2, 3, 9, 9}, 16, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},     // oneDNN: blocked, plain data gradient
      {{2, 24, 7, 7}, 20, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},    // oneDNN: nhwc
      {{2, 16, 6, 6}, 32, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},    // oneDNN: Winograd (AVX-512)
      // Blocked operands over 4 MB: oneDNN runs in chunks of 7 images (8 chunks + a rest of 5).
      {{61, 1, 28, 28}, 20, 1, {5, 5}, {1, 1}, {0, 0}, {1, 1}, false},
  };
  return cases;
}

class ConvAlgoTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { setenv("WEFT_CPU_CONV_ALGO", GetParam(), 1); }
  void TearDown() override { unsetenv("WEFT_CPU_CONV_ALGO"); }
};

TEST_P(ConvAlgoTest, ForwardBackwardReqModes) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(std::string("algo ") + GetParam() + ", seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (const ConvCase& cc : ConvCases()) {
    SCOPED_TRACE("data " + ::testing::PrintToString(cc.data) + " kernel " + ::testing::PrintToString(cc.kernel));
    std::vector<int64_t> wshape = {cc.filters, cc.data[1] / cc.groups};
    for (int64_t k : cc.kernel) wshape.push_back(k);
    std::vector<Buf> in = {Buf::F(cc.data, Random(rng, Prod(cc.data))), Buf::F(wshape, Random(rng, Prod(wshape)))};
    if (!cc.no_bias) in.push_back(Buf::F({cc.filters}, Random(rng, cc.filters)));
    std::vector<int64_t> oshape;
    Buf ref = ConvRef(cc, in[0], in[1], cc.no_bias ? nullptr : &in[2], oshape);
    Attrs a = ConvAttrs(cc);
    auto out = RunOp("Convolution", a, in, {oshape});
    EXPECT_LE(Nmse(ref.floats(), out[0].floats()), 1e-7);
    EXPECT_TRUE(AllFinite(out[0].floats()));
    CheckReqModes("Convolution", a, in, {oshape});
    GradCase g("Convolution", "_backward_Convolution", a, in, {oshape});
    g.seed = seed;
    if (Prod(cc.data) > 400) {
      // Large cases: the backward is compared with the small-case-validated im2col path only
      // through req modes; finite differences on thousands of inputs are too slow.
      g.check = {static_cast<int>(in.size()) - 1};
    }
    CheckGradient(g);
  }
}

INSTANTIATE_TEST_SUITE_P(Algos, ConvAlgoTest, ::testing::Values("im2col", "dnnl"));

TEST(NNKernels, ConvolutionAlgorithmsAgreeOnBackward) {
  const uint64_t seed = TestSeed();
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (const ConvCase& cc : ConvCases()) {
    std::vector<int64_t> wshape = {cc.filters, cc.data[1] / cc.groups};
    for (int64_t k : cc.kernel) wshape.push_back(k);
    std::vector<int64_t> oshape;
    Buf x = Buf::F(cc.data, Random(rng, Prod(cc.data))), w = Buf::F(wshape, Random(rng, Prod(wshape)));
    ConvRef(cc, x, w, nullptr, oshape);
    std::vector<Buf> bin = {Buf::F(oshape, Random(rng, Prod(oshape))), x, w};
    std::vector<std::vector<int64_t>> gs = {cc.data, wshape};
    if (!cc.no_bias) bin.push_back(Buf::F({cc.filters})), gs.push_back({cc.filters});
    std::vector<std::vector<Buf>> res;
    for (const char* algo : {"im2col", "dnnl"}) {
      setenv("WEFT_CPU_CONV_ALGO", algo, 1);
      res.push_back(RunOp("_backward_Convolution", ConvAttrs(cc), bin, gs));
    }
    unsetenv("WEFT_CPU_CONV_ALGO");
    for (size_t i = 0; i < gs.size(); ++i)
      EXPECT_LE(Nmse(res[0][i].floats(), res[1][i].floats()), 1e-7)
          << "gradient " << i << " data " << ::testing::PrintToString(cc.data) << " seed " << seed;
  }
}

// ---------------------------------------------------------------- Pooling
struct PoolCase {
  std::vector<int64_t> data;
  std::string type, conv;
  std::vector<int64_t> kernel, stride, pad;
  bool global, include_pad;
};

// Direct reference from MXNet's definition of the windows.
Buf PoolRef(const PoolCase& p, const Buf& x, std::vector<int64_t>& oshape) {
  bool two = p.data.size() == 4;
  int64_t nc = p.data[0] * p.data[1], h = two ? p.data[2] : 1, w = p.data.back();
  int64_t kh = p.global ? h : two ? p.kernel[0] : 1, kw = p.global ? w : p.kernel.back();
  int64_t sh = p.global || !two ? 1 : p.stride[0], sw = p.global ? 1 : p.stride.back();
  int64_t ph = p.global || !two ? 0 : p.pad[0], pw = p.global ? 0 : p.pad.back();
  auto osz = [&](int64_t in, int64_t k, int64_t s, int64_t pad) {
    double v = static_cast<double>(in + 2 * pad - k) / static_cast<double>(s);
    return static_cast<int64_t>(p.conv == "full" ? std::ceil(v) : std::floor(v)) + 1;
  };
  int64_t oh = p.global ? 1 : osz(h, kh, sh, ph), ow = p.global ? 1 : osz(w, kw, sw, pw);
  oshape = {p.data[0], p.data[1]};
  if (two) oshape.push_back(oh);
  oshape.push_back(ow);
  Buf y = Buf::F(oshape);
  for (int64_t q = 0; q < nc; ++q)
    for (int64_t a = 0; a < oh; ++a)
      for (int64_t b = 0; b < ow; ++b) {
        int64_t hs = a * sh - ph, ws = b * sw - pw;
        int64_t he = std::min(hs + kh, h + ph), we = std::min(ws + kw, w + pw);
        int64_t area = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0), ws = std::max<int64_t>(ws, 0), he = std::min(he, h), we = std::min(we, w);
        double acc = p.type == "max" ? -INFINITY : 0.0;
        for (int64_t i = hs; i < he; ++i)
          for (int64_t j = ws; j < we; ++j) {
            float v = x.as<float>()[(q * h + i) * w + j];
            acc = p.type == "max" ? std::max(acc, static_cast<double>(v)) : acc + v;
          }
        if (p.type == "avg") acc /= static_cast<double>(p.include_pad ? area : (he - hs) * (we - ws));
        // A window wholly inside the padding (possible with the full convention) gives 0 here,
        // where MXNet gives NaN (avg without pad counting) or the lowest float (max).
        if (he <= hs || we <= ws) acc = 0.0;
        y.as<float>()[(q * oh + a) * ow + b] = static_cast<float>(acc);
      }
  return y;
}

TEST(NNKernels, PoolingMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<PoolCase> cases = {
      {{1, 1, 4, 4}, "max", "valid", {2, 2}, {2, 2}, {0, 0}, false, true},
      {{2, 3, 7, 5}, "max", "full", {3, 2}, {2, 2}, {1, 0}, false, true},
      {{2, 2, 6, 7}, "avg", "valid", {3, 3}, {2, 1}, {1, 1}, false, true},
      {{1, 2, 5, 5}, "avg", "full", {2, 2}, {2, 2}, {1, 1}, false, false},
      {{2, 3, 5, 4}, "sum", "valid", {2, 3}, {1, 1}, {0, 1}, false, true},
      {{2, 3, 5, 4}, "avg", "valid", {}, {}, {}, true, true},
      {{3, 2, 1, 1}, "max", "valid", {}, {}, {}, true, true},
      {{2, 3, 9}, "max", "valid", {3}, {2}, {1}, false, true},
      {{2, 20, 24, 24}, "max", "valid", {2, 2}, {2, 2}, {0, 0}, false, true},  // LeNet pool1
      {{2, 3, 5, 7}, "max", "valid", {2, 2}, {2, 2}, {0, 0}, false, true},     // 2x2 fast path, odd edges unused
      {{1, 2, 5, 5}, "max", "full", {2, 2}, {2, 2}, {0, 0}, false, true},      // ceil: edge windows are cut
      // Planes 8 at a time, then the rest (GenericForwardPlanes): SqueezeNet's closing average,
      // windows cut by the padding, and 1-D max (the generic loop's only max).
      {{2, 13, 13, 13}, "avg", "valid", {13, 13}, {13, 13}, {0, 0}, false, true},
      {{1, 19, 6, 7}, "avg", "full", {3, 3}, {2, 2}, {1, 1}, false, false},
      {{3, 7, 9}, "max", "valid", {3}, {2}, {1}, false, true},
  };
  for (const PoolCase& p : cases) {
    SCOPED_TRACE(p.type + " " + p.conv + " data " + ::testing::PrintToString(p.data));
    Attrs a = {{"pool_type", p.type},
               {"pooling_convention", p.conv},
               {"global_pool", p.global ? "True" : "False"},
               {"count_include_pad", p.include_pad ? "True" : "False"}};
    if (!p.global) a["kernel"] = weft_tuple(p.kernel), a["stride"] = weft_tuple(p.stride), a["pad"] = weft_tuple(p.pad);
    // Distinct values spaced well apart keep max pooling differentiable under finite differences.
    std::vector<float> v(static_cast<size_t>(Prod(p.data)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.05f * static_cast<float>(i) - 0.025f * static_cast<float>(v.size());
    std::shuffle(v.begin(), v.end(), rng);
    Buf x = Buf::F(p.data, v);
    std::vector<int64_t> oshape;
    Buf ref = PoolRef(p, x, oshape);
    auto out = RunOp("Pooling", a, {x}, {oshape});
    EXPECT_LE(Nmse(ref.floats(), out[0].floats()), 1e-7);
    CheckReqModes("Pooling", a, {x}, {oshape});
    if (Prod(p.data) <= 300) {
      GradCase g("Pooling", "_backward_Pooling", a, {x}, {oshape});
      g.uses_outputs = true;
      g.seed = seed;
      CheckGradient(g);
    }
  }
}

// The 2x2 stride-2 max path (vector lanes of 8 and 4 windows, then scalar) against the generic
// rule: forward max in window order, gradient to the first maximum of each window. Small integer
// values make ties frequent; NaNs are dropped by max (as std::max from -inf does) and never take
// the gradient unless first in their window. 26 columns = 13 windows per row: 8 + 4 + 1.
TEST(NNKernels, MaxPooling2x2MatchesGenericRuleWithTies) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const std::vector<int64_t> shape = {2, 3, 6, 26}, oshape = {2, 3, 3, 13};
  std::vector<float> v(static_cast<size_t>(Prod(shape)));
  std::uniform_int_distribution<int> pick(0, 3);
  for (float& e : v) e = static_cast<float>(pick(rng));
  for (size_t i = 5; i < v.size(); i += 37) v[i] = NAN;
  std::vector<float> go = Random(rng, Prod(oshape));
  std::vector<float> ref_y(go.size()), ref_gx(v.size(), 0.0f);
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t oy = 0; oy < 3; ++oy)
      for (int64_t ox = 0; ox < 13; ++ox) {
        float mx = -INFINITY, picked = 0.0f;  // the output; the value holding the gradient
        int64_t best = -1;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const int64_t at = (p * 6 + 2 * oy + i) * 26 + 2 * ox + j;
            if (best < 0 || v[at] > picked) best = at, picked = v[at];
            mx = std::max(mx, v[at]);
          }
        const int64_t o = (p * 3 + oy) * 13 + ox;
        ref_y[o] = mx;
        ref_gx[best] += go[o];
      }
  const Attrs a = {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}};
  const Buf x = Buf::F(shape, v), gy = Buf::F(oshape, go);
  const std::vector<Buf> y = RunOp("Pooling", a, {x}, {oshape});
  EXPECT_EQ(y[0].floats(), ref_y);
  const std::vector<Buf> gx = RunOp("_backward_Pooling", a, {gy, x, y[0]}, {shape});
  EXPECT_EQ(gx[0].floats(), ref_gx);
  CheckReqModes("_backward_Pooling", a, {gy, x, y[0]}, {shape});
}

// Max pooling with overlapping or cut windows (ResNet's 3x3 stride-2 pad-1 stem; the full
// convention; 1-D), whose kernels compute each window's max through per-row maxima and find the
// gradient's cell by a search, against the generic rule (as the 2x2 test above): ties frequent,
// NaNs dropped by max and taking the gradient only as their window's first cell. Both req modes of
// the gradient: write (rows zeroed as the windows reach them) and add.
TEST(NNKernels, MaxPoolingOverlappingWindowsMatchGenericRuleWithTies) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const std::vector<PoolCase> cases = {
      {{2, 3, 9, 11}, "max", "valid", {3, 3}, {2, 2}, {1, 1}, false, true},
      {{1, 2, 7, 6}, "max", "full", {3, 2}, {2, 1}, {1, 0}, false, true},
      {{2, 2, 10}, "max", "valid", {3}, {2}, {1}, false, true},
  };
  for (const PoolCase& p : cases) {
    SCOPED_TRACE(p.conv + " data " + ::testing::PrintToString(p.data));
    std::vector<float> v(static_cast<size_t>(Prod(p.data)));
    std::uniform_int_distribution<int> pick(0, 3);
    for (float& e : v) e = static_cast<float>(pick(rng));
    for (size_t i = 3; i < v.size(); i += 23) v[i] = NAN;
    const Buf x = Buf::F(p.data, v);
    std::vector<int64_t> oshape;
    const Buf ref_y = PoolRef(p, x, oshape);  // max skips NaN, as std::max from -inf
    const bool two = p.data.size() == 4;
    const int64_t nc = p.data[0] * p.data[1], h = two ? p.data[2] : 1, w = p.data.back();
    const int64_t kh = two ? p.kernel[0] : 1, kw = p.kernel.back(), sh = two ? p.stride[0] : 1, sw = p.stride.back();
    const int64_t ph = two ? p.pad[0] : 0, pw = p.pad.back(), oh = two ? oshape[2] : 1, ow = oshape.back();
    std::vector<float> go = Random(rng, Prod(oshape)), ref_gx(v.size(), 0.0f);
    for (int64_t q = 0; q < nc; ++q)
      for (int64_t a = 0; a < oh; ++a)
        for (int64_t b = 0; b < ow; ++b) {
          const int64_t hs = std::max<int64_t>(a * sh - ph, 0), ws = std::max<int64_t>(b * sw - pw, 0);
          const int64_t he = std::min({a * sh - ph + kh, h + ph, h}), we = std::min({b * sw - pw + kw, w + pw, w});
          int64_t best = -1;
          float picked = 0.0f;
          for (int64_t i = hs; i < he; ++i)
            for (int64_t j = ws; j < we; ++j) {
              const int64_t at = (q * h + i) * w + j;
              if (best < 0 || v[at] > picked) best = at, picked = v[at];
            }
          if (best >= 0) ref_gx[best] += go[(q * oh + a) * ow + b];
        }
    Attrs attrs = {{"pool_type", "max"},
                   {"pooling_convention", p.conv},
                   {"kernel", weft_tuple(p.kernel)},
                   {"stride", weft_tuple(p.stride)},
                   {"pad", weft_tuple(p.pad)}};
    const Buf gy = Buf::F(oshape, go);
    const std::vector<Buf> y = RunOp("Pooling", attrs, {x}, {oshape});
    EXPECT_EQ(y[0].floats(), ref_y.floats());
    const std::vector<Buf> gx = RunOp("_backward_Pooling", attrs, {gy, x, y[0]}, {p.data});
    EXPECT_EQ(gx[0].floats(), ref_gx);
    CheckReqModes("_backward_Pooling", attrs, {gy, x, y[0]}, {p.data});
  }
}

}  // namespace
}  // namespace wtest

namespace wtest {
namespace {

// The kernel.hpp contract: one state may run on several threads at once (the engine's workers).
TEST(NNKernels, OneStateComputesConcurrently) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  Attrs a = {{"kernel", "(5, 5)"}, {"num_filter", "8"}};
  std::vector<Buf> in = {Buf::F({4, 3, 12, 12}, Random(rng, 4 * 3 * 144)), Buf::F({8, 3, 5, 5}, Random(rng, 600)),
                         Buf::F({8}, Random(rng, 8))};
  Buf out0 = Buf::F({4, 8, 8, 8});
  Kernel k("Convolution", a, in, {out0});
  ASSERT_TRUE(k.ok()) << k.error();
  auto once = [&](Buf& out) {
    std::vector<Buf> local = in;
    Call c;
    for (Buf& b : local) c.inputs.push_back(&b);
    c.outputs.push_back(&out);
    return k.Run(c, "Convolution");
  };
  Buf serial = out0;
  ASSERT_EQ(once(serial), "");
  std::vector<Buf> outs(4, out0);
  std::vector<std::string> errs(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20 && errs[static_cast<size_t>(t)].empty(); ++rep)
        errs[static_cast<size_t>(t)] = once(outs[static_cast<size_t>(t)]);
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(errs[static_cast<size_t>(t)], "");
    EXPECT_EQ(outs[static_cast<size_t>(t)].bytes, serial.bytes) << "thread " << t;
  }
}

}  // namespace
}  // namespace wtest

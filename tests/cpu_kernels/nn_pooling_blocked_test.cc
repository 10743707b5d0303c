// Pooling on blocked activations (data_format nChw8c / nChw16c, nn_pooling_blocked.cc): the same
// values as the plain kernel on NCHW, for max, avg (with and without the padding counted) and sum,
// windows that overlap, tile, reach into the padding or past the edge ("full"), global pooling into
// a plain 1x1 output, NaN handling, and the req modes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nn_test_util.h"

namespace wtest {
namespace {

struct PoolCase {
  const char* type;
  int64_t k, s, p;
  const char* convention;
  bool count_include_pad = true;
  bool global = false;
};

// Output extent of one axis (PoolingParam's conventions valid = floor, full = ceil).
int64_t OutExtent(const PoolCase& c, int64_t in) {
  if (c.global) return 1;
  const int64_t span = in + 2 * c.p - c.k;
  const bool full = std::string(c.convention) == "full";
  return (full ? (span + c.s - 1) / c.s : span / c.s) + 1;
}

Attrs PoolAttrs(const PoolCase& c, const std::string& format) {
  Attrs a = {{"pool_type", c.type},
             {"kernel", weft_tuple({c.k, c.k})},
             {"stride", weft_tuple({c.s, c.s})},
             {"pad", weft_tuple({c.p, c.p})},
             {"pooling_convention", c.convention},
             {"count_include_pad", c.count_include_pad ? "True" : "False"}};
  if (c.global) a["global_pool"] = "True";
  if (format != "plain") {
    a["data_format"] = format;
    a["out_format"] = c.global ? "plain" : format;
  }
  return a;
}

TEST(NNKernels, PoolingOnBlockedActivationsMatchesPlain) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<unsigned>(seed));
  const PoolCase cases[] = {
      {"max", 3, 2, 0, "full"},               // SqueezeNet's: the last window reaches past the edge
      {"max", 3, 2, 1, "valid"},              // ResNet's stem: windows in the padding
      {"max", 3, 1, 1, "valid"},              // Inception's branch pooling
      {"max", 2, 2, 0, "valid"},              // tiling windows
      {"avg", 3, 1, 1, "valid", true},        // Inception's, padding counted
      {"avg", 3, 1, 1, "valid", false},       // real cells only
      {"avg", 2, 2, 0, "valid"},              // DenseNet's transitions
      {"avg", 3, 2, 0, "full"},               // cut at in + pad
      {"sum", 3, 2, 1, "valid"},              //
      {"avg", 1, 1, 0, "valid", true, true},  // global, into a plain 1x1 output
      {"max", 1, 1, 0, "valid", true, true},  //
  };
  const int64_t n = 2, h = 11, w = 9;
  for (const int64_t block : {8, 16}) {
    const int64_t c = 2 * block;
    const std::string format = block == 8 ? "nChw8c" : "nChw16c";
    const std::vector<float> finite = Random(rng, n * c * h * w, -2.0f, 2.0f);
    std::vector<float> x = finite;
    x[5] = std::numeric_limits<float>::quiet_NaN();  // max skips it in both layouts, avg and sum carry it
    for (const PoolCase& pc : cases) {
      SCOPED_TRACE(format + " " + pc.type + " k" + std::to_string(pc.k) + " s" + std::to_string(pc.s) + " p" +
                   std::to_string(pc.p) + " " + pc.convention + (pc.global ? " global" : ""));
      const std::vector<int64_t> in_shape = {n, c, h, w}, out_shape = {n, c, OutExtent(pc, h), OutExtent(pc, w)};
      const int64_t out_plane = out_shape[2] * out_shape[3];
      auto want = RunOp("Pooling", PoolAttrs(pc, "plain"), {Buf::F(in_shape, x)}, {out_shape});
      const Buf bx = Buf::F(in_shape, ToBlocked(x, n, c, h * w, block));
      auto got = RunOp("Pooling", PoolAttrs(pc, format), {bx}, {out_shape});
      // Bytes, not floats: the NaN must land in the same outputs. A 1x1 output lies alike in both.
      EXPECT_EQ(got[0].bytes, Buf::F(out_shape, ToBlocked(want[0].floats(), n, c, out_plane, block)).bytes);
      // (CheckReqModes compares by squared error: finite data.)
      CheckReqModes("Pooling", PoolAttrs(pc, format), {Buf::F(in_shape, ToBlocked(finite, n, c, h * w, block))},
                    {out_shape});
    }
  }
}

TEST(NNKernels, PoolingOnBlockedActivationsRefusesAPlainOutputOfMoreThanOnePixel) {
  const std::vector<int64_t> in = {1, 8, 6, 6}, out = {1, 8, 3, 3};
  Attrs a = PoolAttrs({"max", 2, 2, 0, "valid"}, "nChw8c");
  a["out_format"] = "plain";
  Kernel k("Pooling", a, {Buf::F(in, std::vector<float>(288, 1.0f))}, {Buf::F(out, {})});
  EXPECT_NE(k.error().find("needs a 1x1 output"), std::string::npos) << k.error();
  EXPECT_NE(k.error().find("use out_format nChw8c"), std::string::npos) << k.error();
}

}  // namespace
}  // namespace wtest

// The gradient_compression family: the KVStore's 2-bit quantisation (codes, residuals, decoding)
// against a reference encoding, and the setups it refuses.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.h"

namespace wtest {
namespace {

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

}  // namespace
}  // namespace wtest

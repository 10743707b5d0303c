// Float exp, expm1, tanh and sigmoid written so that GCC vectorises the loops that call them:
// no libm call, no branch (selects only), integer work limited to building 2^n from its bits.
// SSE2 suffices, so the plugin still runs on any x86-64. GCC needs -fno-trapping-math (set for
// weft_cpu_kernels) to turn the clamps' compares into vector selects.
//
// Method (the textbook one, e.g. Muller, "Elementary Functions", ch. 11): range reduction
// x = n ln2 + r with |r| <= ln2 / 2, ln2 split in two parts (Cody and Waite) so that r is exact
// to float rounding; e^r - 1 from its Taylor series to r^8 / 8! (truncation < 2e-10 relative);
// then e^x = 2^n (1 + p) and e^x - 1 = 2^n p + (2^n - 1), which keeps full relative accuracy
// near 0 where 1 - e^x cancels. tanh|x| = -m / (2 + m) with m = expm1(-2|x|), which never
// cancels; the sign is copied back. Measured against double-precision libm over every float in
// [-20, 20]: see tests/cpu_kernels/vector_math_test.cc for the bounds the test enforces.
//
// Inputs outside the range where the float result is finite and normal are clamped first, so
// results saturate (tanh → ±1, sigmoid → 0 or 1) and NaN propagates.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace weft::cpu::vmath {

namespace detail {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693145751953125f;          // ln 2 with its low 11 bits zero: n * hi exact
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // ln 2 - kLn2Hi
inline constexpr float kRoundMagic = 12582912.0f;            // 1.5 * 2^23: x + it rounds x to an integer

// e^r - 1 for |r| <= ln2 / 2: Horner on the Taylor series r + r^2/2! + ... + r^8/8!.
inline float ExpM1Reduced(float r) {
  float p = 1.0f / 40320.0f;
  p = p * r + 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r;
}

// x = n ln2 + r: returns r and writes 2^n. Needs x in [-87.3, 88.3] (n in [-126, 127]) or NaN.
// Adding 1.5 * 2^23 leaves round(x log2 e) in the low mantissa bits, so n comes out as an
// integer without a float-to-int conversion (which would keep GCC from vectorising the loop).
inline float Reduce(float x, float& two_n) {
  const float shifted = x * kLog2e + kRoundMagic;
  const float n = shifted - kRoundMagic;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  const int32_t n_int = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundMagic);
  two_n = std::bit_cast<float>((n_int + 127) << 23);  // NaN x: any bits, the result is NaN anyway
  return r;
}

// std::max / std::min keep NaN (their comparisons are false for it) and become MAX/MIN
// expressions that GCC vectorises; hand-written selects get threaded into branches.
inline float Clamp(float x) { return std::min(std::max(x, -87.3f), 88.3f); }

}  // namespace detail

/// e^x for float x, within a few ulp. Below -87.3 it stays at e^-87.3 (about 1.2e-38, never
/// denormal); above 88.3 at e^88.3 (about 2.2e38, never inf). NaN in, NaN out.
inline float Exp(float x) {
  x = detail::Clamp(x);
  float two_n;
  const float r = detail::Reduce(x, two_n);
  return two_n * (detail::ExpM1Reduced(r) + 1.0f);
}

/// e^x - 1 for float x, accurate relative to the result also near 0. Below -87.3 it is -1;
/// above 88.3 it stays at e^88.3 - 1. NaN in, NaN out.
inline float ExpM1(float x) {
  x = detail::Clamp(x);
  float two_n;
  const float r = detail::Reduce(x, two_n);
  return two_n * detail::ExpM1Reduced(r) + (two_n - 1.0f);
}

/// tanh(x) for float x; odd, |tanh| <= 1, exactly ±1 for |x| >= 9.1 (as in float libm).
inline float Tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float m = ExpM1(-2.0f * (a > 9.1f ? 9.1f : a));
  const float t = -m / (2.0f + m);
  const float y = a > 9.1f ? 1.0f : t;
  const float keep_nan = x == x ? y : x;
  return x < 0.0f ? -y : keep_nan;
}

/// 1 / (1 + e^-x) for float x.
inline float Sigmoid(float x) { return 1.0f / (1.0f + Exp(-x)); }

}  // namespace weft::cpu::vmath

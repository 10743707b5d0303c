// weft GPU kernel layer — element types and stores, for device and host code alike (WEFT_HD):
//   Half                 IEEE binary16 as its bits (kernels compute in float), exact conversions
//   ReqWrite / ReqAdd    how a functor stores a result (write / in-place, add-to); half adds in float
//   Scalar               a value of any data-movement dtype, read and written with a run-time dtype
//                        (Cast, one_hot, argmax, zeros_like), so those ops need one instantiation
//                        per write request instead of one per dtype pair
//   UniformAt            the counter-based random stream of Dropout / rrelu (the cpu plugin's)
//   FillMap, FillAnyMap  the fills every family uses (float32; any data-movement dtype)
// Conversions follow the cpu plugin (plugins/cpu/kernels/tensor_util.h Convert): float to integer
// truncates toward zero and saturates, NaN gives 0; half goes through float; integer to integer
// and integer to float are C++ conversions. Pure functions: thread-safe.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu_port.h"
#include "weft/sdk/cpp/random_sampler.hpp"
#include "weft/sdk/types.h"

namespace weft::WEFT_GPU_NS {

struct Half {
  uint16_t bits;
};

/// Exact widening of binary16 to binary32 (subnormals, infinities and NaN kept).
WEFT_HD inline float HalfToFloat(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1Fu, man = h.bits & 0x3FFu, bits = 0;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise the mantissa
    exp = 113;
    while ((man & 0x400u) == 0) man <<= 1, --exp;
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

/// Narrowing with round-to-nearest-even; overflow gives infinity, NaN stays a quiet NaN.
WEFT_HD inline Half FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return {static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u))};
  if (abs >= 0x477FF000u) return {static_cast<uint16_t>(sign | 0x7C00u)};
  if (abs < 0x38800000u) {  // subnormal result: value / 2^-24 rounded to nearest even
    if (abs < 0x33000000u) return {sign};
    const uint32_t man = (abs & 0x7FFFFFu) | 0x800000u, shift = 126 - (abs >> 23);
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return {static_cast<uint16_t>(sign | q)};
  }
  uint32_t r = abs - 0x38000000u;  // rebias; a mantissa carry into the exponent is correct
  const uint32_t dropped = r & 0x1FFFu;
  r >>= 13;
  if (dropped > 0x1000u || (dropped == 0x1000u && (r & 1u))) ++r;
  return {static_cast<uint16_t>(sign | r)};
}

struct ReqWrite {
  template <typename T, typename V>
  WEFT_HD static void Put(T& dst, V v) {
    dst = static_cast<T>(v);
  }
  WEFT_HD static void Put(Half& dst, Half v) { dst = v; }
};
struct ReqAdd {
  template <typename T, typename V>
  WEFT_HD static void Put(T& dst, V v) {
    dst = static_cast<T>(dst + static_cast<T>(v));
  }
  WEFT_HD static void Put(Half& dst, Half v) { dst = FloatToHalf(HalfToFloat(dst) + HalfToFloat(v)); }
};

/// A value of any dtype of kMoveDTypes: integers keep all 64 bits, floats are exact in double.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool is_int = false;
};

WEFT_HD inline Scalar FloatScalar(double v) { return Scalar{v, 0, false}; }
WEFT_HD inline Scalar IntScalar(int64_t v) { return Scalar{0, v, true}; }

/// Element i of `p`, a tensor of `dtype` (a dtype of kMoveDTypes; others read as 0).
WEFT_HD inline Scalar LoadScalar(const void* p, int32_t dtype, int64_t i) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return FloatScalar(static_cast<const float*>(p)[i]);
    case WEFT_DTYPE_FLOAT64:
      return FloatScalar(static_cast<const double*>(p)[i]);
    case WEFT_DTYPE_FLOAT16:
      return FloatScalar(HalfToFloat(static_cast<const Half*>(p)[i]));
    case WEFT_DTYPE_UINT8:
      return IntScalar(static_cast<const uint8_t*>(p)[i]);
    case WEFT_DTYPE_INT8:
      return IntScalar(static_cast<const int8_t*>(p)[i]);
    case WEFT_DTYPE_INT32:
      return IntScalar(static_cast<const int32_t*>(p)[i]);
    case WEFT_DTYPE_INT64:
      return IntScalar(static_cast<const int64_t*>(p)[i]);
    default:
      return Scalar{};
  }
}

/// A float as integer type To: truncated toward zero, saturated, NaN -> 0 (the cpu's Convert;
/// comparing in double gives the same answers for float and half sources).
template <typename To>
WEFT_HD To SaturateToInt(double v, double lo, double hi, To min, To max) {
  if (v != v) return To(0);
  if (v >= hi) return max;
  if (v <= lo) return min;
  return static_cast<To>(v);
}

/// `v` converted to T (one of the kMoveDTypes element types).
template <typename T>
WEFT_HD T FromScalar(const Scalar& v);
template <>
WEFT_HD inline float FromScalar<float>(const Scalar& v) {
  return v.is_int ? static_cast<float>(v.i) : static_cast<float>(v.f);
}
template <>
WEFT_HD inline double FromScalar<double>(const Scalar& v) {
  return v.is_int ? static_cast<double>(v.i) : v.f;
}
template <>
WEFT_HD inline Half FromScalar<Half>(const Scalar& v) {
  return FloatToHalf(FromScalar<float>(v));
}
template <>
WEFT_HD inline uint8_t FromScalar<uint8_t>(const Scalar& v) {
  return v.is_int ? static_cast<uint8_t>(v.i) : SaturateToInt<uint8_t>(v.f, 0.0, 255.0, 0, 255);
}
template <>
WEFT_HD inline int8_t FromScalar<int8_t>(const Scalar& v) {
  return v.is_int ? static_cast<int8_t>(v.i) : SaturateToInt<int8_t>(v.f, -128.0, 127.0, -128, 127);
}
template <>
WEFT_HD inline int32_t FromScalar<int32_t>(const Scalar& v) {
  return v.is_int ? static_cast<int32_t>(v.i)
                  : SaturateToInt<int32_t>(v.f, -2147483648.0, 2147483647.0, INT32_MIN, INT32_MAX);
}
template <>
WEFT_HD inline int64_t FromScalar<int64_t>(const Scalar& v) {
  // 2^63 is the nearest double to INT64_MAX (the cpu compares against it the same way).
  return v.is_int ? v.i
                  : SaturateToInt<int64_t>(v.f, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX);
}

/// Stores `v` into element i of `p` (dtype of kMoveDTypes) through Assign.
template <class Assign>
WEFT_HD void StoreScalar(void* p, int32_t dtype, int64_t i, const Scalar& v) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return Assign::Put(static_cast<float*>(p)[i], FromScalar<float>(v));
    case WEFT_DTYPE_FLOAT64:
      return Assign::Put(static_cast<double*>(p)[i], FromScalar<double>(v));
    case WEFT_DTYPE_FLOAT16:
      return Assign::Put(static_cast<Half*>(p)[i], FromScalar<Half>(v));
    case WEFT_DTYPE_UINT8:
      return Assign::Put(static_cast<uint8_t*>(p)[i], FromScalar<uint8_t>(v));
    case WEFT_DTYPE_INT8:
      return Assign::Put(static_cast<int8_t*>(p)[i], FromScalar<int8_t>(v));
    case WEFT_DTYPE_INT32:
      return Assign::Put(static_cast<int32_t*>(p)[i], FromScalar<int32_t>(v));
    case WEFT_DTYPE_INT64:
      return Assign::Put(static_cast<int64_t*>(p)[i], FromScalar<int64_t>(v));
    default:
      return;
  }
}

/// Element i of an index tensor (float32/64, int32/64) as an int64, truncated and saturated.
WEFT_HD inline int64_t LoadIndex(const void* p, int32_t dtype, int64_t i) {
  return FromScalar<int64_t>(LoadScalar(p, dtype, i));
}

/// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): the SDK's, which the cpu plugin uses too.
using sdk::random::SplitMix64;

/// Uniform in [0, 1) for element i of a call with `seed` (top 24 bits, exact in float): a pure
/// function of (seed, i), so every launcher and the cpu draw the same mask.
WEFT_HD inline float UniformAt(uint64_t seed, uint64_t i) {
  return static_cast<float>(SplitMix64(seed ^ SplitMix64(i)) >> 40) * (1.0f / 16777216.0f);
}

/// NaN test that needs no <cmath> overload on the device (reductions, argmax).
template <typename T>
WEFT_HD bool IsNan(T v) {
  return v != v;
}

// ---- fills: functors every family uses ------------------------------------------------------------

/// out[i] = value (write) or out[i] += 0 (add: nothing to do; the launcher skips it).
struct FillMap {
  float* out;
  float value;
  WEFT_HD void operator()(int64_t i) const { out[i] = value; }
};

/// out[i] (=|+=) value, any kMoveDTypes dtype (zeros_like, ones_like, zeroed gradients).
template <class Assign>
struct FillAnyMap {
  void* out;
  int32_t dtype;
  Scalar value;
  WEFT_HD void operator()(int64_t i) const { StoreScalar<Assign>(out, dtype, i, value); }
};

}  // namespace weft::WEFT_GPU_NS

#include "dtype_convert.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace weft::ndarray_detail {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);  // subnormal
  } else if (exp == 31) {
    magnitude = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400u), exp - 25);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
}

// Round-to-nearest-even float -> IEEE half.
uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00u;
  if (a >= 65520.0f) return sign | 0x7c00u;  // rounds to infinity
  if (a < std::ldexp(1.0f, -14)) {           // subnormal half (or zero)
    const float scaled = a * std::ldexp(1.0f, 24);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  const uint32_t ax = std::bit_cast<uint32_t>(a);
  uint32_t exp = (ax >> 23) - 127 + 15;
  uint32_t mant = ax & 0x7fffffu;
  uint32_t half = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return sign | static_cast<uint16_t>(half);
}

float BF16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBF16(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((std::bit_cast<uint32_t>(f) >> 16) | 0x40u);
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

template <typename T>
T Load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(T v, void* p) {
  std::memcpy(p, &v, sizeof(T));
}

template <typename T>
T ToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

double LoadAsDouble(const void* p, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return Load<float>(p);
    case DType::kFloat64:
      return Load<double>(p);
    case DType::kFloat16:
      return HalfToFloat(Load<uint16_t>(p));
    case DType::kBfloat16:
      return BF16ToFloat(Load<uint16_t>(p));
    case DType::kUint8:
      return Load<uint8_t>(p);
    case DType::kInt8:
      return Load<int8_t>(p);
    case DType::kInt16:
      return Load<int16_t>(p);
    case DType::kUint16:
      return Load<uint16_t>(p);
    case DType::kInt32:
      return Load<int32_t>(p);
    case DType::kUint32:
      return Load<uint32_t>(p);
    case DType::kInt64:
      return static_cast<double>(Load<int64_t>(p));
    case DType::kUint64:
      return static_cast<double>(Load<uint64_t>(p));
    case DType::kBool:
      return Load<uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  Fail("dtype code {} is not a known dtype", static_cast<int>(dtype));
}

void StoreFromDouble(double v, DType dtype, void* p) {
  switch (dtype) {
    case DType::kFloat32:
      return Store(static_cast<float>(v), p);
    case DType::kFloat64:
      return Store(v, p);
    case DType::kFloat16:
      return Store(FloatToHalf(static_cast<float>(v)), p);
    case DType::kBfloat16:
      return Store(FloatToBF16(static_cast<float>(v)), p);
    case DType::kUint8:
      return Store(ToInt<uint8_t>(v), p);
    case DType::kInt8:
      return Store(ToInt<int8_t>(v), p);
    case DType::kInt16:
      return Store(ToInt<int16_t>(v), p);
    case DType::kUint16:
      return Store(ToInt<uint16_t>(v), p);
    case DType::kInt32:
      return Store(ToInt<int32_t>(v), p);
    case DType::kUint32:
      return Store(ToInt<uint32_t>(v), p);
    case DType::kInt64:
      return Store(ToInt<int64_t>(v), p);
    case DType::kUint64:
      return Store(ToInt<uint64_t>(v), p);
    case DType::kBool:
      return Store<uint8_t>(v != 0.0 ? 1 : 0, p);
  }
  Fail("dtype code {} is not a known dtype", static_cast<int>(dtype));
}

}  // namespace weft::ndarray_detail

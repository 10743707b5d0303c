// weft CPU kernels — small shared pieces of the tensor, element-wise and reduction kernels:
// fixed-capacity dimension lists, dtype dispatch, IEEE half conversion and req-aware stores.
//
// Everything here works on host pointers; kernels translate weft_tensor addresses first.
// Pure functions and value types: thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <limits>
#include <span>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/operator.h"

namespace weft::cpu::tensor {

/// A shape of at most WEFT_MAX_NDIM extents (element counts). No allocation, so kernels can
/// build them inside Compute().
struct Dims {
  int ndim = 0;
  int64_t d[WEFT_MAX_NDIM] = {};

  Dims() = default;
  Dims(const int64_t* extents, int n) {
    if (n < 0 || n > WEFT_MAX_NDIM) {
      throw sdk::Error(WEFT_ERR_UNSUPPORTED, "tensor of " + std::to_string(n) + " dimensions: kernels take 0.." +
                                                 std::to_string(WEFT_MAX_NDIM));
    }
    ndim = n;
    for (int i = 0; i < n; ++i) d[i] = extents[i];
  }
  explicit Dims(const weft_shape& s) : Dims(s.dims, s.ndim) {}
  explicit Dims(std::span<const int64_t> s) : Dims(s.data(), static_cast<int>(s.size())) {}
  explicit Dims(const sdk::Tensor& t) : Dims(t.shape()) {}
  explicit Dims(const sdk::TensorDesc& t) : Dims(std::span<const int64_t>(t.shape)) {}

  int64_t Size() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= d[i];
    return n;
  }
  /// Product of extents [begin, end).
  int64_t Prod(int begin, int end) const {
    int64_t n = 1;
    for (int i = begin; i < end; ++i) n *= d[i];
    return n;
  }
  void Push(int64_t e) { d[ndim++] = e; }
  std::string Str() const {
    std::string s = "(";
    for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + (ndim == 1 ? ",)" : ")");
  }
};

// ---------------------------------------------------------------------------------------------
// IEEE 754 binary16, stored as its bits. Only conversions and the add-to used by data movement:
// kernels compute in float.

struct Half {
  uint16_t bits;
};

/// Exact widening of binary16 to binary32 (subnormals, infinities and NaN kept).
inline float HalfToFloat(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1Fu;
  uint32_t man = h.bits & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    // Subnormal: shift the mantissa up until its leading one becomes the implicit bit.
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// Narrowing of binary32 to binary16 with round-to-nearest-even; overflow gives infinity, NaN
/// stays a (quiet) NaN.
inline Half FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return {static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u))};
  if (abs >= 0x477FF000u) return {static_cast<uint16_t>(sign | 0x7C00u)};  // rounds past 65504
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): value / 2^-24, rounded to nearest even.
    if (abs < 0x33000000u) return {sign};  // below half the smallest subnormal
    const uint32_t exp = abs >> 23;
    const uint32_t man = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return {static_cast<uint16_t>(sign | q)};
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits (a carry into the
  // exponent is the correct result).
  uint32_t r = abs - 0x38000000u;
  const uint32_t dropped = r & 0x1FFFu;
  r >>= 13;
  if (dropped > 0x1000u || (dropped == 0x1000u && (r & 1u))) ++r;
  return {static_cast<uint16_t>(sign | r)};
}

/// NaN test that also compiles for integer types (always false there).
template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

/// The type an op computes in for elements of type T: float for float16 (as MXNet's half_t
/// arithmetic does, rounding once per op), T otherwise.
template <typename T>
using Calc = std::conditional_t<std::is_same_v<T, Half>, float, T>;

/// An element as its Calc type.
template <typename T>
Calc<T> ToCalc(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else {
    return v;
  }
}

/// Add-to for half outputs (req add): through float, rounded once.
inline Half& operator+=(Half& a, Half b) {
  a = FloatToHalf(HalfToFloat(a) + HalfToFloat(b));
  return a;
}

/// Value conversion between element types: C++ conversions, except that half goes through
/// float and float-to-integer conversions truncate toward zero and saturate at the integer's
/// range, NaN giving 0 (C++ leaves those undefined; MXNet inherits whatever the CPU does).
template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<From, Half>) {
    return Convert<To>(HalfToFloat(v));
  } else if constexpr (std::is_same_v<To, Half>) {
    return FloatToHalf(Convert<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (v != v) return To(0);
    // Compare in From: the integer limits as From round up for 64-bit types, so use >=.
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// dtype dispatch

template <typename T>
struct TypeTag {
  using type = T;
};

[[noreturn]] void UnsupportedDType(const char* op, int32_t dtype);

/// Masks of the dtype families kernels register for.
inline constexpr uint64_t kFloatMask = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
inline constexpr uint64_t kIndexMask = kFloatMask | WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);
/// Every dtype data movement (copy, concat, transpose, Cast) handles.
inline constexpr uint64_t kAllMask = kIndexMask | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16) |
                                     WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT8);
/// kAllMask without int8 and uint8 (MXNet's cpu gather_nd / scatter_nd gradients refuse them).
inline constexpr uint64_t kAllButByteMask =
    kAllMask & ~(WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT8));
/// kAllMask without float16 (MXNet's cpu sort and argsort have no float16 kernel).
inline constexpr uint64_t kAllButHalfMask = kAllMask & ~WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16);
/// float32 alone: the dtype of the training hot path, the only one compiled per ISA.
inline constexpr uint64_t kFloat32Mask = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

/// Calls f(TypeTag<T>{}) for float / double; other dtypes throw WEFT_ERR_UNSUPPORTED naming op.
template <typename F>
void DispatchFloat(const char* op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case WEFT_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    default:
      UnsupportedDType(op, dtype);
  }
}

/// As DispatchFloat, plus int32 and int64.
template <typename F>
void DispatchIndex(const char* op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_INT32:
      return f(TypeTag<int32_t>{});
    case WEFT_DTYPE_INT64:
      return f(TypeTag<int64_t>{});
    default:
      return DispatchFloat(op, dtype, f);
  }
}

/// Every dtype of kAllMask.
template <typename F>
void DispatchAll(const char* op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT16:
      return f(TypeTag<Half>{});
    case WEFT_DTYPE_UINT8:
      return f(TypeTag<uint8_t>{});
    case WEFT_DTYPE_INT8:
      return f(TypeTag<int8_t>{});
    default:
      return DispatchIndex(op, dtype, f);
  }
}

/// Calls f(TypeTag<T>{}) for the dtypes of `mask` among float32, float64, float16 (T = Half), int32,
/// int64, uint8 and int8; other dtypes throw WEFT_ERR_UNSUPPORTED naming op. Only the types in the
/// mask are instantiated (the dispatchers above instantiate every type of their family).
template <uint64_t kMask, typename F>
void DispatchMask(const char* op, int32_t dtype, F&& f) {
  constexpr auto has = [](int32_t d) { return (kMask & WEFT_DTYPE_BIT(d)) != 0; };
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      if constexpr (has(WEFT_DTYPE_FLOAT32)) return f(TypeTag<float>{});
      break;
    case WEFT_DTYPE_FLOAT64:
      if constexpr (has(WEFT_DTYPE_FLOAT64)) return f(TypeTag<double>{});
      break;
    case WEFT_DTYPE_INT32:
      if constexpr (has(WEFT_DTYPE_INT32)) return f(TypeTag<int32_t>{});
      break;
    case WEFT_DTYPE_INT64:
      if constexpr (has(WEFT_DTYPE_INT64)) return f(TypeTag<int64_t>{});
      break;
    case WEFT_DTYPE_UINT8:
      if constexpr (has(WEFT_DTYPE_UINT8)) return f(TypeTag<uint8_t>{});
      break;
    case WEFT_DTYPE_INT8:
      if constexpr (has(WEFT_DTYPE_INT8)) return f(TypeTag<int8_t>{});
      break;
    case WEFT_DTYPE_FLOAT16:
      if constexpr (has(WEFT_DTYPE_FLOAT16)) return f(TypeTag<Half>{});
      break;
    default:
      break;
  }
  UnsupportedDType(op, dtype);
}

// ---------------------------------------------------------------------------------------------
// req-aware stores

/// Throws WEFT_ERR_INVALID_ARGUMENT unless req is one of WEFT_REQ_*.
void CheckReq(int32_t req);

/// Copies n elements of `dtype` from src to dst honouring req: write / write-inplace copy (none
/// when dst == src), add-to adds element-wise (half in float), null does nothing. dst and src
/// either coincide or do not overlap.
void CopyOrAdd(void* dst, const void* src, int64_t n, int32_t dtype, int32_t req);

/// Fills n elements of `dtype` with `value` (converted to the dtype) honouring req (add-to adds it).
void FillOrAdd(void* dst, double value, int64_t n, int32_t dtype, int32_t req);

}  // namespace weft::cpu::tensor

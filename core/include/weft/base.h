// weft core — basic types used by every part of the C++ API: errors, dtypes and shapes.
//
// Thread-safety: the types here are values; distinct objects may be used from distinct threads.
#pragma once

#include "weft/export.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#define WEFT_CORE_VERSION_STRING "0.1.0"

namespace weft {

/// Version of libweft (not the SDK's; see weft/sdk/version.h for that).
WEFT_API const char* CoreVersion() noexcept;

/// Every error weft raises. The message names the thing that is wrong and, where there is one,
/// the fix.
class WEFT_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// Raised when a device (or the host) cannot provide the memory asked for.
class WEFT_API OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

/// Throws weft::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void Fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

/// Throws weft::Error(message) unless `cond` holds. For precondition checks on user input.
#define WEFT_CHECK(cond, ...)               \
  do {                                      \
    if (!(cond)) ::weft::Fail(__VA_ARGS__); \
  } while (0)

/// Element types; the values are MXNet's type flags (as in `.params` files and the SDK's
/// WEFT_DTYPE_*).
enum class DType : int32_t {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBool = 7,
  kInt16 = 8,
  kUint16 = 9,
  kUint32 = 10,
  kUint64 = 11,
  kBfloat16 = 12,
};

/// Size of one element in bytes. Throws weft::Error for a code that is not a DType.
WEFT_API size_t DTypeSize(DType dtype);
/// MXNet's name of the dtype ("float32", "float16", "int64", ...).
WEFT_API std::string_view DTypeName(DType dtype);
/// Parses an MXNet dtype name ("float32", "int8", "bfloat16", ...). Throws weft::Error naming the
/// bad name and listing the valid ones.
WEFT_API DType DTypeFromName(std::string_view name);
/// True when `code` is a valid DType value.
WEFT_API bool IsValidDType(int32_t code) noexcept;

/// The shape of an array: extents in elements, outermost first (C order). A Shape with ndim() 0
/// is a scalar (Size() 1). Follows mxnet-cpp's Shape: Shape(2, 3), shape[i], ndim(), Size().
class WEFT_API Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  template <typename... Ints>
  requires(sizeof...(Ints) >= 1 && (std::is_integral_v<Ints> && ...)) explicit Shape(Ints... dims)
      : dims_{static_cast<int64_t>(dims)...} {}

  size_t ndim() const noexcept { return dims_.size(); }
  int64_t operator[](size_t i) const { return dims_.at(i); }
  int64_t& operator[](size_t i) { return dims_.at(i); }
  /// Number of elements (product of extents; 1 for a scalar).
  int64_t Size() const noexcept {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  const std::vector<int64_t>& dims() const noexcept { return dims_; }
  std::vector<int64_t>& dims() noexcept { return dims_; }
  auto begin() const noexcept { return dims_.begin(); }
  auto end() const noexcept { return dims_.end(); }
  bool operator==(const Shape&) const = default;
  /// MXNet's string form: "(2, 3)", "(5,)" for one dimension, "()" for a scalar.
  std::string ToString() const;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace weft

template <>
struct fmt::formatter<weft::Shape> : fmt::formatter<std::string> {
  auto format(const weft::Shape& s, format_context& ctx) const {
    return fmt::formatter<std::string>::format(s.ToString(), ctx);
  }
};

#include "weft/base.h"

#include <array>

namespace weft {
namespace {
struct DTypeInfo {
  std::string_view name;
  size_t size;
};
// Indexed by the MXNet type flag.
constexpr std::array<DTypeInfo, 13> kDTypes = {{{"float32", 4},
                                                {"float64", 8},
                                                {"float16", 2},
                                                {"uint8", 1},
                                                {"int32", 4},
                                                {"int8", 1},
                                                {"int64", 8},
                                                {"bool", 1},
                                                {"int16", 2},
                                                {"uint16", 2},
                                                {"uint32", 4},
                                                {"uint64", 8},
                                                {"bfloat16", 2}}};
}  // namespace

bool IsValidDType(int32_t code) noexcept { return code >= 0 && code < static_cast<int32_t>(kDTypes.size()); }

size_t DTypeSize(DType dtype) {
  auto code = static_cast<int32_t>(dtype);
  WEFT_CHECK(IsValidDType(code), "dtype code {} is not a known dtype (valid codes are 0..{})", code,
             kDTypes.size() - 1);
  return kDTypes[code].size;
}

std::string_view DTypeName(DType dtype) {
  auto code = static_cast<int32_t>(dtype);
  WEFT_CHECK(IsValidDType(code), "dtype code {} is not a known dtype (valid codes are 0..{})", code,
             kDTypes.size() - 1);
  return kDTypes[code].name;
}

DType DTypeFromName(std::string_view name) {
  std::string valid;
  for (size_t i = 0; i < kDTypes.size(); ++i) {
    if (kDTypes[i].name == name) return static_cast<DType>(i);
    valid += (i ? ", " : "") + std::string(kDTypes[i].name);
  }
  Fail("unknown dtype '{}'; use one of: {}", name, valid);
}

std::string Shape::ToString() const {
  if (dims_.size() == 1) return fmt::format("({},)", dims_[0]);
  return fmt::format("({})", fmt::join(dims_, ", "));
}

}  // namespace weft

namespace weft {
const char* CoreVersion() noexcept { return WEFT_CORE_VERSION_STRING; }
}  // namespace weft

// weft SDK ops — Cast (MXNet 1.9's CastParam).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kCastDTypes[] = {"float32", "float64", "float16", "bfloat16", "uint8",
                                                   "int8",    "int32",   "int64",   "bool"};

/// Cast: elements converted to `dtype` (C++ conversion rules).
struct CastParam {
  DTypeAttr dtype;

  template <class V>
  void Visit(V& v) {
    v(dtype, Attr("dtype").Choices(kCastDTypes).Doc("output dtype"));
  }
};

}  // namespace weft::sdk

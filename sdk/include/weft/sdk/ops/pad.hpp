// weft SDK ops — Pad (MXNet 1.9's PadParam).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class PadMode { kConstant, kEdge, kReflect };
inline constexpr std::string_view kPadModes[] = {"constant", "edge", "reflect"};

/// Pad: a 4-D or 5-D array padded on its spatial axes, (before, after) per axis in pad_width.
struct PadParam {
  PadMode mode = PadMode::kConstant;
  Tuple pad_width;
  double constant_value = 0.0;

  template <class V>
  void Visit(V& v) {
    v(mode, Attr("mode").Choices(kPadModes).Doc("how to fill the border"));
    v(pad_width, Attr("pad_width").Doc("(before, after) per axis"));
    v(constant_value, Attr("constant_value").Default("0").Doc("fill value of mode constant"));
  }
};

}  // namespace weft::sdk

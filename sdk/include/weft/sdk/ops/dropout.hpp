// weft SDK ops — Dropout (MXNet 1.9's DropoutParam).
#pragma once

#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

enum class DropoutMode { kTraining, kAlways };
inline constexpr std::string_view kDropoutModes[] = {"training", "always"};

/// Dropout: in training each element is zeroed with probability p, the rest scaled by 1/(1 − p).
struct DropoutParam {
  float p = 0.5f;
  DropoutMode mode = DropoutMode::kTraining;
  Tuple axes;
  bool cudnn_off = false;

  template <class V>
  void Visit(V& v) {
    v(p, Attr("p").Default("0.5").Min(0).Max(1).Doc("probability of dropping an element"));
    v(mode, Attr("mode").Default("training").Choices(kDropoutModes).DefaultOnly().Doc("when dropout applies"));
    v(axes, Attr("axes").Default("()").DefaultOnly().Doc("axes sharing one mask value (variational dropout)"));
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
  }
};

}  // namespace weft::sdk

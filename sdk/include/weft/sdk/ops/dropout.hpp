// weft SDK ops — Dropout (MXNet 1.9's DropoutParam).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::sdk {

enum class DropoutMode { kTraining, kAlways };
inline constexpr std::string_view kDropoutModes[] = {"training", "always"};

/// Dropout: in training each element is zeroed with probability p, the rest scaled by 1/(1 − p).
/// With `axes`, one draw is shared along those axes (MXNet's variational dropout): the hidden
/// mask output has data's shape with each of those axes 1 and broadcasts over them.
/// data_format (internal): the executor may keep a 4-D float32 value in oneDNN's blocked layout
/// through a Dropout between blocked layers (core/executor/fuse_conv.h); data and output then
/// both lie in it, the mask stays plain.
struct DropoutParam {
  float p = 0.5f;
  DropoutMode mode = DropoutMode::kTraining;
  Tuple axes;
  bool cudnn_off = false;
  ActFormat data_format = ActFormat::kPlain;

  template <class V>
  void Visit(V& v) {
    v(p, Attr("p").Default("0.5").Min(0).Max(1).Doc("probability of dropping an element"));
    v(mode, Attr("mode").Default("training").Choices(kDropoutModes).DefaultOnly().Doc("when dropout applies"));
    v(axes, Attr("axes").Default("()").Doc("axes along which one mask value is shared (variational dropout)"));
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
    v(data_format,
      Attr("data_format").Default("plain").Choices(kActFormats).Doc("memory layout of the data and the output"));
  }
  /// The mask's shape for data of shape `data`: each axis of `axes` (negative counts from the end)
  /// set to 1. Throws WEFT_ERR_INVALID_ARGUMENT naming an axis out of range.
  Tuple MaskShape(std::span<const int64_t> data) const {
    Tuple m(data.begin(), data.end());
    const auto nd = static_cast<int64_t>(data.size());
    for (int64_t a : axes) {
      CheckParam(a >= -nd && a < nd, "Dropout: axes " + FormatTuple(axes) + " out of range for data " + FormatTuple(m) +
                                         " (use -" + std::to_string(nd) + ".." + std::to_string(nd - 1) + ")");
      m[static_cast<size_t>(a < 0 ? a + nd : a)] = 1;
    }
    return m;
  }
  /// For the devices whose Dropout kernels draw one value per element: throws WEFT_ERR_UNSUPPORTED
  /// naming `axes` and the device when axes is set, instead of computing it wrong.
  void RequireNoAxes(std::string_view op, std::string_view device) const {
    if (!axes.empty())
      OpError(WEFT_ERR_UNSUPPORTED, op,
              "axes " + FormatTuple(axes) + " (a mask shared along axes) is not implemented on " + std::string(device) +
                  "; run it on cpu");
  }
};

}  // namespace weft::sdk

// weft SDK ops — the softmax family: softmax, log_softmax (MXNet 1.9's SoftmaxParam) and
// SoftmaxOutput (SoftmaxOutputParam).
#pragma once

#include <optional>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

inline constexpr std::string_view kSoftmaxDTypes[] = {"None", "float16", "float32", "float64"};

/// softmax and log_softmax along `axis`, the input divided by `temperature` first.
struct SoftmaxParam {
  int64_t axis = -1;
  std::optional<double> temperature;
  DTypeAttr dtype;
  bool use_length = false;

  template <class V>
  void Visit(V& v) {
    v(axis, Attr("axis").Default("-1").Doc("axis to normalise over"));
    v(temperature, Attr("temperature").Default("None").Min(0).Doc("divides the input (None = 1)"));
    v(dtype, Attr("dtype").Default("None").Choices(kSoftmaxDTypes).DefaultOnly().Doc("output dtype"));
    v(use_length, Attr("use_length").Default("False").DefaultOnly().Doc("take a `length` input"));
  }
  void Validate() const {
    CheckParam(!temperature || *temperature > 0,
               "temperature must be positive, got " + std::to_string(temperature.value_or(1.0)));
  }
  /// 1 / temperature (1 when None).
  float InverseTemperature() const { return static_cast<float>(1.0 / temperature.value_or(1.0)); }
};

enum class GradNormalization { kNull, kBatch, kValid };
inline constexpr std::string_view kGradNormalizations[] = {"null", "batch", "valid"};

/// SoftmaxOutput: softmax in forward; the backward makes its own gradient
/// (softmax − one_hot(label))·grad_scale, normalised per `normalization`.
struct SoftmaxOutputParam {
  float grad_scale = 1.0f, ignore_label = -1.0f;
  bool multi_output = false, use_ignore = false, preserve_shape = false;
  GradNormalization normalization = GradNormalization::kNull;
  bool out_grad = false;
  float smooth_alpha = 0.0f;

  template <class V>
  void Visit(V& v) {
    v(grad_scale, Attr("grad_scale").Default("1").Doc("scales the gradient"));
    v(ignore_label, Attr("ignore_label").Default("-1").Doc("label value ignored when use_ignore"));
    v(multi_output,
      Attr("multi_output").Default("False").Doc("softmax over axis 1 of (N, C, ...) data, one label per position"));
    v(use_ignore, Attr("use_ignore").Default("False").Doc("give rows labelled ignore_label zero gradient"));
    v(preserve_shape,
      Attr("preserve_shape").Default("False").DefaultOnly().Doc("softmax over the last axis keeping the shape"));
    v(normalization, Attr("normalization")
                         .Default("null")
                         .Choices(kGradNormalizations)
                         .Doc("gradient divided by nothing, N, or the count of non-ignored labels"));
    v(out_grad, Attr("out_grad").Default("False").DefaultOnly().Doc("multiply by the incoming head gradient"));
    v(smooth_alpha, Attr("smooth_alpha").Default("0").DefaultOnly().Doc("label smoothing"));
  }
};

}  // namespace weft::sdk

// weft SDK ops — the softmax family: softmax, log_softmax (MXNet 1.9's SoftmaxParam) and
// SoftmaxOutput (SoftmaxOutputParam).
#pragma once

#include <algorithm>
#include <optional>
#include <span>
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
/// (softmax − one_hot(label))·grad_scale, normalised per `normalization`, or with a label of the
/// output's shape (probabilities) (softmax − label)·grad_scale.
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
    v(preserve_shape, Attr("preserve_shape").Default("False").Doc("softmax over the last axis keeping the shape"));
    v(normalization, Attr("normalization")
                         .Default("null")
                         .Choices(kGradNormalizations)
                         .Doc("gradient divided by nothing, N, or the count of non-ignored labels"));
    v(out_grad, Attr("out_grad").Default("False").DefaultOnly().Doc("multiply by the incoming head gradient"));
    v(smooth_alpha, Attr("smooth_alpha").Default("0").DefaultOnly().Doc("label smoothing"));
  }
};

/// Where SoftmaxOutput's rows lie, as MXNet 1.9 lays them out (softmax_output-inl.h), for every
/// backend's kernels:
///   multi_output    softmax over axis 1 of (N, C, rest...); one label per (n, rest) position
///   preserve_shape  softmax over the last axis
///   otherwise       softmax of the data viewed as (N, size / N)
/// The backward's rows are one per label: (M, size / M) with M the label's size, which for N-d data
/// and MXNet's inferred label (the shape without its last axis) differs from the forward's rows
/// (MXNet's FlatTo2D quirk, kept so that gradients are equal). A label of the output's own shape
/// holds probabilities: its gradient is (output − label)·grad_scale, with no normalisation and no
/// ignored label (what MXNet 1.9 computes; checked against libmxnet 1.9.1).
struct SoftmaxOutputLayout {
  AxisSplit fwd;            ///< forward rows: outer × inner rows of `len` elements `inner` apart
  AxisSplit bwd;            ///< backward rows, same form, one per label (unused for prob_label)
  bool prob_label = false;  ///< the label has the output's shape
  /// grad_scale divided as `normalization` says: by N·rest (multi_output) or M (batch), by rest
  /// for multi_output with null; 'valid' divides further by the count of labels not ignored.
  float scale = 1.0f;
};

/// SoftmaxOutput's layout for `data` and `label` shapes. Throws WEFT_ERR_INVALID_ARGUMENT naming
/// `op` for data without axes or a label that does not fit the data.
inline SoftmaxOutputLayout LayOutSoftmaxOutput(std::string_view op, std::span<const int64_t> data,
                                               std::span<const int64_t> label, const SoftmaxOutputParam& a) {
  SoftmaxOutputLayout l;
  if (data.empty()) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "data must have at least one axis");
  int64_t size = 1, m = 1;
  for (int64_t d : data) size *= d;
  for (int64_t d : label) m *= d;
  l.prob_label = std::equal(data.begin(), data.end(), label.begin(), label.end());
  l.scale = a.grad_scale;
  if (a.multi_output) {
    if (data.size() < 2)
      OpError(WEFT_ERR_INVALID_ARGUMENT, op, "multi_output needs (N, C, ...) data, got " + ShapeText(data));
    l.fwd = l.bwd = SplitAtAxis(op, data, 1);
    if (!l.prob_label && m != l.fwd.outer * l.fwd.inner)
      OpError(WEFT_ERR_INVALID_ARGUMENT, op,
              "label " + ShapeText(label) + " must hold one class per (n, position) of data " + ShapeText(data) +
                  ", or be a probability of each output");
    if (a.normalization != GradNormalization::kValid) l.scale /= static_cast<float>(l.fwd.inner);
    if (a.normalization == GradNormalization::kBatch && l.fwd.outer > 0) l.scale /= static_cast<float>(l.fwd.outer);
  } else {
    if (a.preserve_shape) {
      l.fwd = SplitAtAxis(op, data, -1);
    } else {
      const int64_t n = data.size() == 1 ? 1 : data[0];
      l.fwd = AxisSplit{n, n == 0 ? 0 : size / n, 1};
    }
    if (!l.prob_label && (m == 0 ? size != 0 : size % m != 0))
      OpError(WEFT_ERR_INVALID_ARGUMENT, op,
              "label " + ShapeText(label) + " must hold one class per row of data " + ShapeText(data) +
                  ", or be a probability of each output");
    l.bwd = AxisSplit{m, m == 0 ? 0 : size / m, 1};
    if (a.normalization == GradNormalization::kBatch && m > 0) l.scale /= static_cast<float>(m);
  }
  if (l.prob_label) l.scale = a.grad_scale;
  return l;
}

}  // namespace weft::sdk

// weft SDK ops — loss heads: the regression outputs LinearRegressionOutput,
// LogisticRegressionOutput and MAERegressionOutput (MXNet 1.9's RegressionOutputParam,
// regression_output-inl.h) and MakeLoss (MakeLossParam).
#pragma once

#include <span>

#include "weft/sdk/ops/softmax.hpp"

namespace weft::sdk {

/// The regression heads' attributes. Forward: LinearRegressionOutput and MAERegressionOutput copy
/// the data, LogisticRegressionOutput applies the sigmoid 1 / (1 + exp(−x)). Backward ignores the
/// out-gradient and makes the head's own, times GradFactor: (output − label) for the linear and
/// logistic heads, sign(output − label) for MAE, −1 where they are equal (MXNet's minus_sign).
struct RegressionOutputParam {
  float grad_scale = 1.0f;

  template <class V>
  void Visit(V& v) {
    v(grad_scale, Attr("grad_scale").Default("1").Doc("scales the gradient"));
  }
  /// The gradient's factor for a label of `shape`: grad_scale / (elements per sample), as MXNet.
  float GradFactor(std::span<const int64_t> label) const {
    const int64_t n = label.empty() ? 1 : label[0];
    const int64_t per_row = n > 0 ? ShapeSize(label) / n : 1;
    return grad_scale / static_cast<float>(per_row > 1 ? per_row : 1);
  }
};

/// The name of RegressionOutputParam when LinearRegressionOutput was the only regression head
/// (SDK 2.1 and earlier); kept so that kernels written then still compile.
using LinearRegressionOutputParam = RegressionOutputParam;

/// The gradient factor of a regression head's backward kernel's `setup` (inputs out_grad, data,
/// label, output; outputs the data and label gradients), its counts and sizes checked.
template <class Setup>
float RegressionGradFactor(const Setup& s) {
  s.ExpectCounts(4, 2);
  if (ShapeSize(s.inputs[2].shape) != ShapeSize(s.inputs[3].shape))
    OpError(WEFT_ERR_INVALID_ARGUMENT, s.op_name, "label and output differ in size");
  return s.template Params<RegressionOutputParam>().GradFactor(s.inputs[2].shape);
}

/// RegressionGradFactor under its SDK 2.1 name.
template <class Setup>
float LinearRegressionGradFactor(const Setup& s) {
  return RegressionGradFactor(s);
}

/// MakeLoss: identity forward; gradient grad_scale, normalised per `normalization`.
struct MakeLossParam {
  float grad_scale = 1.0f, valid_thresh = 0.0f;
  GradNormalization normalization = GradNormalization::kNull;

  template <class V>
  void Visit(V& v) {
    v(grad_scale, Attr("grad_scale").Default("1").Doc("the gradient value"));
    v(valid_thresh, Attr("valid_thresh").Default("0").DefaultOnly().Doc("threshold for normalization=valid"));
    v(normalization, Attr("normalization")
                         .Default("null")
                         .Choices(kGradNormalizations)
                         .Doc("gradient divided by nothing, N, or the count of elements above valid_thresh"));
  }
};

}  // namespace weft::sdk

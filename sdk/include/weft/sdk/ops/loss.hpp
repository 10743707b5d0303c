// weft SDK ops — loss heads: LinearRegressionOutput (MXNet 1.9's RegressionOutputParam) and
// MakeLoss (MakeLossParam).
#pragma once

#include <span>

#include "weft/sdk/ops/softmax.hpp"

namespace weft::sdk {

/// LinearRegressionOutput: identity forward; gradient (output − label)·grad_scale / (elements per
/// sample).
struct LinearRegressionOutputParam {
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

/// The gradient factor of a _backward_LinearRegressionOutput kernel's `setup` (inputs out_grad,
/// data, label, output; outputs the data and label gradients), its counts and sizes checked.
template <class Setup>
float LinearRegressionGradFactor(const Setup& s) {
  s.ExpectCounts(4, 2);
  if (ShapeSize(s.inputs[2].shape) != ShapeSize(s.inputs[3].shape))
    OpError(WEFT_ERR_INVALID_ARGUMENT, s.op_name, "label and output differ in size");
  return s.template Params<LinearRegressionOutputParam>().GradFactor(s.inputs[2].shape);
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

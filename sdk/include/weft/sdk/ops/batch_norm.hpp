// weft SDK ops — BatchNorm (MXNet 1.9's BatchNormParam).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "weft/sdk/cpp/params.hpp"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::sdk {

/// Batch normalisation over all axes but `axis`.
struct BatchNormParam {
  double eps = 1e-3;
  float momentum = 0.9f;
  bool fix_gamma = true, use_global_stats = false, output_mean_var = false;
  int64_t axis = 1;
  bool cudnn_off = false;
  std::optional<float> min_calib_range, max_calib_range;

  template <class V>
  void Visit(V& v) {
    v(eps, Attr("eps").Default("0.001").Doc("added to the variance"));
    v(momentum, Attr("momentum").Default("0.9").Doc("moving average momentum"));
    v(fix_gamma, Attr("fix_gamma").Default("True").Doc("treat gamma as 1 (and give it zero gradient)"));
    v(use_global_stats, Attr("use_global_stats").Default("False").Doc("use the moving statistics in training too"));
    v(output_mean_var, Attr("output_mean_var").Default("False").Doc("also expose the mean and var outputs"));
    v(axis, Attr("axis").Default("1").Doc("channel axis"));
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
    v(min_calib_range, Attr("min_calib_range").Default("None").Ignored());
    v(max_calib_range, Attr("max_calib_range").Default("None").Ignored());
  }
  /// Data of `shape` around the channel axis; throws naming `op` for an axis out of range.
  AxisSplit Split(std::string_view op, std::span<const int64_t> shape) const { return SplitAtAxis(op, shape, axis); }

  /// Throws naming `op` unless every tensor of `per_channel` (pointers to tensor descriptions:
  /// gamma, beta, the statistics) holds one value per channel.
  template <class Tensors>
  static void CheckPerChannel(std::string_view op, int64_t channels, const Tensors& per_channel) {
    for (const auto* t : per_channel)
      if (ShapeSize(t->shape) != channels)
        OpError(WEFT_ERR_INVALID_ARGUMENT, op,
                "per-channel tensor " + ShapeText(t->shape) + " must have " + std::to_string(channels) + " elements");
  }
};

/// The activations `_sg_batch_norm` takes (SgBatchNormParam act_type; the word's index is its
/// FusedAct value).
inline constexpr std::string_view kSgBatchNormActs[] = {"None", "relu"};

/// `_sg_batch_norm`, weft's fused inference BatchNorm (made by the executor's graph fusion for
/// forward-only binds, core/executor/fuse_conv.h: a BatchNorm that no convolution feeds, as
/// DenseNet's pre-activation ones): BatchNorm's attributes, then an optional relu of its output
/// (act_type). The executor may keep its data and output in oneDNN's blocked layout (data_format:
/// both the same), 4-D with whole blocks of channels over axis 1.
struct SgBatchNormParam {
  BatchNormParam bn;
  FusedAct act_type = FusedAct::kNone;
  ActFormat data_format = ActFormat::kPlain;

  template <class V>
  void Visit(V& v) {
    bn.Visit(v);
    v(act_type, Attr("act_type").Default("None").Choices(kSgBatchNormActs).Doc("activation after the BatchNorm"));
    v(data_format,
      Attr("data_format").Default("plain").Choices(kActFormats).Doc("memory layout of input 'data' and the output"));
  }
  void Validate() const {
    CheckParam(!bn.output_mean_var, "output_mean_var is not fused: use BatchNorm");
    CheckParam(data_format == ActFormat::kPlain || bn.axis == 1 || bn.axis == -3,
               "a blocked data_format needs axis 1 (got " + std::to_string(bn.axis) + ")");
  }
};

/// What a BatchNorm kernel computes with: data as `outer` blocks of `c` channels of `inner`
/// elements, the attributes in float, and (from CheckBatchNormSetup) where data is among the
/// kernel's inputs.
struct BatchNormGeometry {
  int64_t outer = 1, c = 1, inner = 1;
  float eps = 1e-3f, momentum = 0.9f;
  bool fix_gamma = true, use_global = false;
  size_t data = 0;
};

inline BatchNormGeometry BatchNormGeometryOf(std::string_view op, const BatchNormParam& p,
                                             std::span<const int64_t> shape) {
  const AxisSplit v = p.Split(op, shape);
  return {v.outer, v.len, v.inner, static_cast<float>(p.eps), p.momentum, p.fix_gamma, p.use_global_stats};
}

template <class Setup>
BatchNormGeometry CheckBatchNormSetup(const Setup& s, bool backward) {
  size_t data = 0;
  std::vector<const std::remove_cvref_t<decltype(s.inputs[0])>*> per;
  if (!backward) {
    s.ExpectCounts(3, -1, 2);
    if (s.outputs.size() != 1 && s.outputs.size() != 3)
      OpError(WEFT_ERR_INVALID_ARGUMENT, s.op_name, "expects 1 or 3 outputs");
    if (ShapeSize(s.outputs[0].shape) != ShapeSize(s.inputs[0].shape))
      OpError(WEFT_ERR_INVALID_ARGUMENT, s.op_name, "output must have data's shape");
    per = {&s.inputs[1], &s.inputs[2], &s.aux[0], &s.aux[1]};
    for (size_t i = 1; i < s.outputs.size(); ++i) per.push_back(&s.outputs[i]);
  } else {
    s.ExpectCounts(-1, 3);
    if (s.inputs.size() != 9 && s.inputs.size() != 11)
      OpError(WEFT_ERR_INVALID_ARGUMENT, s.op_name,
              "expects 9 or 11 inputs (out-grads, data, gamma, beta, output, mean, inv_std, moving stats), got " +
                  std::to_string(s.inputs.size()));
    data = s.inputs.size() - 8;
    for (size_t i : {1, 2, 4, 5, 6, 7}) per.push_back(&s.inputs[data + i]);
  }
  BatchNormGeometry g = BatchNormGeometryOf(s.op_name, s.template Params<BatchNormParam>(), s.inputs[data].shape);
  BatchNormParam::CheckPerChannel(s.op_name, g.c, per);
  g.data = data;
  return g;
}

}  // namespace weft::sdk

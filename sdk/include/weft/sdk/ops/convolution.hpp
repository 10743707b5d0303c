// weft SDK ops — the convolution family: Convolution and Deconvolution (MXNet 1.9's
// ConvolutionParam and DeconvolutionParam), their output-size rules, and the one geometry every
// backend's kernels run on. Core's shape inference and every kernel use these, so they agree.
//
// Geometry: 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW) convolutions as one 3-D geometry: 2-D with
// d = kd = 1, 1-D also with h = kh = 1. A backend that implements 3-D says so to
// ConvolutionGeometry (max_spatial 3); the others keep refusing it by name.
// Weight (num_filter, C / num_group, k...), bias (num_filter). A Deconvolution is the data
// gradient of the convolution that maps its output back to its input: DeconvolutionGeometry
// returns that convolution's geometry (its input is the deconvolution's output).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "weft/sdk/cpp/params.hpp"

namespace weft::sdk {

/// MXNet's `layout` attribute (None = channels first). The channels-last ones are accepted by
/// Convolution's definition (shape inference, so Gluon can build such layers) and refused by name
/// by every kernel (ConvolutionGeometry); Deconvolution and Pooling refuse them when parsed.
enum class ConvLayout { kNone, kNCW, kNCHW, kNCDHW, kNWC, kNHWC, kNDHWC };
inline constexpr std::string_view kConvLayouts[] = {"None", "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"};
/// Whether `layout` puts the channels last (NWC, NHWC, NDHWC).
inline bool IsChannelsLast(ConvLayout layout) { return layout >= ConvLayout::kNWC; }
inline constexpr std::string_view kCudnnTune[] = {"None", "fastest", "limited_workspace", "off"};

/// The layout word of a convolution with `spatial` axes.
inline std::string_view ConvLayoutFor(size_t spatial) { return spatial == 1 ? "NCW" : spatial == 2 ? "NCHW" : "NCDHW"; }

/// Output extent of one spatial axis: (in + 2·pad − (dilate·(k − 1) + 1)) / stride + 1. The caller
/// checks ConvKernelFits first.
WEFT_SDK_HD inline int64_t ConvOutExtent(int64_t in, int64_t k, int64_t stride, int64_t dilate, int64_t pad) {
  return (in + 2 * pad - (dilate * (k - 1) + 1)) / stride + 1;
}
/// Whether the dilated kernel fits the padded axis.
WEFT_SDK_HD inline bool ConvKernelFits(int64_t in, int64_t k, int64_t dilate, int64_t pad) {
  return dilate * (k - 1) + 1 <= in + 2 * pad;
}
/// Deconvolution's output extent: stride·(in − 1) + dilate·(k − 1) + 1 − 2·pad + adj.
WEFT_SDK_HD inline int64_t DeconvOutExtent(int64_t in, int64_t k, int64_t stride, int64_t dilate, int64_t pad,
                                           int64_t adj) {
  return stride * (in - 1) + dilate * (k - 1) + 1 - 2 * pad + adj;
}

namespace detail {
// kernel, stride, dilate, pad (and adj) checked and filled to the kernel's length.
inline void CompleteSpatial(const Tuple& kernel, std::initializer_list<std::pair<Tuple*, int64_t>> tuples,
                            std::string_view names) {
  const size_t n = kernel.size();
  CheckParam(n >= 1 && n <= 3, "kernel must have 1 to 3 dimensions, got " + FormatTuple(kernel));
  for (auto [t, fill] : tuples) {
    if (t->empty()) t->assign(n, fill);
    CheckParam(t->size() == n, std::string(names) + " must have as many dimensions as kernel " + FormatTuple(kernel) +
                                   " (got " + FormatTuple(*t) + ")");
  }
}
// The layout fits a kernel of `spatial` axes; channels-last layouts only where `channels_last`
// (Convolution's definition).
inline void CheckLayout(ConvLayout layout, size_t spatial, bool channels_last) {
  const std::string name(kConvLayouts[static_cast<size_t>(layout)]);
  CheckParam(channels_last || !IsChannelsLast(layout),
             "layout " + name + ": only channels-first layouts (NCW, NCHW, NCDHW) are supported");
  const std::string first(ConvLayoutFor(spatial));
  const std::string last = first.substr(0, 1) + first.substr(2) + "C";  // NCHW -> NHWC
  CheckParam(layout == ConvLayout::kNone || name == first || name == last,
             "layout " + name + " does not fit a " + std::to_string(spatial) + "-d kernel (use " + first + ")");
}
// num_filter a multiple of num_group, and a layout that fits the kernel (both structs' last checks).
inline void CheckGroupsAndLayout(int64_t num_filter, int64_t num_group, ConvLayout layout, size_t spatial,
                                 bool channels_last) {
  CheckParam(num_filter % num_group == 0, "num_filter (" + std::to_string(num_filter) +
                                              ") must be a positive multiple of num_group (" +
                                              std::to_string(num_group) + ")");
  CheckLayout(layout, spatial, channels_last);
}
}  // namespace detail

/// Convolution's attributes (MXNet 1.9 ConvolutionParam). After parsing, stride, dilate and pad
/// have one entry per kernel axis.
struct ConvolutionParam {
  Tuple kernel, stride, dilate, pad;
  int64_t num_filter = 0, num_group = 1, workspace = 1024;
  bool no_bias = false;
  std::string cudnn_tune;
  bool cudnn_off = false;
  ConvLayout layout = ConvLayout::kNone;

  template <class V>
  void Visit(V& v) {
    v(kernel, Attr("kernel").Doc("kernel size, e.g. (3, 3)"));
    v(stride, Attr("stride").Default("()").Doc("stride per spatial axis (default 1)"));
    v(dilate, Attr("dilate").Default("()").Doc("dilation per spatial axis (default 1)"));
    v(pad, Attr("pad").Default("()").Doc("zero padding per spatial axis, both sides (default 0)"));
    v(num_filter, Attr("num_filter").Min(1).Doc("number of output channels"));
    v(num_group, Attr("num_group").Default("1").Min(1).Doc("number of groups"));
    v(workspace, Attr("workspace").Default("1024").Min(0).MxType("long (non-negative)").Ignored());
    v(no_bias, Attr("no_bias").Default("False").Doc("drop the bias input"));
    v(cudnn_tune, Attr("cudnn_tune").Default("None").Choices(kCudnnTune).Ignored());
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
    v(layout, Attr("layout")
                  .Default("None")
                  .Choices(kConvLayouts)
                  .Doc("data layout; None = channels first (channels-last layouts infer shapes; no kernel runs them)"));
  }
  void Validate() {
    detail::CompleteSpatial(kernel, {{&stride, 1}, {&dilate, 1}, {&pad, 0}}, "stride, dilate and pad");
    for (size_t i = 0; i < kernel.size(); ++i)
      CheckParam(kernel[i] > 0 && stride[i] > 0 && dilate[i] > 0 && pad[i] >= 0,
                 "kernel, stride and dilate must be positive and pad non-negative (kernel " + FormatTuple(kernel) +
                     ", stride " + FormatTuple(stride) + ", dilate " + FormatTuple(dilate) + ", pad " +
                     FormatTuple(pad) + ")");
    detail::CheckGroupsAndLayout(num_filter, num_group, layout, kernel.size(), true);
  }
};

/// An activation folded into a fused convolution (SgConvParam): none, max(x, 0),
/// min(max(x, lo), hi) (MXNet's `clip`, e.g. MobileNet v2's ReLU6), or Activation's tanh,
/// sigmoid 1 / (1 + exp(-x)) and softrelu log(1 + exp(x)) (LeNet's tanh; MXNet's oneDNN subgraph
/// pass fuses the same four Activation types). The last three came with SDK 2.1's header
/// revision: a device whose `_sg_conv` takes them says so in its attribute "fused_activations"
/// (the words, comma-separated); without it the executor fuses only relu and clip.
enum class FusedAct { kNone, kRelu, kClip, kTanh, kSigmoid, kSoftrelu };
inline constexpr std::string_view kFusedActs[] = {"None", "relu", "clip", "tanh", "sigmoid", "softrelu"};
/// Whether a fused convolution computes `a` inside itself (none, relu, clip). The cpu `_sg_conv`
/// applies tanh, sigmoid and softrelu after the convolution (oneDNN 2.6's post-ops for them were
/// slower than a pass of their own), so the executor's fusion ends a chain at one of them: no sum
/// or depthwise stage follows it.
inline constexpr bool FusedActInside(FusedAct a) {
  return a == FusedAct::kNone || a == FusedAct::kRelu || a == FusedAct::kClip;
}

/// How a fused convolution's activation tensor lies in memory (SgConvParam data_format and
/// out_format): weft's plain NCHW, or oneDNN's blocked nChw8c / nChw16c (channels in blocks of 8
/// or 16 innermost: (N, C / b, H, W, b)). With C a multiple of the block a blocked tensor has the
/// plain one's size, so only the two ends of a value agree on its layout.
enum class ActFormat { kPlain, kNChw8c, kNChw16c };
inline constexpr std::string_view kActFormats[] = {"plain", "nChw8c", "nChw16c"};
/// Channels per block of `f` (1 for plain).
inline int64_t ActFormatBlock(ActFormat f) { return f == ActFormat::kNChw16c ? 16 : f == ActFormat::kNChw8c ? 8 : 1; }

/// `_sg_conv`, weft's fused inference convolution (made by the executor's graph fusion for
/// forward-only binds, core/executor/fuse_conv.h; MXNet's oneDNN subgraph pass makes the
/// equivalent `_sg_mkldnn_conv`): Convolution's attributes, then what the convolution's output
/// goes through, in this order: BatchNorm over the channels (with_bn, with that BatchNorm's eps,
/// momentum, fix_gamma and use_global_stats), an activation (act_type), the element-wise sum with
/// one more input (with_sum), an activation of the sum (postsum_act_type). The executor may keep
/// values between fused convolutions in oneDNN's blocked layout (data_format, out_format; the sum
/// is in out_format): such a value is read by nothing else and is never a graph output.
/// With with_dw (no sum then), the result goes on through a depthwise 3x3 convolution (pad 1,
/// stride dw_stride, one group per channel) and its own optional BatchNorm and activation, the
/// dw_ attributes; the convolution is then a 1x1 one (stride 1, no pad, one group): MobileNet v2's
/// expansion and depthwise layers, run as one oneDNN primitive with a depthwise post-op.
struct SgConvParam {
  ConvolutionParam conv;
  bool with_bn = false;
  double bn_eps = 1e-3;
  float bn_momentum = 0.9f;
  bool bn_fix_gamma = true, bn_use_global_stats = false;
  FusedAct act_type = FusedAct::kNone;
  double act_min = 0, act_max = 0;
  bool with_sum = false;
  FusedAct postsum_act_type = FusedAct::kNone;
  double postsum_act_min = 0, postsum_act_max = 0;
  ActFormat data_format = ActFormat::kPlain, out_format = ActFormat::kPlain;
  bool with_dw = false;
  int64_t dw_stride = 1;
  bool dw_no_bias = true, dw_with_bn = false;
  double dw_bn_eps = 1e-3;
  float dw_bn_momentum = 0.9f;
  bool dw_bn_fix_gamma = true, dw_bn_use_global_stats = false;
  FusedAct dw_act_type = FusedAct::kNone;
  double dw_act_min = 0, dw_act_max = 0;

  template <class V>
  void Visit(V& v) {
    conv.Visit(v);
    v(with_bn, Attr("with_bn").Default("False").Doc("BatchNorm of the convolution's output"));
    v(bn_eps, Attr("bn_eps").Default("0.001").Doc("the BatchNorm's eps"));
    v(bn_momentum, Attr("bn_momentum").Default("0.9").Doc("the BatchNorm's momentum (training mode)"));
    v(bn_fix_gamma, Attr("bn_fix_gamma").Default("True").Doc("the BatchNorm's fix_gamma"));
    v(bn_use_global_stats, Attr("bn_use_global_stats").Default("False").Doc("the BatchNorm's use_global_stats"));
    v(act_type, Attr("act_type").Default("None").Choices(kFusedActs).Doc("activation after the BatchNorm"));
    v(act_min, Attr("act_min").Default("0").Doc("lower bound of act_type clip"));
    v(act_max, Attr("act_max").Default("0").Doc("upper bound of act_type clip"));
    v(with_sum, Attr("with_sum").Default("False").Doc("add input 'sum' (same shape as the output)"));
    v(postsum_act_type, Attr("postsum_act_type").Default("None").Choices(kFusedActs).Doc("activation after the sum"));
    v(postsum_act_min, Attr("postsum_act_min").Default("0").Doc("lower bound of postsum_act_type clip"));
    v(postsum_act_max, Attr("postsum_act_max").Default("0").Doc("upper bound of postsum_act_type clip"));
    v(data_format, Attr("data_format").Default("plain").Choices(kActFormats).Doc("memory layout of input 'data'"));
    v(out_format,
      Attr("out_format").Default("plain").Choices(kActFormats).Doc("memory layout of the output and input 'sum'"));
    v(with_dw, Attr("with_dw").Default("False").Doc("a depthwise 3x3 convolution of the result"));
    v(dw_stride, Attr("dw_stride").Default("1").Min(1).Max(2).Doc("the depthwise convolution's stride"));
    v(dw_no_bias, Attr("dw_no_bias").Default("True").Doc("the depthwise convolution has no input 'dw_bias'"));
    v(dw_with_bn, Attr("dw_with_bn").Default("False").Doc("BatchNorm of the depthwise convolution's output"));
    v(dw_bn_eps, Attr("dw_bn_eps").Default("0.001").Doc("the depthwise BatchNorm's eps"));
    v(dw_bn_momentum, Attr("dw_bn_momentum").Default("0.9").Doc("the depthwise BatchNorm's momentum"));
    v(dw_bn_fix_gamma, Attr("dw_bn_fix_gamma").Default("True").Doc("the depthwise BatchNorm's fix_gamma"));
    v(dw_bn_use_global_stats,
      Attr("dw_bn_use_global_stats").Default("False").Doc("the depthwise BatchNorm's use_global_stats"));
    v(dw_act_type,
      Attr("dw_act_type").Default("None").Choices(kFusedActs).Doc("activation after the depthwise BatchNorm"));
    v(dw_act_min, Attr("dw_act_min").Default("0").Doc("lower bound of dw_act_type clip"));
    v(dw_act_max, Attr("dw_act_max").Default("0").Doc("upper bound of dw_act_type clip"));
  }
  /// The depthwise stage of a with_dw node as a node of its own: its convolution (3x3, pad 1,
  /// dw_stride, a group per channel), BatchNorm and activation; its data is this node's result.
  SgConvParam DwStage() const {
    SgConvParam d;
    d.conv.kernel = {3, 3};
    d.conv.stride = {dw_stride, dw_stride};
    d.conv.dilate = {1, 1};
    d.conv.pad = {1, 1};
    d.conv.num_filter = d.conv.num_group = conv.num_filter;
    d.conv.no_bias = dw_no_bias;
    d.with_bn = dw_with_bn;
    d.bn_eps = dw_bn_eps;
    d.bn_momentum = dw_bn_momentum;
    d.bn_fix_gamma = dw_bn_fix_gamma;
    d.bn_use_global_stats = dw_bn_use_global_stats;
    d.act_type = dw_act_type;
    d.act_min = dw_act_min;
    d.act_max = dw_act_max;
    return d;
  }
  /// This node without its depthwise stage.
  SgConvParam FirstStage() const {
    SgConvParam f = *this;
    f.with_dw = false;
    return f;
  }
  void Validate() {
    conv.Validate();
    CheckParam(!with_dw || (!with_sum && conv.kernel == Tuple{1, 1} && conv.stride == Tuple{1, 1} &&
                            conv.pad == Tuple{0, 0} && conv.dilate == Tuple{1, 1} && conv.num_group == 1),
               "with_dw needs a 1x1 convolution with stride 1, no pad, one group and no sum (kernel " +
                   FormatTuple(conv.kernel) + ")");
    CheckParam(dw_act_type != FusedAct::kClip || dw_act_min <= dw_act_max, "dw_act_min must not exceed dw_act_max");
    CheckParam(act_type != FusedAct::kClip || act_min <= act_max, "act_min must not exceed act_max");
    CheckParam(postsum_act_type != FusedAct::kClip || postsum_act_min <= postsum_act_max,
               "postsum_act_min must not exceed postsum_act_max");
    CheckParam(with_sum || postsum_act_type == FusedAct::kNone, "postsum_act_type needs with_sum");
    CheckParam((data_format == ActFormat::kPlain && out_format == ActFormat::kPlain) || conv.kernel.size() == 2,
               "blocked data_format / out_format need a 2-D convolution (kernel " + FormatTuple(conv.kernel) + ")");
  }
};

/// Deconvolution's attributes (MXNet 1.9 DeconvolutionParam). After parsing, stride, dilate, pad
/// and adj have one entry per kernel axis.
struct DeconvolutionParam {
  Tuple kernel, stride, dilate, pad, adj, target_shape;
  int64_t num_filter = 0, num_group = 1, workspace = 512;
  bool no_bias = true;
  std::string cudnn_tune;
  bool cudnn_off = false;
  ConvLayout layout = ConvLayout::kNone;

  template <class V>
  void Visit(V& v) {
    v(kernel, Attr("kernel").Doc("kernel size, e.g. (4, 4)"));
    v(stride, Attr("stride").Default("()").Doc("stride per spatial axis (default 1)"));
    v(dilate, Attr("dilate").Default("()").Doc("dilation per spatial axis (default 1)"));
    v(pad, Attr("pad").Default("()").Doc("padding removed from both sides of the output (default 0)"));
    v(adj, Attr("adj").Default("()").Doc("extra cells at the end of each output axis (default 0)"));
    v(target_shape,
      Attr("target_shape").Default("()").Doc("output spatial size; when set, pad and adj are derived from it"));
    v(num_filter, Attr("num_filter").Min(1).Doc("number of output channels"));
    v(num_group, Attr("num_group").Default("1").Min(1).Doc("number of groups"));
    v(workspace, Attr("workspace").Default("512").Min(0).MxType("long (non-negative)").Ignored());
    v(no_bias, Attr("no_bias").Default("True").Doc("drop the bias input (MXNet's default is True)"));
    v(cudnn_tune, Attr("cudnn_tune").Default("None").Choices(kCudnnTune).Ignored());
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
    v(layout, Attr("layout")
                  .Default("None")
                  .Choices(kConvLayouts)
                  .Doc("data layout; None = channels first (only channels-first layouts are supported)"));
  }
  void Validate() {
    detail::CompleteSpatial(kernel, {{&stride, 1}, {&dilate, 1}, {&pad, 0}, {&adj, 0}}, "stride, dilate, pad and adj");
    for (size_t i = 0; i < kernel.size(); ++i) {
      CheckParam(kernel[i] > 0 && stride[i] > 0 && dilate[i] > 0 && pad[i] >= 0 && adj[i] >= 0,
                 "kernel, stride and dilate must be positive, pad and adj non-negative");
      CheckParam(adj[i] < stride[i],
                 "adj " + FormatTuple(adj) + " must be smaller than stride " + FormatTuple(stride) + " on each axis");
    }
    detail::CheckGroupsAndLayout(num_filter, num_group, layout, kernel.size(), false);
  }
  /// Whether target_shape is given (MXNet: any non-zero entry).
  bool UsesTargetShape() const {
    for (int64_t t : target_shape)
      if (t != 0) return true;
    return false;
  }
  /// MXNet's DeconvolutionParam::InferPad: pad and adj per spatial axis for input extents `in`
  /// (-1 = unknown: that axis keeps the attributes' values). With target_shape they are derived
  /// so the output has exactly that size; otherwise they are the attributes'. Throws when
  /// target_shape does not fit.
  std::pair<Tuple, Tuple> PadAdj(std::span<const int64_t> in) const {
    Tuple p = pad, a = adj;
    if (!UsesTargetShape()) return {p, a};
    CheckParam(target_shape.size() == kernel.size(), "target_shape " + FormatTuple(target_shape) +
                                                         " must have as many entries as kernel " + FormatTuple(kernel));
    for (size_t i = 0; i < kernel.size() && i < in.size(); ++i) {
      if (in[i] < 0) continue;
      const int64_t full = DeconvOutExtent(in[i], kernel[i], stride[i], dilate[i], 0, 0);
      CheckParam(full >= target_shape[i], "target_shape " + FormatTuple(target_shape) + " exceeds the largest output " +
                                              std::to_string(full) + " on spatial axis " + std::to_string(i));
      a[i] = (full - target_shape[i]) % 2;
      p[i] = (full - target_shape[i] + 1) / 2;
    }
    return {p, a};
  }
};

/// A 1-D, 2-D or 3-D convolution as one 3-D geometry (2-D: d = kd = 1 with stride 1, pad 0,
/// dilate 1 on d; 1-D also h = kh = 1).
struct ConvGeometry {
  int spatial = 2;  // 1, 2 or 3
  int64_t n = 0, c = 0, d = 1, h = 1, w = 1, f = 0, groups = 1;
  int64_t kd = 1, kh = 1, kw = 1, sd = 1, sh = 1, sw = 1, pd = 0, ph = 0, pw = 0, dd = 1, dh = 1, dw = 1;
  int64_t od = 1, oh = 1, ow = 1;
  bool bias = true;

  int64_t cg() const { return c / groups; }                 // input channels per group
  int64_t fg() const { return f / groups; }                 // filters per group
  int64_t col_rows() const { return cg() * kd * kh * kw; }  // rows of one group's column matrix
  int64_t in_plane() const { return d * h * w; }
  int64_t out_plane() const { return od * oh * ow; }
  /// Multiply-adds of the forward pass (for GFLOP/s figures: 2 flops each).
  double Macs() const { return static_cast<double>(n) * f * out_plane() * col_rows(); }
};

namespace detail {
// (h, w) of a spatial tuple: 1-D gives (fill, value).
inline std::pair<int64_t, int64_t> HW(const Tuple& t, int64_t fill) {
  return t.size() >= 2 ? std::pair{t[t.size() - 2], t.back()} : std::pair{fill, t[0]};
}
// d of a spatial tuple: fill below 3-D.
inline int64_t D(const Tuple& t, int64_t fill) { return t.size() == 3 ? t[0] : fill; }
}  // namespace detail

/// The geometry of Convolution `op` with attributes `p` on data x, weight, bias (nullptr without)
/// and output y. Checks every shape (weight (F, C/groups, k...), bias (F), output (N, F, spatial...));
/// throws WEFT_ERR_UNSUPPORTED for kernels of more than `max_spatial` axes (3-D for the backends
/// that implement it), WEFT_ERR_INVALID_ARGUMENT for a mismatch, naming it.
inline ConvGeometry ConvolutionGeometry(std::string_view op, const ConvolutionParam& p, std::span<const int64_t> x,
                                        std::span<const int64_t> weight, std::span<const int64_t> bias, bool has_bias,
                                        std::span<const int64_t> y, int max_spatial = 2) {
  ConvGeometry g;
  g.spatial = static_cast<int>(p.kernel.size());
  if (IsChannelsLast(p.layout))
    OpError(WEFT_ERR_UNSUPPORTED, op,
            "layout " + std::string(kConvLayouts[static_cast<size_t>(p.layout)]) +
                " is not implemented by weft's kernels (channels first only: transpose the data to " +
                std::string(ConvLayoutFor(p.kernel.size())) + ")");
  if (g.spatial < 1 || g.spatial > max_spatial)
    OpError(WEFT_ERR_UNSUPPORTED, op,
            max_spatial == 3 ? "only 1-D to 3-D convolution, kernel " + FormatTuple(p.kernel)
                             : "only 1-D and 2-D convolution on this device, kernel " + FormatTuple(p.kernel));
  if (static_cast<int>(x.size()) != g.spatial + 2)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "data " + ShapeText(x) + " must have " + std::to_string(g.spatial + 2) + " axes for kernel " +
                FormatTuple(p.kernel));
  std::tie(g.kh, g.kw) = detail::HW(p.kernel, 1);
  std::tie(g.sh, g.sw) = detail::HW(p.stride, 1);
  std::tie(g.dh, g.dw) = detail::HW(p.dilate, 1);
  std::tie(g.ph, g.pw) = detail::HW(p.pad, 0);
  g.kd = detail::D(p.kernel, 1), g.sd = detail::D(p.stride, 1), g.dd = detail::D(p.dilate, 1),
  g.pd = detail::D(p.pad, 0);
  g.n = x[0], g.c = x[1], g.d = g.spatial == 3 ? x[2] : 1, g.h = g.spatial >= 2 ? x[x.size() - 2] : 1, g.w = x.back();
  g.f = p.num_filter, g.groups = p.num_group, g.bias = !p.no_bias;
  if (g.c % g.groups != 0)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "num_group " + std::to_string(g.groups) + " must divide channels " + std::to_string(g.c) +
                " and num_filter " + std::to_string(g.f));
  if (!ConvKernelFits(g.d, g.kd, g.dd, g.pd) || !ConvKernelFits(g.h, g.kh, g.dh, g.ph) ||
      !ConvKernelFits(g.w, g.kw, g.dw, g.pw))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "kernel " + FormatTuple(p.kernel) + " (dilated) is larger than the padded data " + ShapeText(x));
  g.od = ConvOutExtent(g.d, g.kd, g.sd, g.dd, g.pd);
  g.oh = ConvOutExtent(g.h, g.kh, g.sh, g.dh, g.ph);
  g.ow = ConvOutExtent(g.w, g.kw, g.sw, g.dw, g.pw);
  std::vector<int64_t> ws = {g.f, g.cg()};
  ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
  if (!std::equal(weight.begin(), weight.end(), ws.begin(), ws.end()))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "weight " + ShapeText(weight) + " must be " + FormatTuple(ws) + " for data " + ShapeText(x));
  if (g.bias && (!has_bias || ShapeSize(bias) != g.f))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "bias must have num_filter = " + std::to_string(g.f) + " elements");
  std::vector<int64_t> want = {g.n, g.f};
  if (g.spatial == 3) want.push_back(g.od);
  if (g.spatial >= 2) want.push_back(g.oh);
  want.push_back(g.ow);
  if (!std::equal(y.begin(), y.end(), want.begin(), want.end()))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "output " + ShapeText(y) + " must be " + FormatTuple(want));
  return g;
}

/// The geometry of the convolution behind Deconvolution `op` with attributes `p`, data x (N, C,
/// spatial...), weight (C, num_filter / num_group, k...), bias (nullptr without) and output y: that
/// convolution's input is y (num_filter channels), its output x, its filters x's C channels.
/// pad and adj come from PadAdj (target_shape) and the output shape must match them. Throws as
/// ConvolutionGeometry.
inline ConvGeometry DeconvolutionGeometry(std::string_view op, const DeconvolutionParam& p, std::span<const int64_t> x,
                                          std::span<const int64_t> weight, std::span<const int64_t> bias, bool has_bias,
                                          std::span<const int64_t> y) {
  ConvGeometry g;
  g.spatial = static_cast<int>(p.kernel.size());
  if (g.spatial != 1 && g.spatial != 2)
    OpError(WEFT_ERR_UNSUPPORTED, op, "only 1-D and 2-D deconvolution, kernel " + FormatTuple(p.kernel));
  if (static_cast<int>(x.size()) != g.spatial + 2 || static_cast<int>(y.size()) != g.spatial + 2)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "data " + ShapeText(x) + " and output " + ShapeText(y) + " must have " + std::to_string(g.spatial + 2) +
                " axes for kernel " + FormatTuple(p.kernel));
  const auto [pad, adj] = p.PadAdj(x.subspan(2));
  std::tie(g.kh, g.kw) = detail::HW(p.kernel, 1);
  std::tie(g.sh, g.sw) = detail::HW(p.stride, 1);
  std::tie(g.dh, g.dw) = detail::HW(p.dilate, 1);
  std::tie(g.ph, g.pw) = detail::HW(pad, 0);
  const auto [ah, aw] = detail::HW(adj, 0);
  g.groups = p.num_group;
  g.n = x[0], g.f = x[1], g.c = p.num_filter;  // the convolution's filters: the data's channels
  g.h = g.spatial == 2 ? y[2] : 1, g.w = y.back();
  g.oh = g.spatial == 2 ? x[2] : 1, g.ow = x.back();
  g.bias = false;  // the convolution's; the deconvolution's bias is added to its output
  if (g.f % g.groups != 0)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "num_group " + std::to_string(g.groups) + " must divide num_filter " + std::to_string(g.c) +
                " and the data's channels " + std::to_string(g.f));
  if (g.h != DeconvOutExtent(g.oh, g.kh, g.sh, g.dh, g.ph, ah) ||
      g.w != DeconvOutExtent(g.ow, g.kw, g.sw, g.dw, g.pw, aw) || y[0] != g.n || y[1] != g.c)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "output " + ShapeText(y) + " does not match data " + ShapeText(x) + " deconvolved to num_filter " +
                std::to_string(g.c) + " channels with these attributes");
  std::vector<int64_t> ws = {g.f, g.c / g.groups};
  ws.insert(ws.end(), p.kernel.begin(), p.kernel.end());
  if (!std::equal(weight.begin(), weight.end(), ws.begin(), ws.end()))
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "weight " + ShapeText(weight) + " must be " + FormatTuple(ws) + " for data " + ShapeText(x));
  if (has_bias && ShapeSize(bias) != g.c)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "bias must have num_filter = " + std::to_string(g.c) + " elements");
  return g;
}

}  // namespace weft::sdk

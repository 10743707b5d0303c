// weft SDK ops — Pooling (MXNet 1.9's PoolingParam): its attributes, its output-size rule and
// the window geometry every backend's kernels walk. Core's shape inference and every kernel use
// these, so they agree.
//
// Windows follow MXNet's pool.h: output position o starts at o·stride − pad, is cut at in + pad
// (the divisor of avg with count_include_pad), then clipped to the input. 1-D (NCW) pooling is
// the 2-D geometry with h = kh = 1.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/params.hpp"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::sdk {

enum class PoolType { kMax, kAvg, kSum };
inline constexpr std::string_view kPoolTypes[] = {"max", "avg", "sum"};
enum class PoolingConvention { kValid, kFull, kSame };
inline constexpr std::string_view kPoolingConventions[] = {"valid", "full", "same"};

/// Output extent of one pooled axis: valid = floor, full = ceil of (in + 2·pad − k) / stride, plus
/// one; same = ceil(in / stride). 0 when the window does not fit (valid/full).
WEFT_SDK_HD inline int64_t PoolOutExtent(int64_t in, int64_t k, int64_t stride, int64_t pad,
                                         PoolingConvention convention) {
  if (convention == PoolingConvention::kSame) return (in + stride - 1) / stride;
  const int64_t span = in + 2 * pad - k;
  if (span < 0) return 0;
  return (convention == PoolingConvention::kFull ? (span + stride - 1) / stride : span / stride) + 1;
}

/// Pooling's attributes. After parsing (unless global_pool or an empty kernel), stride and pad
/// have one entry per kernel axis.
struct PoolingParam {
  Tuple kernel;
  PoolType pool_type = PoolType::kMax;
  bool global_pool = false, cudnn_off = false;
  PoolingConvention pooling_convention = PoolingConvention::kValid;
  Tuple stride, pad;
  std::optional<int64_t> p_value;
  std::optional<bool> count_include_pad;
  ConvLayout layout = ConvLayout::kNone;
  // Inference executors keep activations in oneDNN's blocked layout through a pooling
  // (core/executor/fuse_conv.h): data in data_format, output in out_format, which is data_format,
  // or plain when the output is 1x1 (both layouts then lie alike in memory).
  ActFormat data_format = ActFormat::kPlain, out_format = ActFormat::kPlain;

  template <class V>
  void Visit(V& v) {
    v(kernel, Attr("kernel").Default("()").Doc("pooling window (ignored with global_pool)"));
    v(pool_type, Attr("pool_type").Default("max").Choices(kPoolTypes).Doc("reduction over the window"));
    v(global_pool, Attr("global_pool").Default("False").Doc("pool over all spatial positions"));
    v(cudnn_off, Attr("cudnn_off").Default("False").Ignored());
    v(pooling_convention,
      Attr("pooling_convention")
          .Default("valid")
          .Choices(kPoolingConventions)
          .Doc("output size rounding: valid = floor, full = ceil, same = ceil(in / stride) (1-d only)"));
    v(stride, Attr("stride").Default("()").Doc("stride per spatial axis (default 1)"));
    v(pad, Attr("pad").Default("()").Doc("zero padding per spatial axis (default 0)"));
    v(p_value, Attr("p_value").Default("None").DefaultOnly().Doc("Lp pooling power (lp pooling is not supported)"));
    v(count_include_pad, Attr("count_include_pad")
                             .Default("None")
                             .Doc("avg pooling divides by the window's size including padding (None = True, as "
                                  "MXNet) or, when False, by the number of real cells in it"));
    v(layout, Attr("layout").Default("None").Choices(kConvLayouts).Doc("data layout; None = channels first"));
    v(data_format, Attr("data_format").Default("plain").Choices(kActFormats).Doc("memory layout of the data"));
    v(out_format, Attr("out_format").Default("plain").Choices(kActFormats).Doc("memory layout of the output"));
  }
  void Validate() {
    CheckParam(!IsChannelsLast(layout), "layout " + std::string(kConvLayouts[static_cast<size_t>(layout)]) +
                                            ": only channels-first layouts (NCW, NCHW, NCDHW) are supported");
    CheckParam(
        out_format == data_format || out_format == ActFormat::kPlain,
        "out_format " + std::string(kActFormats[static_cast<size_t>(out_format)]) + " must be data_format or plain");
    CheckParam(data_format == ActFormat::kPlain || global_pool || kernel.size() == 2,
               "blocked data_format needs 2-D pooling (kernel " + FormatTuple(kernel) + ")");
    // An empty kernel is an error only when shapes are inferred (MXNet creates such nodes).
    if (global_pool || kernel.empty()) return;
    CheckParam(kernel.size() <= 3, "kernel must have 1 to 3 dimensions, got " + FormatTuple(kernel));
    if (stride.empty()) stride.assign(kernel.size(), 1);
    if (pad.empty()) pad.assign(kernel.size(), 0);
    CheckParam(
        stride.size() == kernel.size() && pad.size() == kernel.size(),
        "stride " + FormatTuple(stride) + " and pad " + FormatTuple(pad) + " must match kernel " + FormatTuple(kernel));
    for (size_t i = 0; i < kernel.size(); ++i)
      CheckParam(kernel[i] > 0 && stride[i] > 0 && pad[i] >= 0, "kernel " + FormatTuple(kernel) + " and stride " +
                                                                    FormatTuple(stride) + " must be positive, pad " +
                                                                    FormatTuple(pad) + " non-negative");
    CheckParam(pooling_convention != PoolingConvention::kSame || (kernel.size() == 1 && pool_type == PoolType::kMax),
               "pooling_convention 'same' supports 1-d max pooling only (as MXNet)");
  }
};

/// One output position's window: its rows [h0, h1) and columns [w0, w1) clipped to the input, and
/// avg's factor (1 / count; 0 when the count is 0).
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  float div;
};
/// The same in 3-D: depth slices [d0, d1) too.
struct PoolWindow3 {
  int64_t d0, d1, h0, h1, w0, w1;
  float div;
};

/// A 1-D, 2-D or 3-D pooling as one 3-D geometry (2-D: id = kd = 1; 1-D also ih = kh = 1).
struct PoolGeometry {
  PoolType type = PoolType::kMax;
  bool count_include_pad = true;
  int64_t n = 0, c = 0, id = 1, ih = 1, iw = 1, od = 1, oh = 1, ow = 1;
  int64_t kd = 1, kh = 1, kw = 1, sd = 1, sh = 1, sw = 1, pd = 0, ph = 0, pw = 0;

  int64_t in_plane() const { return id * ih * iw; }
  int64_t out_plane() const { return od * oh * ow; }

  /// The window of output (oz, oy, ox): on each axis it starts at o·stride − pad and is cut at
  /// in + pad (MXNet's pool.h); avg with count_include_pad divides by that cut size, otherwise by
  /// the cells left after clipping to the real input.
  WEFT_SDK_HD PoolWindow3 Window3(int64_t oz, int64_t oy, int64_t ox) const {
    int64_t d0, d1, h0, h1, w0, w1;
    const int64_t padded =
        Clip(oz, sd, pd, kd, id, d0, d1) * Clip(oy, sh, ph, kh, ih, h0, h1) * Clip(ox, sw, pw, kw, iw, w0, w1);
    const int64_t real = (d1 > d0 ? d1 - d0 : 0) * (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0);
    const int64_t cnt = type == PoolType::kAvg ? (count_include_pad ? padded : real) : 1;
    return {d0, d1, h0, h1, w0, w1, cnt > 0 ? 1.0f / static_cast<float>(cnt) : 0.0f};
  }
  /// The window of output (oy, ox) of a 1-D or 2-D pooling.
  WEFT_SDK_HD PoolWindow Window(int64_t oy, int64_t ox) const {
    const PoolWindow3 w = Window3(0, oy, ox);
    return {w.h0, w.h1, w.w0, w.w1, w.div};
  }

 private:
  // One axis of a window: [lo, hi) clipped to the input; returns its extent before clipping to
  // the input (cut at in + pad).
  WEFT_SDK_HD static int64_t Clip(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in, int64_t& lo,
                                  int64_t& hi) {
    lo = o * stride - pad;
    hi = lo + k < in + pad ? lo + k : in + pad;
    const int64_t padded = hi - lo;
    lo = lo > 0 ? lo : 0;
    hi = hi < in ? hi : in;
    return padded;
  }
};

/// The geometry of Pooling `op` with attributes `p` on data x and output y. Throws
/// WEFT_ERR_UNSUPPORTED for pooling of more than `max_spatial` axes (3-D for the backends that
/// implement it) and pooling_convention same (no backend has it), WEFT_ERR_INVALID_ARGUMENT when
/// the shapes do not fit the attributes.
inline PoolGeometry PoolingGeometry(std::string_view op, const PoolingParam& p, std::span<const int64_t> x,
                                    std::span<const int64_t> y, int max_spatial = 2) {
  PoolGeometry g;
  g.type = p.pool_type;
  g.count_include_pad = p.count_include_pad.value_or(true);
  if (p.pooling_convention == PoolingConvention::kSame)
    OpError(WEFT_ERR_UNSUPPORTED, op, "pooling_convention 'same' is not implemented");
  const int sp = static_cast<int>(x.size()) - 2;
  if (sp < 1 || sp > max_spatial)
    OpError(WEFT_ERR_UNSUPPORTED, op,
            "data " + ShapeText(x) +
                (max_spatial == 3 ? ": only 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW) pooling"
                                  : ": only 1-D (NCW) and 2-D (NCHW) pooling on this device"));
  g.n = x[0], g.c = x[1], g.id = sp == 3 ? x[2] : 1, g.ih = sp >= 2 ? x[x.size() - 2] : 1, g.iw = x.back();
  if (p.global_pool) {
    g.kd = g.id, g.kh = g.ih, g.kw = g.iw;
  } else {
    if (p.kernel.empty()) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "kernel is required unless global_pool=True");
    if (static_cast<int>(p.kernel.size()) != sp)
      OpError(
          WEFT_ERR_INVALID_ARGUMENT, op,
          "kernel " + FormatTuple(p.kernel) + " must have " + std::to_string(sp) + " entries for data " + ShapeText(x));
    // Axis a of the attributes fills the last `sp` of (d, h, w).
    int64_t* k[3] = {&g.kd, &g.kh, &g.kw};
    int64_t* st[3] = {&g.sd, &g.sh, &g.sw};
    int64_t* pa[3] = {&g.pd, &g.ph, &g.pw};
    for (int a = 0; a < sp; ++a) {
      const int at = 3 - sp + a;
      *k[at] = p.kernel[static_cast<size_t>(a)], *st[at] = p.stride[static_cast<size_t>(a)];
      *pa[at] = p.pad[static_cast<size_t>(a)];
    }
  }
  if (g.kd > g.id + 2 * g.pd || g.kh > g.ih + 2 * g.ph || g.kw > g.iw + 2 * g.pw)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "kernel larger than the padded input " + ShapeText(x));
  g.od = p.global_pool ? 1 : PoolOutExtent(g.id, g.kd, g.sd, g.pd, p.pooling_convention);
  g.oh = p.global_pool ? 1 : PoolOutExtent(g.ih, g.kh, g.sh, g.ph, p.pooling_convention);
  g.ow = p.global_pool ? 1 : PoolOutExtent(g.iw, g.kw, g.sw, g.pw, p.pooling_convention);
  if (ShapeSize(y) != g.n * g.c * g.out_plane())
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "output " + ShapeText(y) + " does not match the pooled size (" +
                (sp == 3 ? std::to_string(g.od) + ", " : "") + std::to_string(g.oh) + ", " + std::to_string(g.ow) +
                ")");
  return g;
}

}  // namespace weft::sdk

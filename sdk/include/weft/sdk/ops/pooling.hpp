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
  }
  void Validate() {
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

/// A 1-D or 2-D pooling as one 2-D geometry (1-D: h = kh = 1).
struct PoolGeometry {
  PoolType type = PoolType::kMax;
  bool count_include_pad = true;
  int64_t n = 0, c = 0, ih = 1, iw = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;

  /// The window of output (oy, ox).
  WEFT_SDK_HD PoolWindow Window(int64_t oy, int64_t ox) const {
    int64_t h0 = oy * sh - ph, w0 = ox * sw - pw;
    int64_t h1 = h0 + kh < ih + ph ? h0 + kh : ih + ph;
    int64_t w1 = w0 + kw < iw + pw ? w0 + kw : iw + pw;
    const int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = h0 > 0 ? h0 : 0, w0 = w0 > 0 ? w0 : 0;
    h1 = h1 < ih ? h1 : ih, w1 = w1 < iw ? w1 : iw;
    const int64_t real = (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0);
    const int64_t cnt = type == PoolType::kAvg ? (count_include_pad ? padded : real) : 1;
    return {h0, h1, w0, w1, cnt > 0 ? 1.0f / static_cast<float>(cnt) : 0.0f};
  }
};

/// The geometry of Pooling `op` with attributes `p` on data x and output y. Throws
/// WEFT_ERR_UNSUPPORTED for 3-D pooling and pooling_convention same (no backend has them),
/// WEFT_ERR_INVALID_ARGUMENT when the shapes do not fit the attributes.
inline PoolGeometry PoolingGeometry(std::string_view op, const PoolingParam& p, std::span<const int64_t> x,
                                    std::span<const int64_t> y) {
  PoolGeometry g;
  g.type = p.pool_type;
  g.count_include_pad = p.count_include_pad.value_or(true);
  if (p.pooling_convention == PoolingConvention::kSame)
    OpError(WEFT_ERR_UNSUPPORTED, op, "pooling_convention 'same' is not implemented");
  const int sp = static_cast<int>(x.size()) - 2;
  if (sp != 1 && sp != 2)
    OpError(WEFT_ERR_UNSUPPORTED, op, "data " + ShapeText(x) + ": only 1-D (NCW) and 2-D (NCHW) pooling");
  g.n = x[0], g.c = x[1], g.ih = sp == 2 ? x[2] : 1, g.iw = x.back();
  if (p.global_pool) {
    g.kh = g.ih, g.kw = g.iw;
  } else {
    if (p.kernel.empty()) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "kernel is required unless global_pool=True");
    if (static_cast<int>(p.kernel.size()) != sp)
      OpError(
          WEFT_ERR_INVALID_ARGUMENT, op,
          "kernel " + FormatTuple(p.kernel) + " must have " + std::to_string(sp) + " entries for data " + ShapeText(x));
    if (sp == 2) {
      g.kh = p.kernel[0], g.kw = p.kernel[1], g.sh = p.stride[0], g.sw = p.stride[1], g.ph = p.pad[0], g.pw = p.pad[1];
    } else {
      g.kw = p.kernel[0], g.sw = p.stride[0], g.pw = p.pad[0];
    }
  }
  if (g.kh > g.ih + 2 * g.ph || g.kw > g.iw + 2 * g.pw)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op, "kernel larger than the padded input " + ShapeText(x));
  g.oh = p.global_pool ? 1 : PoolOutExtent(g.ih, g.kh, g.sh, g.ph, p.pooling_convention);
  g.ow = p.global_pool ? 1 : PoolOutExtent(g.iw, g.kw, g.sw, g.pw, p.pooling_convention);
  if (ShapeSize(y) != g.n * g.c * g.oh * g.ow)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            "output " + ShapeText(y) + " does not match the pooled size (" + std::to_string(g.oh) + ", " +
                std::to_string(g.ow) + ")");
  return g;
}

}  // namespace weft::sdk

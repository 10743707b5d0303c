// weft GPU kernel layer — Pooling (MXNet 1.9, the cpu plugin's nn_pooling.cc semantics): max / avg /
// sum over 1-D (NCW) and 2-D (NCHW) windows, global_pool, pooling_convention valid or full,
// stride, zero padding, count_include_pad. A window starts at o·stride − pad, is cut at in + pad
// (the avg divisor with count_include_pad), then clipped to the input. A window wholly in the
// padding yields 0. Backward routes max's gradient to the first maximum of its window.
//
// Forward: work item = output element. Backward: work item = one (sample, channel) plane, whose
// windows overlap only inside it, so items never write the same element (no atomics).
#pragma once

#include <string>
#include <vector>

#include "gpu_ops.h"

namespace weft::WEFT_GPU_NS {

enum class PoolType { kMax, kAvg, kSum };

struct PoolGeometry {
  PoolType type = PoolType::kMax;
  bool count_include_pad = true;
  int64_t n = 0, c = 0, ih = 1, iw = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;

  /// Clipped window of output (oy, ox) and its avg divisor (1 / count; 0 when empty).
  WEFT_HD void Window(int64_t oy, int64_t ox, int64_t& h0, int64_t& h1, int64_t& w0, int64_t& w1, float& div) const {
    h0 = oy * sh - ph, w0 = ox * sw - pw;
    h1 = h0 + kh < ih + ph ? h0 + kh : ih + ph;
    w1 = w0 + kw < iw + pw ? w0 + kw : iw + pw;
    const int64_t padded = (h1 - h0) * (w1 - w0);
    h0 = h0 > 0 ? h0 : 0, w0 = w0 > 0 ? w0 : 0;
    h1 = h1 < ih ? h1 : ih, w1 = w1 < iw ? w1 : iw;
    const int64_t real = (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0);
    const int64_t cnt = type == PoolType::kAvg ? (count_include_pad ? padded : real) : 1;
    div = cnt > 0 ? 1.0f / static_cast<float>(cnt) : 0.0f;
  }
};

inline int64_t PoolOutSize(int64_t in, int64_t k, int64_t s, int64_t p, bool full) {
  const int64_t span = in + 2 * p - k;
  if (span < 0) return 0;
  return (full ? (span + s - 1) / s : span / s) + 1;
}

inline PoolGeometry ParsePooling(const KernelSetup& s, const TensorDesc& x, const TensorDesc& y) {
  PoolGeometry g;
  const std::string t = s.attrs.GetEnum("pool_type", {"max", "avg", "sum", "lp"}, "max");
  if (t == "lp") Unsupported(s, "pool_type 'lp' is not implemented on GPUs");
  g.type = t == "max" ? PoolType::kMax : t == "avg" ? PoolType::kAvg : PoolType::kSum;
  const std::string conv = s.attrs.GetEnum("pooling_convention", {"valid", "full", "same"}, "valid");
  if (conv == "same") Unsupported(s, "pooling_convention 'same' is not implemented on GPUs");
  const std::string layout = s.attrs.GetString("layout", "");
  if (!layout.empty() && layout != "NCHW" && layout != "NCW")
    Unsupported(s, "layout " + layout + " is not implemented on GPUs (NCW and NCHW are)");
  g.count_include_pad = s.attrs.GetBool("count_include_pad", true);
  const bool global = s.attrs.GetBool("global_pool", false);
  const int sp = x.ndim() - 2;
  if (sp != 1 && sp != 2) Unsupported(s, "data " + ShapeOf(x) + ": only 1-D (NCW) and 2-D (NCHW) pooling");
  g.n = x.dim(0), g.c = x.dim(1), g.ih = sp == 2 ? x.dim(2) : 1, g.iw = x.dim(-1);
  auto pair = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = s.attrs.GetTuple(name, {});
    if (v.empty()) v.assign(static_cast<size_t>(sp), dflt);
    if (v.size() != static_cast<size_t>(sp))
      Invalid(s, std::string(name) + " " + sdk::FormatTuple(v) + " must have " + std::to_string(sp) + " entries");
    return sp == 2 ? std::pair{v[0], v[1]} : std::pair{int64_t{1}, v[0]};
  };
  if (global) {
    g.kh = g.ih, g.kw = g.iw;
  } else {
    if (s.attrs.GetTuple("kernel", {}).empty()) Invalid(s, "kernel is required unless global_pool=True");
    std::tie(g.kh, g.kw) = pair("kernel", 1);
    std::tie(g.sh, g.sw) = pair("stride", 1);
    std::tie(g.ph, g.pw) = pair("pad", 0);
    if (sp == 1) g.sh = 1, g.ph = 0;
  }
  if (g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.ph < 0 || g.pw < 0)
    Invalid(s, "kernel and stride must be positive and pad non-negative");
  if (g.kh > g.ih + 2 * g.ph || g.kw > g.iw + 2 * g.pw) Invalid(s, "kernel larger than the padded input " + ShapeOf(x));
  const bool full = conv == "full";
  g.oh = global ? 1 : PoolOutSize(g.ih, g.kh, g.sh, g.ph, full);
  g.ow = global ? 1 : PoolOutSize(g.iw, g.kw, g.sw, g.pw, full);
  if (y.size() != g.n * g.c * g.oh * g.ow)
    Invalid(s, "output " + ShapeOf(y) + " does not match the pooled size (" + std::to_string(g.oh) + ", " +
                   std::to_string(g.ow) + ")");
  return g;
}

template <class Assign>
struct PoolForwardMap {
  PoolGeometry g;
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t ox = e % g.ow, oy = e / g.ow % g.oh, plane = e / (g.ow * g.oh);
    const float* xp = x + plane * g.ih * g.iw;
    int64_t h0, h1, w0, w1;
    float div;
    g.Window(oy, ox, h0, h1, w0, w1, div);
    float acc = g.type == PoolType::kMax ? -INFINITY : 0.0f;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t q = w0; q < w1; ++q) {
        const float v = xp[h * g.iw + q];
        acc = g.type == PoolType::kMax ? fmaxf(acc, v) : acc + v;
      }
    if (g.type == PoolType::kAvg) acc *= div;
    if (h0 >= h1 || w0 >= w1) acc = 0.0f;
    Assign::Put(y[e], acc);
  }
};

/// One (sample, channel) plane: gx (zeroed first unless `add`) += each window's share of gy.
struct PoolBackwardPlaneMap {
  PoolGeometry g;
  const float* gy;
  const float* x;
  float* gx;
  bool add;
  WEFT_HD void operator()(int64_t plane) const {
    const float* xp = x + plane * g.ih * g.iw;
    const float* gyp = gy + plane * g.oh * g.ow;
    float* gp = gx + plane * g.ih * g.iw;
    if (!add)
      for (int64_t i = 0; i < g.ih * g.iw; ++i) gp[i] = 0.0f;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t h0, h1, w0, w1;
        float div;
        g.Window(oy, ox, h0, h1, w0, w1, div);
        const float go = gyp[oy * g.ow + ox];
        if (g.type == PoolType::kMax) {
          int64_t best = -1;
          float mx = -INFINITY;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t q = w0; q < w1; ++q)
              if (best < 0 || xp[h * g.iw + q] > mx) mx = xp[h * g.iw + q], best = h * g.iw + q;
          if (best >= 0) gp[best] += go;
        } else {
          const float v = g.type == PoolType::kAvg ? go * div : go;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t q = w0; q < w1; ++q) gp[h * g.iw + q] += v;
        }
      }
  }
};

template <class L>
class PoolingKernel {
 public:
  explicit PoolingKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    g_ = ParsePooling(s, s.inputs[0], s.outputs[0]);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, g_.n * g_.c * g_.oh * g_.ow,
             PoolForwardMap<decltype(a)>{g_, L::template Ptr<const float>(c.inputs[0]),
                                         L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  PoolGeometry g_;
};

// _backward_Pooling: inputs out_grad, data, output; output the data gradient.
template <class L>
class PoolingBackwardKernel {
 public:
  explicit PoolingBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(3, 1);
    RequireFloat32(s);
    g_ = ParsePooling(s, s.inputs[1], s.inputs[0]);
  }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_NULL) return;
    L::Map(
        c, g_.n * g_.c,
        PoolBackwardPlaneMap{g_, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
                             L::template Ptr<float>(c.outputs[0]), c.req[0] == WEFT_REQ_ADD});
  }

 private:
  PoolGeometry g_;
};

template <class L>
void RegisterPooling(sdk::KernelTable& t) {
  t.Add<PoolingKernel<L>>("Pooling", kF32);
  t.Add<PoolingBackwardKernel<L>>("_backward_Pooling", kF32);
}

}  // namespace weft::WEFT_GPU_NS

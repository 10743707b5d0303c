// weft GPU kernel layer — Convolution as im2col + GEMM (MXNet 1.9 attributes; 1-D NCW and 2-D
// NCHW, groups, stride, pad, dilate). The HIP plugin's convolution (Debian's ROCm has no MIOpen),
// and the CUDA plugin's fallback for geometries cuDNN rejects. GEMMs go through L::Gemm (cuBLAS
// on CUDA, the tiled kernel elsewhere).
//
// Per sample: Im2colMap lays the receptive fields out as a (C·kh·kw) × (oh·ow) matrix in the
// workspace; per group, Y_g = W_g · col_g. Backward: the weight gradient accumulates
// gY_g · col_gᵀ over the samples; the data gradient is col_g = W_gᵀ · gY_g scattered back by
// Col2imMap, which gathers for each input element the columns that read it (no atomics).
// Deconvolution (the data gradient of a convolution) runs on the same pieces: Im2colDeconv.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_ops.h"

namespace weft::WEFT_GPU_NS {

/// 1-D convolutions are stored as 2-D with h = kh = 1.
struct ConvGeometry {
  int spatial = 2;
  int64_t n = 0, c = 0, h = 1, w = 1, f = 0, groups = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, oh = 1, ow = 1;
  bool bias = true;
  int64_t cg() const { return c / groups; }
  int64_t fg() const { return f / groups; }
  int64_t col_rows() const { return cg() * kh * kw; }  // rows of one group's column matrix
  int64_t plane() const { return oh * ow; }
  uint64_t col_bytes() const { return static_cast<uint64_t>(c * kh * kw * oh * ow) * sizeof(float); }
};

/// Attribute `name` as (h, w): `dflt` per axis when absent; 1-D kernels give (dflt, value).
inline std::pair<int64_t, int64_t> SpatialPair(const KernelSetup& s, const char* name, int spatial, int64_t dflt) {
  std::vector<int64_t> v = s.attrs.GetTuple(name, {});
  if (v.empty()) v.assign(static_cast<size_t>(spatial), dflt);
  if (v.size() != static_cast<size_t>(spatial))
    Invalid(s, std::string(name) + " " + sdk::FormatTuple(v) + " must have as many entries as kernel");
  return spatial == 2 ? std::pair{v[0], v[1]} : std::pair{dflt, v[0]};
}

/// The channels-first layouts the layer implements (NCW, NCHW); throws for others.
inline void RequireChannelsFirst(const KernelSetup& s) {
  const std::string layout = s.attrs.GetString("layout", "");
  if (!layout.empty() && layout != "None" && layout != "NCHW" && layout != "NCW")
    Unsupported(s, "layout " + layout + " is not implemented on GPUs (NCW and NCHW are)");
}

/// MXNet's Convolution attributes against data (x), weight, bias and output (y) shapes; throws
/// naming the mismatch.
inline ConvGeometry ParseConvolution(const KernelSetup& s, const TensorDesc& x, const TensorDesc& wt,
                                     const TensorDesc* b, const TensorDesc& y) {
  ConvGeometry g;
  RequireChannelsFirst(s);
  const std::vector<int64_t> kernel = s.attrs.GetTuple("kernel");
  g.spatial = static_cast<int>(kernel.size());
  if (g.spatial != 1 && g.spatial != 2)
    Unsupported(s, "only 1-D and 2-D convolution, kernel " + sdk::FormatTuple(kernel));
  if (x.ndim() != g.spatial + 2)
    Invalid(s, "data " + ShapeOf(x) + " must have " + std::to_string(g.spatial + 2) + " axes");
  auto pair = [&](const char* name, int64_t dflt) { return SpatialPair(s, name, g.spatial, dflt); };
  std::tie(g.kh, g.kw) = pair("kernel", 1);
  std::tie(g.sh, g.sw) = pair("stride", 1);
  std::tie(g.dh, g.dw) = pair("dilate", 1);
  std::tie(g.ph, g.pw) = pair("pad", 0);
  g.n = x.dim(0), g.c = x.dim(1), g.h = g.spatial == 2 ? x.dim(2) : 1, g.w = x.dim(-1);
  g.f = s.attrs.GetInt("num_filter");
  g.groups = s.attrs.GetInt("num_group", 1);
  g.bias = !s.attrs.GetBool("no_bias", false);
  if (g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0)
    Invalid(s, "kernel, stride and dilate must be positive and pad non-negative");
  if (g.groups < 1 || g.c % g.groups != 0 || g.f % g.groups != 0)
    Invalid(s, "num_group " + std::to_string(g.groups) + " must divide channels " + std::to_string(g.c) +
                   " and num_filter " + std::to_string(g.f));
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  if (eh > g.h + 2 * g.ph || ew > g.w + 2 * g.pw)
    Invalid(s, "the dilated kernel is larger than the padded data " + ShapeOf(x));
  g.oh = (g.h + 2 * g.ph - eh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - ew) / g.sw + 1;
  std::vector<int64_t> ws = {g.f, g.cg()};
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  if (wt.shape != ws) Invalid(s, "weight " + ShapeOf(wt) + " must be " + sdk::FormatTuple(ws));
  if (g.bias && (b == nullptr || b->size() != g.f))
    Invalid(s, "bias must have num_filter = " + std::to_string(g.f) + " elements");
  std::vector<int64_t> ys = {g.n, g.f};
  if (g.spatial == 2) ys.push_back(g.oh);
  ys.push_back(g.ow);
  if (y.shape != ys) Invalid(s, "output " + ShapeOf(y) + " must be " + sdk::FormatTuple(ys));
  return g;
}

/// The geometry as plain numbers for device code.
struct ConvDims {
  int64_t c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
  explicit ConvDims(const ConvGeometry& g)
      : c(g.c),
        h(g.h),
        w(g.w),
        kh(g.kh),
        kw(g.kw),
        sh(g.sh),
        sw(g.sw),
        ph(g.ph),
        pw(g.pw),
        dh(g.dh),
        dw(g.dw),
        oh(g.oh),
        ow(g.ow) {}
};

/// col[(ci·kh + ki)·kw + kj][oy·ow + ox] = x[ci][oy·sh − ph + ki·dh][ox·sw − pw + kj·dw] (0 in the
/// padding), for one sample x (c, h, w). Item = one element of col.
struct Im2colMap {
  ConvDims d;
  const float* x;
  float* col;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t plane = d.oh * d.ow, row = e / plane, p = e % plane;
    const int64_t kj = row % d.kw, ki = row / d.kw % d.kh, ci = row / (d.kw * d.kh);
    const int64_t iy = p / d.ow * d.sh - d.ph + ki * d.dh, ix = p % d.ow * d.sw - d.pw + kj * d.dw;
    col[e] = iy >= 0 && iy < d.h && ix >= 0 && ix < d.w ? x[(ci * d.h + iy) * d.w + ix] : 0.0f;
  }
};

/// The adjoint of Im2colMap: gx[ci][iy][ix] (=|+=) Σ of the col entries Im2colMap filled from it.
/// Item = one element of gx (one sample).
template <class Assign>
struct Col2imMap {
  ConvDims d;
  const float* col;
  float* gx;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t ix = e % d.w, iy = e / d.w % d.h, ci = e / (d.w * d.h);
    float s = 0.0f;
    for (int64_t ki = 0; ki < d.kh; ++ki) {
      const int64_t ty = iy + d.ph - ki * d.dh;
      if (ty < 0 || ty % d.sh != 0 || ty / d.sh >= d.oh) continue;
      for (int64_t kj = 0; kj < d.kw; ++kj) {
        const int64_t tx = ix + d.pw - kj * d.dw;
        if (tx < 0 || tx % d.sw != 0 || tx / d.sw >= d.ow) continue;
        s += col[((ci * d.kh + ki) * d.kw + kj) * d.oh * d.ow + ty / d.sh * d.ow + tx / d.sw];
      }
    }
    Assign::Put(gx[e], s);
  }
};

/// y[i][f][p] += b[f]; item = element of y (all samples).
struct AddChannelBiasMap {
  const float* b;
  float* y;
  int64_t f, plane;
  WEFT_HD void operator()(int64_t e) const { y[e] += b[e / plane % f]; }
};

/// gb[f] (=|+=) Σ_{i,p} gy[i][f][p]; item = channel.
template <class Assign>
struct ChannelSumMap {
  const float* gy;
  float* gb;
  int64_t n, f, plane;
  WEFT_HD void operator()(int64_t ch) const {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < plane; ++p) s += gy[(i * f + ch) * plane + p];
    Assign::Put(gb[ch], s);
  }
};

/// The im2col convolution of one geometry, forward and backward, for launcher L. `ws`: the
/// workspace (col_bytes()).
template <class L>
struct Im2colConv {
  ConvGeometry g;

  void Forward(const DeviceCall& c, const float* x, const float* wt, const float* b, float* y, int32_t req,
               float* ws) const {
    const int64_t rows = g.col_rows(), plane = g.plane();
    for (int64_t i = 0; i < g.n; ++i) {
      L::Map(c, g.c * g.kh * g.kw * plane, Im2colMap{ConvDims(g), x + i * g.c * g.h * g.w, ws});
      for (int64_t grp = 0; grp < g.groups; ++grp)
        L::Gemm(c, MakeGemm(false, false, g.fg(), plane, rows, wt + grp * g.fg() * rows, rows, ws + grp * rows * plane,
                            plane, req, y + (i * g.f + grp * g.fg()) * plane, plane));
    }
    if (b != nullptr) L::Map(c, g.n * g.f * plane, AddChannelBiasMap{b, y, g.f, plane});
  }

  void Backward(const DeviceCall& c, const float* gy, const float* x, const float* wt, float* gx, int32_t req_x,
                float* gw, int32_t req_w, float* gb, int32_t req_b, float* ws) const {
    const int64_t rows = g.col_rows(), plane = g.plane();
    if (req_w == WEFT_REQ_WRITE || req_w == WEFT_REQ_WRITE_INPLACE)
      if (g.n == 0) L::Map(c, g.f * rows, FillMap{gw, 0.0f});
    for (int64_t i = 0; i < g.n; ++i) {
      const float* gyi = gy + i * g.f * plane;
      if (req_w != WEFT_REQ_NULL) {  // gW_g (=|+=) gY_g · col_gᵀ, summed over the samples
        L::Map(c, g.c * g.kh * g.kw * plane, Im2colMap{ConvDims(g), x + i * g.c * g.h * g.w, ws});
        for (int64_t grp = 0; grp < g.groups; ++grp)
          L::Gemm(c,
                  MakeGemm(false, true, g.fg(), rows, plane, gyi + grp * g.fg() * plane, plane, ws + grp * rows * plane,
                           plane, i == 0 ? req_w : WEFT_REQ_ADD, gw + grp * g.fg() * rows, rows));
      }
      if (req_x != WEFT_REQ_NULL) {  // col_g = W_gᵀ · gY_g, then scattered back
        for (int64_t grp = 0; grp < g.groups; ++grp)
          L::Gemm(c, MakeGemm(true, false, rows, plane, g.fg(), wt + grp * g.fg() * rows, rows,
                              gyi + grp * g.fg() * plane, plane, WEFT_REQ_WRITE, ws + grp * rows * plane, plane));
        WithReq(req_x, [&](auto a) {
          L::Map(c, g.c * g.h * g.w, Col2imMap<decltype(a)>{ConvDims(g), ws, gx + i * g.c * g.h * g.w});
        });
      }
    }
    if (gb != nullptr)
      WithReq(req_b, [&](auto a) { L::Map(c, g.f, ChannelSumMap<decltype(a)>{gy, gb, g.n, g.f, plane}); });
  }
};

template <class L>
class ConvolutionKernel {
 public:
  explicit ConvolutionKernel(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    conv_.g = ParseConvolution(s, s.inputs[0], s.inputs[1], s.inputs.size() > 2 ? &s.inputs[2] : nullptr, s.outputs[0]);
    s.ExpectCounts(conv_.g.bias ? 3 : 2, 1);
  }
  uint64_t WorkspaceBytes() const { return conv_.g.col_bytes(); }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_NULL) return;
    conv_.Forward(c, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
                  conv_.g.bias ? L::template Ptr<const float>(c.inputs[2]) : nullptr,
                  L::template Ptr<float>(c.outputs[0]), c.req[0], L::template Ptr<float>(c.workspace));
  }

 private:
  Im2colConv<L> conv_;
};

// Inputs out_grad, data, weight[, bias]; outputs the data, weight[, bias] gradients.
template <class L>
class ConvolutionBackwardKernel {
 public:
  explicit ConvolutionBackwardKernel(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data, weight[, bias]");
    conv_.g = ParseConvolution(s, s.inputs[1], s.inputs[2], s.inputs.size() > 3 ? &s.inputs[3] : nullptr, s.inputs[0]);
    s.ExpectCounts(conv_.g.bias ? 4 : 3, conv_.g.bias ? 3 : 2);
  }
  uint64_t WorkspaceBytes() const { return conv_.g.col_bytes(); }
  void Compute(const DeviceCall& c) const {
    conv_.Backward(c, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
                   L::template Ptr<const float>(c.inputs[2]), L::template Ptr<float>(c.outputs[0]), c.req[0],
                   L::template Ptr<float>(c.outputs[1]), c.req[1],
                   conv_.g.bias ? L::template Ptr<float>(c.outputs[2]) : nullptr,
                   conv_.g.bias ? c.req[2] : WEFT_REQ_NULL, L::template Ptr<float>(c.workspace));
  }

 private:
  Im2colConv<L> conv_;
};

// ---- Deconvolution ---------------------------------------------------------------------------

/// MXNet's Deconvolution attributes (kernel, stride, dilate, pad, adj, target_shape, num_filter,
/// num_group) against data x (N, C, spatial...), weight (C, num_filter / num_group, k...), bias
/// and output y. Returns the geometry of the convolution whose data gradient the deconvolution
/// is: that convolution's input is y (num_filter channels), its output x, its filters x's C
/// channels, its weight the deconvolution's as MXNet stores it. With a non-zero target_shape, pad
/// and adj follow from the shapes as MXNet's InferPad derives them; otherwise they are the
/// attributes', and the output shape must agree with them. Throws naming the mismatch.
inline ConvGeometry ParseDeconvolution(const KernelSetup& s, const TensorDesc& x, const TensorDesc& wt,
                                       const TensorDesc* b, const TensorDesc& y) {
  RequireChannelsFirst(s);
  const std::vector<int64_t> kernel = s.attrs.GetTuple("kernel");
  ConvGeometry g;
  g.spatial = static_cast<int>(kernel.size());
  if (g.spatial != 1 && g.spatial != 2)
    Unsupported(s, "only 1-D and 2-D deconvolution, kernel " + sdk::FormatTuple(kernel));
  if (x.ndim() != g.spatial + 2 || y.ndim() != g.spatial + 2)
    Invalid(s, "data " + ShapeOf(x) + " and output " + ShapeOf(y) + " must have " + std::to_string(g.spatial + 2) +
                   " axes for kernel " + sdk::FormatTuple(kernel));
  auto pair = [&](const char* name, int64_t dflt) { return SpatialPair(s, name, g.spatial, dflt); };
  std::tie(g.kh, g.kw) = pair("kernel", 1);
  std::tie(g.sh, g.sw) = pair("stride", 1);
  std::tie(g.dh, g.dw) = pair("dilate", 1);
  if (g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1)
    Invalid(s, "kernel, stride and dilate must be positive");
  g.groups = s.attrs.GetInt("num_group", 1);
  g.n = x.dim(0), g.f = x.dim(1), g.c = s.attrs.GetInt("num_filter");
  g.h = g.spatial == 2 ? y.dim(2) : 1, g.w = y.dim(-1);
  g.oh = g.spatial == 2 ? x.dim(2) : 1, g.ow = x.dim(-1);
  g.bias = false;  // the convolution's; the deconvolution's bias is added to y by Im2colDeconv
  if (g.groups < 1 || g.c % g.groups != 0 || g.f % g.groups != 0)
    Invalid(s, "num_group " + std::to_string(g.groups) + " must divide num_filter " + std::to_string(g.c) +
                   " and the data's channels " + std::to_string(g.f));
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  const int64_t full_h = g.sh * (g.oh - 1) + eh, full_w = g.sw * (g.ow - 1) + ew;  // pad 0, adj 0
  const std::vector<int64_t> target = s.attrs.GetTuple("target_shape", {});
  const bool use_target = std::any_of(target.begin(), target.end(), [](int64_t t) { return t != 0; });
  int64_t ah = 0, aw = 0;
  if (use_target) {
    g.ph = (full_h - g.h + 1) / 2, g.pw = (full_w - g.w + 1) / 2;
    ah = (full_h - g.h) % 2, aw = (full_w - g.w) % 2;
  } else {
    std::tie(g.ph, g.pw) = pair("pad", 0);
    std::tie(ah, aw) = pair("adj", 0);
  }
  if (g.ph < 0 || g.pw < 0 || ah < 0 || aw < 0 || ah >= g.sh || aw >= g.sw)
    Invalid(s, "pad and adj must be non-negative and adj smaller than stride");
  if (g.h != full_h - 2 * g.ph + ah || g.w != full_w - 2 * g.pw + aw || y.dim(0) != g.n || y.dim(1) != g.c)
    Invalid(s, "output " + ShapeOf(y) + " does not match data " + ShapeOf(x) + " deconvolved to num_filter " +
                   std::to_string(g.c) + " channels with these attributes");
  std::vector<int64_t> ws = {g.f, g.c / g.groups};
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  if (wt.shape != ws)
    Invalid(s, "weight " + ShapeOf(wt) + " must be " + sdk::FormatTuple(ws) + " for data " + ShapeOf(x));
  if (b != nullptr && b->size() != g.c) Invalid(s, "bias must have num_filter = " + std::to_string(g.c) + " elements");
  return g;
}

/// A deconvolution on the im2col convolution `conv` behind it (ParseDeconvolution):
///   forward          y  = conv's data gradient of x        (col = Wᵀ·x, col2im)  + bias
///   backward data    gx = conv's forward of gy              (im2col, W·col)
///   backward weight  gW = conv's weight gradient with x as its out-grad and gy as its data
/// all through L::Gemm (cuBLAS on CUDA, the tiled kernel elsewhere). Workspace: col_bytes().
template <class L>
struct Im2colDeconv {
  Im2colConv<L> conv;

  int64_t out_plane() const { return conv.g.h * conv.g.w; }
  void Forward(const DeviceCall& c, const float* x, const float* wt, const float* b, float* y, int32_t req,
               float* ws) const {
    if (req == WEFT_REQ_NULL) return;
    conv.Backward(c, x, nullptr, wt, y, req, nullptr, WEFT_REQ_NULL, nullptr, WEFT_REQ_NULL, ws);
    if (b != nullptr) L::Map(c, conv.g.n * conv.g.c * out_plane(), AddChannelBiasMap{b, y, conv.g.c, out_plane()});
  }
  void Backward(const DeviceCall& c, const float* gy, const float* x, const float* wt, float* gx, int32_t req_x,
                float* gw, int32_t req_w, float* gb, int32_t req_b, float* ws) const {
    if (req_x != WEFT_REQ_NULL) conv.Forward(c, gy, wt, nullptr, gx, req_x, ws);
    conv.Backward(c, x, gy, wt, nullptr, WEFT_REQ_NULL, gw, req_w, nullptr, WEFT_REQ_NULL, ws);
    if (gb != nullptr)
      WithReq(req_b, [&](auto a) {
        L::Map(c, conv.g.c, ChannelSumMap<decltype(a)>{gy, gb, conv.g.n, conv.g.c, out_plane()});
      });
  }
};

// Inputs data, weight[, bias] (no_bias defaults to True, as MXNet's); output y.
template <class L>
class DeconvolutionKernel {
 public:
  explicit DeconvolutionKernel(const KernelSetup& s) : bias_(!s.attrs.GetBool("no_bias", true)) {
    RequireFloat32(s);
    s.ExpectCounts(bias_ ? 3 : 2, 1);
    d_.conv.g = ParseDeconvolution(s, s.inputs[0], s.inputs[1], bias_ ? &s.inputs[2] : nullptr, s.outputs[0]);
  }
  uint64_t WorkspaceBytes() const { return d_.conv.g.col_bytes(); }
  void Compute(const DeviceCall& c) const {
    d_.Forward(c, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
               bias_ ? L::template Ptr<const float>(c.inputs[2]) : nullptr, L::template Ptr<float>(c.outputs[0]),
               c.req[0], L::template Ptr<float>(c.workspace));
  }

 private:
  bool bias_;
  Im2colDeconv<L> d_;
};

// Inputs out_grad, data, weight[, bias]; outputs the data, weight[, bias] gradients.
template <class L>
class DeconvolutionBackwardKernel {
 public:
  explicit DeconvolutionBackwardKernel(const KernelSetup& s) : bias_(!s.attrs.GetBool("no_bias", true)) {
    RequireFloat32(s);
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
    d_.conv.g = ParseDeconvolution(s, s.inputs[1], s.inputs[2], bias_ ? &s.inputs[3] : nullptr, s.inputs[0]);
  }
  uint64_t WorkspaceBytes() const { return d_.conv.g.col_bytes(); }
  void Compute(const DeviceCall& c) const {
    d_.Backward(c, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
                L::template Ptr<const float>(c.inputs[2]), L::template Ptr<float>(c.outputs[0]), c.req[0],
                L::template Ptr<float>(c.outputs[1]), c.req[1], bias_ ? L::template Ptr<float>(c.outputs[2]) : nullptr,
                bias_ ? c.req[2] : WEFT_REQ_NULL, L::template Ptr<float>(c.workspace));
  }

 private:
  bool bias_;
  Im2colDeconv<L> d_;
};

/// Registers Deconvolution and its backward (every GPU plugin: im2col + L::Gemm).
template <class L>
void RegisterDeconvolution(sdk::KernelTable& t) {
  t.Add<DeconvolutionKernel<L>>("Deconvolution", kF32);
  t.Add<DeconvolutionBackwardKernel<L>>("_backward_Deconvolution", kF32);
}

/// Registers the im2col Convolution kernels (the HIP plugin's and the host tests'; the CUDA plugin
/// registers its cuDNN kernels, which fall back to Im2colConv).
template <class L>
void RegisterIm2colConvolution(sdk::KernelTable& t) {
  t.Add<ConvolutionKernel<L>>("Convolution", kF32);
  t.Add<ConvolutionBackwardKernel<L>>("_backward_Convolution", kF32);
}

}  // namespace weft::WEFT_GPU_NS

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

#include <span>

#include "gpu_gemm.h"
#include "gpu_kernel.h"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose convolution falls back to these classes.
inline constexpr const char* kGpuNnConvSource = __FILE__;

/// 1-D convolutions are stored as 2-D with h = kh = 1 (the SDK's geometry, shared by every backend).
using sdk::ConvGeometry;

/// Bytes of the column matrix of one sample (all groups): the im2col workspace.
inline uint64_t ColBytes(const ConvGeometry& g) {
  return static_cast<uint64_t>(g.c * g.kh * g.kw * g.oh * g.ow) * sizeof(float);
}

inline std::span<const int64_t> ShapeOrNone(const TensorDesc* t) {
  return t != nullptr ? std::span<const int64_t>(t->shape) : std::span<const int64_t>();
}

/// MXNet's Convolution attributes against data (x), weight, bias and output (y) shapes
/// (sdk::ConvolutionGeometry); throws naming the mismatch.
inline ConvGeometry ParseConvolution(const KernelSetup& s, const TensorDesc& x, const TensorDesc& wt,
                                     const TensorDesc* b, const TensorDesc& y) {
  return sdk::ConvolutionGeometry(s.op_name, s.Params<sdk::ConvolutionParam>(), x.shape, wt.shape, ShapeOrNone(b),
                                  b != nullptr, y.shape);
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
/// workspace (ColBytes(g)).
template <class L>
struct Im2colConv {
  ConvGeometry g;

  void Forward(const DeviceCall& c, const float* x, const float* wt, const float* b, float* y, int32_t req,
               float* ws) const {
    const int64_t rows = g.col_rows(), plane = g.out_plane();
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
    const int64_t rows = g.col_rows(), plane = g.out_plane();
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
  uint64_t WorkspaceBytes() const { return ColBytes(conv_.g); }
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
  uint64_t WorkspaceBytes() const { return ColBytes(conv_.g); }
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

/// The geometry of the convolution whose data gradient Deconvolution is, from the node's data x,
/// weight, bias and output y (sdk::DeconvolutionGeometry); throws naming the mismatch.
inline ConvGeometry ParseDeconvolution(const KernelSetup& s, const TensorDesc& x, const TensorDesc& wt,
                                       const TensorDesc* b, const TensorDesc& y) {
  return sdk::DeconvolutionGeometry(s.op_name, s.Params<sdk::DeconvolutionParam>(), x.shape, wt.shape, ShapeOrNone(b),
                                    b != nullptr, y.shape);
}

/// A deconvolution on the im2col convolution `conv` behind it (ParseDeconvolution):
///   forward          y  = conv's data gradient of x        (col = Wᵀ·x, col2im)  + bias
///   backward data    gx = conv's forward of gy              (im2col, W·col)
///   backward weight  gW = conv's weight gradient with x as its out-grad and gy as its data
/// all through L::Gemm (cuBLAS on CUDA, the tiled kernel elsewhere). Workspace: ColBytes(g).
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
  explicit DeconvolutionKernel(const KernelSetup& s) : bias_(!s.Params<sdk::DeconvolutionParam>().no_bias) {
    RequireFloat32(s);
    s.ExpectCounts(bias_ ? 3 : 2, 1);
    d_.conv.g = ParseDeconvolution(s, s.inputs[0], s.inputs[1], bias_ ? &s.inputs[2] : nullptr, s.outputs[0]);
  }
  uint64_t WorkspaceBytes() const { return ColBytes(d_.conv.g); }
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
  explicit DeconvolutionBackwardKernel(const KernelSetup& s) : bias_(!s.Params<sdk::DeconvolutionParam>().no_bias) {
    RequireFloat32(s);
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
    d_.conv.g = ParseDeconvolution(s, s.inputs[1], s.inputs[2], bias_ ? &s.inputs[3] : nullptr, s.inputs[0]);
  }
  uint64_t WorkspaceBytes() const { return ColBytes(d_.conv.g); }
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

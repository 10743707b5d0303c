// Convolution geometry and the two CPU algorithms behind the Convolution kernels
// (nn_convolution.cc): im2col + OpenBLAS sgemm (nn_conv_im2col.cc) and oneDNN
// (nn_conv_dnnl.cc). Internal to weft_cpu_kernels.
#pragma once

#include <cstdint>
#include <memory>

#include "nn_common.h"

namespace weft::cpu {

/// 1-D (NCW) or 2-D (NCHW) convolution; 1-D is stored as 2-D with h = kh = 1.
struct ConvGeom {
  int spatial = 2;  // 1 or 2
  int64_t n = 0, c = 0, h = 1, w = 1;
  int64_t f = 0, groups = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t oh = 1, ow = 1;
  bool bias = true;

  int64_t cg() const { return c / groups; }  // input channels per group
  int64_t fg() const { return f / groups; }  // filters per group
  int64_t col_rows() const { return cg() * kh * kw; }
  int64_t in_plane() const { return h * w; }
  int64_t out_plane() const { return oh * ow; }
  /// Multiply-adds of the forward pass (for GFLOP/s figures: 2 flops each).
  double Macs() const { return static_cast<double>(n) * f * out_plane() * col_rows(); }
};

/// Parses MXNet's Convolution attributes against data/weight shapes and checks every shape
/// (weight (F, C/groups, kh, kw), bias (F), output (N, F, oh, ow)); throws naming the mismatch.
ConvGeom ParseConv(const KernelSetup& s, const TensorDesc& data, const TensorDesc& weight, const TensorDesc* bias,
                   const TensorDesc& out);

/// One convolution algorithm, set up for one geometry. All pointers are float32 host memory;
/// `req` is WEFT_REQ_*; passes whose req is null are skipped by the caller. Thread-safe (const).
class ConvAlgo {
 public:
  virtual ~ConvAlgo() = default;
  virtual uint64_t ForwardWorkspace() const = 0;
  virtual uint64_t BackwardWorkspace() const = 0;
  virtual void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const = 0;
  /// Any of gx/gw/gb may be skipped with req null (gb absent without bias).
  virtual void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw,
                        int32_t req_w, float* gb, int32_t req_b, void* ws) const = 0;
};

/// True when the oneDNN algorithm runs the forward and the weight gradient on layouts oneDNN
/// picks (one group, at least 16 filters): blocked, or nhwc activations when a channel count is not
/// a multiple of 16; the data gradient also needs 16 input channels (nn_conv_dnnl.cc).
inline bool DnnlBlockedConv(const ConvGeom& g) { return g.groups == 1 && g.f >= 16; }

std::unique_ptr<ConvAlgo> MakeIm2colConv(const ConvGeom& g);
/// nullptr when oneDNN has no implementation for the geometry.
std::unique_ptr<ConvAlgo> MakeDnnlConv(const ConvGeom& g, const weft_host_api* host);

}  // namespace weft::cpu

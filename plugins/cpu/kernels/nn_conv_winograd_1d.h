// weft's 1-D Winograd convolution F(m, r) for the 1xr and rx1 layers of the fused inference
// convolution `_sg_conv` (nn_conv_fused.cc): Inception v3's 1x7 and 7x1 layers (and its 1x3 and
// 3x1 ones), on which oneDNN has only its direct kernel (7 multiplications per output; F(6, 7) on
// a 17-wide line does 36 per 17 outputs, about 2.1). Internal to weft_cpu_kernels.
//
// Along the kernel's axis, per tile of m outputs, per input channel c and filter k:
// y = Aᵀ[(G·g) ⊙ (Bᵀ·d)], d the n = m + r - 1 inputs of the tile. Summed over c, the n products
// are n matrix products M[p] (tiles × K) = V[p] (tiles × C) · U[p] (C × K), run by oneDNN's sgemm
// (one thread per call, in chunks of tiles whose size depends on the geometry only: the bits do
// not depend on the thread count), as in weft's 2-D F(4x4, 3x3) (nn_conv_winograd.h), whose
// epilogue types this shares. Aᵀ, G and Bᵀ come from the n - 1 finite interpolation points and ∞
// by the Cook–Toom construction, in double; U is computed in double and rounded once per weight
// generation. The transforms run on 8 channels at a time (isa_dispatch.h) on plain NCHW or
// blocked nChw8c / nChw16c tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "nn_conv.h"
#include "nn_conv_winograd.h"

namespace weft::cpu {

/// True for 2-D, one group, stride and dilation 1, kernel 1xr or rx1 with r 3, 5 or 7, padding
/// only along the kernel's axis and less than r.
bool Winograd1DFits(const ConvGeom& g);

/// True when the layer has enough tiles and channels for the transformed weights (n floats per
/// channel pair instead of r) to pay.
bool Winograd1DPays(const ConvGeom& g);

/// The outputs per tile (m of F(m, r)) weft uses for kernel size r and `len` outputs along the axis.
int64_t Winograd1DTile(int64_t r, int64_t len);

/// The 1-D Winograd convolution of one geometry (Winograd1DFits) and layouts. Not thread-safe (the
/// caller serialises); one call runs on the calling thread's OpenMP team.
class Winograd1DConv {
 public:
  /// `in_block`, `out_block`: 1 (plain NCHW) or the channel block (8 or 16) of a blocked tensor,
  /// whose channel count must then be a multiple of it. `m`: outputs per tile (0 for
  /// Winograd1DTile); n = m + r - 1 must be even and at most 12. `out_image`: floats from one
  /// image of y to the next when y is a channel slice of a wider tensor (a Concat's output written
  /// in place, core/executor/concat_view.h); 0 for a tensor of its own.
  Winograd1DConv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e, int64_t m = 0,
                 int64_t out_image = 0);

  /// Transforms weights (F, C, 1, r) or (F, C, r, 1) and bias (F) for the next calls.
  void SetWeights(const float* w, const float* b);
  /// y = the epilogue of conv(x); `sum` has y's layout, its images contiguous, and may be y itself
  /// (not with out_image).
  void Run(const float* x, const float* sum, float* y) const;

  int64_t TileOutputs() const { return m_; }
  /// Tiles per chunk (the M of the n products).
  int64_t ChunkTiles() const { return chunk_; }
  /// 2 when a single chunk's filters run as two halves (shared by a team of 2), else 1.
  int64_t FilterHalves() const { return halves_; }
  /// The transforms, row-major: Aᵀ (m × n), G (n × r), Bᵀ (n × n), in double (tests).
  const std::vector<double>& AT() const { return at_; }
  const std::vector<double>& G() const { return gm_; }
  const std::vector<double>& BT() const { return bt_; }

 private:
  int64_t VStride() const { return chunk_ * cp_ + 16; }
  int64_t MStride() const { return chunk_ * kp_ + 16; }
  // Tiles t0..t0+count-1, filters k0..k1-1 (all, or one half: halves_).
  void RunChunk(int64_t t0, int64_t count, int64_t k0, int64_t k1, const float* x, const float* sum, float* y, float* v,
                float* m) const;

  ConvGeom g_;
  int64_t in_block_, out_block_;
  WinoEpilogue e_;
  int64_t out_image_;             // floats between y's images
  bool along_w_;                  // 1xr (the kernel runs along the width), else rx1
  int64_t r_, m_, n_, pad_;       // kernel size, outputs and inputs per tile, padding along the axis
  int64_t len_in_, len_out_;      // input and output length along the axis
  int64_t across_, tiles_along_;  // lines (the other axis), tiles per line
  int64_t cp_ = 0, kp_ = 0;       // channels rounded up to 8
  int64_t tiles_ = 0, chunk_ = 0;
  int64_t halves_ = 1;  // 2: a single chunk's filters run as two halves
  std::vector<double> at_, gm_, bt_;
  std::vector<float> at_f_, bt_f_;  // Aᵀ and Bᵀ rounded (their entries are exact: dyadic points)
  std::vector<float> u_, bias_;     // U[n][cp][kp], bias[kp]
};

/// Calls of Winograd1DConv::Run in this process (tests check that a layer took this path).
uint64_t Winograd1DRuns();

}  // namespace weft::cpu

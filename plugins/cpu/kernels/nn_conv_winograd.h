// weft's own Winograd convolution F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2015; interpolation points 0, ±1, ±2 and ∞) for the fused inference
// convolution `_sg_conv` (nn_conv_fused.cc) where oneDNN has no Winograd kernel: oneDNN 2.6 has one
// for AVX-512 only (jit_wino_4x3), so on AVX2 machines this takes ResNet's 3x3 layers from 9
// multiplications per output to 2.25 (36 per 4x4 tile instead of 144). Internal to weft_cpu_kernels.
//
// Per output 4x4 tile, per input channel c and filter k: Y = Aᵀ[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]A, d the 6x6
// input patch. Summed over c, the element-wise products of the 36 positions are 36 matrix products
//   M[p] (tiles × K) = V[p] (tiles × C) · U[p] (C × K),
// run by oneDNN's sgemm (a library, not our own GEMM). U (the weight transform, computed in double
// and rounded once) is made once per weight generation; V and M are made for chunks of tiles
// small enough to stay in the L2 cache (chunk sizes depend on the geometry only, so the results do
// not depend on the thread count, and each sgemm runs on one thread: fixed reduction order). The
// transforms run on 8 channels at a time (one AVX2 vector; isa_dispatch.h picks the variant), on
// plain NCHW or blocked nChw8c / nChw16c tensors. The output transform applies `_sg_conv`'s
// epilogue: bias, activation, sum (residual add), second activation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn_conv.h"

namespace weft::cpu {

/// Activation of the epilogue (weft::sdk::FusedAct's relu and clip, or none).
struct WinoAct {
  enum Kind { kNone, kRelu, kClip } kind = kNone;
  float lo = 0.0f, hi = 0.0f;  // clip bounds
};

/// out = act2(act(conv + bias) + sum): `sum` only when `with_sum`.
struct WinoEpilogue {
  WinoAct act, act2;
  bool with_sum = false;
};

/// True for the geometries this Winograd runs: 2-D, 3x3, stride and dilation 1, one group, the same
/// padding of 0 or 1 on both axes.
bool WinogradF4Fits(const ConvGeom& g);

/// True when the layer has enough 4x4 output tiles for the transformed weights (36 floats per
/// input/output channel pair, 4x the direct kernel's) to pay: with few tiles (ResNet's 7x7 layers at
/// batch 1) each weight is used too rarely and the layer is bound by reading them.
bool WinogradF4Pays(const ConvGeom& g);

/// The Winograd convolution of one geometry and layouts. Not thread-safe (the caller serialises);
/// one call runs on the calling thread's OpenMP team.
class WinogradF4Conv {
 public:
  /// `in_block`, `out_block`: 1 (plain NCHW) or the channel block (8 or 16) of a blocked tensor,
  /// whose channel count must then be a multiple of it.
  WinogradF4Conv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e);

  /// Transforms weights (F, C, 3, 3) and bias (F) for the next calls.
  void SetWeights(const float* w, const float* b);
  /// y = the epilogue of conv(x); `sum` has y's layout and may be y itself.
  void Run(const float* x, const float* sum, float* y) const;

  /// Tiles per chunk (the M of the 36 products).
  int64_t ChunkTiles() const { return chunk_; }

 private:
  // Floats between two positions of a chunk's V and M (see RunChunk).
  int64_t VStride() const { return chunk_ * cp_ + 16; }
  int64_t MStride() const { return chunk_ * kp_ + 16; }
  void RunChunk(int64_t t0, int64_t count, int64_t k0, int64_t k1, const float* x, const float* sum, float* y, float* v,
                float* m) const;

  ConvGeom g_;
  int64_t in_block_, out_block_;
  WinoEpilogue e_;
  int64_t cp_ = 0, kp_ = 0;            // channels rounded up to 8
  int64_t tiles_h_ = 0, tiles_w_ = 0;  // 4x4 output tiles per image
  int64_t tiles_ = 0, chunk_ = 0;      // tiles of the batch, tiles per chunk
  int64_t halves_ = 1;                 // 2: a chunk's filters run as two halves
  std::vector<float> u_, bias_;        // U[36][cp][kp], bias[kp]
};

/// Calls of WinogradF4Conv::Run in this process (tests check that a layer took this path).
uint64_t WinogradF4Runs();

}  // namespace weft::cpu

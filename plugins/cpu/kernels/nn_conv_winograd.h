// weft's own Winograd convolution F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2015; interpolation points 0, ±1, ±2 and ∞) for the fused inference
// convolution `_sg_conv` (nn_conv_fused.cc) and Convolution's training passes
// (nn_conv_winograd_train.cc) where oneDNN has no Winograd kernel: oneDNN 2.6 has one for AVX-512
// only (jit_wino_4x3), so on AVX2 machines this takes ResNet's 3x3 layers from 9 multiplications per
// output to 2.25 (36 per 4x4 tile instead of 144). Internal to weft_cpu_kernels.
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
/// batch 1) each weight is used too rarely and the layer is bound by reading them; at 16 to 31 tiles
/// only with at least 128 input channels.
bool WinogradF4Pays(const ConvGeom& g);

/// Where the 3x3 kernel of filter k and channel c lies: 9 floats from w + k * k_stride + c * c_stride,
/// row-major, or (rotate) in reverse order. The forward reads (F, C, 3, 3) weights as {w, C * 9, 9,
/// false}; the data gradient of a stride-1 layer is the convolution of the output gradient with
/// the same weights rotated 180 degrees, input and output channels swapped: {w, 9, C * 9, true}.
struct WinoWeights {
  const float* w;
  int64_t k_stride, c_stride;
  bool rotate;
};

/// U = G·g·Gᵀ of filters 0..f-1 and channels 0..c-1 of `src` into u[36][cp][kp] (cp, kp: c and f
/// rounded up to 8; the padding is zeroed), in float, 8 filters a vector. Each element is within a
/// few float roundings of the exact transform (tests/cpu_kernels/nn_conv_winograd_train_test.cc);
/// its bits do not depend on the thread count.
void WinogradF4TransformWeights(const WinoWeights& src, int64_t f, int64_t c, float* u);

/// The Winograd convolution of one geometry and layouts. Not thread-safe (the caller serialises);
/// one call runs on the calling thread's OpenMP team.
class WinogradF4Conv {
 public:
  /// `in_block`, `out_block`: 1 (plain NCHW) or the channel block (8 or 16) of a blocked tensor,
  /// whose channel count must then be a multiple of it. `out_image`: floats from one image of y
  /// to the next, when y is a channel slice of a wider tensor (a Concat's output written in place:
  /// per image contiguous, core/executor/concat_view.h); 0 for a tensor of its own.
  WinogradF4Conv(const ConvGeom& g, int64_t in_block, int64_t out_block, const WinoEpilogue& e, int64_t out_image = 0);

  /// Transforms weights (F, C, 3, 3) and bias (F) for the next calls (in double: inference, once
  /// per weight generation).
  void SetWeights(const float* w, const float* b);
  /// y = the epilogue of conv(x); `sum` has y's layout, its images contiguous, and may be y
  /// itself (not with out_image).
  void Run(const float* x, const float* sum, float* y) const;

  /// Floats of a caller-held transformed weights buffer (U, then the bias): for training, where
  /// the weights change every call and the kernel state must stay const (one buffer per call).
  int64_t WeightFloats() const { return kPositions * cp_ * kp_ + kp_; }
  /// Fills `uw` (WeightFloats()) from weights read through `src` (WinogradF4TransformWeights) and
  /// bias `b` (F floats; nullptr for none), in float: deterministic, any thread count.
  void TransformWeights(const WinoWeights& src, const float* b, float* uw) const;
  /// Run with the weights of `uw` (TransformWeights) instead of SetWeights'.
  void RunWith(const float* uw, const float* x, const float* sum, float* y) const;

  /// Floats of the workspace WeightGrad needs.
  int64_t WeightGradFloats() const;
  /// The weight gradient (F, C, 3, 3) of this convolution (its epilogue ignored) for input x and
  /// output gradient gy (y's layout), written or (add) added to gw, by the same transforms
  /// transposed. `ws`: WeightGradFloats() floats. Deterministic, any thread count.
  void WeightGrad(const float* x, const float* gy, float* gw, bool add, float* ws) const;

  /// Tiles per chunk (the M of the 36 products).
  int64_t ChunkTiles() const { return chunk_; }
  /// Whether Run writes the output with non-temporal stores (a blocked output larger than the
  /// last-level cache, LastLevelCacheBytes); the values are the same either way.
  bool StreamsOutput() const { return stream_; }
  /// Overrides that choice (tests compare both ways' bits).
  void SetStreamsOutput(bool on) { stream_ = on && out_block_ > 1 && out_image_ % 4 == 0; }

 private:
  // Floats between two positions of a chunk's V and M (see RunChunk).
  int64_t VStride() const { return chunk_ * cp_ + 16; }
  int64_t MStride() const { return chunk_ * kp_ + 16; }
  void RunChunk(const float* u, const float* bias, int64_t t0, int64_t count, int64_t k0, int64_t k1, const float* x,
                const float* sum, float* y, float* v, float* m) const;
  static constexpr int64_t kPositions = 36;

  ConvGeom g_;
  int64_t in_block_, out_block_;
  WinoEpilogue e_;
  int64_t out_image_;                  // floats between y's images
  int64_t cp_ = 0, kp_ = 0;            // channels rounded up to 8
  int64_t tiles_h_ = 0, tiles_w_ = 0;  // 4x4 output tiles per image
  int64_t tiles_ = 0, chunk_ = 0;      // tiles of the batch, tiles per chunk
  int64_t halves_ = 1;                 // 2: a chunk's filters run as two halves
  bool stream_ = false;                // StreamsOutput
  std::vector<float> u_, bias_;        // U[36][cp][kp], bias[kp]
};

/// The size in bytes of the last-level data cache the first core uses (sysfs, else sysconf's L3,
/// else 32 MiB).
int64_t LastLevelCacheBytes();

/// True when Convolution's training passes may run as weft's Winograd (nn_conv_winograd_train.cc):
/// WinogradF4Fits with padding 1 (the data gradient is then the same kind of convolution), and
/// enough tiles for both the forward and the data gradient to pay.
bool WinogradTrainFits(const ConvGeom& g);
/// Convolution's algorithm with the forward and both gradients on weft's Winograd (the bias
/// gradient a plain sum).
std::unique_ptr<ConvAlgo> MakeWinogradTrainConv(const ConvGeom& g);

/// Calls of WinogradF4Conv::Run, RunWith or WeightGrad in this process (tests check that a layer
/// took this path).
uint64_t WinogradF4Runs();

}  // namespace weft::cpu

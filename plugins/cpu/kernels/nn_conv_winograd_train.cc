// Convolution's training passes on weft's Winograd F(4x4, 3x3) (nn_conv_winograd.h) where oneDNN
// has no Winograd kernel (AVX2: oneDNN 2.6 has jit_wino_4x3 for AVX-512 only). 3x3 stride-1
// layers are ResNet-18's bulk: on AVX2 at batch 32 their oneDNN direct forward and gradients took
// about 70% of a training step. Here the forward and the data gradient run as Winograd (2.25
// multiplications per output instead of 9), and so does the weight gradient: the data gradient of a
// stride-1, padding-1 3x3 layer is itself such a convolution, of the output gradient with the
// weights rotated 180 degrees and their input and output channels swapped; the weight gradient is
// the forward's transforms transposed (WinogradF4Conv::WeightGrad).
//
// The weights change every step, so each call transforms them (in float, vectorised:
// WinogradF4TransformWeights) into its own workspace: the algorithm object stays const and
// thread-safe, and, as the inference path, its results are bit-identical run to run and for any
// thread count (chunks of tiles and filter blocks depend on the geometry only).
#include <algorithm>
#include <memory>

#include "nn_conv_winograd.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

constexpr uint64_t kAlign = 64;

// The data gradient's geometry: gx = conv(gy, rot180(w) with channels swapped), padding 3 - 1 - 1.
ConvGeom DataGradGeom(const ConvGeom& g) {
  ConvGeom d = g;
  d.c = g.f, d.f = g.c;
  d.h = g.oh, d.w = g.ow, d.oh = g.h, d.ow = g.w;
  d.ph = 2 - g.ph, d.pw = 2 - g.pw;
  d.bias = false;
  return d;
}

WinoEpilogue Sum(bool with_sum) {
  WinoEpilogue e;
  e.with_sum = with_sum;
  return e;
}

float* AlignedFloats(void* ws) {
  const auto p = reinterpret_cast<uintptr_t>(ws);
  return reinterpret_cast<float*>((p + kAlign - 1) / kAlign * kAlign);
}

class WinogradTrainConv final : public ConvAlgo {
 public:
  explicit WinogradTrainConv(const ConvGeom& g)
      : g_(g),
        fwd_(g, 1, 1, Sum(false)),
        fwd_add_(g, 1, 1, Sum(true)),
        bwd_(DataGradGeom(g), 1, 1, Sum(false)),
        bwd_add_(DataGradGeom(g), 1, 1, Sum(true)) {}

  uint64_t ForwardWorkspace() const override { return Bytes(fwd_.WeightFloats()); }
  // The data gradient's weights, then (reusing the space) the weight gradient's sums and tiles.
  uint64_t BackwardWorkspace() const override {
    return std::max(Bytes(bwd_.WeightFloats()), Bytes(fwd_.WeightGradFloats()));
  }

  void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const override {
    float* uw = AlignedFloats(ws);
    fwd_.TransformWeights(WinoWeights{w, g_.c * 9, 9, false}, g_.bias ? b : nullptr, uw);
    if (req == WEFT_REQ_ADD)
      fwd_add_.RunWith(uw, x, y, y);
    else
      fwd_.RunWith(uw, x, nullptr, y);
  }

  void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw, int32_t req_w,
                float* gb, int32_t req_b, void* ws) const override {
    if (!weft::sdk::IsNull(req_x)) {
      float* uw = AlignedFloats(ws);
      // Filter k of the data gradient is input channel k of w: w[f][k] at f * C * 9 + k * 9, rotated.
      bwd_.TransformWeights(WinoWeights{w, 9, g_.c * 9, true}, nullptr, uw);
      if (req_x == WEFT_REQ_ADD)
        bwd_add_.RunWith(uw, gy, gx, gx);
      else
        bwd_.RunWith(uw, gy, nullptr, gx);
    }
    if (!weft::sdk::IsNull(req_w)) fwd_.WeightGrad(x, gy, gw, req_w == WEFT_REQ_ADD, AlignedFloats(ws));
    if (g_.bias && !weft::sdk::IsNull(req_b)) BiasGrad(gy, gb, req_b == WEFT_REQ_ADD);
  }

 private:
  static uint64_t Bytes(int64_t floats) { return static_cast<uint64_t>(floats) * sizeof(float) + kAlign; }

  // gb[k] = (or +=) the sum of gy over images and pixels, in double, one filter per thread.
  void BiasGrad(const float* gy, float* gb, bool add) const {
    const int64_t plane = g_.oh * g_.ow;
    ParallelChunks(g_.f, g_.n * g_.f * plane, [&](int64_t k0, int64_t k1, int) {
      for (int64_t k = k0; k < k1; ++k) {
        double s = 0;
        for (int64_t i = 0; i < g_.n; ++i) {
          const float* q = gy + (i * g_.f + k) * plane;
          for (int64_t p = 0; p < plane; ++p) s += q[p];
        }
        gb[k] = add ? gb[k] + static_cast<float>(s) : static_cast<float>(s);
      }
    });
  }

  ConvGeom g_;
  WinogradF4Conv fwd_, fwd_add_, bwd_, bwd_add_;
};

}  // namespace

bool WinogradTrainFits(const ConvGeom& g) {
  // Padding 1 only: with padding 0 the data gradient would need padding 2. Even ResNet-18's 7x7
  // 512-channel layers at batch 32 (128 tiles, 49 of each 64 outputs used, 38 MB of transformed
  // weights per call) pay: AVX2, one thread, forward 95 ms vs 136 direct, data gradient 95 vs 164,
  // weight gradient 84 vs 207 (a loaded machine; the 14x14 layers: 70, 60, 68 vs 129, 131, 158).
  return WinogradF4Fits(g) && g.ph == 1 && WinogradF4Pays(g) && WinogradF4Pays(DataGradGeom(g));
}

std::unique_ptr<ConvAlgo> MakeWinogradTrainConv(const ConvGeom& g) { return std::make_unique<WinogradTrainConv>(g); }

}  // namespace weft::cpu

// The KVStore's 2-bit gradient compression (MXNet 1.9 src/kvstore/gradient_compression-inl.h,
// kernels quantize_2bit / dequantize_2bit), as the ops _quantize_2bit and _dequantize_2bit.
//
//   _quantize_2bit:   input data (float32, n), aux residual (float32, n), output (uint32,
//                     ceil(n/16) words). Per element: r = residual + data; r ≥ t → code 11 and
//                     r −= t; r ≤ −t → code 10 and r += t; else 00; residual = r.
//   _dequantize_2bit: input (uint32 words), output (float32, n): 11 → t, 10 → −t, else 0.
// Layout (MXNet's): element i lives in byte (i mod 16)/4 of word i/16, the highest bit pair of
// the byte first. In a uint32 read on a little-endian host that is bit 8·((i mod 16)/4) +
// 6 − 2·(i mod 4). Padding codes of the last word are 00.
#include <algorithm>
#include <cmath>

#include "nn_common.h"
#include "weft/sdk/ops/gradient_compression.hpp"

namespace weft::cpu {
namespace {

inline constexpr uint64_t kU32 = WEFT_DTYPE_BIT(WEFT_DTYPE_UINT32);
inline constexpr uint32_t kCodePlus = 3u;   // 11: +threshold
inline constexpr uint32_t kCodeMinus = 2u;  // 10: -threshold

int CodeShift(int64_t i) { return static_cast<int>(8 * ((i % 16) / 4) + 6 - 2 * (i % 4)); }

class Quantize2BitKernel {
 public:
  explicit Quantize2BitKernel(const KernelSetup& s) : threshold_(weft::sdk::TwoBitThreshold(s)) {
    weft::sdk::CheckTwoBitCodec(s);
  }
  void Compute(const KernelCall& c) const {
    if (c.req[0] == WEFT_REQ_ADD) throw Error(WEFT_ERR_INVALID_ARGUMENT, "_quantize_2bit: req add is not supported");
    const float* data = c.inputs[0].data<float>();
    float* residual = c.aux[0].data<float>();
    uint32_t* out = c.outputs[0].data<uint32_t>();
    const bool write = c.req[0] != WEFT_REQ_NULL;  // null: the residual still advances
    const int64_t n = c.inputs[0].size();
    for (int64_t w = 0, words = weft::sdk::TwoBitWords(n); w < words; ++w) {
      uint32_t word = 0;
      for (int64_t i = w * 16, end = std::min(n, i + 16); i < end; ++i) {
        float r = residual[i] + data[i];
        uint32_t code = 0;
        if (r >= threshold_) {
          code = kCodePlus;
          r -= threshold_;
        } else if (r <= -threshold_) {
          code = kCodeMinus;
          r += threshold_;
        }
        residual[i] = r;
        word |= code << CodeShift(i);
      }
      if (write) out[w] = word;
    }
  }

 private:
  float threshold_;
};

class Dequantize2BitKernel {
 public:
  explicit Dequantize2BitKernel(const KernelSetup& s) : threshold_(weft::sdk::TwoBitThreshold(s)) {
    weft::sdk::CheckTwoBitCodec(s);
  }
  void Compute(const KernelCall& c) const {
    const uint32_t* in = c.inputs[0].data<uint32_t>();
    float* out = c.outputs[0].data<float>();
    const float t = threshold_;
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0, n = c.outputs[0].size(); i < n; ++i) {
        const uint32_t code = (in[i / 16] >> CodeShift(i)) & 3u;
        assign(out[i], code == kCodePlus ? t : code == kCodeMinus ? -t : 0.0f);
      }
    });
  }

 private:
  float threshold_;
};

}  // namespace

void RegisterGradientCompression(KernelTable& t) {
  t.Add<Quantize2BitKernel>("_quantize_2bit", kF32);
  t.Add<Dequantize2BitKernel>("_dequantize_2bit", kU32);
}

}  // namespace weft::cpu

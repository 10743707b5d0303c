// weft GPU kernel layer — the gradient_compression family (cpu: gradient_compression.cc, MXNet's
// 2-bit layout): _quantize_2bit (float32 with its residual, to 16 codes per uint32 word) and
// _dequantize_2bit. A quantize work item is one word, so no two items write one word.
#pragma once

#include "gpu_kernel.h"
#include "weft/sdk/ops/gradient_compression.hpp"

namespace weft::WEFT_GPU_NS {

/// Bit position of element i's code in its uint32 word (MXNet's layout).
WEFT_HD inline int CodeShift(int64_t i) { return static_cast<int>(8 * ((i % 16) / 4) + 6 - 2 * (i % 4)); }

/// _quantize_2bit: work item = one 32-bit word (16 values), so no two items write one word.
struct Quantize2BitMap {
  const float* data;
  float* residual;
  uint32_t* out;  // null: req null (the residual still advances)
  int64_t n;
  float threshold;
  WEFT_HD void operator()(int64_t w) const {
    uint32_t word = 0;
    const int64_t end = n < w * 16 + 16 ? n : w * 16 + 16;
    for (int64_t i = w * 16; i < end; ++i) {
      float r = residual[i] + data[i];
      uint32_t code = 0;
      if (r >= threshold) {
        code = 3u;
        r -= threshold;
      } else if (r <= -threshold) {
        code = 2u;
        r += threshold;
      }
      residual[i] = r;
      word |= code << CodeShift(i);
    }
    if (out != nullptr) out[w] = word;
  }
};

template <class Assign>
struct Dequantize2BitMap {
  const uint32_t* in;
  float* out;
  float threshold;
  WEFT_HD void operator()(int64_t i) const {
    const uint32_t code = (in[i / 16] >> CodeShift(i)) & 3u;
    Assign::Put(out[i], code == 3u ? threshold : code == 2u ? -threshold : 0.0f);
  }
};

template <class L>
class Quantize2BitKernel {
 public:
  explicit Quantize2BitKernel(const KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) { sdk::CheckTwoBitCodec(s); }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_ADD) throw Error(WEFT_ERR_INVALID_ARGUMENT, "_quantize_2bit: req add is not supported");
    const int64_t n = c.inputs[0].size();
    L::Map(
        c, (n + 15) / 16,
        Quantize2BitMap{L::template Ptr<const float>(c.inputs[0]), L::template Ptr<float>(c.aux[0]),
                        c.req[0] == WEFT_REQ_NULL ? nullptr : L::template Ptr<uint32_t>(c.outputs[0]), n, threshold_});
  }

 private:
  float threshold_;
};

template <class L>
class Dequantize2BitKernel {
 public:
  explicit Dequantize2BitKernel(const KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) {
    sdk::CheckTwoBitCodec(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, c.outputs[0].size(),
             Dequantize2BitMap<decltype(a)>{L::template Ptr<const uint32_t>(c.inputs[0]),
                                            L::template Ptr<float>(c.outputs[0]), threshold_});
    });
  }

 private:
  float threshold_;
};

/// Registers _quantize_2bit and _dequantize_2bit for launcher L.
template <class L>
void RegisterGradientCompressionKernels(sdk::KernelTable& t) {
  t.Add<Quantize2BitKernel<L>>("_quantize_2bit", kF32);
  t.Add<Dequantize2BitKernel<L>>("_dequantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_UINT32));
}

}  // namespace weft::WEFT_GPU_NS

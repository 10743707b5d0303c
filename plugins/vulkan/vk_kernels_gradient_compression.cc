// vulkan plugin — the KVStore's 2-bit gradient compression as the ops _quantize_2bit (float32 data
// and residual -> uint32 words) and _dequantize_2bit (words -> float32), MXNet 1.9's codes and
// layout as the CPU kernel (gradient_compression.cc): shaders of the same names.
#include <cmath>
#include <string>

#include "vk_kernels.h"
#include "weft/sdk/ops/gradient_compression.hpp"

namespace weft::vk {
namespace {

class Quantize2BitKernel {
 public:
  explicit Quantize2BitKernel(const sdk::KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) {
    sdk::CheckTwoBitCodec(s);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_ADD)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "_quantize_2bit: req add is not supported");
    const int64_t n = c.inputs[0].size();
    if (n == 0) return;
    struct {
      uint32_t n, write;
      float threshold;
    } push{static_cast<uint32_t>(n), sdk::IsNull(c.req[0]) ? 0u : 1u, threshold_};
    // A null request still advances the residual; the words are then bound but never written.
    const Binding b[3] = {In(c.inputs[0]), Out(c.aux[0]), Out(c.outputs[0])};
    Dispatch(c, Launch{"_quantize_2bit", {}, Groups64(sdk::TwoBitWords(n))}, b, push);
  }

 private:
  float threshold_;
};

class Dequantize2BitKernel {
 public:
  explicit Dequantize2BitKernel(const sdk::KernelSetup& s) : threshold_(sdk::TwoBitThreshold(s)) {
    sdk::CheckTwoBitCodec(s);
  }
  void Compute(const sdk::DeviceCall& c) const {
    const int64_t n = c.outputs[0].size();
    if (sdk::IsNull(c.req[0]) || n == 0) return;
    struct {
      uint32_t n, add;
      float threshold;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), threshold_};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    Dispatch(c, Launch{"_dequantize_2bit", {}, Groups64(n)}, b, push);
  }

 private:
  float threshold_;
};

}  // namespace

void RegisterGradientCompressionKernels(VkKernelTable& t) {
  AddWithShaders<Quantize2BitKernel>(t, "_quantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32), {"_quantize_2bit"});
  AddWithShaders<Dequantize2BitKernel>(t, "_dequantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_UINT32), {"_dequantize_2bit"});
}

}  // namespace weft::vk

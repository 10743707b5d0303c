// vulkan plugin — the KVStore's 2-bit gradient compression as the ops _quantize_2bit (float32 data
// and residual -> uint32 words) and _dequantize_2bit (words -> float32), MXNet 1.9's codes and
// layout as the CPU kernel (nn_gradient_compression.cc): shaders of the same names.
#include <cmath>
#include <string>

#include "vk_kernels.h"

namespace weft::vk {
namespace {

int64_t Words(int64_t n) { return (n + 15) / 16; }

float Threshold(const sdk::KernelSetup& s) {
  const double t = s.attrs.GetFloat("threshold", 0.5);
  if (!(t > 0.0) || !std::isfinite(t)) Invalid(s, "threshold must be a finite number > 0, got " + std::to_string(t));
  return static_cast<float>(t);
}

void ExpectDType(const sdk::KernelSetup& s, const sdk::TensorDesc& t, int32_t dtype, const std::string& what) {
  if (t.dtype != dtype) Unsupported(s, what + " must be " + sdk::DTypeName(dtype) + ", got " + sdk::DTypeName(t.dtype));
}

// Counts, dtypes and sizes both ops share (quantize: values in, words out; dequantize: reversed).
void CheckCodec(const sdk::KernelSetup& s, bool quantize) {
  s.ExpectCounts(1, 1, quantize ? 1 : 0);
  const sdk::TensorDesc& values = quantize ? s.inputs[0] : s.outputs[0];
  const sdk::TensorDesc& words = quantize ? s.outputs[0] : s.inputs[0];
  ExpectDType(s, values, WEFT_DTYPE_FLOAT32, quantize ? "data" : "output");
  ExpectDType(s, words, WEFT_DTYPE_UINT32, quantize ? "output" : "data");
  if (words.size() != Words(values.size()))
    Invalid(s, std::to_string(words.size()) + " words for " + std::to_string(values.size()) + " values; they need " +
                   std::to_string(Words(values.size())));
}

class Quantize2BitKernel {
 public:
  explicit Quantize2BitKernel(const sdk::KernelSetup& s) : threshold_(Threshold(s)) {
    CheckCodec(s, true);
    ExpectDType(s, s.aux[0], WEFT_DTYPE_FLOAT32, "residual");
    if (s.aux[0].size() != s.inputs[0].size()) Invalid(s, "residual differs from data in size");
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
    Dispatch(c, Launch{"_quantize_2bit", {}, Groups64(Words(n))}, b, push);
  }

 private:
  float threshold_;
};

class Dequantize2BitKernel {
 public:
  explicit Dequantize2BitKernel(const sdk::KernelSetup& s) : threshold_(Threshold(s)) { CheckCodec(s, false); }
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

void RegisterCompressionKernels(VkKernelTable& t) {
  t.Add<Quantize2BitKernel>("_quantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32));
  t.Add<Dequantize2BitKernel>("_dequantize_2bit", WEFT_DTYPE_BIT(WEFT_DTYPE_UINT32));
}

}  // namespace weft::vk

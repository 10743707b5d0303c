// vulkan plugin — the random samplers _random_uniform and _random_normal and their _like forms
// (shaders named by op). Element i draws from the SDK's counter-based stream
// (weft/sdk/cpp/random_sampler.hpp, random_stream.glsl), the cpu plugin's sequence, so a seed
// reproduces a run on any dispatch shape and the values are the cpu's up to float rounding; the
// parameters are checked with MXNet's rules (the SDK's Sampler::Check) when the kernel runs, so the
// error reaches the next wait. float32 only; the other samplers run on the cpu.
#include "vk_kernels.h"
#include "weft/sdk/cpp/random_sampler.hpp"

namespace weft::vk {
namespace {

using sdk::random::Distribution;
using sdk::random::Sampler;

class RandomKernel {
 public:
  explicit RandomKernel(const sdk::KernelSetup& s) : sampler_(Sampler::FromOp(s)) {
    s.ExpectCounts(s.op_name.ends_with("_like") ? 1 : 0, 1);
    RequireFloat32(s);
  }
  void Compute(const sdk::DeviceCall& c) const {
    sampler_.Check(WEFT_DTYPE_FLOAT32);
    const sdk::DeviceTensor& out = c.outputs[0];
    const int64_t n = out.size();
    if (n == 0 || sdk::IsNull(c.req[0])) return;
    struct {
      uint32_t n, add, seed_lo, seed_hi;
      float p, q;
    } push{static_cast<uint32_t>(n),       AddFlag(c.req[0]),
           static_cast<uint32_t>(c.seed),  static_cast<uint32_t>(c.seed >> 32),
           static_cast<float>(sampler_.p), static_cast<float>(sampler_.q)};
    const Binding b[1] = {Out(out)};
    const bool normal = sampler_.dist == Distribution::kNormal;
    Dispatch(c, Launch{normal ? "_random_normal" : "_random_uniform", {}, Groups64(n)}, b, push);
  }

 private:
  Sampler sampler_;
};

}  // namespace

void RegisterRandomKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"_random_uniform", "_random_uniform_like"})
    AddWithShaders<RandomKernel>(t, op, f32, {"_random_uniform"});
  for (const char* op : {"_random_normal", "_random_normal_like"})
    AddWithShaders<RandomKernel>(t, op, f32, {"_random_normal"});
}

}  // namespace weft::vk

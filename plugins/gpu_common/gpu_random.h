// weft GPU kernel layer — the random samplers (MXNet 1.9's _random_* ops: uniform, normal, randint,
// exponential, gamma, poisson, negative_binomial, generalized_negative_binomial, uniform_like,
// normal_like) over a launcher L. Each work item draws its element from the SDK's counter-based
// stream (weft/sdk/cpp/random_sampler.hpp), the one the cpu plugin draws from: element i is a pure
// function of the call's seed and i, so a seed reproduces a run on any device and launch shape, and
// the host build of this layer (gpuhost) matches the cpu bit for bit. Device math libraries may
// round log/cos/pow differently in the last bit (see the SDK header). The parameters are checked
// on the host when the kernel runs (MXNet's rules), so the error reaches the next wait.
// float32 and float64 outputs (int32 and int64 for randint); float16 is the cpu's only.
#pragma once

#include <string>

#include "gpu_kernel.h"
#include "weft/sdk/cpp/random_sampler.hpp"

namespace weft::WEFT_GPU_NS {

/// v rounded to T and back: the uniform sampler redraws a value that rounds up to `high`.
template <typename T>
struct RoundTo {
  WEFT_HD double operator()(double v) const { return static_cast<double>(static_cast<T>(v)); }
};

template <typename T, class Assign>
struct RandomMap {
  sdk::random::Sampler sampler;
  uint64_t seed;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    const auto at = static_cast<uint64_t>(i);
    T v;
    if (sampler.dist == sdk::random::Distribution::kRandint)
      v = static_cast<T>(sampler.DrawInt(seed, at));
    else if (sampler.dist == sdk::random::Distribution::kUniform)
      v = static_cast<T>(sampler.DrawUniformBelowHigh(seed, at, RoundTo<T>{}));
    else
      v = static_cast<T>(sampler.DrawReal(seed, at));
    Assign::Put(out[i], v);
  }
};

template <class L>
class RandomKernel {
 public:
  explicit RandomKernel(const KernelSetup& s) : sampler_(sdk::random::Sampler::FromOp(s)) {
    s.ExpectCounts(s.op_name.ends_with("_like") ? 1 : 0, 1);
  }

  void Compute(const DeviceCall& c) const {
    const DeviceTensor& out = c.outputs[0];
    sampler_.Check(out.dtype());
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      WithReq(c.req[0], [&](auto a) {
        L::Map(c, out.size(), RandomMap<T, decltype(a)>{sampler_, c.seed, L::template Ptr<T>(out)});
      });
    };
    if (sampler_.dist != sdk::random::Distribution::kRandint) return WithFloatType("random", out.dtype(), run);
    if (out.dtype() == WEFT_DTYPE_INT32) return run(TypeTag<int32_t>{});
    if (out.dtype() == WEFT_DTYPE_INT64) return run(TypeTag<int64_t>{});
    throw Error(WEFT_ERR_UNSUPPORTED, "_random_randint: dtype " + std::string(sdk::DTypeName(out.dtype())) +
                                          " is not implemented on GPUs (int32 and int64 are)");
  }

 private:
  sdk::random::Sampler sampler_;
};

template <class L>
void RegisterRandomKernels(sdk::KernelTable& t) {
  for (const char* op : {"_random_uniform", "_random_normal", "_random_exponential", "_random_gamma", "_random_poisson",
                         "_random_negative_binomial", "_random_generalized_negative_binomial", "_random_uniform_like",
                         "_random_normal_like"})
    t.Add<RandomKernel<L>>(op, kFloatTypes);
  t.Add<RandomKernel<L>>("_random_randint", WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64));
}

}  // namespace weft::WEFT_GPU_NS

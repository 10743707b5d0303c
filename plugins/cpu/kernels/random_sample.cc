// Random sampling kernels (MXNet 1.9's _random_* ops, core/operator/defs/random.cc): uniform,
// normal, randint, exponential, gamma, poisson, negative_binomial, generalized_negative_binomial,
// and uniform_like / normal_like: the SDK's samplers (weft/sdk/cpp/random_sampler.hpp), which the
// GPU kernel layer draws too. Element i is a pure function of the call's seed and i.
//
// The distributions' parameters are checked when the kernel runs, with MXNet's rules
// (sample_op.h): the error surfaces at the next wait on the output, as in MXNet. randint with
// low == high is refused too (MXNet accepts it and then divides by zero).
#include <cstdint>

#include "parallel.h"
#include "tensor_kernels.h"
#include "weft/sdk/cpp/random_sampler.hpp"

namespace weft::cpu::tensor {
namespace {

using sdk::random::Distribution;
using sdk::random::Sampler;

class SampleKernel {
 public:
  explicit SampleKernel(const KernelSetup& s) : sampler_(Sampler::FromOp(s)) {
    s.ExpectCounts(s.op_name.ends_with("_like") ? 1 : 0, 1);
  }

  void Compute(const KernelCall& c) const {
    sampler_.Check(c.outputs[0].dtype());
    const Tensor& out = c.outputs[0];
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = static_cast<T*>(out.raw());
      const uint64_t seed = c.seed;
      // Rejection samplers cost a few draws per element; the split does not change any value.
      sdk::WithReq(c.req[0], [&](auto assign) {
        ParallelChunks(out.size(), out.size() * 4, [&](int64_t begin, int64_t end, int) {
          for (int64_t i = begin; i < end; ++i) assign(y[i], Draw<T>(seed, static_cast<uint64_t>(i)));
        });
      });
    };
    if (sampler_.dist == Distribution::kRandint) {
      DispatchMask<kIntMask>("random", out.dtype(), run);
    } else if (out.dtype() == WEFT_DTYPE_FLOAT16) {
      run(TypeTag<Half>{});
    } else {
      DispatchFloat("random", out.dtype(), run);
    }
  }

 private:
  static constexpr uint64_t kIntMask = WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);

  template <typename T>
  T Draw(uint64_t seed, uint64_t i) const {
    if (sampler_.dist == Distribution::kRandint) return Convert<T>(sampler_.DrawInt(seed, i));
    if (sampler_.dist == Distribution::kUniform)
      return Convert<T>(
          sampler_.DrawUniformBelowHigh(seed, i, [](double v) { return Convert<double>(Convert<T>(v)); }));
    return Convert<T>(sampler_.DrawReal(seed, i));
  }

  Sampler sampler_;
};

}  // namespace

void RegisterRandomKernels(KernelTable& t) {
  constexpr uint64_t kFloats = kFloatMask | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16);
  for (const char* op :
       {"_random_uniform", "_random_normal", "_random_exponential", "_random_gamma", "_random_poisson",
        "_random_negative_binomial", "_random_generalized_negative_binomial", "_random_uniform_like",
        "_random_normal_like", "_random_exponential_like", "_random_gamma_like", "_random_poisson_like",
        "_random_negative_binomial_like", "_random_generalized_negative_binomial_like"})
    AddAny<SampleKernel>(t, op, kFloats);
  AddAny<SampleKernel>(t, "_random_randint", WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64));
}

}  // namespace weft::cpu::tensor

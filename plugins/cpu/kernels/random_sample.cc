// Random sampling kernels (MXNet 1.9's _random_* ops, core/operator/defs/random.cc): uniform,
// normal, randint, exponential, gamma, poisson, negative_binomial, generalized_negative_binomial,
// and uniform_like / normal_like. Element i is a pure function of the call's seed and i
// (random_stream.h).
//
// The distributions' parameters are checked here, when the kernel runs, with MXNet's rules
// (sample_op.h): the error surfaces at the next wait on the output, as in MXNet. randint with
// low == high is refused too (MXNet accepts it and then divides by zero).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "parallel.h"
#include "random_stream.h"
#include "tensor_kernels.h"
#include "weft/sdk/ops/random.hpp"

namespace weft::cpu::tensor {
namespace {

using namespace random_detail;

enum class Dist {
  kUniform,
  kNormal,
  kRandint,
  kExponential,
  kGamma,
  kPoisson,
  kNegativeBinomial,
  kGeneralizedNegativeBinomial
};

Dist DistOf(const std::string& op) {
  if (op == "_random_uniform" || op == "_random_uniform_like") return Dist::kUniform;
  if (op == "_random_normal" || op == "_random_normal_like") return Dist::kNormal;
  if (op == "_random_randint") return Dist::kRandint;
  if (op == "_random_exponential") return Dist::kExponential;
  if (op == "_random_negative_binomial") return Dist::kNegativeBinomial;
  if (op == "_random_generalized_negative_binomial") return Dist::kGeneralizedNegativeBinomial;
  return op == "_random_gamma" ? Dist::kGamma : Dist::kPoisson;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

class SampleKernel {
 public:
  explicit SampleKernel(const KernelSetup& s) : dist_(DistOf(s.op_name)) {
    s.ExpectCounts(s.op_name.ends_with("_like") ? 1 : 0, 1);
    // The distribution's own attributes (the _like ops have no others).
    switch (dist_) {
      case Dist::kUniform: {
        const auto p = s.Params<sdk::UniformParam>();
        p_ = p.low, q_ = p.high;
        break;
      }
      case Dist::kNormal: {
        const auto p = s.Params<sdk::NormalParam>();
        p_ = p.loc, q_ = p.scale;
        break;
      }
      case Dist::kRandint: {
        const auto p = s.Params<sdk::RandintParam>();
        low_ = p.low.value, high_ = p.high.value;
        break;
      }
      case Dist::kGamma: {
        const auto p = s.Params<sdk::GammaParam>();
        p_ = p.alpha, q_ = p.beta;
        break;
      }
      case Dist::kNegativeBinomial: {
        const auto p = s.Params<sdk::NegativeBinomialParam>();
        p_ = static_cast<double>(p.k), q_ = p.p;
        break;
      }
      case Dist::kGeneralizedNegativeBinomial: {
        const auto p = s.Params<sdk::GeneralizedNegativeBinomialParam>();
        p_ = p.mu, q_ = p.alpha;
        break;
      }
      default:  // exponential and poisson: lam
        p_ = s.Params<sdk::ExponentialParam>().lam;
    }
  }

  void Compute(const KernelCall& c) const {
    CheckParameters(c.outputs[0].dtype());
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
    if (dist_ == Dist::kRandint) {
      DispatchMask<kIntMask>("random", out.dtype(), run);
    } else if (out.dtype() == WEFT_DTYPE_FLOAT16) {
      run(TypeTag<Half>{});
    } else {
      DispatchFloat("random", out.dtype(), run);
    }
  }

 private:
  static constexpr uint64_t kIntMask = WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);

  // MXNet's checks (sample_op.h), plus randint's; each message names the attribute and its value.
  void CheckParameters(int32_t dtype) const {
    auto fail = [](const std::string& message) { throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, message); };
    switch (dist_) {
      case Dist::kUniform:
        if (!(q_ >= p_)) fail("attribute 'high' = " + Num(q_) + " is below 'low' = " + Num(p_) + ": need low <= high");
        break;
      case Dist::kNormal:
        if (!(q_ > 0)) fail("attribute 'scale' = " + Num(q_) + ": the standard deviation must be positive");
        break;
      case Dist::kRandint: {
        if (high_ <= low_)
          fail("attribute 'high' = " + std::to_string(high_) + " must be greater than 'low' = " + std::to_string(low_));
        const int64_t lo = dtype == WEFT_DTYPE_INT32 ? INT32_MIN : INT64_MIN;
        const int64_t hi = dtype == WEFT_DTYPE_INT32 ? INT32_MAX : INT64_MAX;
        if (low_ < lo || high_ - 1 > hi)
          fail("[low, high) = [" + std::to_string(low_) + ", " + std::to_string(high_) + ") does not fit " +
               sdk::DTypeName(dtype) + ": choose dtype int64");
        break;
      }
      case Dist::kExponential:
        if (!(p_ > 0)) fail("attribute 'lam' = " + Num(p_) + ": the rate of the exponential must be positive");
        break;
      case Dist::kGamma:
        if (!(p_ > 0)) fail("attribute 'alpha' = " + Num(p_) + ": the gamma shape must be positive");
        if (!(q_ > 0)) fail("attribute 'beta' = " + Num(q_) + ": the gamma scale must be positive");
        break;
      case Dist::kPoisson:
        if (!(p_ >= 0)) fail("attribute 'lam' = " + Num(p_) + ": the Poisson mean must be non-negative");
        break;
      case Dist::kNegativeBinomial:
        // MXNet checks k only, and p = 0 then gives INT_MIN: weft refuses p outside (0, 1].
        if (!(p_ >= 0)) fail("attribute 'k' = " + Num(p_) + ": the number of successes must be non-negative");
        if (!(q_ > 0 && q_ <= 1)) fail("attribute 'p' = " + Num(q_) + ": the success probability must be in (0, 1]");
        break;
      case Dist::kGeneralizedNegativeBinomial:
        if (!(p_ >= 0)) fail("attribute 'mu' = " + Num(p_) + ": the mean must be non-negative");
        if (!(q_ >= 0)) fail("attribute 'alpha' = " + Num(q_) + ": the dispersion must be non-negative");
        break;
    }
  }

  template <typename T>
  T Draw(uint64_t seed, uint64_t i) const {
    ElementStream s(seed, i);
    switch (dist_) {
      case Dist::kUniform:
        return UniformValue<T>(s);
      case Dist::kNormal:
        return Convert<T>(p_ + q_ * s.Normal());
      case Dist::kRandint:
        // high - low may exceed INT64_MAX: the width is taken in unsigned arithmetic.
        return Convert<T>(static_cast<uint64_t>(low_) +
                          Below(s, static_cast<uint64_t>(high_) - static_cast<uint64_t>(low_)));
      case Dist::kExponential:
        return Convert<T>(-std::log1p(-s.Uniform()) / p_);
      case Dist::kGamma:
        return Convert<T>(StandardGamma(s, p_) * q_);
      case Dist::kNegativeBinomial:
        return Convert<T>(NegativeBinomial(s, p_, q_));
      case Dist::kGeneralizedNegativeBinomial:
        return Convert<T>(GeneralizedNegativeBinomial(s, p_, q_));
      default:
        return Convert<T>(Poisson(s, p_));
    }
  }

  // low + (high − low)·U, drawn again when rounding to T reaches high (a short float range); after
  // 8 tries (a range narrower than T's spacing) low itself.
  template <typename T>
  T UniformValue(ElementStream& s) const {
    if (q_ == p_) return Convert<T>(p_);
    for (int attempt = 0; attempt < 8; ++attempt) {
      const T v = Convert<T>(p_ + (q_ - p_) * s.Uniform());
      if (Convert<double>(v) < q_) return v;
    }
    return Convert<T>(p_);
  }

  Dist dist_;
  double p_ = 0, q_ = 1;        // the distribution's float parameters, in the op's attribute order
  int64_t low_ = 0, high_ = 1;  // randint's bounds
};

}  // namespace

void RegisterRandomKernels(KernelTable& t) {
  constexpr uint64_t kFloats = kFloatMask | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16);
  for (const char* op : {"_random_uniform", "_random_normal", "_random_exponential", "_random_gamma", "_random_poisson",
                         "_random_negative_binomial", "_random_generalized_negative_binomial", "_random_uniform_like",
                         "_random_normal_like"})
    t.Add<SampleKernel>(op, kFloats);
  t.Add<SampleKernel>("_random_randint", WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64));
}

}  // namespace weft::cpu::tensor

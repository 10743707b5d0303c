// Random sampling kernels (MXNet 1.9's _random_* ops, core/operator/defs/random.cc): uniform,
// normal, randint, exponential, gamma, poisson, and uniform_like / normal_like.
//
// Every element is a pure function of (call seed, element index): element i draws from its own
// SplitMix64 sequence (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
// OOPSLA 2014) started at a key mixed from both, as Dropout's UniformAt does. A call is therefore
// reproducible from mx.random.seed (the per-call seed comes from that sequence, kernel_runner.h)
// and gives the same bits whatever the number of threads splitting the loop; rejection samplers
// (gamma, poisson, randint) simply draw more from their element's sequence.
//
// The distributions' parameters are checked here, when the kernel runs, with MXNet's rules
// (sample_op.h): the error surfaces at the next wait on the output, as in MXNet. randint with
// low == high is refused too (MXNet accepts it and then divides by zero).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "nn_common.h"
#include "parallel.h"
#include "tensor_kernels.h"

namespace weft::cpu::tensor {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The random sequence of one element: SplitMix64's generator seeded with a key that mixes the
// call's seed and the element index.
class ElementStream {
 public:
  ElementStream(uint64_t seed, uint64_t index) : state_(SplitMix64(seed ^ SplitMix64(index))) {}
  uint64_t Bits() {
    const uint64_t r = SplitMix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return r;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Bits() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1): safe to take the log of.
  double OpenUniform() { return (static_cast<double>(Bits() >> 11) + 0.5) * 0x1.0p-53; }
  /// Standard normal by the Box–Muller transform (Box, Muller 1958) of two uniforms.
  double Normal() {
    const double r = std::sqrt(-2.0 * std::log(OpenUniform()));
    return r * std::cos(2.0 * kPi * Uniform());
  }

 private:
  uint64_t state_;
};

// Standard gamma (scale 1) of shape alpha > 0: Marsaglia, Tsang, "A simple method for generating
// gamma variables", ACM TOMS 26(3), 2000, with their boost G(α) = G(α + 1)·U^(1/α) for α < 1.
double StandardGamma(ElementStream& s, double alpha) {
  const double boost = alpha < 1.0 ? std::pow(s.OpenUniform(), 1.0 / alpha) : 1.0;
  const double d = (alpha < 1.0 ? alpha + 1.0 : alpha) - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = s.Normal(), t = 1.0 + c * x;
    if (t <= 0) continue;
    const double v = t * t * t, u = s.OpenUniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * boost;
  }
}

// ln(k!): exact sums below 16, else Stirling's series to the k⁻⁵ term (error < 1e-12 there).
// Written out because std::lgamma writes the global signgam, a data race between threads.
double LogFactorial(double k) {
  if (k < 16) {
    double s = 0;
    for (int i = 2; i <= static_cast<int>(k); ++i) s += std::log(static_cast<double>(i));
    return s;
  }
  const double n = k + 1, inv = 1.0 / n, inv2 = inv * inv;
  return (n - 0.5) * std::log(n) - n + 0.5 * std::log(2 * kPi) + inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 / 1260));
}

// Poisson of mean lam >= 0. Below 10: inversion by sequential search (one uniform, about lam
// steps). From 10: PTRS, the transformed rejection with squeeze of Hörmann, "The transformed
// rejection method for generating Poisson random variables", Insurance: Mathematics and
// Economics 12, 1993 (constants from the paper).
double Poisson(ElementStream& s, double lam) {
  if (lam < 10) {
    const double u = s.Uniform();
    double p = std::exp(-lam), cdf = p, k = 0;
    while (u >= cdf && p > 0) {
      k += 1;
      p *= lam / k;
      cdf += p;
    }
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = s.Uniform() - 0.5, v = s.Uniform(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -lam + k * loglam - LogFactorial(k))
      return k;
  }
}

// An integer uniform in [0, range), range > 0, without bias: Lemire, "Fast random integer
// generation in an interval", ACM TOMACS 29(1), 2019 (multiply, reject the short leftover).
uint64_t Below(ElementStream& s, uint64_t range) {
  unsigned __int128 m = static_cast<unsigned __int128>(s.Bits()) * range;
  if (static_cast<uint64_t>(m) < range) {
    const uint64_t threshold = (0 - range) % range;
    while (static_cast<uint64_t>(m) < threshold) m = static_cast<unsigned __int128>(s.Bits()) * range;
  }
  return static_cast<uint64_t>(m >> 64);
}

enum class Dist { kUniform, kNormal, kRandint, kExponential, kGamma, kPoisson };

Dist DistOf(const std::string& op) {
  if (op == "_random_uniform" || op == "_random_uniform_like") return Dist::kUniform;
  if (op == "_random_normal" || op == "_random_normal_like") return Dist::kNormal;
  if (op == "_random_randint") return Dist::kRandint;
  if (op == "_random_exponential") return Dist::kExponential;
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
    const auto& a = s.attrs;
    switch (dist_) {
      case Dist::kUniform:
        p_ = a.GetFloat("low", 0), q_ = a.GetFloat("high", 1);
        break;
      case Dist::kNormal:
        p_ = a.GetFloat("loc", 0), q_ = a.GetFloat("scale", 1);
        break;
      case Dist::kRandint:
        low_ = a.GetInt("low"), high_ = a.GetInt("high");
        break;
      case Dist::kGamma:
        p_ = a.GetFloat("alpha", 1), q_ = a.GetFloat("beta", 1);
        break;
      default:
        p_ = a.GetFloat("lam", 1);
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
                         "_random_uniform_like", "_random_normal_like"})
    t.Add<SampleKernel>(op, kFloats);
  t.Add<SampleKernel>("_random_randint", WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64));
}

}  // namespace weft::cpu::tensor

// weft SDK C++ helpers — counter-based random streams and the samplers of MXNet 1.9's _random_*
// operators (uniform, normal, randint, exponential, gamma, poisson, negative_binomial,
// generalized_negative_binomial and the _like forms), shared by every backend that implements
// them (the cpu plugin and the GPU kernel layer), so a seed draws the same numbers on each.
//
// Every element is a pure function of (call seed, element index): element i draws from its own
// SplitMix64 sequence (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
// OOPSLA 2014) started at a key mixed from both. A call is therefore reproducible from
// mx.random.seed and gives the same bits whatever the number of threads or work items splitting
// it; rejection samplers (gamma, poisson, randint) simply draw more from their element's
// sequence. All arithmetic is in double; the device math library's log/cos/pow may differ from the
// host's in the last bit, so GPU draws can differ from the cpu's in the last bits (and rarely a
// rejection sampler takes another branch); a host compilation of the GPU layer matches exactly.
//
// Header-only. WEFT_SDK_HD marks functions callable from CUDA / HIP device code. Thread-safe
// (values and pure functions).
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <string>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/random.hpp"
#include "weft/sdk/types.h"

// WEFT_SDK_HD comes from weft/sdk/cpp/params.hpp (through ops/random.hpp).
namespace weft::sdk::random {

/// SplitMix64's output function of state x (x advanced by the golden-ratio increment first).
WEFT_SDK_HD inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The high 64 bits of a · b (written out: the same on every compiler and device).
WEFT_SDK_HD inline uint64_t MulHi64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

constexpr double kPi = 3.14159265358979323846;

/// The random sequence of one element: SplitMix64 seeded with a key mixing the call's seed and
/// the element index.
class ElementStream {
 public:
  WEFT_SDK_HD ElementStream(uint64_t seed, uint64_t index) : state_(SplitMix64(seed ^ SplitMix64(index))) {}
  WEFT_SDK_HD uint64_t Bits() {
    const uint64_t r = SplitMix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return r;
  }
  /// Uniform in [0, 1) with 53 random bits.
  WEFT_SDK_HD double Uniform() { return static_cast<double>(Bits() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1): safe to take the log of.
  WEFT_SDK_HD double OpenUniform() { return (static_cast<double>(Bits() >> 11) + 0.5) * 0x1.0p-53; }
  /// Standard normal by the Box–Muller transform (Box, Muller 1958) of two uniforms.
  WEFT_SDK_HD double Normal() {
    const double r = sqrt(-2.0 * log(OpenUniform()));
    return r * cos(2.0 * kPi * Uniform());
  }

 private:
  uint64_t state_;
};

/// Standard gamma (scale 1) of shape alpha > 0: Marsaglia, Tsang, "A simple method for generating
/// gamma variables", ACM TOMS 26(3), 2000, with their boost G(α) = G(α + 1)·U^(1/α) for α < 1.
WEFT_SDK_HD inline double StandardGamma(ElementStream& s, double alpha) {
  const double boost = alpha < 1.0 ? pow(s.OpenUniform(), 1.0 / alpha) : 1.0;
  const double d = (alpha < 1.0 ? alpha + 1.0 : alpha) - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    const double x = s.Normal(), t = 1.0 + c * x;
    if (t <= 0) continue;
    const double v = t * t * t, u = s.OpenUniform();
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v * boost;
  }
}

/// ln(k!): exact sums below 16, else Stirling's series to the k⁻⁵ term (error < 1e-12 there).
/// Written out because lgamma writes the global signgam, a data race between threads.
WEFT_SDK_HD inline double LogFactorial(double k) {
  if (k < 16) {
    double s = 0;
    for (int i = 2; i <= static_cast<int>(k); ++i) s += log(static_cast<double>(i));
    return s;
  }
  const double n = k + 1, inv = 1.0 / n, inv2 = inv * inv;
  return (n - 0.5) * log(n) - n + 0.5 * log(2 * kPi) + inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 / 1260));
}

/// Poisson of mean lam >= 0. Below 10: inversion by sequential search (one uniform, about lam
/// steps). From 10: PTRS, the transformed rejection with squeeze of Hörmann, "The transformed
/// rejection method for generating Poisson random variables", Insurance: Mathematics and
/// Economics 12, 1993 (constants from the paper).
WEFT_SDK_HD inline double Poisson(ElementStream& s, double lam) {
  if (lam < 10) {
    const double u = s.Uniform();
    double p = exp(-lam), cdf = p, k = 0;
    while (u >= cdf && p > 0) {
      k += 1;
      p *= lam / k;
      cdf += p;
    }
    return k;
  }
  const double slam = sqrt(lam), loglam = log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = s.Uniform() - 0.5, v = s.Uniform(), us = 0.5 - fabs(u);
    const double k = floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <= -lam + k * loglam - LogFactorial(k)) return k;
  }
}

/// An integer uniform in [0, range), range > 0, without bias: Lemire, "Fast random integer
/// generation in an interval", ACM TOMACS 29(1), 2019 (multiply, reject the short leftover).
WEFT_SDK_HD inline uint64_t Below(ElementStream& s, uint64_t range) {
  uint64_t bits = s.Bits();
  if (bits * range < range) {
    const uint64_t threshold = (0 - range) % range;
    while (bits * range < threshold) bits = s.Bits();
  }
  return MulHi64(bits, range);
}

/// Negative binomial of k successes with success probability p: the number of failures, drawn as
/// Poisson(Gamma(k, (1 - p) / p)) (the gamma-Poisson mixture; MXNet's sampler draws it so too).
WEFT_SDK_HD inline double NegativeBinomial(ElementStream& s, double k, double p) {
  return Poisson(s, StandardGamma(s, k) * (1 - p) / p);
}

/// Generalized negative binomial of mean mu and dispersion alpha (variance mu + alpha·mu²):
/// Poisson(Gamma(1/alpha, alpha·mu)); alpha = 0 is the Poisson of mean mu.
WEFT_SDK_HD inline double GeneralizedNegativeBinomial(ElementStream& s, double mu, double alpha) {
  if (alpha == 0) return Poisson(s, mu);
  return Poisson(s, StandardGamma(s, 1 / alpha) * alpha * mu);
}

enum class Distribution {
  kUniform,
  kNormal,
  kRandint,
  kExponential,
  kGamma,
  kPoisson,
  kNegativeBinomial,
  kGeneralizedNegativeBinomial
};

/// One _random_* op's distribution with its attributes: what a kernel draws element i from.
struct Sampler {
  Distribution dist = Distribution::kUniform;
  double p = 0, q = 1;        // the float parameters, in the op's attribute order
  int64_t low = 0, high = 1;  // randint's bounds

  /// The sampler of the kernel's op (_random_uniform, ..., and each one's _like form, whose shape
  /// and dtype are its input's), its parameters read from the op's typed structs
  /// (weft/sdk/ops/random.hpp) with MXNet's defaults. Throws sdk::Error for an attribute that does
  /// not parse.
  static Sampler FromOp(const KernelSetup& k) {
    std::string op = k.op_name;
    if (op.ends_with("_like")) op.resize(op.size() - 5);  // the same law and attributes
    Sampler s;
    if (op == "_random_uniform") {
      const auto a = k.Params<UniformParam>();
      s.p = a.low, s.q = a.high;
    } else if (op == "_random_normal") {
      const auto a = k.Params<NormalParam>();
      s.dist = Distribution::kNormal, s.p = a.loc, s.q = a.scale;
    } else if (op == "_random_randint") {
      const auto a = k.Params<RandintParam>();
      s.dist = Distribution::kRandint, s.low = a.low.value, s.high = a.high.value;
    } else if (op == "_random_exponential") {
      s.dist = Distribution::kExponential, s.p = k.Params<ExponentialParam>().lam;
    } else if (op == "_random_gamma") {
      const auto a = k.Params<GammaParam>();
      s.dist = Distribution::kGamma, s.p = a.alpha, s.q = a.beta;
    } else if (op == "_random_negative_binomial") {
      const auto a = k.Params<NegativeBinomialParam>();
      s.dist = Distribution::kNegativeBinomial, s.p = static_cast<double>(a.k), s.q = a.p;
    } else if (op == "_random_generalized_negative_binomial") {
      const auto a = k.Params<GeneralizedNegativeBinomialParam>();
      s.dist = Distribution::kGeneralizedNegativeBinomial, s.p = a.mu, s.q = a.alpha;
    } else {
      s.dist = Distribution::kPoisson, s.p = k.Params<PoissonParam>().lam;
    }
    return s;
  }

  /// MXNet's checks of the parameters (sample_op.h), plus randint's range against `dtype`: throws
  /// sdk::Error(WEFT_ERR_INVALID_ARGUMENT) naming the attribute and its value. Kernels call it when
  /// they run, so the error surfaces at the next wait on the output, as in MXNet.
  void Check(int32_t dtype) const;

  /// Element i's draw for a floating-point output (every distribution but randint), in double.
  WEFT_SDK_HD double DrawReal(uint64_t seed, uint64_t i) const {
    ElementStream s(seed, i);
    switch (dist) {
      case Distribution::kUniform:
        return p + (q - p) * s.Uniform();
      case Distribution::kNormal:
        return p + q * s.Normal();
      case Distribution::kExponential:
        return -log1p(-s.Uniform()) / p;
      case Distribution::kGamma:
        return StandardGamma(s, p) * q;
      case Distribution::kNegativeBinomial:
        return NegativeBinomial(s, p, q);
      case Distribution::kGeneralizedNegativeBinomial:
        return GeneralizedNegativeBinomial(s, p, q);
      case Distribution::kPoisson:
        return Poisson(s, p);
      default:
        return 0;
    }
  }

  /// Element i's draw of randint: low + an integer uniform in [0, high − low) (the width taken in
  /// unsigned arithmetic: it may exceed INT64_MAX).
  WEFT_SDK_HD int64_t DrawInt(uint64_t seed, uint64_t i) const {
    ElementStream s(seed, i);
    return static_cast<int64_t>(static_cast<uint64_t>(low) +
                                Below(s, static_cast<uint64_t>(high) - static_cast<uint64_t>(low)));
  }

  /// Element i's uniform draw rounded by `round` (double -> T -> double) below high: drawn again
  /// when rounding reaches high (a short float range); after 8 tries (a range narrower than T's
  /// spacing) low itself. `round` returns the value of T nearest to its argument, as a double.
  template <class Round>
  WEFT_SDK_HD double DrawUniformBelowHigh(uint64_t seed, uint64_t i, Round round) const {
    if (q == p) return p;
    ElementStream s(seed, i);
    for (int attempt = 0; attempt < 8; ++attempt) {
      const double v = round(p + (q - p) * s.Uniform());
      if (v < q) return v;
    }
    return p;
  }
};

inline void Sampler::Check(int32_t dtype) const {
  auto num = [](double v) {
    std::string s(32, '\0');
    s.resize(static_cast<size_t>(snprintf(s.data(), s.size(), "%.9g", v)));
    return s;
  };
  auto fail = [](const std::string& message) { throw Error(WEFT_ERR_INVALID_ARGUMENT, message); };
  switch (dist) {
    case Distribution::kUniform:
      if (!(q >= p)) fail("attribute 'high' = " + num(q) + " is below 'low' = " + num(p) + ": need low <= high");
      break;
    case Distribution::kNormal:
      if (!(q > 0)) fail("attribute 'scale' = " + num(q) + ": the standard deviation must be positive");
      break;
    case Distribution::kRandint: {
      if (high <= low)
        fail("attribute 'high' = " + std::to_string(high) + " must be greater than 'low' = " + std::to_string(low));
      const int64_t lo = dtype == WEFT_DTYPE_INT32 ? INT32_MIN : INT64_MIN;
      const int64_t hi = dtype == WEFT_DTYPE_INT32 ? INT32_MAX : INT64_MAX;
      if (low < lo || high - 1 > hi)
        fail("[low, high) = [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit " +
             DTypeName(dtype) + ": choose dtype int64");
      break;
    }
    case Distribution::kExponential:
      if (!(p > 0)) fail("attribute 'lam' = " + num(p) + ": the rate of the exponential must be positive");
      break;
    case Distribution::kGamma:
      if (!(p > 0)) fail("attribute 'alpha' = " + num(p) + ": the gamma shape must be positive");
      if (!(q > 0)) fail("attribute 'beta' = " + num(q) + ": the gamma scale must be positive");
      break;
    case Distribution::kPoisson:
      if (!(p >= 0)) fail("attribute 'lam' = " + num(p) + ": the Poisson mean must be non-negative");
      break;
    case Distribution::kNegativeBinomial:
      // MXNet checks k only, and p = 0 then gives INT_MIN: weft refuses p outside (0, 1].
      if (!(p >= 0)) fail("attribute 'k' = " + num(p) + ": the number of successes must be non-negative");
      if (!(q > 0 && q <= 1)) fail("attribute 'p' = " + num(q) + ": the success probability must be in (0, 1]");
      break;
    case Distribution::kGeneralizedNegativeBinomial:
      if (!(p >= 0)) fail("attribute 'mu' = " + num(p) + ": the mean must be non-negative");
      if (!(q >= 0)) fail("attribute 'alpha' = " + num(q) + ": the dispersion must be non-negative");
      break;
  }
}

}  // namespace weft::sdk::random

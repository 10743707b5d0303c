// The per-element random streams of the cpu sampling kernels (random_sample.cc, random_multi.cc)
// and the distributions they draw.
//
// Every element is a pure function of (call seed, element index): element i draws from its own
// SplitMix64 sequence (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
// OOPSLA 2014) started at a key mixed from both, as Dropout's UniformAt does. A call is therefore
// reproducible from mx.random.seed (the per-call seed comes from that sequence, kernel_runner.h)
// and gives the same bits whatever the number of threads splitting the loop; rejection samplers
// (gamma, poisson, randint) simply draw more from their element's sequence.
#pragma once

#include <cmath>
#include <cstdint>

#include "nn_common.h"

namespace weft::cpu::tensor::random_detail {

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
inline double StandardGamma(ElementStream& s, double alpha) {
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
inline double LogFactorial(double k) {
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
inline double Poisson(ElementStream& s, double lam) {
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
inline uint64_t Below(ElementStream& s, uint64_t range) {
  unsigned __int128 m = static_cast<unsigned __int128>(s.Bits()) * range;
  if (static_cast<uint64_t>(m) < range) {
    const uint64_t threshold = (0 - range) % range;
    while (static_cast<uint64_t>(m) < threshold) m = static_cast<unsigned __int128>(s.Bits()) * range;
  }
  return static_cast<uint64_t>(m >> 64);
}

// Negative binomial of k successes with success probability p: the number of failures, drawn as
// Poisson(Gamma(k, (1 - p) / p)) (the gamma-Poisson mixture; MXNet's sampler draws it so too).
inline double NegativeBinomial(ElementStream& s, double k, double p) {
  return Poisson(s, StandardGamma(s, k) * (1 - p) / p);
}

// Generalized negative binomial of mean mu and dispersion alpha (variance mu + alpha·mu²):
// Poisson(Gamma(1/alpha, alpha·mu)); alpha = 0 is the Poisson of mean mu.
inline double GeneralizedNegativeBinomial(ElementStream& s, double mu, double alpha) {
  if (alpha == 0) return Poisson(s, mu);
  return Poisson(s, StandardGamma(s, 1 / alpha) * alpha * mu);
}

}  // namespace weft::cpu::tensor::random_detail

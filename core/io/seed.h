// weft io (internal) — seeds for per-sample random draws: one independent stream per
// (iterator seed, sample position), whatever thread makes the sample.
#pragma once

#include <cstdint>

namespace weft::io_detail {

/// SplitMix64's finaliser (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a bijective mix of all 64 bits.
inline uint64_t Mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The seed of the draws for the sample at global position `position`.
inline uint64_t DrawSeed(uint32_t seed, uint64_t position) { return Mix64(Mix64(seed) ^ position); }

/// SplitMix64 as a C++ UniformRandomBitGenerator: a handful of draws per image from a fresh
/// stream costs nothing to set up (std::mt19937 fills 624 words first).
class SplitMix64 {
 public:
  using result_type = uint64_t;
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~uint64_t{0}; }
  result_type operator()() {
    const uint64_t z = state_;
    state_ += 0x9e3779b97f4a7c15ull;
    return Mix64(z);
  }

 private:
  uint64_t state_;
};

}  // namespace weft::io_detail

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

/// The 32-bit seed of the draws for the sample at global position `position`.
inline uint32_t DrawSeed(uint32_t seed, uint64_t position) {
  return static_cast<uint32_t>(Mix64(Mix64(seed) ^ position) >> 32);
}

}  // namespace weft::io_detail

// Small helpers shared by the test programs. Header-only: each test executable compiles it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "weft/ndarray.h"

namespace weft::test {

/// The elements of `a` as float32 on the host, after waiting for every pending write to `a`
/// (NDArray::SyncCopyToCPU). `a` must be float32; other dtypes raise weft::Error there.
inline std::vector<float> Read(const NDArray& a) {
  std::vector<float> v;
  a.SyncCopyToCPU(&v);
  return v;
}

/// `n` values uniform in [-1, 1) from std::mt19937(seed): fixed test inputs.
inline std::vector<float> RandomValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);  // NOLINT(cert-msc51-cpp): fixed inputs
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace weft::test

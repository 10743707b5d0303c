// Small helpers shared by the test programs. Header-only: each test executable compiles it.
#pragma once

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

}  // namespace weft::test

// Reading arrays back in the sparse tests (sparse_kernel_test.cc, sparse_ops_test.cc): any
// storage type and dtype as float64 values, and an aux array as int64 indices.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/sparse.h"

namespace weft::test {

/// The dense values of `a` (any storage type and dtype) as doubles. Waits for `a`.
inline std::vector<double> Values(const NDArray& a) {
  const NDArray d = InvokeOne("Cast", {CastStorage(a, StorageType::kDefault)}, {{"dtype", "float64"}});
  std::vector<double> v(d.Size());
  if (!v.empty()) d.SyncCopyToCPUBytes(v.data(), v.size() * sizeof(double));
  return v;
}

/// The entries of an index array (a sparse array's aux array).
inline std::vector<int64_t> Indices(const NDArray& aux) {
  const std::vector<double> v = Values(aux);
  return {v.begin(), v.end()};
}

}  // namespace weft::test

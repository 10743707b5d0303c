// The parts of a row_sparse or csr array (values and aux arrays), held by its chunk. Internal to
// the ndarray module.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "weft/ndarray.h"

namespace weft::ndarray_detail {

struct SparseParts {
  StorageType stype = StorageType::kUndefined;
  /// Guards data and aux: SyncCopyFromNDArray replaces them while other views may read them.
  mutable std::mutex mu;
  NDArray data;              ///< the values, dense, of the storage shape
  std::vector<NDArray> aux;  ///< NumAuxData(stype) dense 1-d index arrays, MXNet's order
  /// Pushed operations that will replace data and aux (NDArray::BeginPartsWrite) and have not
  /// ended: readers on the host wait for the array's writes before they take the parts.
  std::atomic<int> pending_writes{0};
};

/// A dense array's bytes copied to the host (waits for pending writes; empty for no elements).
std::vector<uint8_t> HostBytes(const NDArray& a);

}  // namespace weft::ndarray_detail

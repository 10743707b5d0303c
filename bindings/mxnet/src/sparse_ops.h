// The operators the binding runs itself because their point is the storage type (weft's operator
// registry works on dense arrays): cast_storage (and its alias _sparse_cast_storage) and
// _contrib_getnnz, with MXNet's names, attributes and errors (MXNet 1.9
// src/operator/tensor/cast_storage.cc, src/operator/contrib/nnz.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/ndarray.h"
#include "weft/op_info.h"

namespace weft::mx {

/// Runs the op on `in` with `params`: fills an empty *out with new arrays, or writes into the
/// arrays given (out=).
using SparseOpRun = void (*)(const std::vector<NDArray>& in, const std::map<std::string, std::string>& params,
                             std::vector<NDArray>* out);

struct SparseOp {
  OpInfo info;  ///< what MXSymbolGetAtomicSymbolInfo describes (info.name is the looked-up name)
  SparseOpRun run;
};

/// The op named `name`, or nullopt when the binding does not run it itself.
std::optional<SparseOp> FindSparseOp(const std::string& name);

}  // namespace weft::mx

// MXNet's storage fallback for the imperative calls of the C API (MXNet 1.9
// src/common/exec_utils.h, and the FInferStorageType of the ops named below): weft's operators
// take dense arrays, so a sparse input is converted to a dense temporary (recorded as its _copy
// under autograd, so gradients reach a sparse variable), a sparse out= receives
// the dense result converted back, and MXNet's warning is logged once per operator.
//
// Where MXNet infers a sparse output for a sparse input without out=, the result is converted to
// that storage type: the scalar comparisons (_equal_scalar, _not_equal_scalar, _greater_scalar,
// _greater_equal_scalar, _lesser_scalar, _lesser_equal_scalar) keep the input's storage type
// when comparing 0 with the scalar gives 0 (BinaryScalarStorageTypeWithDenseResult). Their
// values equal MXNet's; the stored rows (elements) are then the non-zero ones of the result,
// where MXNet keeps the input's stored ones. take of a csr array by dense indices along axis 0 with
// mode clip or wrap gives a csr result (TakeOpForwardStorageType; mode raise falls back to dense
// in MXNet too).
//
// An optimizer update given a sparse input with lazy_update on (its default) is refused: MXNet
// then updates only the rows the gradient holds, which a dense update does not do (weight decay
// and momentum would change the other rows). Row_sparse inputs that hold every row are accepted:
// the lazy update is then the dense one.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "op_table.h"
#include "weft/ndarray.h"

namespace weft::mx {

class StorageFallback {
 public:
  /// Replaces the sparse arrays of *in and *out with dense ones (kept for Finish).
  /// Throws weft::Error for a lazy update (see above).
  StorageFallback(const OpEntry& op, const std::map<std::string, std::string>& params, std::vector<NDArray>* in,
                  std::vector<NDArray>* out);
  /// After the op ran on the dense arrays: writes the results into the caller's sparse outs, or
  /// converts new outputs to the storage type MXNet infers.
  void Finish(std::vector<NDArray>* out);

 private:
  std::vector<std::pair<size_t, NDArray>> sparse_out_;  // (output index, the caller's array)
  StorageType infer_ = StorageType::kDefault;           // for new outputs
};

}  // namespace weft::mx

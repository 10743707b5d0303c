// MXNet's storage fallback for the C API (MXNet 1.9 src/common/exec_utils.h, and the
// FInferStorageType of the ops named below). A call whose sparse arrays a plugin's sparse kernel
// claims (SDK 2.1; the cpu plugin's dot with a csr operand, sparse_retain, _square_sum) runs
// there first (RunSparseKernel) and never reaches the fallback. Otherwise weft's operators take dense arrays, so a
// sparse input is converted to a dense temporary (recorded as its _copy under autograd, so gradients reach a sparse
// variable), a sparse out= receives the dense result converted back, a sparse state the op updates in place (an aux
// state: mom, mean, var...) is written back too, and MXNet's warning is logged once per operator. Executors bound with
// sparse arguments (sparse_executor.h) convert with the same functions (DenseInto, WriteSparse).
//
// Where MXNet infers a sparse output for a sparse input without out=, the result is converted to
// that storage type: the scalar comparisons (_equal_scalar, _not_equal_scalar, _greater_scalar,
// _greater_equal_scalar, _lesser_scalar, _lesser_equal_scalar) keep the input's storage type
// when comparing 0 with the scalar gives 0 (BinaryScalarStorageTypeWithDenseResult). Their
// values equal MXNet's; the stored rows (elements) are then the non-zero ones of the result,
// where MXNet keeps the input's stored ones. take of a csr array by dense indices along axis 0 with
// mode clip or wrap gives a csr result (TakeOpForwardStorageType; mode raise falls back to dense
// in MXNet too). _square_sum of a row_sparse array along axis 1 with keepdims gives a row_sparse
// result storing the input's rows (SquareSumForwardInferStorageType); dot(csr.T, dense or
// row_sparse) a row_sparse result storing the csr's stored columns (DotForwardInferStorageType).
//
// An optimizer update that MXNet runs lazily on a row_sparse gradient (weft/sparse_update.h:
// lazy_update=True, its default, for sgd, sgd with momentum and adam; ftrl on row_sparse arrays;
// sparse adagrad) updates only the gradient's rows (RunLazyUpdate); MXNet's other update ops
// fall back to a dense update of every row, as here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "op_table.h"
#include "weft/ndarray.h"

namespace weft::mx {

/// True for row_sparse and csr arrays.
bool IsSparse(const NDArray& a);

/// True the first time `key` is given in this process (thread-safe): for warnings logged once.
bool FirstTime(const std::string& key);

/// True when _square_sum of a row_sparse 2-d array gives a row_sparse result storing the input's
/// rows (MXNet's SquareSumForwardInferStorageType: axis 1 (or -1) with keepdims), from the
/// attributes' text.
bool SquareSumKeepsRows(std::string axis, const std::string& keepdims);

/// Writes sparse `sparse` into dense `dense` (same shape and dtype): the fallback's input
/// conversion. Synchronous.
void DenseInto(const NDArray& sparse, const NDArray& dense);

/// Writes the dense result `dense` into sparse `target`: a row_sparse target stores the rows
/// named by `rows` (a dense index array; MXNet's kernels store exactly the rows their inputs
/// name, zero or not) or, without `rows`, the rows holding a non-zero element; a csr target its
/// non-zero elements. Synchronous.
void WriteSparse(const NDArray& dense, const NDArray& target, const std::optional<NDArray>& rows = std::nullopt);

/// The values of dense `a` (any dtype) on the host, as doubles; waits for `a`.
std::vector<double> HostValues(const NDArray& a);
/// The values of a dense index array (int64 or int32; other dtypes truncated) on the host.
std::vector<int64_t> HostIndices(const NDArray& a);

/// MXNet's slice of a csr array along its rows (begin/end on axis 0, step 1, every column): a
/// csr result made from the slices of the parts, as MXNet's csr slice gives it, instead of the
/// dense fallback. Returns false, doing nothing, for any other call (the dense path runs it).
bool RunCsrRowSlice(const OpEntry& op, const std::map<std::string, std::string>& params, const std::vector<NDArray>& in,
                    std::vector<NDArray>* out);

/// MXNet's sparse zeros (FillComputeZerosEx): _zeros into sparse out= arrays (mx.nd.zeros(stype=...),
/// attach_grad(stype=...)), and zeros_like of a sparse array (attach_grad() of one), which gives
/// its storage type (into a new array or a sparse out= of its shape and dtype): each output becomes
/// empty (no stored row or element), without a dense temporary of the full shape and without the
/// fallback's warning; returns true. Returns false, doing nothing, for any other call, when the
/// attributes' shape or dtype differ from an out='s (the dense op reports that), and for
/// zeros_like of an array of a recorded graph while autograd records (the fallback's dense call
/// is recorded then).
bool RunSparseZeros(const OpEntry& op, const std::map<std::string, std::string>& params, const std::vector<NDArray>& in,
                    std::vector<NDArray>* out);

/// Runs `op` lazily when MXNet would (weft::IsLazyUpdate): then returns true after updating the
/// weight (in[0], which must also be out[0] when out= is given, as MXNet's in-place sparse
/// updates require) and its states. Returns false, doing nothing, otherwise.
bool RunLazyUpdate(const OpEntry& op, const std::map<std::string, std::string>& params, const std::vector<NDArray>& in,
                   std::vector<NDArray>* out);

/// Runs `op` on the sparse kernel of the inputs' device that claims their storage types (SDK 2.1;
/// weft::SparseKernelClaims), reading the sparse arrays where they lie, and returns true; returns
/// false, doing nothing, for dense calls or when no kernel claims the call (then the fallback below
/// runs, with MXNet's warning). While autograd records, the call is recorded (weft/imperative.h:
/// its gradient runs on the sparse backward kernel, with MXNet's gradient storage types).
bool RunSparseKernel(const OpEntry& op, const std::map<std::string, std::string>& params,
                     const std::vector<NDArray>& in, std::vector<NDArray>* out);

class StorageFallback {
 public:
  /// Replaces the sparse arrays of *in and *out with dense ones (kept for Finish).
  StorageFallback(const OpEntry& op, const std::map<std::string, std::string>& params, std::vector<NDArray>* in,
                  std::vector<NDArray>* out);
  /// After the op ran on the dense arrays: writes the results into the caller's sparse outs and
  /// the updated states into the caller's sparse states, or converts new outputs to the storage
  /// type MXNet infers.
  void Finish(std::vector<NDArray>* out);

 private:
  std::vector<std::pair<size_t, NDArray>> sparse_out_;     // (output index, the caller's array)
  std::vector<std::pair<NDArray, NDArray>> sparse_state_;  // (dense temporary, the caller's state)
  StorageType infer_ = StorageType::kDefault;              // for new outputs
  std::optional<NDArray> infer_rows_;                      // the rows a new row_sparse output stores
};

}  // namespace weft::mx

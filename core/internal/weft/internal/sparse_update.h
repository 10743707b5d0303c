// weft internal — MXNet's lazy optimizer updates on row_sparse gradients (MXNet 1.9
// src/operator/optimizer_op-inl.h: the *DnsRsp* and *RspRsp* kernels that sgd_update,
// sgd_mom_update and adam_update run with lazy_update=True, ftrl_update on row_sparse arrays and
// _sparse_adagrad_update): only the rows the gradient stores are updated, in the weight and in
// every state; the other rows stay exactly as they are (no weight decay, no momentum decay).
//
// weft computes a lazy update as gather → dense update → scatter: the stored rows of the weight
// and of each state are gathered (take), the op's own dense kernel updates them with the
// gradient's stored values, and the results are written back into those rows (_scatter_set_nd;
// on the cpu one engine operation copies just those rows each way, since take and
// _scatter_set_nd read or copy every row of a million-row weight).
// Per element this is the computation MXNet's lazy kernels make, so the results agree to the
// rounding of the dense kernel. When the weight and the states are dense and the device has a
// sparse kernel that claims the op (the cpu: optimizer_sparse.cc), that kernel updates the rows in
// place in one engine operation instead.
//
// Thread-safety: as imperative calls (weft/imperative.h); the caller orders writes to the arrays.
#pragma once

#include "weft/export.h"

#include <map>
#include <string>
#include <vector>

#include "weft/ndarray.h"

namespace weft {

/// True when MXNet's storage dispatch runs update op `op` lazily on these arrays (`inputs` as an
/// imperative call gives them: weight, grad, then the op's states):
///   sgd_update, sgd_mom_update, adam_update: grad row_sparse, lazy_update on (its default),
///       weight and states dense or row_sparse;
///   ftrl_update: weight, grad, z and n all row_sparse;
///   _sparse_adagrad_update: grad row_sparse.
/// False for every other op and combination (MXNet then falls back to a dense update of all
/// rows, or has no sparse form). Never throws for a known op; `params` holds attribute strings.
WEFT_API bool IsLazyUpdate(const std::string& op, const std::map<std::string, std::string>& params,
                           const std::vector<NDArray>& inputs);

/// Runs update op `op` with attributes `params` on the rows stored in `grad` only (see above).
/// `weight` is dense, or row_sparse storing every row (MXNet requires that of a row_sparse
/// weight); each of `states` (the op's aux states in order: mom; mean, var; z, n; history) is
/// dense or row_sparse: a row_sparse state that does not store every row is first made to store
/// every row with the same values (zeros where it held none, as MXNet initialises an empty state).
/// `weight` is updated in place (MXNet's out=weight). A gradient with no stored row changes
/// nothing. The arrays share one Context and dtype. The update ops are pushed (asynchronous);
/// converting a state's storage is synchronous.
/// Throws weft::Error when grad is not row_sparse or its shape differs from the weight's, when a
/// row_sparse weight misses rows (naming how many it stores), for the wrong number of states,
/// or with the op's own errors (bad attributes, dtypes).
WEFT_API void LazyUpdate(const std::string& op, const std::map<std::string, std::string>& params, const NDArray& weight,
                         const NDArray& grad, const std::vector<NDArray>& states);

/// While one is alive on a thread, the LazyUpdate calls of that thread that update the weight with
/// one engine write (a device's in-place lazy kernel) report it here: the weight, its write_count()
/// just after that write, and the gradient whose stored rows are the only rows written. A KVStore
/// around its updater uses this to copy only those rows at the next pull (kvstore_local.h). Calls
/// that gather and scatter (several writes) and gradients storing no row report nothing. Nests: the
/// innermost observer of the thread gets the reports. Not copyable; lives on the stack.
class WEFT_API LazyWriteObserver {
 public:
  struct Write {
    NDArray weight;
    uint64_t weight_writes = 0;  // weight.write_count() after the update's write
    NDArray grad;                // row_sparse
  };
  LazyWriteObserver();
  ~LazyWriteObserver();
  LazyWriteObserver(const LazyWriteObserver&) = delete;
  LazyWriteObserver& operator=(const LazyWriteObserver&) = delete;
  const std::vector<Write>& writes() const { return writes_; }
  /// For LazyUpdate: the thread's innermost observer, or null.
  static LazyWriteObserver* Current();
  void Report(Write w) { writes_.push_back(std::move(w)); }

 private:
  std::vector<Write> writes_;
  LazyWriteObserver* outer_;
};

}  // namespace weft

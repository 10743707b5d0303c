// Executors bound with sparse arguments or gradients (MXNet's storage types at bind).
//
// An argument's storage type is simple_bind's stype_dict entry, else its variable's
// __storage_type__ attribute (mx.sym.var(stype=...)), else (bind) that of the array given. A
// gradient is row_sparse where MXNet's backward storage inference makes it so, by MXNet's rules
// for the ops that give row_sparse gradients:
//   Embedding with sparse_grad=True (_contrib_SparseEmbedding), weight: stores the rows data names
//       (data must be an argument; MXNet refuses indices outside [0, input_dim), as here);
//   dot(lhs, rhs) with csr lhs and neither transpose: rhs's gradient stores the columns lhs
//       stores (lhs a csr argument, or one through element-wise ops that keep its stored
//       elements in MXNet: square, sqrt, abs, sign, negative, _mul_scalar, ...);
//   _square_sum(data) of a row_sparse argument: stores data's stored rows; when its output is
//       row_sparse (axis=1, keepdims) and that output's gradient row_sparse, the rows both store.
//   _sparse_retain(data, indices): data's gradient stores the rows indices name (as its output);
//   cast_storage: its input's gradient is the output's (MXNet's _copy), of that storage type;
//   element-wise ops that keep zeros (relu, abs, square, _mul_scalar, ..., the scatter scalar ops,
//       MakeLoss) of a sparse input whose output's gradient has the input's storage type: that
//       type, storing its non-zero rows (elements).
// An argument's gradient is sparse when every use of it gives a sparse one of one type (MXNet's
// sum of row_sparse gradients stays row_sparse); any other use, or being a graph output, makes it
// dense, as in MXNet. A graph output's gradient (the head gradient) has the output's storage type.
// These are the rows MXNet's kernels store, zero or not.
//
// Outputs have MXNet's forward storage types (FInferStorageType): an argument's own; cast_storage's
// stype (storing its input's rows or elements when the type is the input's, else the non-zero
// ones; between the two sparse types it is refused at bind, as in MXNet); _sparse_retain's
// row_sparse storing the rows indices name (float indices cast toward zero, as MXNet); the keeping
// element-wise ops above store their input's rows (csr: its elements: the scatter scalar ops'
// "only the stored values"); elemwise_mul of a row_sparse and a dense array stores the
// row_sparse one's rows; _scatter_elemwise_div of a row_sparse lhs stores lhs's rows. Every other
// output is dense. After each forward every sparse output is written from the Executor's dense one
// (it then stores those rows or elements; the values elsewhere are dropped, which is what MXNet's
// sparse kernels never compute).
//
// weft's graph is dense: the Executor runs on dense arrays (cast_storage as _copy of its input,
// _sparse_retain and the scatter ops on their dense kernels). Before each forward every sparse
// argument is written into its dense copy; after each backward every row_sparse gradient
// receives those rows of the dense gradient (DenseInto / WriteSparse of storage_fallback.h, the
// imperative fallback's conversions). grad_req 'add' adds into the rows a row_sparse gradient
// already stores (it then stores the union). The frontend sees only the sparse arrays.
//
// That dense emulation is the fallback. SparseSplit (below) first cuts the graph's dot(csr, w)
// nodes out and runs them on the sparse kernels, so MXNet's sparse linear models bind without
// any dense copy of a sparse array; the dense emulation then runs what is left sparse in the
// remainder (an Embedding with sparse_grad, a csr through square or another element-wise op,
// _square_sum, a dot transposed or whose output is a graph output, a csr argument whose gradient
// is requested, a weight read twice: in the factorization machine only dot(x, w) is cut, and x,
// which square(x) reads too, is still copied dense).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft::mx {

/// One contribution to the rows a row_sparse gradient stores.
struct RowSource {
  enum class Kind { kIndexValues, kCsrColumns, kStoredRows };
  Kind kind = Kind::kIndexValues;
  size_t arg = 0;     ///< the argument whose array names the rows
  int64_t bound = 0;  ///< kIndexValues: the weight's rows (Embedding's input_dim)
  std::string node;   ///< the node that uses the weight, for messages
  /// kStoredRows: only the rows the op output's gradient stores too (nullopt: every stored row).
  std::optional<std::vector<RowSource>> within;
};
/// The rows of a gradient: the union of its sources' rows.
using RowPlan = std::vector<RowSource>;

/// MXNet's storage of one array of the graph (an output, a gradient): its storage type and what a
/// sparse one stores.
struct StoragePlan {
  StorageType stype = StorageType::kDefault;
  /// row_sparse: the rows it stores (nullopt: the rows holding a non-zero element).
  std::optional<RowPlan> rows;
  /// csr: the csr argument whose stored elements it stores (nullopt: the non-zero elements).
  std::optional<size_t> pattern;
};

class SparseStorage {
 public:
  /// Plans the gradients' storage of `symbol` whose arguments (ListArguments order) have
  /// storage types `arg_stypes`.
  SparseStorage(const Symbol& symbol, std::vector<StorageType> arg_stypes);

  /// The storage type MXNet gives argument i's gradient.
  StorageType grad_stype(size_t i) const;
  /// The storage type MXNet gives output i (ListOutputs order).
  StorageType output_stype(size_t i) const;
  /// True when no argument, gradient or output is sparse: the Executor can run the frontend's
  /// arrays directly.
  bool all_dense() const;
  /// The arguments' storage types it was planned for.
  const std::vector<StorageType>& arg_stypes() const { return arg_stypes_; }

  /// Takes the frontend's arrays (ListArguments order; grads none where there is none) and
  /// returns in *core_args / *core_grads the dense arrays the Executor binds (the same arrays
  /// where dense); *reqs becomes the Executor's (write for a row_sparse gradient, whose 'add'
  /// this class does).
  void Attach(const std::vector<NDArray>& args, const std::vector<NDArray>& grads, std::vector<NDArray>* core_args,
              std::vector<NDArray>* core_grads, std::vector<OpReqType>* reqs);
  /// The outputs the frontend sees for the Executor's (dense) `outputs`: the same arrays, except
  /// a new sparse array for each output MXNet makes sparse, which AfterForward fills.
  std::vector<NDArray> AttachOutputs(const std::vector<NDArray>& outputs);
  /// Writes every sparse argument into its dense copy (before Executor::Forward).
  void BeforeForward() const;
  /// Writes every sparse output from the Executor's dense one (after Executor::Forward).
  void AfterForward() const;
  /// Writes every sparse gradient from its dense one (after Executor::Backward). Throws
  /// weft::Error for an Embedding index outside the weight's rows.
  void AfterBackward() const;

 private:
  struct Pair {
    size_t arg;
    NDArray front, dense;
    OpReqType req;
  };
  // A flag per row of a gradient with `rows` rows: set where `plan` stores the row.
  std::vector<char> Mark(const RowPlan& plan, int64_t rows) const;
  // Writes dense `dense` into sparse `target` as `plan` stores it.
  void Write(const StoragePlan& plan, const NDArray& dense, const NDArray& target) const;

  std::vector<StorageType> arg_stypes_;
  std::vector<StoragePlan> grad_plans_;  // per argument
  std::vector<StoragePlan> out_plans_;   // per output
  std::vector<NDArray> front_args_;
  std::vector<Pair> args_, grads_;
  std::vector<std::pair<NDArray, NDArray>> outs_;  // (the Executor's dense output, the frontend's sparse one)
};

/// The graph split at its sparse boundary. Cut nodes: dot(csr, w) with no transpose, the csr an
/// argument whose gradient is not requested, w an argument (dense or row_sparse, its gradient
/// a row_sparse array when requested) read by that dot only, the dot's output not a graph output,
/// a sparse kernel claiming it (weft::SparseKernelClaims). A cut node runs outside
/// the Executor, on the sparse kernels (weft::Invoke: dot(csr, dense or row_sparse) -> dense); its
/// output is an extra input variable of the dense remainder, which the Executor runs as any graph,
/// giving that variable's gradient (grad_req write). After the Executor's backward, w's gradient
/// is dot(csr.T, that gradient) -> row_sparse storing the csr's stored columns (MXNet's rows for
/// it, kCsrColumns above), written into the frontend's row_sparse gradient (added for 'add':
/// then it stores the union of the rows). No array of the csr's dense size is ever made. Not seen
/// by the monitor callback: the cut dots (they are not Executor nodes); debug_str and the
/// optimized symbol show the remainder, the cut dots' outputs as variables "<dot>_output". The
/// remainder may still
/// have sparse arguments (core_stypes): bind it through SparseStorage then.
class SparseSplit {
 public:
  /// The split of `symbol` bound to the frontend's arrays (ListArguments order; grads none where
  /// there is none, `reqs` per argument, aux in ListAuxiliaryStates order), or nullptr when it
  /// has no node to cut (then bind `symbol` through SparseStorage).
  static std::unique_ptr<SparseSplit> Make(const Symbol& symbol, const std::vector<StorageType>& arg_stypes,
                                           const std::vector<NDArray>& args, const std::vector<NDArray>& grads,
                                           const std::vector<OpReqType>& reqs, const std::vector<NDArray>& aux);
  /// What the Executor binds: the dense remainder and its arrays (its ListArguments order).
  const Symbol& dense_symbol() const { return dense_; }
  const std::vector<NDArray>& core_args() const { return core_args_; }
  const std::vector<NDArray>& core_grads() const { return core_grads_; }
  const std::vector<OpReqType>& core_reqs() const { return core_reqs_; }
  const std::vector<NDArray>& core_aux() const { return core_aux_; }
  /// The storage types of the remainder's arguments (its new variables are dense).
  const std::vector<StorageType>& core_stypes() const { return core_stypes_; }
  /// Runs the cut nodes into the remainder's input variables (before Executor::Forward).
  void BeforeForward() const;
  /// Writes the cut weights' row_sparse gradients (after Executor::Backward).
  void AfterBackward() const;

 private:
  struct Cut {
    std::map<std::string, std::string> params;  // the dot's attributes
    NDArray csr, rhs, out;                      // out: the remainder's input variable
    NDArray rhs_grad, out_grad;                 // none when rhs's gradient is not requested
    OpReqType req = kNullOp;
  };
  SparseSplit() = default;
  // The cut of a dot with attributes `params` on these arrays, or nullopt when they are not what
  // the cut takes.
  static std::optional<Cut> Prepare(std::map<std::string, std::string> params, const NDArray& csr, const NDArray& rhs,
                                    const NDArray& rhs_grad, OpReqType rhs_req, OpReqType csr_req);

  Symbol dense_;
  std::vector<NDArray> core_args_, core_grads_, core_aux_;
  std::vector<OpReqType> core_reqs_;
  std::vector<StorageType> core_stypes_;
  std::vector<Cut> cuts_;
};

/// The arguments' storage types of `symbol` (ListArguments order): `given` by name (stype_dict)
/// first, else the variable's __storage_type__ attribute, else default.
std::vector<StorageType> ArgStorageTypes(const Symbol& symbol, const std::map<std::string, StorageType>& given);

/// `symbol` as the Executor runs it on the dense copies: each cast_storage node (whose values are
/// its input's) becomes _copy; `symbol` itself when it has none. The arguments, outputs and
/// attributes stay as they are.
Symbol DenseEmulation(const Symbol& symbol);

}  // namespace weft::mx

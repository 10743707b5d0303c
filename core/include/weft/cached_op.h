// weft — a Symbol run imperatively as one op (MXNet 1.9's CachedOp: MXCreateCachedOpEx,
// MXInvokeCachedOpEx, MXFreeCachedOp, MXCachedOpRegisterOpHook; what gluon.HybridBlock.hybridize()
// makes of a block).
//
// A CachedOp takes the symbol's inputs (ListInputs order: arguments and aux states as they occur
// in the graph) and returns its outputs, like any imperative call, but runs the graph on the
// executor: shapes and dtypes are inferred, memory is planned (in-place and block reuse) and
// every node's kernel is prepared once per input signature (shapes, dtypes, device and which inputs
// need gradients); a call with a new signature (another batch size) plans again and keeps both.
// Calls bind the caller's arrays into the planned graph without copying where the graph reads
// them whole (a copy otherwise), and return new output arrays.
//
// Autograd: while the thread records (weft/autograd.h) and some input is part of a recorded graph,
// a call is one node on the tape; its backward runs the graph's gradient (the executor's backward
// nodes, in one pass, bulked). The planned memory of a recorded call stays with that call until its
// backward (or until the tape drops it), so several calls before one backward each keep their
// values (MXNet's static_alloc reused one buffer set and let the second call overwrite the
// first's). A graph of at most `inline_limit` ops is recorded op by op instead (MXNet's inlining).
//
// Flags (MXNet's names, values as strings as MXCreateCachedOpEx gets them):
//   static_alloc (bool, default false)  keep every planned buffer set for reuse (MXNet: allocate
//                                       memory once). Without it one idle set per signature is
//                                       kept and further sets are freed when their calls end.
//   static_shape (bool, default false)  MXNet's hint that input shapes do not change; accepted.
//                                       Parameters are bound once either way (a rebind of the same
//                                       array costs nothing).
//   inline_limit (int >= 0, default 2)  see above.
//   forward_bulk_size, backward_bulk_size (int >= 1; default: the executor's
//                                       WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD/_BWD): nodes per
//                                       engine operation in training passes.
//   data_indices, param_indices (lists "[0, 2]" of input positions): which inputs are data and
//                                       which parameters (Gluon passes both); checked to be in
//                                       range and disjoint.
// Unknown flags and bad values raise weft::Error naming the flag.
//
// Errors: weft::Error for a wrong number of inputs (naming the expected input names), a none
// input, inputs on different devices, shapes the graph refuses (the executor's message, naming
// the op), or no kernel on the device. Nothing is pushed when a call is refused.
//
// Thread-safety: a CachedOp may be called from several threads (each call takes its own buffer
// set); MXNet's thread_safe variant is therefore the default. Destroying it while calls recorded
// on a tape are pending is safe (the tape keeps what it needs).
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft {

class WEFT_API CachedOp {
 public:
  /// MXNet's flags, parsed.
  struct Flags {
    bool static_alloc = false;
    bool static_shape = false;
    int inline_limit = 2;
    int forward_bulk_size = 0;   // 0 = the executor's default
    int backward_bulk_size = 0;  // 0 = the executor's default
    std::vector<int> data_indices, param_indices;
  };

  /// MXCreateCachedOpEx(symbol, flags). Throws weft::Error for an empty symbol or a bad flag.
  explicit CachedOp(const Symbol& symbol, const std::vector<std::pair<std::string, std::string>>& flags = {});
  ~CachedOp();
  CachedOp(const CachedOp&) = delete;
  CachedOp& operator=(const CachedOp&) = delete;

  /// MXInvokeCachedOpEx: runs the graph on `inputs` (one per ListInputNames entry, all on one
  /// device) and returns one new array per output. Pushes work and returns at once.
  std::vector<NDArray> Invoke(const std::vector<NDArray>& inputs);
  /// Same, writing into `outputs` when it holds arrays (one per output, of the output's shape and
  /// dtype: MXNet's out=), else filling it with new arrays.
  void Invoke(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs);

  /// The inputs in call order (Symbol::ListInputs of the symbol).
  const std::vector<std::string>& ListInputNames() const;
  size_t NumOutputs() const;
  const Flags& flags() const;
  const Symbol& symbol() const;

  /// MXCachedOpRegisterOpHook: `hook(node_name, op_name, array)` for every node output (and, with
  /// monitor_all, input) after the node ran; calls then run node by node. An empty function removes it.
  void RegisterOpHook(std::function<void(const std::string&, const std::string&, const NDArray&)> hook,
                      bool monitor_all = false);

  /// Buffer sets planned so far (one per signature and concurrent recorded call), and the planned
  /// bytes of the most recently used one (forward values and, when gradients were requested,
  /// backward values).
  size_t num_plans() const;
  uint64_t planned_bytes() const;

  struct Impl;  // internal (cached_op.cc), not exported

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace weft

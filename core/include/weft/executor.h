// weft — the graph executor, following mxnet-cpp's Executor (include/mxnet-cpp/executor.h) and
// MXNet 1.9's GraphExecutor: an mxnet-cpp program ports by changing the include and namespace.
//
// Binding a Symbol makes an Executor: shapes and dtypes are inferred from the argument arrays, the
// gradient graph is derived (core/operator/gradient.h, OPS.md), memory for every internal value is
// planned (in-place and block reuse, see PlanMemory in core/executor/plan_memory.h) and allocated,
// and every node gets a prepared kernel (KernelRunner). Forward/Backward then only push engine
// operations and return at once; read results with WaitToRead / SyncCopyToCPU.
//
// Gradients (MXNet semantics):
//   * grad_req per argument: kNullOp (no gradient), kWriteTo (overwrite), kAddTo (accumulate).
//     kWriteInplace is accepted as kWriteTo.
//   * Loss ops (SoftmaxOutput, the regression outputs, MakeLoss) make their own head gradient;
//     every other output that some gradient depends on needs a head gradient in Backward (error
//     "head gradient is required for output X" when none is given).
//   * Fan-out sums gradients with add_n nodes ("sum_grad"). Ops without gradient (BlockGrad,
//     argmax, ...) contribute nothing: an argument whose gradient gets no contribution is set to 0
//     (kWriteTo) or left alone (kAddTo).
//
// Arrays: arg_arrays / grad_arrays / aux_arrays are the arrays bound (user arrays are used, not
// copied: writing them between calls changes the next Forward); outputs are views of the planned
// memory, valid until the executor is destroyed, overwritten by the next Forward.
//
// Thread-safety: one Executor must not be used from two threads at once. Distinct executors may
// run concurrently (the engine orders work on shared arrays).
//
// Errors: weft::Error naming the argument / output / node and the fix; nothing is pushed when a
// call is refused.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft {

/// mxnet-cpp's OpReqType (the same values as WEFT_REQ_*). Declared opaque in weft/symbol.h.
enum OpReqType : int { kNullOp = 0, kWriteTo = 1, kWriteInplace = 2, kAddTo = 3 };

/// "null", "write", "inplace", "add".
WEFT_API const char* OpReqTypeName(OpReqType req) noexcept;
/// Parses MXNet's grad_req strings "null", "write", "add" (and "inplace" as write). Throws
/// weft::Error naming `what` (e.g. the argument) and the accepted words otherwise.
WEFT_API OpReqType ParseOpReqType(const std::string& text, const std::string& what);

/// Monitor callback: (name, array). Forward nodes report "<node>_output" (MXNet's output names;
/// "<node>_output<i>" for several outputs) and, with monitor_all, their inputs as
/// "<node>_<input name>" (reported just before the node runs, as it may overwrite them in place);
/// backward nodes "<node>_backward_output<i>". Called in the thread that calls Forward/Backward
/// once the array is ready (the executor waits for it), so the callback may read it synchronously. An exception thrown
/// by the callback propagates out of Forward/Backward.
using MonitorCallback = std::function<void(const std::string& name, const NDArray& array)>;

namespace exec {
struct ExecState;
}

class WEFT_API Executor {
 public:
  /// mxnet-cpp's constructor (what Symbol::Bind calls). `arg_arrays` in ListArguments() order
  /// (one per argument); `grad_arrays` likewise (a none NDArray where grad_reqs says kNullOp;
  /// may be empty: then every request must be kNullOp); `grad_reqs` one per argument, or one value
  /// for all, or empty (kNullOp for all when grad_arrays is empty, else kWriteTo); `aux_arrays` in
  /// ListAuxiliaryStates() order. Every array must be on `context`, unless `group_to_ctx` is
  /// given (model parallelism, MXNet's group2ctx): then nodes whose `__ctx_group__` attribute
  /// (Symbol::SetAttr("ctx_group", g)) names a group run on that group's context, other nodes on
  /// `context`; arguments may live anywhere, a node reading a value from another device reads a
  /// copy made by an inserted `_CrossDeviceCopy` node, and gradients flow back through those
  /// copies (a gradient array must live with its argument; an aux state with its node).
  /// `shared_exec` (MXNet's shared executor, what bucketing binds against): this executor's
  /// planned internal memory is taken from `shared_exec`'s planned blocks where one on the same
  /// device is large enough (largest first, best fit), and allocated only for the rest, so
  /// executors bound against the largest one add almost no memory. The two then overwrite each
  /// other's intermediate values and outputs: run them one after the other (the engine orders
  /// pushed passes; read one's outputs before the other runs) and never from two threads at
  /// once. The shared blocks stay alive as long as either executor does.
  ///
  /// Throws weft::Error for a wrong number of arrays (naming the expected names), a none array, an
  /// array on another device, shapes or dtypes the graph refuses (the message lists the argument
  /// shapes and names the operator), a bad grad request (naming the argument), a gradient array
  /// whose shape differs from its argument, or a node with no kernel on `context`.
  Executor(const Symbol& symbol, const Context& context, const std::vector<NDArray>& arg_arrays,
           const std::vector<NDArray>& grad_arrays, const std::vector<OpReqType>& grad_reqs,
           const std::vector<NDArray>& aux_arrays, const std::map<std::string, Context>& group_to_ctx = {},
           Executor* shared_exec = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// MXNet's simple_bind by shapes: allocates every argument (zeros), gradient and aux state (aux
  /// zeros) on `context`. `arg_shapes` by argument or aux-state name (the rest are inferred; every
  /// shape must end up known or weft::Error lists the unknown ones). `grad_req` applies to every
  /// argument ("null", "write" or "add"); `grad_req_per_arg` overrides it by name. `arg_types`
  /// gives dtypes by name (default float32 where nothing else says). Unknown names in any map
  /// raise weft::Error naming them. With `shared_exec` (MXNet's simple_bind(shared_exec=...)):
  /// every argument, gradient and aux state whose name, shape and dtype match one of
  /// shared_exec's is that same array (not a copy: parameters and their gradients are shared, as
  /// bucketing needs; a gradient is shared only when both request one), and internal memory is
  /// drawn from shared_exec's as in the constructor; the rest is allocated.
  static std::unique_ptr<Executor> SimpleBind(const Symbol& symbol, const Context& context,
                                              const std::map<std::string, Shape>& arg_shapes,
                                              const std::string& grad_req = "write",
                                              const std::map<std::string, std::string>& grad_req_per_arg = {},
                                              const std::map<std::string, DType>& arg_types = {},
                                              Executor* shared_exec = nullptr);

  /// Runs the forward nodes (pushes them; returns at once). `is_train` is passed to the kernels
  /// (Dropout, BatchNorm).
  void Forward(bool is_train);
  /// MXNet's forward(is_train, **kwargs): copies each named array into the bound argument of that
  /// name (pushed copies), then Forward(is_train). Throws weft::Error, before anything runs, for
  /// a name that is not an argument or an array of another shape (naming both shapes).
  void Forward(bool is_train, const std::map<std::string, NDArray>& inputs);
  /// Runs the backward nodes. `head_grads`: one per output (in ListOutputs order; entries for
  /// loss outputs are ignored and may be none arrays), each of the output's shape; may be empty
  /// when every output that needs one is a loss. Throws weft::Error "head gradient is required
  /// for output X" when a needed one is missing, or naming the output for a wrong count / shape.
  /// `is_train` is passed to the backward kernels as Forward's is_train is to the forward ones
  /// (MXNet's backward(out_grads, is_train); false for the gradient of an inference-mode pass).
  void Backward(const std::vector<NDArray>& head_grads = {}, bool is_train = true);
  /// MXNet's backward with a dict of head gradients: by output name (ListOutputs), the rest
  /// none. Throws weft::Error for a name that is not an output (listing them), then as above.
  void Backward(const std::map<std::string, NDArray>& head_grads, bool is_train);

  /// MXNet's debug_str layout: "Symbol Outputs:", "Variable:x", one block per node
  /// ("--------------------", "Op:<op>, Name=<name>", "Inputs:", "\targ[j]=<node>(<idx>)" with
  /// " version=<v>" for variables, "Attrs:" "\tk=v", "Control deps:" for backward nodes), then
  /// "Total <N> MB allocated" (planned internal memory, bytes >> 20) and the TempSpace line.
  std::string DebugStr() const;

  /// Name -> array maps. Throw weft::Error naming the name when two arguments (aux states,
  /// outputs) share it. grad_dict holds none arrays for arguments with kNullOp.
  std::map<std::string, NDArray> arg_dict() const;
  std::map<std::string, NDArray> grad_dict() const;
  std::map<std::string, NDArray> aux_dict() const;
  std::map<std::string, NDArray> output_dict() const;

  /// Copies values into the bound arguments / aux states by name (pushed copies). A name that is
  /// not an argument (aux state) raises weft::Error naming it unless allow_extra_params; a shape
  /// mismatch raises weft::Error naming the name and both shapes. Nothing is copied on error.
  void CopyParamsFrom(const std::map<std::string, NDArray>& arg_params,
                      const std::map<std::string, NDArray>& aux_params = {}, bool allow_extra_params = false);

  /// Makes `array` the bound argument `name` without copying (arg_arrays and arg_dict show it):
  /// later passes read it, so writing it changes the next Forward, as for arrays given at bind.
  /// For feeding each batch without a copy (DataParallelExecutorGroup does this for groups bound
  /// without training). `array` must have the argument's shape, dtype and context. Returns
  /// false, changing nothing, when the executor reaches the argument's memory in another way
  /// than reading it whole (a view of it, an output, an in-place write) or already uses
  /// `array`'s memory elsewhere: copy into arg_dict().at(name) then. Throws weft::Error naming
  /// the argument for an unknown or duplicated name or a different shape, dtype or context.
  /// Not while another thread uses this executor; pushed passes keep the arrays they were given.
  bool AliasArgument(const std::string& name, const NDArray& array);

  /// Installs (or, with an empty function, removes) the monitor callback; see MonitorCallback.
  void SetMonitorCallback(MonitorCallback callback, bool monitor_all = false);

  /// A new executor for other argument shapes sharing this one's arrays where they fit (MXNet's
  /// reshape): arguments named in `new_shapes` take the new shape; others keep theirs, unless
  /// their shape must change, which needs `partial_shaping`. An array that must grow beyond its
  /// memory needs `allow_up_sizing` (then a new array is allocated); smaller ones are views of the
  /// old memory. Internal memory (intermediate values and outputs) is drawn from this executor's
  /// planned blocks as for a `shared_exec` (MXNet binds its reshaped executor against the
  /// original): outputs no larger than this one's are views of the same memory, so running one
  /// overwrites the other's outputs. Throws weft::Error naming the argument and the flag that is
  /// missing. The returned executor shares state with this one: do not run both concurrently.
  std::unique_ptr<Executor> Reshape(bool partial_shaping, bool allow_up_sizing,
                                    const std::map<std::string, Shape>& new_shapes) const;

  /// The graph the executor runs (MXNet's get_optimized_symbol), as a copy: the bound symbol, or,
  /// for a bind without gradients (every grad_req null) on the cpu with WEFT_GRAPH_FUSION not 0,
  /// its rewrite with each Convolution -> [BatchNorm] -> [relu/clip] -> [add] -> [relu/clip] chain
  /// as one `_sg_conv` node named after the chain's last node (core/executor/fuse_conv.h); values
  /// passed only between such nodes may be in oneDNN's blocked layout (their data_format /
  /// out_format attributes; WEFT_BLOCKED_ACTIVATIONS). Its arguments and aux states are the bound
  /// symbol's (ListArguments order may differ).
  Symbol GetOptimizedSymbol() const;

  /// Bytes of planned internal memory (forward and backward values, not user arrays) and what
  /// the same values would take with one block each (the no-sharing baseline).
  uint64_t planned_bytes() const;
  uint64_t unshared_bytes() const;
  /// Bytes of planned internal memory this executor allocated itself: planned_bytes() minus what
  /// it took from a shared executor's blocks (see the constructor's shared_exec).
  uint64_t allocated_bytes() const;

  const Context& context() const;

  // mxnet-cpp's public members. Reassigning elements does not rebind the executor.
  std::vector<NDArray> outputs;
  std::vector<NDArray> arg_arrays;
  std::vector<NDArray> grad_arrays;
  std::vector<NDArray> aux_arrays;

 private:
  std::unique_ptr<exec::ExecState> state_;
};

}  // namespace weft

// weft — imperative automatic differentiation (MXNet 1.9's mx.autograd and its C API,
// MXAutograd*): record the imperative calls of a computation, then differentiate its results.
//
//   NDArray w = ...;  autograd::AttachGrad(&w);             // w.attach_grad()
//   {
//     auto rec = autograd::Record();                        // with autograd.record():
//     NDArray loss = Invoke(...w...)...;                    //   every op call lands on the tape
//     autograd::Backward({loss});                           //   loss.backward()
//   }
//   autograd::GetGrad(w)                                    // w.grad
//
// Recording: while the calling thread records (Record / SetIsRecording), every imperative call
// (weft/imperative.h: Invoke, NDArray arithmetic, CachedOp) that reads an array of a recorded graph
// or a marked variable is added to that graph; its outputs become part of it. Calls that read no
// such array are not recorded (their outputs are constants). Only what each op's backward needs
// is kept (MXNet's save_inputs / save_outputs, from the op definition's backward_uses), and a
// Backward without retain_graph frees it node by node as soon as the node's gradient is pushed.
//
// Gradients come from the same per-op gradient definitions the executor uses (the `_backward_X`
// kernels, core/operator/gradient.h): an autograd gradient equals the executor's for the same graph.
// Backward only pushes work to the engine, on the devices the arrays live on, and returns at once;
// read gradients with WaitToRead / SyncCopyToCPU (a failed kernel's error is rethrown there).
//
// Errors (weft::Error; MXNet's wording where MXNet has a message, then what weft adds):
//   * Backward on an array that is not part of a recorded graph ("Cannot differentiate node
//     because it is not in a computational graph ..."), or whose graph a previous Backward without
//     retain_graph freed (the message says so and names retain_graph);
//   * no marked variable with a grad_req other than null reachable from the heads ("There are no
//     inputs in computation graph that require gradients.");
//   * Grad with respect to an array that is not a marked variable ("Cannot differentiate with
//     respect to the i-th variable because it does not require gradient.");
//   * while recording, an op writing into an array that is part of a recorded graph, e.g.
//     `a += b` on a recorded `a` ("Assigning to NDArrays that are already in a computational
//     graph ..."), refused before anything runs;
//   * Backward needing a value that was overwritten after it was recorded (an in-place write
//     outside recording, a copy into it, an optimizer update), naming the node, its op and the
//     value: MXNet silently used the new value and returned a wrong gradient;
//   * MarkVariables with a gradient buffer of another shape, dtype or device than its variable, a
//     buffer that shares memory with a variable, an array listed twice, or a grad_req other than
//     null, write, add (MXNet 1.9.1 accepted these and failed, or wrote wrong gradients, later).
//     Marking an array again (attach_grad twice) is allowed, as in MXNet: it becomes a new leaf
//     with the new buffer, and graphs recorded before keep the old one.
//
// Thread-safety: the recording and training switches are per thread (MXNet's are thread-local).
// Separate graphs may be recorded and differentiated on separate threads; one graph must not be
// used by two threads at once. Marking an array and reading its gradient state are not
// synchronised with other uses of the same NDArray object.
#pragma once

#include "weft/export.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft::autograd {

// ---- recording and training switches ------------------------------------------------------------

/// Whether the calling thread records (MXAutogradIsRecording). Starts false.
WEFT_API bool IsRecording() noexcept;
/// Whether the calling thread's ops run in training mode (MXAutogradIsTraining): Dropout drops,
/// BatchNorm uses batch statistics. Starts false. Invoke uses it when the call's is_train is false.
WEFT_API bool IsTraining() noexcept;
/// Sets the calling thread's switch; returns the previous value (MXAutogradSetIsRecording(int,
/// int* prev) / MXAutogradSetIsTraining).
WEFT_API bool SetIsRecording(bool is_recording) noexcept;
WEFT_API bool SetIsTraining(bool is_training) noexcept;

/// A scope that sets the switches it is given (nullopt: leaves that one alone) and restores the
/// previous values when it ends (MXNet's _RecordingStateScope). Not copyable; make one per block:
///   { auto scope = autograd::Record(); ... }
class WEFT_API RecordingStateScope {
 public:
  RecordingStateScope(std::optional<bool> is_record, std::optional<bool> train_mode) noexcept;
  ~RecordingStateScope();
  RecordingStateScope(const RecordingStateScope&) = delete;
  RecordingStateScope& operator=(const RecordingStateScope&) = delete;

 private:
  std::optional<bool> set_record_, set_train_, prev_record_, prev_train_;
};

/// autograd.record(train_mode=True): record, in training mode unless told otherwise.
[[nodiscard]] inline RecordingStateScope Record(bool train_mode = true) { return {true, train_mode}; }
/// autograd.pause(train_mode=False): stop recording inside a recorded block.
[[nodiscard]] inline RecordingStateScope Pause(bool train_mode = false) { return {false, train_mode}; }
/// autograd.train_mode() / predict_mode(): set training mode only.
[[nodiscard]] inline RecordingStateScope TrainMode() { return {std::nullopt, true}; }
[[nodiscard]] inline RecordingStateScope PredictMode() { return {std::nullopt, false}; }

// ---- variables ----------------------------------------------------------------------------------

/// Marks arrays as variables whose gradients Backward computes (MXAutogradMarkVariables,
/// autograd.mark_variables): variables[i] gets gradients[i] as its buffer and grad_reqs[i] (kNullOp:
/// none, kWriteTo: overwrite, kAddTo: accumulate into the buffer). `grad_reqs` has one entry per
/// variable or one for all. The NDArray objects pointed to are changed (they become leaves of
/// later recordings; copies made before are not). Throws weft::Error, marking nothing, as listed
/// at the top of this file.
WEFT_API void MarkVariables(const std::vector<NDArray*>& variables, const std::vector<OpReqType>& grad_reqs,
                            const std::vector<NDArray>& gradients);
/// NDArray.attach_grad(grad_req): marks `variable` with a new zero-filled buffer of its shape,
/// dtype and device.
WEFT_API void AttachGrad(NDArray* variable, OpReqType grad_req = kWriteTo);
/// The gradient buffer of a marked variable (MXNDArrayGetGrad, NDArray.grad); a none array when
/// `array` is not a marked variable.
WEFT_API NDArray GetGrad(const NDArray& array);
/// MXNet's fresh-gradient flag of a marked variable (MXNDArrayGetGradState / SetGradState,
/// NDArray._fresh_grad): Backward sets it when it writes the buffer; gluon.Trainer reads and
/// clears it. False (and setting it a no-op) for arrays that are not marked variables.
WEFT_API bool GetGradState(const NDArray& array);
WEFT_API void SetGradState(const NDArray& array, bool fresh);

// ---- differentiation ----------------------------------------------------------------------------

/// MXAutogradBackwardEx. Differentiates `heads` (arrays of recorded graphs) with head gradients
/// `head_grads` (empty, or one per head; a none entry or an empty vector means ones of the head's
/// shape, as MXNet; each must have its head's shape and dtype).
///   * `variables` empty: every marked variable reachable from the heads with a grad_req other
///     than null gets its gradient written (kWriteTo) or added (kAddTo) into its buffer, and its
///     fresh-gradient flag set; a variable no gradient reaches gets zeros (write) or is left
///     (add). Returns an empty vector.
///   * `variables` given (autograd.grad): returns their gradients as new arrays (zeros where no
///     gradient reaches); buffers and flags are not touched.
/// `retain_graph` false frees the graph's kept values as it goes (a second Backward then fails);
/// `create_graph` records the gradient computation itself, so that the returned gradients can be
/// differentiated again (higher-order gradients: element-wise ops sin, cos, exp, expm1, log, log1p,
/// sqrt, rsqrt, square, sigmoid, tanh, relu, abs, negative, Activation (relu, sigmoid, tanh),
/// elemwise_mul, and every op whose backward is
/// linear and reads nothing but the head gradients, such as add, sub, scalar ops, Reshape,
/// transpose, sum, slice, Concat; differentiating through another op's gradient raises
/// weft::Error naming it). `is_train` is the training mode the backward kernels see (Dropout's
/// backward with is_train false passes gradients through).
WEFT_API std::vector<NDArray> BackwardEx(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
                                         const std::vector<NDArray>& variables, bool retain_graph, bool create_graph,
                                         bool is_train);
/// autograd.backward(heads, head_grads, retain_graph, train_mode).
WEFT_API void Backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads = {},
                       bool retain_graph = false, bool train_mode = true);
/// autograd.grad(heads, variables, head_grads, retain_graph, create_graph, train_mode):
/// retain_graph defaults to create_graph.
WEFT_API std::vector<NDArray> Grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                                   const std::vector<NDArray>& head_grads = {},
                                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                                   bool train_mode = true);

/// Records a view as an op's output (MXNet's NDArray::ReshapeWithRecord / SliceWithRecord /
/// AtWithRecord, behind MXNDArrayReshape64, MXNDArraySlice and MXNDArrayAt): `view` is a view of
/// `source` (NDArray::Reshape, Slice, AsArray) that holds exactly what op `op` with `params` makes
/// of `source` ("Reshape" with shape, "slice_axis" with axis 0, begin, end); when the thread
/// records and `source` is part of a recorded graph, `view` becomes that op's output on the tape,
/// so gradients flow through the view while it still shares the source's memory. Otherwise
/// nothing happens. Throws weft::Error for an unknown op or attributes the op refuses, an op whose
/// backward reads values (only ops whose gradient is a pure re-indexing describe views), or when
/// the op would make another shape or dtype than the view's.
WEFT_API void RecordView(const NDArray& source, NDArray* view, const std::string& op,
                         const std::map<std::string, std::string>& params);

/// The gradient of a computation the tape did not see, given by the caller (MXNet's
/// mx.autograd.Function, through MXCustomFunctionRecord). RecordFunction hands it to the tape,
/// which owns it from then on: it is destroyed exactly once, when a Backward without retain_graph
/// has used it, or when its node is freed (no array of the graph is left), whichever comes first.
class WEFT_API FunctionGradient {
 public:
  virtual ~FunctionGradient() = default;
  /// Called by Backward on its own thread, with recording off: `out_grads` has one gradient per
  /// output of the call (zeros where no gradient flows into it), `need` says per input whether its
  /// gradient is wanted. Returns one array per input, of that input's shape and dtype on its
  /// device (a none array where not needed). Throw weft::Error to fail the Backward.
  virtual std::vector<NDArray> Backward(const std::vector<NDArray>& out_grads, const std::vector<bool>& need,
                                        bool is_train) = 0;
  /// What the node is, for messages ("autograd.Function").
  virtual std::string Describe() const = 0;
};

/// Records that `outputs` were computed from `inputs` by code the tape did not see (run with
/// recording paused), with `gradient` as the call's backward: the outputs become part of the
/// inputs' graph. When no input is part of a recorded graph nothing is recorded (the outputs stay
/// constants, as for any op) and `gradient` is destroyed at once; returns whether it was recorded.
/// Throws weft::Error, recording nothing, when the thread is not recording, an array is none or
/// null, or an output is already part of a recorded graph (return a new array from the forward).
/// A Backward with create_graph through the node fails: its gradient cannot be differentiated.
WEFT_API bool RecordFunction(const std::vector<NDArray>& inputs, const std::vector<NDArray*>& outputs,
                             std::unique_ptr<FunctionGradient> gradient);

/// The recorded graph that produced `head`, as a Symbol (MXAutogradGetSymbol,
/// autograd.get_symbol): variables are named "var<N>" (marked arrays) and "null<N>" (constant
/// inputs), op nodes "node_<N>"; a CachedOp call appears as its graph's nodes. Throws
/// weft::Error when `head` is not part of a recorded graph, or the graph holds nodes a Symbol
/// cannot express (gradient nodes recorded with create_graph).
WEFT_API Symbol GetSymbol(const NDArray& head);

}  // namespace weft::autograd

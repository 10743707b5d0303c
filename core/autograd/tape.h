// weft core — the autograd tape (weft/autograd.h): what recording keeps of each imperative call
// for Backward, following MXNet 1.9's imperative autograd (an nnvm node with AGInfo per call).
//
// Every array of a recorded graph refers to the node that produced it (NDArray::autograd_node and
// autograd_index); a node refers to the nodes that produced its inputs, so a graph lives exactly
// as long as some array or some consumer refers into it, and dropping the head arrays frees it.
// Values a node's backward needs are kept as detached arrays (no reference back into the graph:
// no cycles), together with the write count their memory had when they were kept, so Backward can
// refuse values overwritten since ("in-place write to an array the tape still needs").
//
// Node kinds:
//   kVariable  a marked array (MarkVariables / AttachGrad): gradient buffer and grad_req;
//   kOp        one op of the registry (OpDef), as Invoke ran it;
//   kBackward  a backward op `_backward_X` run by Backward with create_graph, so that its own
//              gradient can be taken (higher_order.h says which ones have one);
//   kGraph     one call of a CachedOp (a whole graph as one op; cached_op.cc), or of a caller's
//              function with its own gradient (autograd::RecordFunction; function.cc).
//
// Thread-safety: recording appends nodes that only the recording thread reaches; Backward mutates
// the nodes of the graph it differentiates (frees their values). As in MXNet, one graph must not be
// recorded into or differentiated from two threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operator/gradient.h"
#include "operator/op_def.h"
#include "weft/executor.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft::autograd_detail {

struct Node;
using NodePtr = std::shared_ptr<Node>;

/// Where one input of a node comes from: output `index` of `node`, or (node null) an array that
/// no recorded op produced (a constant as far as gradients go).
struct Input {
  NodePtr node;
  uint32_t index = 0;
};

/// A value kept for backward (none = not kept) and its memory's write count when kept.
struct Saved {
  NDArray array;
  uint64_t writes = 0;
  static Saved Of(const NDArray& a) { return Saved{a.Detach(), a.write_count()}; }
  bool kept() const { return !array.is_none(); }
};

enum class NodeKind { kVariable, kOp, kBackward, kGraph };

/// One call of a whole graph recorded as one node (CachedOp); cached_op.cc implements it.
struct GraphCall {
  virtual ~GraphCall() = default;
  /// Pushes the graph's backward: `out_grads` per output of the call (none: nothing flows into
  /// it), `need` per input. Returns per input its gradient (none where not needed). Throws
  /// weft::Error naming the graph when its values were released (a second backward without
  /// retain_graph).
  virtual std::vector<NDArray> Backward(const std::vector<NDArray>& out_grads, const std::vector<bool>& need,
                                        bool is_train) = 0;
  /// Frees the forward values the backward needed.
  virtual void Release() = 0;
  /// The graph (for GetSymbol: inlined with the call's inputs).
  virtual Symbol GetGraph() const = 0;
  /// "CachedOp(...)" for messages.
  virtual std::string Describe() const = 0;
};

struct Node {
  NodeKind kind = NodeKind::kOp;
  std::string name;  // MXNet's names: "var<N>" for variables, "node_<N>" for ops
  Context ctx;
  bool cleared = false;  // a Backward without retain_graph freed it: it cannot be differentiated again

  // kVariable: the marked array (detached), its gradient buffer, how to write it, and MXNet's
  // fresh_out_grad flag (set by Backward, read and reset by Gluon's Trainer).
  NDArray value, grad;
  OpReqType grad_req = kNullOp;
  bool fresh_grad = false;

  // kOp: the op and its normalised attributes; kBackward: the *forward* op and attributes, and
  // `backward` describes the `_backward_X` node that was run.
  const OpDef* def = nullptr;
  AttrMap attrs;
  std::optional<BackwardNode> backward;
  bool is_train = false;
  // Inputs (kOp: the op's inputs then aux states; kBackward: the backward node's inputs; kGraph:
  // the call's inputs), their shapes and dtypes, and what is kept of them.
  std::vector<Input> inputs;
  std::vector<Shape> in_shapes;
  std::vector<DType> in_dtypes;
  uint32_t num_args = 0;  // inputs that are not aux states
  std::vector<Saved> saved_inputs;
  // Outputs, hidden ones included, and what is kept of them.
  std::vector<Shape> out_shapes;
  std::vector<DType> out_dtypes;
  std::vector<Saved> saved_outputs;
  // kGraph: the call.
  std::shared_ptr<GraphCall> graph;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Releases long input chains iteratively (a recursive release overflows the stack).
  ~Node();

  bool is_variable() const { return kind == NodeKind::kVariable; }
  size_t num_outputs() const { return out_shapes.size(); }
  /// "node_3 (FullyConnected)", "variable var0", "node_5 (_backward_exp)", "node_7 (CachedOp ...)".
  std::string Describe() const;
  /// Drops the kept values and the inputs (after a Backward without retain_graph).
  void Clear();
};

/// MXNet's variable_count_ / node_count_ names: "var0", "node_0", ... (process-wide counters).
std::string NextVariableName();
std::string NextNodeName();

/// True when `a` is part of a graph that can still be differentiated.
inline bool InGraph(const NDArray& a) { return a.autograd_node() != nullptr && !a.autograd_node()->cleared; }

/// "an array of shape (2, 3) float32 on cpu(0)".
std::string DescribeArray(const NDArray& a);

/// The value node `n` kept of its input `i`, carrying that input's autograd entry again (so that
/// recording a computation on it, with create_graph, links it to the graph).
NDArray KeptInput(const Node& n, size_t i);
/// The same for output `k` of `self` (the owning pointer of `n`).
NDArray KeptOutput(const NodePtr& self, size_t k);

/// Installs the recorder of Invoke (idempotent; every public autograd entry point calls it).
void EnsureRecorder();

/// Records a node that was run on `inputs` (entries from the arrays) writing `outputs` (their
/// entries are set to the new node). Used by the recorder, Backward (create_graph) and CachedOp.
/// Returns the node, or null when no input is part of a graph (nothing to record).
NodePtr RecordNode(NodeKind kind, const OpDef* def, const AttrMap& attrs, const std::vector<NDArray>& inputs,
                   uint32_t num_args, std::vector<NDArray>& outputs, bool is_train,
                   const std::vector<bool>& keep_inputs, const std::vector<bool>& keep_outputs);

}  // namespace weft::autograd_detail

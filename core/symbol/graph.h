// weft core — the symbol graph: the representation behind weft::Symbol, shared with the executor.
//
// A graph is a DAG of nodes held by shared_ptr (a Symbol is a list of output entries; nodes are
// shared between symbols the way MXNet/NNVM shares them). A node is either
//   * a variable (op == nullptr; serialized as op "null"): one output, no inputs; or
//   * an op node: `op` is the registered OpDef, `inputs` are the op's inputs (OpDef::list_inputs)
//     followed by its aux states (OpDef::list_aux) — the aux positions are MXNet's mutable inputs.
//
// Attributes: `attrs` is the dictionary as the user or the JSON file gave it (all strings, hidden
// "__x__" keys included); it is what ToJSON writes. `params` is `attrs` normalized by the OpDef
// (defaults filled, values validated) without the hidden keys and without MXNet's legacy
// "<arg>_lr_mult"-style keys; kernels and inference read `params`.
//
// Walking it: IndexedGraph (below) flattens the DAG reachable from a list of heads into a
// topologically ordered vector (post-order DFS, inputs visited in order — MXNet's node order in
// JSON), with node ids, entry ids (node_row_ptr[nid] + output index), the argument and aux variable
// lists and the heads. The executor builds one per bind.
//
// Thread-safety: nodes are mutable (SetAttr changes a shared node, as in MXNet); building and
// mutating symbols that share nodes from several threads needs external synchronization.
// IndexedGraph is a value that keeps the nodes alive.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "operator/op_def.h"

namespace weft::graph {

struct Node;
using NodePtr = std::shared_ptr<Node>;
using AttrDict = std::map<std::string, std::string>;

/// One output of a node. `version` is NNVM's variable version (0 unless a file says otherwise;
/// preserved through load/save).
struct Entry {
  NodePtr node;
  uint32_t index = 0;
  uint32_t version = 0;
};

struct Node {
  const OpDef* op = nullptr;  // nullptr: a variable
  std::string name;
  AttrDict attrs;             // as given; what JSON holds
  AttrMap params;             // op->Normalize(op attributes of `attrs`); empty for variables
  std::vector<Entry> inputs;  // list_inputs then list_aux; empty for variables
  // Filled by Refresh() from op and params:
  std::vector<std::string> input_names;   // list_inputs then list_aux
  std::vector<std::string> output_names;  // all outputs, hidden ones too
  uint32_t num_args = 0;                  // inputs that are not aux states
  uint32_t num_outputs = 1;               // all outputs (node_row_ptr step)
  uint32_t num_visible_outputs = 1;       // outputs a symbol exposes
  // A `_CachedOp` node (see MakeCachedOpNode): the heads of the graph it runs; null otherwise.
  // Shared, never mutated after the node is made.
  std::shared_ptr<const std::vector<Entry>> subgraph;
  // Variables: NNVM's VariableParam.version, bumped each time an op is composed with this
  // variable in an aux (mutable) position; entries record it (hence "[3, 0, 1]" in MXNet JSON).
  uint32_t version = 0;

  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  /// Releases long input chains iteratively (a recursive release overflows the stack on deep graphs).
  ~Node();

  bool is_variable() const { return op == nullptr; }
  size_t num_aux() const { return input_names.size() - num_args; }
  /// "fc1 (FullyConnected)" or "variable 'data'": for error messages.
  std::string Describe() const;
};

/// MXNet's hidden attribute keys (written as "__key__" in graphs).
const std::vector<std::string>& HiddenKeys();
/// True for keys that are not op parameters: "__x__" keys and keys equal to or ending in
/// "_" + a hidden key ("weight_lr_mult", as MXNet 0.8 wrote them).
bool IsNonParamKey(std::string_view key);

/// The OpDef for a name, resolving MXNet's internal aliases (_Plus -> elemwise_add,
/// _MulScalar -> _mul_scalar, ...) as well as the registry's own. nullptr when unknown.
const OpDef* FindOp(std::string_view name);
/// As FindOp, but throws the registry's "unknown operator" error.
const OpDef& LookupOp(std::string_view name);

/// A variable node.
NodePtr MakeVariable(std::string name, AttrDict attrs = {});
/// An op node without inputs yet; Refresh()es it. Throws weft::Error naming `name` and the op
/// for invalid attributes.
NodePtr MakeOpNode(const OpDef& op, std::string name, AttrDict attrs);
/// Recomputes params, names and counts from op + attrs (after attrs changed). Throws weft::Error
/// naming the node when the attributes do not normalize.
void Refresh(Node& node);
/// MXNet's FSetInputVarAttrOnCompose: attributes an op gives to a variable in input position
/// `index` (BatchNorm: `__init__` "zero"/"one" for moving_mean/moving_var) unless it has them.
void ApplyInputVarAttrs(const Node& op_node, size_t index, Node& var);

/// Visits each node reachable from `heads` once, inputs before the node (in input order), heads
/// in order. Iterative: deep graphs do not overflow the stack.
void PostOrderDFS(const std::vector<Entry>& heads, const std::function<void(const NodePtr&)>& fn);

/// MXNet's `_CachedOp` node, as `autograd.get_symbol` shows a hybridized block's call that was not
/// inlined: one node that runs the graph `subgraph_heads`. Its inputs are that graph's arguments
/// (ListArguments order) then its aux states, bound to `args` and `aux`; its outputs are the
/// graph's heads, named "<name>_<head's output name>". It writes no attributes to JSON (MXNet
/// writes none either, so such a file cannot be bound again; weft's reader says so). Inference
/// and executors see it through ExpandSubgraphs. Throws weft::Error when the counts disagree.
NodePtr MakeCachedOpNode(std::string name, std::vector<Entry> subgraph_heads, std::vector<Entry> args,
                         std::vector<Entry> aux);
/// Refresh() of a `_CachedOp` node: names and counts from the graph it holds.
void RefreshSubgraphNode(Node& node);
/// The graph of `heads` with every `_CachedOp` node replaced by a copy of the graph it runs
/// (recursively), its variables bound to the node's inputs: what shape/type inference, the
/// argument lists and executors work on, so such a symbol binds and differentiates as the graph
/// it holds (MXNet runs the node as one stateful op; the values are the same). Returns `heads`
/// itself when there is no such node; nodes outside the expanded parts are shared, not copied.
std::vector<Entry> ExpandSubgraphs(const std::vector<Entry>& heads);

/// Index-based, topologically ordered view of the graph reachable from some heads.
struct IndexedGraph {
  struct EntryRef {
    uint32_t node_id = 0;
    uint32_t index = 0;
    uint32_t version = 0;
  };
  struct NodeInfo {
    NodePtr node;                  // op (nullptr for variables), name, attrs, params
    std::vector<EntryRef> inputs;  // node->inputs as ids; [0, num_args) args, then aux
  };

  std::vector<NodeInfo> nodes;      // topological: every input precedes its user
  std::vector<uint32_t> row_ptr;    // size nodes+1; entry id = row_ptr[node_id] + output index
  std::vector<uint32_t> var_nodes;  // every variable, in node order (JSON "arg_nodes")
  std::vector<uint32_t> arg_nodes;  // variables that are arguments (ListArguments order)
  std::vector<uint32_t> aux_nodes;  // variables in aux positions (ListAuxiliaryStates order)
  std::vector<EntryRef> outputs;    // the heads

  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return row_ptr[node_id] + index; }
  uint32_t entry_id(const EntryRef& e) const { return row_ptr[e.node_id] + e.index; }
  uint32_t num_entries() const { return row_ptr.back(); }
};

IndexedGraph Index(const std::vector<Entry>& heads);

/// MXNet's output name of an entry: the variable's name, or "<node>_<output name>".
std::string OutputName(const Entry& e);

}  // namespace weft::graph

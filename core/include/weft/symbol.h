// weft — symbolic graphs, following mxnet-cpp's Symbol (include/mxnet-cpp/symbol.h): an
// mxnet-cpp program ports by changing the include and the namespace.
//
// A Symbol is a list of outputs of a graph of operators and variables. Symbols are cheap handles:
// copying one shares the graph's nodes (as in MXNet, SetAttr on a copy changes the shared node;
// Copy() makes an independent graph). Build graphs with Symbol::Variable, the arithmetic operators
// below, Operator (weft/operator.h) or the op functions of weft/op.h.
//
// Names and orders are MXNet 1.9's:
//   * auto names: lower-cased op hint + per-hint counter (fullyconnected0, _plus0, _mulscalar0),
//     see NameManager in weft/operator.h;
//   * ListArguments: non-aux variables in post-order DFS from the outputs (inputs in order);
//     ListAuxiliaryStates: variables in aux positions (BatchNorm's moving_mean/moving_var);
//     ListOutputs: "<node>_output", "<node>_<name>" for named outputs (BatchNorm "bn_output"),
//     "<node>_output<i>" for multi-output ops; a variable's output is its name. Hidden outputs
//     (BatchNorm's mean/var) are not listed.
// JSON is MXNet's symbol file format (see Save / LoadJSON).
//
// Errors: weft::Error with a message naming the node/argument and the fix. An empty Symbol
// (default-constructed) raises weft::Error from every method except IsEmpty.
// Thread-safety: const methods may run concurrently on symbols that nobody mutates; SetAttr and
// graph building on symbols sharing nodes need external synchronization. Name counters are
// thread-safe.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/ndarray.h"

namespace weft {

class Executor;        // weft/executor.h
enum OpReqType : int;  // weft/executor.h: kNullOp, kWriteTo, kWriteInplace, kAddTo

/// mxnet-cpp's scalar types (mx_uint for shape extents, mx_float for scalars).
using mx_uint = uint32_t;
using mx_float = float;

namespace graph {
struct Entry;
}  // namespace graph

/// Result of Symbol::InferShapePartial. Shapes are in ListArguments / ListOutputs /
/// ListAuxiliaryStates order; nullopt = nothing known; an extent -1 = that axis unknown.
struct WEFT_API ShapeInference {
  std::vector<std::optional<Shape>> arg_shapes;
  std::vector<std::optional<Shape>> out_shapes;
  std::vector<std::optional<Shape>> aux_shapes;
  std::vector<std::string> unknown_args;  // arguments (then aux states) not fully known
  bool complete = false;                  // every argument, output and aux shape fully known
};

/// Result of Symbol::InferTypePartial: DType codes, -1 = unknown.
struct WEFT_API TypeInference {
  std::vector<int> arg_types;
  std::vector<int> out_types;
  std::vector<int> aux_types;
  std::vector<std::string> unknown_args;
  bool complete = false;
};

class WEFT_API Symbol {
 public:
  /// An empty symbol (mxnet-cpp's null handle). Passed as an op input it means "not given":
  /// the op creates the variable "<node>_<input>" (MXNet convention).
  Symbol();
  /// A variable named `name` (mxnet-cpp: Symbol("data")).
  explicit Symbol(const std::string& name);
  explicit Symbol(const char* name);
  Symbol(const Symbol&);
  Symbol(Symbol&&) noexcept;
  Symbol& operator=(const Symbol&);
  Symbol& operator=(Symbol&&) noexcept;
  ~Symbol();

  /// A variable. Throws weft::Error for an empty name.
  static Symbol Variable(const std::string& name);
  /// A symbol whose outputs are the outputs of `symbols`, in order.
  static Symbol Group(const std::vector<Symbol>& symbols);
  /// Reads an MXNet symbol JSON file (any MXNet version; see LoadJSON). Throws weft::Error naming
  /// the file when it cannot be read or parsed.
  static Symbol Load(const std::string& file_name);
  /// Parses MXNet symbol JSON. Accepts every MXNet version's files: "attr"/"attrs"/"param" node
  /// keys (merged), 2-element inputs, missing node_row_ptr/attrs; files without mxnet_version
  /// (0.8.0-era) are upgraded as MXNet does (hidden keys ctx_group/lr_mult/... become
  /// __ctx_group__/__lr_mult__/..., "<arg>_lr_mult" on an op moves to that input variable as
  /// __lr_mult__, missing aux inputs such as BatchNorm's moving_mean/moving_var become variables).
  /// Throws weft::Error naming the node for missing keys, unknown ops, bad attributes, inputs out
  /// of range and cycles.
  static Symbol LoadJSON(const std::string& json_str);

  /// Writes ToJSON() to a file. Throws weft::Error when the file cannot be written.
  void Save(const std::string& file_name) const;
  /// MXNet's JSON, byte for byte as MXNet 1.9.1 writes it (nodes in post-order DFS, arg_nodes,
  /// node_row_ptr, heads, "attrs": {"mxnet_version": ["int", 10901]}).
  std::string ToJSON() const;

  bool IsEmpty() const;
  /// Number of outputs.
  mx_uint GetNumOutputs() const;
  /// Output `index` as a symbol. Throws weft::Error when out of range.
  Symbol operator[](int index) const;
  /// The output named `name` (one of ListOutputs()). Throws weft::Error when no or several
  /// outputs have that name.
  Symbol operator[](const std::string& name) const;
  /// Every node's visible outputs (variables included), in post-order DFS.
  Symbol GetInternals() const;
  /// The inputs of the output nodes (empty symbol-list when they are variables).
  Symbol GetChildren() const;
  /// A deep copy: the graph's nodes are duplicated.
  Symbol Copy() const;
  /// MXNet's composition (Symbol.__call__ in Python, NNSymbolCompose): replaces free variables
  /// of this graph by the (single-output) symbols given, positionally in ListArguments() order
  /// and by variable name (arguments or aux states). The graph's nodes are changed in place, as
  /// SetAttr changes them (compose a Copy() to keep the original). Throws weft::Error, changing
  /// nothing, for a symbol that is a variable, more positional symbols than arguments, a name
  /// that is no input (listing the inputs), a variable given twice, or a symbol with several
  /// outputs.
  void Compose(const std::vector<Symbol>& args, const std::map<std::string, Symbol>& kwargs);
  /// MXNet's Symbol.debug_str(): "Symbol Outputs:" with "\toutput[i]=<node>(<index>)", then in
  /// post-order "Variable:<name>" lines and, per op node, "--------------------",
  /// "Op:<op>, Name=<name>", "Inputs:" with "\targ[j]=<node>(<index>)" (" version=<v>" after
  /// variables), and "Attrs:" with "\tkey=value" when the node has attributes.
  std::string DebugStr() const;

  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListOutputs() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  /// Every variable (arguments and aux states) in post-order DFS (MXNet list_inputs).
  std::vector<std::string> ListInputs() const;
  /// The node's name; "" for a symbol with several outputs from different nodes (MXNet: None).
  std::string GetName() const;

  /// Sets an attribute on the output node (a symbol with one output node only; "name" renames
  /// the node). Hidden keys may be given bare: "lr_mult" is stored as "__lr_mult__" like MXNet's
  /// C API does. Op parameters are re-validated; throws weft::Error for a bad value.
  void SetAttr(const std::string& key, const std::string& value);
  void SetAttribute(const std::string& key, const std::string& value) { SetAttr(key, value); }
  void SetAttributes(const std::map<std::string, std::string>& attrs);
  /// The output node's attribute; a bare hidden key ("lr_mult") also finds "__lr_mult__".
  std::optional<std::string> GetAttr(const std::string& key) const;
  /// The output node's attributes (mxnet-cpp ListAttributes: shallow).
  std::map<std::string, std::string> ListAttributes() const;
  /// Every node's attributes by node name (MXNet attr_dict); nodes without attributes omitted.
  std::map<std::string, std::map<std::string, std::string>> AttrDict() const;

  /// mxnet-cpp's InferShape: `arg_shapes` by argument (or aux) name, extents 0 = unknown
  /// (variables' __shape__ attributes are used for names not given). Fills the vectors in
  /// ListArguments / ListAuxiliaryStates / ListOutputs order; an unknown shape is an empty
  /// vector, an unknown extent 0. Returns true when every shape is fully known (mxnet-cpp returns
  /// void; partial results are our addition). Throws weft::Error naming the operator and both
  /// shapes when shapes disagree, or for a name that is not an argument.
  bool InferShape(const std::map<std::string, std::vector<mx_uint>>& arg_shapes,
                  std::vector<std::vector<mx_uint>>* in_shape, std::vector<std::vector<mx_uint>>* aux_shape,
                  std::vector<std::vector<mx_uint>>* out_shape) const;
  /// Shape inference with weft shapes (extent -1 = unknown); reports what stayed unknown.
  ShapeInference InferShapePartial(const std::map<std::string, Shape>& arg_shapes) const;
  /// Dtype inference (values are DType codes, -1 unknown; variables' __dtype__ used as hints).
  /// Returns true when every type is known. Throws weft::Error naming the op on a conflict.
  bool InferType(const std::map<std::string, int>& arg_types, std::vector<int>* in_type, std::vector<int>* aux_type,
                 std::vector<int>* out_type) const;
  TypeInference InferTypePartial(const std::map<std::string, int>& arg_types) const;

  /// Arithmetic, as MXNet builds it: symbol ⊕ symbol makes elemwise_add/_sub/_mul/_div nodes
  /// named _plus0/_minus0/_mul0/_div0; symbol ⊕ scalar makes _plus_scalar/... nodes
  /// (_plusscalar0, _mulscalar0, ...) with attribute "scalar"; scalar − symbol and scalar /
  /// symbol make _rminus_scalar/_rdiv_scalar.
  Symbol operator+(const Symbol& rhs) const;
  Symbol operator-(const Symbol& rhs) const;
  Symbol operator*(const Symbol& rhs) const;
  Symbol operator/(const Symbol& rhs) const;
  Symbol operator+(mx_float scalar) const;
  Symbol operator-(mx_float scalar) const;
  Symbol operator*(mx_float scalar) const;
  Symbol operator/(mx_float scalar) const;
  /// -x as MXNet's Python front end builds it: x * -1 (_mul_scalar).
  Symbol operator-() const;

  /// mxnet-cpp's SimpleBind (defined in the executor module; include weft/executor.h). Arguments
  /// and aux states not in args_map / aux_map are allocated on `context` and zero-filled; their
  /// shapes are inferred from the given arrays (weft::Error lists those that stay unknown).
  /// Gradient arrays not in arg_grad_store are allocated; a request not in grad_req_type is
  /// kNullOp for arguments whose name ends in "data" or "label" and kWriteTo otherwise (as
  /// mxnet-cpp). A name in any map that the symbol does not have raises weft::Error naming it.
  /// The caller owns the returned executor.
  Executor* SimpleBind(const Context& context, const std::map<std::string, NDArray>& args_map,
                       const std::map<std::string, NDArray>& arg_grad_store = {},
                       const std::map<std::string, OpReqType>& grad_req_type = {},
                       const std::map<std::string, NDArray>& aux_map = {}) const;
  /// mxnet-cpp's Bind: new Executor(*this, context, ...) (see weft/executor.h). Caller owns it.
  Executor* Bind(const Context& context, const std::vector<NDArray>& arg_arrays,
                 const std::vector<NDArray>& grad_arrays, const std::vector<OpReqType>& grad_reqs,
                 const std::vector<NDArray>& aux_arrays, const std::map<std::string, Context>& group_to_ctx = {},
                 Executor* shared_exec = nullptr) const;

  /// The graph outputs (internal; for the executor and weft::Operator).
  WEFT_HIDDEN const std::vector<graph::Entry>& outputs() const;
  WEFT_HIDDEN static Symbol FromOutputs(std::vector<graph::Entry> outputs);

 private:
  std::vector<graph::Entry> outputs_;  // Entry is complete in symbol.cc, where members are defined
};

WEFT_API Symbol operator+(mx_float lhs, const Symbol& rhs);
WEFT_API Symbol operator-(mx_float lhs, const Symbol& rhs);
WEFT_API Symbol operator*(mx_float lhs, const Symbol& rhs);
WEFT_API Symbol operator/(mx_float lhs, const Symbol& rhs);

}  // namespace weft

// weft — what the registered operators are, for front ends that generate their op functions
// from the registry (MXNet's Python package builds mx.nd.* and mx.sym.* from
// MXSymbolGetAtomicSymbolInfo; bindings/mxnet reads this header for it) and for documentation.
//
// Every op registered (built-in ones and those of operator plugins) is listed with its MXNet
// name, description, attributes in declaration order (name, type, default, one-line doc, the
// words of an enum), and its inputs for its default attributes. Aliases (MXNet's other names:
// "ElementWiseSum" for add_n) resolve to the op they stand for.
//
// Thread-safety: every function may be called from any thread. The first call loads the plugins
// (weft::Runtime) so that plugin ops are listed.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weft {

/// One attribute of an op, as its definition declares it.
struct WEFT_API OpAttrInfo {
  std::string name;                          ///< MXNet's attribute name ("num_hidden")
  std::string type;                          ///< "int", "float", "bool", "shape", "string", "enum", "dtype"
  std::optional<std::string> default_value;  ///< MXNet attribute text ("(1, 1)", "False"); nullopt = required
  std::string doc;                           ///< one line
  std::vector<std::string> choices;          ///< the accepted words of an "enum" (may be empty for plugin enums)
  /// False for attributes weft accepts for MXNet compatibility without using them (cudnn_off,
  /// workspace) or accepts at their default value only.
  bool used = true;
  /// MXNet's spelling of the type in its op docstrings (MXSymbolGetAtomicSymbolInfo):
  /// "int (non-negative)", "Shape(tuple)", "boolean", "float", "double or None", "{'avg', 'max'}",
  /// "long (non-negative)". A front end prints "<mxnet_type>, required" or "<mxnet_type>, optional,
  /// default=<default>" as MXNet does.
  std::string mxnet_type = {};
  /// The inclusive range of an int or float attribute; nullopt = unbounded on that side.
  std::optional<double> min = {}, max = {};
  /// "None" is accepted whatever the default (an optional int, a tuple).
  bool accepts_none = false;
  /// Set by weft's graph passes on an MXNet op (Pooling's and Concat's data_format from the
  /// fusion pass), not one of MXNet's attributes: MXNet's op info leaves it out.
  bool internal = false;
};

/// One registered op.
struct WEFT_API OpInfo {
  std::string name;         ///< the registered name (an alias given to FindOpInfo resolves to it)
  std::string description;  ///< one paragraph
  std::string source;       ///< "core" or the name of the operator plugin that defines it
  std::vector<OpAttrInfo> attrs;
  /// Inputs then aux states, in MXNet's order, for the op's default attributes (FullyConnected:
  /// data, weight, bias; BatchNorm: data, gamma, beta, moving_mean, moving_var). For an op whose
  /// number of inputs is an attribute (variadic_attr) this is the one name of its input list.
  std::vector<std::string> inputs;
  int num_aux = 0;  ///< the last num_aux entries of `inputs` are aux states
  /// The attribute that counts the inputs of a variadic op ("num_args" for Concat and add_n,
  /// "num_weights" for the multi-tensor updates, whose one list holds their states too);
  /// "" when the op has a fixed list of inputs.
  std::string variadic_attr;
  int num_visible_outputs = 1;  ///< outputs users see, for the default attributes
  std::vector<std::string> aliases;
  bool has_backward = false;  ///< a gradient is defined (a backward op, or zero by definition)
};

/// Names of every registered op (aliases not included), sorted.
WEFT_API std::vector<std::string> ListOpNames();
/// Every alias with the op it stands for, sorted by alias.
WEFT_API std::vector<std::pair<std::string, std::string>> ListOpAliases();
/// The op named `name` (or the op an alias stands for); nullopt when no op has that name.
WEFT_API std::optional<OpInfo> FindOpInfo(const std::string& name);
/// The inputs (then aux states) of op `name` for the attributes `attrs` (attribute text by name;
/// defaults fill the rest): FullyConnected with no_bias "True" has data and weight only; Concat
/// with num_args "3" has arg0, arg1, arg2. Throws weft::Error for an unknown op or bad attributes
/// (the messages of weft::Operator).
WEFT_API std::vector<std::string> ListOpInputs(const std::string& name,
                                               const std::map<std::string, std::string>& attrs);

/// The output shapes (visible outputs) of op `name` with attributes `attrs` for inputs of
/// `input_shapes` (op inputs then aux states, all known), by the op's shape inference alone
/// (no graph, nothing allocated): what an imperative call would produce. Reshape with MXNet's
/// shape codes, for instance. Throws weft::Error as Invoke does for unknown ops, bad attributes,
/// a wrong number of inputs or shapes the op refuses.
WEFT_API std::vector<std::vector<int64_t>> InferOpOutputShapes(const std::string& name,
                                                               const std::map<std::string, std::string>& attrs,
                                                               const std::vector<std::vector<int64_t>>& input_shapes);

}  // namespace weft

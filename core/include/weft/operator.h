// weft — building op nodes, following mxnet-cpp's Operator (include/mxnet-cpp/operator.h):
//
//   Symbol fc = Operator("FullyConnected").SetParam("num_hidden", 128)
//                   .SetInput("data", data).CreateSymbol("fc1");
//
// Parameters are stored as MXNet's attribute strings (bool "True"/"False", tuples "(3, 3)",
// floats in shortest round-trip form, "None" for an empty std::optional) and validated against
// the op's definition when the symbol is created. Inputs are given by name (SetInput) or by
// position (operator(), PushInput); inputs not given become variables "<node>_<input>"
// carrying a copy of the node's attributes (MXNet convention: fc1_weight, fc1_bias,
// bn_moving_mean). For ops with a "num_args" attribute (Concat, add_n) it defaults to the number
// of positional inputs.
//
// The imperative form (mxnet-cpp's Operator::Invoke on NDArrays) belongs to the executor /
// imperative layer and is not declared here yet; it will be added to this class.
//
// Thread-safety: an Operator is a builder owned by one thread. NameManager counters are
// thread-safe.
#pragma once

#include "weft/export.h"

#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/base.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft {

struct OpDef;  // core/operator/op_def.h

/// MXNet's NameManager: a name for an unnamed node is the lower-cased hint (the op name as the
/// caller spelled it: "FullyConnected" -> "fullyconnected", "_Plus" -> "_plus") followed by a
/// per-hint counter starting at 0. The counters are process-wide; a NameManager::Scope gives
/// the current thread fresh counters until it ends (like `with mx.name.NameManager():`).
class WEFT_API NameManager {
 public:
  /// Returns `name` when non-empty, else the next auto name for `hint`.
  static std::string Get(const std::string& name, const std::string& hint);

  class Scope {
   public:
    Scope();
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::map<std::string, int> counters_;
    std::map<std::string, int>* previous_;
  };
};

/// MXNet's attribute text of a float: the shortest form that reads back as the same value
/// (2.5f -> "2.5", 0.1f -> "0.1", 1e-8 -> "1e-08"). Thread-safe.
WEFT_API std::string FormatFloat(float v);
WEFT_API std::string FormatFloat(double v);

namespace detail {
template <typename T>
std::string AttrString(const T& value);
template <typename T>
std::string AttrString(const std::optional<T>& value) {
  return value ? AttrString(*value) : std::string("None");
}
/// MXNet's attribute string for a value (see the file comment). Enums need an
/// `std::string EnumToAttr(Enum)` found by argument-dependent lookup (op.h defines them).
template <typename T>
std::string AttrString(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_enum_v<T>) {
    return EnumToAttr(value);
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    return FormatFloat(value);
  } else if constexpr (std::is_convertible_v<T, std::string_view>) {
    return std::string(std::string_view(value));
  } else if constexpr (std::is_same_v<T, Shape>) {
    return value.ToString();
  } else {
    std::ostringstream os;
    os << value;
    return os.str();
  }
}
}  // namespace detail

class WEFT_API Operator {
 public:
  /// `operator_name` is a registered op or one of MXNet's internal aliases (_Plus, _MulScalar).
  /// Throws weft::Error "unknown operator" (with close names) otherwise.
  explicit Operator(const std::string& operator_name);

  /// Sets attribute `name` to AttrString(value).
  template <typename T>
  Operator& SetParam(const std::string& name, const T& value) {
    params_[name] = detail::AttrString(value);
    return *this;
  }
  /// Sets the attribute only when `value != default_value` (op.h uses it so that saved JSON
  /// holds the attributes MXNet's Python front end would write for the same call).
  template <typename T>
  Operator& SetParamIfNot(const std::string& name, const T& value, const std::type_identity_t<T>& default_value) {
    if (!(value == default_value)) SetParam(name, value);
    return *this;
  }
  /// Gives input `name` (one of the op's input or aux names). An empty Symbol means "not
  /// given" (a variable is created). A symbol with several outputs is an error at CreateSymbol.
  Operator& SetInput(const std::string& name, const Symbol& symbol);
  /// Appends a positional input (the next op input in order).
  void PushInput(const Symbol& symbol);
  Operator& operator()() { return *this; }
  Operator& operator()(const Symbol& symbol) {
    PushInput(symbol);
    return *this;
  }
  Operator& operator()(const std::vector<Symbol>& symbols) {
    for (const Symbol& s : symbols) PushInput(s);
    return *this;
  }

  /// Imperative use (mxnet-cpp): NDArray inputs, by name or position (op inputs, then aux
  /// states), run at once by Invoke. An Operator holds either Symbol or NDArray inputs.
  Operator& SetInput(const std::string& name, const NDArray& array);
  void PushInput(const NDArray& array);
  Operator& operator()(const NDArray& array) {
    PushInput(array);
    return *this;
  }
  /// Runs the op on the NDArray inputs (pushed to the engine; returns at once). With `outputs`
  /// holding arrays the results go there (an output that is an input runs in place), otherwise
  /// new arrays are appended. Errors as weft::Invoke (weft/imperative.h): unknown op, bad
  /// attributes, missing or unknown inputs, shapes the op refuses, no kernel on the device.
  void Invoke(std::vector<NDArray>& outputs);
  /// Runs the op into one given output array.
  void Invoke(NDArray& output);
  /// Runs the op and returns its outputs.
  std::vector<NDArray> Invoke();

  /// Builds the node. `name` empty = NameManager name from the op name as given. Throws
  /// weft::Error naming the node for bad attributes, unknown input names, an input given twice,
  /// too many inputs, or an input symbol with more than one output.
  Symbol CreateSymbol(const std::string& name = "");

 private:
  std::string op_name_;  // as the caller spelled it (the naming hint)
  const OpDef* op_;
  std::map<std::string, std::string> params_;
  std::vector<Symbol> positional_;
  std::vector<std::pair<std::string, Symbol>> named_;
  std::vector<NDArray> nd_positional_;
  std::vector<std::pair<std::string, NDArray>> nd_named_;
};

}  // namespace weft

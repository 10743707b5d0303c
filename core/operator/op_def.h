// weft core — operator definitions: what an op is (not how a device computes it).
//
// Built-in ops are defined in core/operator/defs/*.cc with MXNet's names, attributes and
// semantics (see OPS.md, the contract with kernels). Operator plugins add definitions through
// the SDK (weft_op_def); core adapts them into the same OpDef.
//
// Shapes during inference are std::optional<Shape>: nullopt = unknown; an extent of -1 = that
// axis is unknown. Dtypes during inference are int (DType values; -1 = unknown).
//
// Thread-safety: the registry is filled at start-up (and when a plugin loads); lookups are
// thread-safe. OpDef objects are immutable once registered.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/base.h"
#include "weft/sdk/cpp/attrs.hpp"
#include "weft/sdk/cpp/params.hpp"

namespace weft {

using AttrMap = sdk::AttrMap;
using ShapeSlot = std::optional<Shape>;

/// One declared attribute. Built-in ops get theirs from their parameter struct
/// (weft/sdk/ops/*.hpp, sdk::DeclaredAttrs); operator plugins from their weft_attr_defs.
struct AttrSpec {
  std::string name;
  // Types below; "long" is MXNet's name for a 64-bit integer (randint's bounds), checked like "int".
  std::string type;                          // "int", "float", "bool", "shape", "string", "enum", "dtype"
  std::optional<std::string> default_value;  // nullopt = required
  std::string doc;
  // The allowed words of an "enum" attribute ("None" allowed when it is the default), or the
  // dtypes a "dtype" attribute accepts (empty: all).
  std::vector<std::string> choices;
  using Use = sdk::AttrUse;  // kUsed, kIgnored (accepted, not read), kDefaultOnly (default value only)
  Use use = Use::kUsed;
  std::string mxnet_type;          // MXNet's spelling of the type ("int (non-negative)"); "" = derive from type
  std::optional<double> min, max;  // inclusive range of an int or float attribute
  bool none_ok = false;            // "None" is valid whatever the default (an optional int, a tuple)
  // Set by weft's graph passes on an MXNet op (the fusion pass's layouts on Pooling and Concat),
  // not one of MXNet's attributes: MXNet's op info (OpAttrInfo::internal) leaves it out.
  bool internal = false;
};

/// How gradients flow through an op.
enum class GradKind {
  kNone,  // no gradient (one_hot, argmax, update ops): input gradients get zeros
  kZero,  // gradient is defined to be zero (BlockGrad, zeros_like)
  kOp,    // computed by the backward op `backward_op` (SDK convention, see OPS.md)
};

/// Bits of OpDef::backward_uses; same values as WEFT_OP_BACKWARD_USES_*.
inline constexpr uint32_t kUsesInputs = 1u << 0;
inline constexpr uint32_t kUsesOutputs = 1u << 1;
inline constexpr uint32_t kUsesAux = 1u << 2;
/// Bits of OpDef::resources; same values as WEFT_OP_RESOURCE_*.
inline constexpr uint32_t kResourceTempSpace = 1u << 0;
inline constexpr uint32_t kResourceRandom = 1u << 1;

struct OpDef {
  std::string name;
  std::string description;
  std::string source = "core";  // "core" or the plugin's name
  std::vector<AttrSpec> attrs;

  // Names, in MXNet order, for a node with these (defaulted) attributes. Inputs depend on
  // attributes for some ops (FullyConnected's no_bias, Concat's num_args).
  std::function<std::vector<std::string>(const AttrMap&)> list_inputs;
  std::function<std::vector<std::string>(const AttrMap&)> list_outputs;  // all outputs, hidden ones too
  std::function<std::vector<std::string>(const AttrMap&)> list_aux;      // empty when unset
  // Outputs visible to users (ListOutputs, heads); the rest are hidden. Unset = all.
  std::function<int(const AttrMap&)> num_visible_outputs;

  // Fills what it can; throws weft::Error naming the op, the input and both shapes when inputs
  // disagree. Vectors are sized like list_inputs / list_outputs / list_aux.
  std::function<void(const AttrMap&, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                     std::vector<ShapeSlot>& aux)>
      infer_shape;
  // Unset = every unknown input/output/aux takes the first known input dtype.
  std::function<void(const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux)> infer_type;

  GradKind grad = GradKind::kNone;
  std::string backward_op;     // for GradKind::kOp, e.g. "_backward_FullyConnected"
  uint32_t backward_uses = 0;  // kUses* bits: everything the backward may read, for any attributes
  // Narrows backward_uses for one node's (normalised) attributes; must return a subset of it.
  // MXNet's Activation reads its input only for softsign: dropping it for the other types lets
  // the forward run in place while training. Unset = backward_uses. Read through BackwardUses().
  std::function<uint32_t(const AttrMap&)> backward_uses_for;

  // MXNet's positional order of the inputs and aux states when it interleaves them
  // (multi_sgd_mom_update takes weight0, grad0, mom0, weight1, ...): for each position, its slot
  // among the inputs then aux states. Imperative calls place positional arrays by it. Unset =
  // inputs, then aux states.
  std::function<std::vector<size_t>(const AttrMap&)> mxnet_order;

  // (input index, output index) pairs that may share memory. Unset = none.
  std::function<std::vector<std::pair<int, int>>(const AttrMap&)> inplace;
  uint32_t resources = 0;  // kResource* bits
  bool is_loss = false;    // makes its own head gradient (SoftmaxOutput)
  // With grad kNone: a gradient reaching this op's output while an input wants one is an error at
  // bind, as for MXNet's ops that register no FGradient (batch_take), instead of zeros.
  bool no_gradient_is_error = false;
  // Attributes that are not declared are kept as given instead of refused (host operators such
  // as MXNet's Custom, whose keywords belong to the program's operator).
  bool any_attrs = false;

  /// Attributes with defaults filled in, values validated by type. Attributes starting with
  /// "__" (MXNet hidden attributes: __ctx_group__, __lr_mult__, ...) pass through untouched.
  /// Throws weft::Error for an unknown attribute name (listing the op's attributes) or a
  /// missing required one. An op that declares no attribute keeps undeclared ones as given,
  /// as MXNet does for its ops without a parameter struct.
  AttrMap Normalize(const AttrMap& given) const;

  // Added by core/operator: op-specific checks of the (defaulted) attributes run by Normalize
  // (e.g. Concat's num_args >= 1). Unset = none. Throws weft::Error.
  std::function<void(const AttrMap&)> validate;
  /// The spec of attribute `name`, nullptr when the op has none.
  const AttrSpec* FindAttr(std::string_view attr_name) const;
};

/// The registry of op definitions (built-in + plugins).
class OpRegistry {
 public:
  static OpRegistry& Get();
  /// nullptr when unknown. Resolves aliases (ElementWiseSum -> add_n).
  const OpDef* Find(std::string_view name) const;
  /// Throws weft::Error "unknown operator 'X'" (with the closest known names) when absent.
  const OpDef& Lookup(std::string_view name) const;
  /// Throws weft::Error naming both sources when `def.name` is already registered.
  void Register(OpDef def);
  void AddAlias(std::string alias, std::string target);
  std::vector<std::string> ListNames() const;

  // Added by core/operator.
  /// The op an alias stands for ("ElementWiseSum" -> "add_n"); `name` itself when not an alias.
  std::string ResolveAlias(std::string_view name) const;
  /// Registered aliases as (alias, target) pairs, sorted by alias.
  std::vector<std::pair<std::string, std::string>> ListAliases() const;

  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

 private:
  OpRegistry();
  ~OpRegistry();
  const OpDef* FindNoWait(std::string_view name) const;
  struct Impl;
  Impl* impl_;  // never freed: the registry lives for the whole process (plugins may use it at exit)
};

}  // namespace weft

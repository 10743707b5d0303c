// weft core — internal helpers shared by the built-in op definitions (core/operator/defs/*.cc):
// attribute specs, fixed name lists, and shape merging with errors that name op, slot and shapes.
//
// Shape conventions are op_def.h's: nullopt = unknown shape; an extent of -1 = unknown axis.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "operator/op_def.h"

namespace weft::opdef {

// ---- attribute specs ----------------------------------------------------------------------------

/// A required attribute.
AttrSpec Req(std::string name, std::string type, std::string doc);
/// An optional attribute with a default (string form, "None" for an absent optional).
AttrSpec Opt(std::string name, std::string type, std::string default_value, std::string doc);
/// An "enum" attribute; `default_value` empty = required.
AttrSpec Enum(std::string name, std::vector<std::string> choices, std::string default_value, std::string doc);
/// Accepted for MXNet JSON compatibility, value ignored (performance hints such as cudnn_off).
AttrSpec Ignored(AttrSpec spec);
/// MXNet semantics weft does not implement: only the default value is accepted.
AttrSpec DefaultOnly(AttrSpec spec);

/// The specs of declared attributes (sdk::DeclaredAttrs of a parameter struct).
std::vector<AttrSpec> AttrSpecs(const std::vector<sdk::AttrDecl>& decls);

/// Declares the attributes of parameter struct P (weft/sdk/ops/*.hpp) on `def`, and checks them
/// whenever the op's attributes are normalised by parsing P (types, ranges, choices and
/// P::Validate): the one declaration core and every backend's kernels read.
template <class P>
void DeclareParams(OpDef& def) {
  def.attrs = AttrSpecs(sdk::DeclaredAttrs<P>());
  def.validate = [](const AttrMap& a) { sdk::ParseParams<P>(a); };
}

/// Marks the declared attributes `names` of `def` internal (AttrSpec::internal: set by weft's graph
/// passes, left out of MXNet's op info). Throws weft::Error for a name `def` does not declare.
void MarkInternal(OpDef& def, std::initializer_list<std::string_view> names);

// ---- name lists ---------------------------------------------------------------------------------

using NamesFn = std::function<std::vector<std::string>(const AttrMap&)>;
/// A list that does not depend on attributes.
NamesFn Fixed(std::vector<std::string> names);
/// Largest count Numbered accepts: far more inputs or outputs than any real network gives one
/// node, small enough that building the names is instant.
inline constexpr int64_t kMaxNumberedCount = 65536;
/// prefix0 ... prefix{n-1} with n read from the integer attribute `count_attr`. The returned
/// function throws weft::Error naming the attribute when n is outside 0..kMaxNumberedCount.
NamesFn Numbered(std::string prefix, std::string count_attr);

// ---- shapes -------------------------------------------------------------------------------------

/// True when the shape is known with every extent known.
bool FullyKnown(const ShapeSlot& s);
/// A shape of `ndim` unknown extents.
Shape UnknownShape(size_t ndim);
/// Product of extents [begin, end), -1 when any is unknown.
int64_t ProdOrUnknown(const Shape& s, size_t begin, size_t end);
/// MXNet's string for a slot: "(2, 3)", "(2, -1)" and "unknown" for nullopt.
std::string SlotString(const ShapeSlot& s);

/// Shape-inference view of one node, handed to an op's inference function. Assign* merge a
/// (possibly partial) shape into a slot: unknown extents (-1) take the other side's value; two
/// known extents that differ, or a different ndim, throw weft::Error
/// "<op>: shape mismatch for input 'weight': has (10, 5), expected (10, 20)" (the slot's current
/// shape first, the inferred one second).
class ShapeIO {
 public:
  ShapeIO(std::string_view op, const AttrMap& attrs, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
          std::vector<ShapeSlot>& aux, std::vector<std::string> in_names, std::vector<std::string> out_names,
          std::vector<std::string> aux_names);

  const AttrMap& attrs() const { return attrs_; }
  std::string_view op() const { return op_; }
  size_t num_in() const { return in_.size(); }
  size_t num_out() const { return out_.size(); }
  size_t num_aux() const { return aux_.size(); }
  const ShapeSlot& in(size_t i) const { return in_.at(i); }
  const ShapeSlot& out(size_t i) const { return out_.at(i); }
  const ShapeSlot& aux(size_t i) const { return aux_.at(i); }
  const std::string& in_name(size_t i) const { return in_names_.at(i); }

  void AssignIn(size_t i, const Shape& s) { Assign(in_.at(i), s, "input", in_names_.at(i)); }
  void AssignOut(size_t i, const Shape& s) { Assign(out_.at(i), s, "output", out_names_.at(i)); }
  void AssignAux(size_t i, const Shape& s) { Assign(aux_.at(i), s, "aux state", aux_names_.at(i)); }

  /// Throws weft::Error "<op>: <message>".
  [[noreturn]] void Fail(const std::string& message) const;

 private:
  void Assign(ShapeSlot& slot, const Shape& s, std::string_view kind, std::string_view name);

  std::string_view op_;
  const AttrMap& attrs_;
  std::vector<ShapeSlot>& in_;
  std::vector<ShapeSlot>& out_;
  std::vector<ShapeSlot>& aux_;
  std::vector<std::string> in_names_, out_names_, aux_names_;
};

using ShapeFn = std::function<void(ShapeIO&)>;
/// Wraps a ShapeIO-based function into OpDef::infer_shape. Needs def.name and the list_*
/// functions of the def it is stored in (they name the slots in errors).
void SetShapeFn(OpDef& def, ShapeFn fn);

/// SetShapeFn for a shape function that reads the op's parameter struct P (parsed from the
/// node's attributes on each call).
template <class P>
void SetShapeFn(OpDef& def, std::function<void(ShapeIO&, const P&)> fn) {
  SetShapeFn(def, ShapeFn([fn = std::move(fn)](ShapeIO& io) { fn(io, sdk::ParseParams<P>(io.attrs())); }));
}

/// Every input and output has the same shape (elemwise ops, unary math, scalar ops, update ops'
/// weight/grad/output and aux states): the known ones are merged and the result spread back.
void SameShapeAll(ShapeIO& io);

/// Normalises an axis in [-ndim, ndim) to [0, ndim); throws naming the op and the attribute.
int64_t NormalizeAxis(const ShapeIO& io, int64_t axis, int64_t ndim, std::string_view attr);
/// MXNet's ReduceAxesShapeImpl: `in` reduced over `axes` (every axis when empty; the axes not
/// listed when `exclude`), reduced axes kept with extent 1 when keepdims; reducing every axis
/// without keepdims gives (1,) (MXNet's legacy mode). Fails through `io` on an axis out of range.
/// Shared by the reduce family and argmax/argmin (index family).
Shape ReducedShape(const ShapeIO& io, const Shape& in, std::vector<int64_t> axes, bool keepdims, bool exclude = false);

/// The shape of data[begin:end:step] for the node's attributes begin, end, step (slice's rule,
/// sdk/ops/slice.hpp; unknown extents stay unknown). Throws naming the op, data's shape and the
/// attribute at fault.
Shape SlicedShape(const ShapeIO& io, const Shape& data);

// ---- dtypes -------------------------------------------------------------------------------------

/// Merges `dtype` into slot `slot` (-1 = unknown); a known, different dtype throws weft::Error
/// naming op, the slot's kind and name, and both dtypes.
void AssignType(std::string_view op, std::string_view kind, std::string_view name, int& slot, int dtype);

// ---- in-place -----------------------------------------------------------------------------------

using InplaceFn = std::function<std::vector<std::pair<int, int>>(const AttrMap&)>;
InplaceFn InplacePairs(std::vector<std::pair<int, int>> pairs);

}  // namespace weft::opdef

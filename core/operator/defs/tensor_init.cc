// Ops without inputs that make arrays from their attributes: _zeros, _ones, _full, _arange (what
// mx.sym.zeros / ones / full / arange write into symbol JSON), _linspace and _eye (mx.nd.linspace,
// mx.nd.eye). Shape rules are MXNet 1.9's
// (src/operator/tensor/init_op.h); the attributes are declared in weft/sdk/ops/init.hpp.
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/init.hpp"

namespace weft::opdef {
namespace {

// An op without inputs whose output's dtype is its `dtype` attribute.
template <class P>
OpDef NoInput(std::string name, std::string description) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  DeclareParams<P>(d);
  d.list_inputs = Fixed({});
  d.list_outputs = Fixed({"output"});
  d.infer_type = [](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("init", "output", "output", out[0], sdk::ParseParams<P>(a).dtype.code);
  };
  d.grad = GradKind::kNone;
  return d;
}

template <class P>
OpDef Fill(std::string name, std::string what) {
  OpDef d = NoInput<P>(name, "An array of `shape` filled with " + what + ".");
  SetShapeFn<P>(d, [](ShapeIO& io, const P& p) { io.AssignOut(0, Shape(p.InferredShape())); });
  return d;
}

OpDef Arange() {
  OpDef d = NoInput<sdk::ArangeParam>(
      "_arange",
      "start, start + step, … below stop (above it for a negative step; stop None counts from 0 to "
      "start), each value `repeat` times.");
  SetShapeFn<sdk::ArangeParam>(d, [](ShapeIO& io, const sdk::ArangeParam& p) { io.AssignOut(0, Shape{p.Length()}); });
  return d;
}

OpDef Linspace() {
  OpDef d = NoInput<sdk::LinspaceParam>(
      "_linspace",
      "num values evenly spaced from start to stop (stop included when endpoint): element i = start + "
      "i·(stop − start) / (num − endpoint), computed in double.");
  SetShapeFn<sdk::LinspaceParam>(d, [](ShapeIO& io, const sdk::LinspaceParam& p) { io.AssignOut(0, Shape{p.num}); });
  return d;
}

OpDef Eye() {
  OpDef d = NoInput<sdk::EyeParam>("_eye",
                                   "An N × M array (M = 0: N × N) with ones on diagonal k (k > 0 above the main one).");
  SetShapeFn<sdk::EyeParam>(d, [](ShapeIO& io, const sdk::EyeParam& p) { io.AssignOut(0, Shape{p.N, p.Columns()}); });
  return d;
}

}  // namespace

void RegisterTensorInitOps(OpRegistry& r) {
  r.Register(Fill<sdk::FillParam>("_zeros", "zeros"));
  r.Register(Fill<sdk::FillParam>("_ones", "ones"));
  r.Register(Fill<sdk::FullParam>("_full", "`value`"));
  r.Register(Arange());
  r.Register(Linspace());
  r.Register(Eye());
}

}  // namespace weft::opdef

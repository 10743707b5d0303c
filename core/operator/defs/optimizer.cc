// Optimizer update ops (MXNet 1.9 src/operator/optimizer_op.cc, optimizer_op-inl.h): sgd_update,
// sgd_mom_update, nag_mom_update, adam_update, rmsprop_update, rmspropalex_update; and the
// KVStore's 2-bit gradient compression, _quantize_2bit / _dequantize_2bit (MXNet's kernels of the
// same names in src/kvstore/gradient_compression-inl.h, which MXNet runs inside its KVStore and
// never registered as operators: weft makes them ops so every device plugin can run them).
//
// Update ops: the output is the new weight (in place on input 0); state arrays are aux states,
// updated in place (MXNet declares them as mutable inputs; the positional order of an imperative
// call, weight, grad, states..., is the same). Formulas in OPS.md.
#include "operator/defs/builtin.h"
#include "operator/defs/optimizer_defs.h"
#include "weft/sdk/ops/gradient_compression.hpp"

namespace weft::opdef {

OpDef UpdateBase(std::string name, std::string description, std::vector<std::string> aux) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({"weight", "grad"});
  d.list_outputs = Fixed({"output"});
  if (!aux.empty()) d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kNone;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

namespace {

void RegisterUpdateOps(OpRegistry& r) {
  using sdk::UpdateRule;
  r.Register(Update<UpdateRule::kSgd>("sgd_update", "w = (1 − lr·wd)·w − lr·clip(rescale_grad·g)", {}));
  r.Register(Update<UpdateRule::kSgdMom>("sgd_mom_update",
                                         "mom = momentum·mom − lr·(clip(rescale_grad·g) + wd·w); w += mom", {"mom"}));
  r.Register(Update<UpdateRule::kNagMom>(
      "nag_mom_update", "g' = clip(rescale_grad·g) + wd·w; mom' = momentum·mom − lr·g'; w += momentum·mom' − lr·g'",
      {"mom"}));
  r.Register(Update<UpdateRule::kAdam>(
      "adam_update",
      "g' = clip(rescale_grad·g + wd·w); mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²; "
      "w −= lr·mean/(sqrt(var) + ε)",
      {"mean", "var"}));
  r.Register(Update<UpdateRule::kRmsProp>(
      "rmsprop_update",
      "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; w = clipw(w − lr·g'/sqrt(n + ε)) "
      "(Tieleman & Hinton 2012)",
      {"n"}));
  r.Register(Update<UpdateRule::kRmsPropAlex>(
      "rmspropalex_update",
      "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; g = (1−γ1)·g' + γ1·g; "
      "delta = γ2·delta − lr·g'/sqrt(n − g² + ε); w = clipw(w + delta) (Graves 2013, eq. 38–45)",
      {"n", "g", "delta"}));
}

void RegisterCompressionOps(OpRegistry& r) {
  {
    OpDef d;
    d.name = "_quantize_2bit";
    d.description =
        "2-bit gradient compression (MXNet's quantize_2bit): per element r = residual + data; r ≥ t → code 11, "
        "r −= t; r ≤ −t → code 10, r += t; else 00; residual = r. 16 codes per uint32 word, element i in byte "
        "(i mod 16)/4 of word i/16, highest bit pair first.";
    DeclareParams<sdk::Quantize2BitParam>(d);
    d.list_inputs = Fixed({"data"});
    d.list_outputs = Fixed({"output"});
    d.list_aux = Fixed({"residual"});
    SetShapeFn(d, [](ShapeIO& io) {
      if (io.in(0)) io.AssignAux(0, *io.in(0));
      if (io.aux(0)) io.AssignIn(0, *io.aux(0));
      if (FullyKnown(io.in(0))) io.AssignOut(0, Shape(sdk::TwoBitWords(static_cast<int64_t>(io.in(0)->Size()))));
    });
    d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux) {
      AssignType("_quantize_2bit", "input", "data", in[0], static_cast<int>(DType::kFloat32));
      AssignType("_quantize_2bit", "aux state", "residual", aux[0], static_cast<int>(DType::kFloat32));
      AssignType("_quantize_2bit", "output", "output", out[0], static_cast<int>(DType::kUint32));
    };
    d.grad = GradKind::kNone;
    r.Register(std::move(d));
  }
  {
    OpDef d;
    d.name = "_dequantize_2bit";
    d.description =
        "Decodes _quantize_2bit's words into float32 values of `shape` (MXNet's dequantize_2bit): code 11 → t, "
        "10 → −t, else 0.";
    DeclareParams<sdk::Dequantize2BitParam>(d);
    d.list_inputs = Fixed({"data"});
    d.list_outputs = Fixed({"output"});
    SetShapeFn<sdk::Dequantize2BitParam>(d, [](ShapeIO& io, const sdk::Dequantize2BitParam& p) {
      const Shape shape(p.shape);
      io.AssignOut(0, shape);
      io.AssignIn(0, Shape(sdk::TwoBitWords(static_cast<int64_t>(shape.Size()))));
    });
    d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
      AssignType("_dequantize_2bit", "input", "data", in[0], static_cast<int>(DType::kUint32));
      AssignType("_dequantize_2bit", "output", "output", out[0], static_cast<int>(DType::kFloat32));
    };
    d.grad = GradKind::kNone;
    r.Register(std::move(d));
  }
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  RegisterUpdateOps(r);
  RegisterCompressionOps(r);
}

}  // namespace weft::opdef

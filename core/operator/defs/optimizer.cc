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

namespace weft::opdef {

OpDef Update(std::string name, std::string description, std::vector<AttrSpec> extra, std::vector<std::string> aux,
             std::vector<AttrSpec> tail) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.attrs = {Req("lr", "float", "learning rate")};
  d.attrs.insert(d.attrs.end(), extra.begin(), extra.end());
  d.attrs.push_back(Opt("wd", "float", "0", "weight decay"));
  d.attrs.push_back(Opt("rescale_grad", "float", "1", "multiplies the gradient first"));
  d.attrs.push_back(Opt("clip_gradient", "float", "-1", "clips the rescaled gradient to ±value; < 0 = no clipping"));
  d.attrs.insert(d.attrs.end(), tail.begin(), tail.end());
  d.list_inputs = Fixed({"weight", "grad"});
  d.list_outputs = Fixed({"output"});
  if (!aux.empty()) d.list_aux = Fixed(std::move(aux));
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kNone;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

AttrSpec LazyUpdate() { return Ignored(Opt("lazy_update", "bool", "True", "MXNet: sparse (row_sparse) updates only")); }
AttrSpec ClipWeights() {
  return Opt("clip_weights", "float", "-1", "clips the new weight to ±value; < 0 = no clipping");
}
AttrSpec Momentum() { return Opt("momentum", "float", "0", "momentum"); }
AttrSpec Epsilon() { return Opt("epsilon", "float", "1e-08", "added for numerical stability"); }

namespace {

AttrSpec Threshold() { return Opt("threshold", "float", "0.5", "t: values at or beyond ±t are sent as ±t"); }

void RegisterUpdateOps(OpRegistry& r) {
  r.Register(Update("sgd_update", "w = (1 − lr·wd)·w − lr·clip(rescale_grad·g)", {}, {}, {LazyUpdate()}));
  r.Register(Update("sgd_mom_update", "mom = momentum·mom − lr·(clip(rescale_grad·g) + wd·w); w += mom", {Momentum()},
                    {"mom"}, {LazyUpdate()}));
  r.Register(Update("nag_mom_update",
                    "g' = clip(rescale_grad·g) + wd·w; mom' = momentum·mom − lr·g'; w += momentum·mom' − lr·g'",
                    {Momentum()}, {"mom"}, {}));
  r.Register(Update("adam_update",
                    "g' = clip(rescale_grad·g + wd·w); mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²; "
                    "w −= lr·mean/(sqrt(var) + ε)",
                    {Opt("beta1", "float", "0.9", "decay of the first moment"),
                     Opt("beta2", "float", "0.999", "decay of the second moment"), Epsilon()},
                    {"mean", "var"}, {LazyUpdate()}));
  r.Register(Update("rmsprop_update",
                    "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; w = clipw(w − lr·g'/sqrt(n + ε)) "
                    "(Tieleman & Hinton 2012)",
                    {Opt("gamma1", "float", "0.95", "decay of the squared-gradient average"), Epsilon()}, {"n"},
                    {ClipWeights()}));
  r.Register(Update("rmspropalex_update",
                    "g' = clip(rescale_grad·g + wd·w); n = (1−γ1)·g'² + γ1·n; g = (1−γ1)·g' + γ1·g; "
                    "delta = γ2·delta − lr·g'/sqrt(n − g² + ε); w = clipw(w + delta) (Graves 2013, eq. 38–45)",
                    {Opt("gamma1", "float", "0.95", "decay of the gradient averages"),
                     Opt("gamma2", "float", "0.9", "momentum of delta"), Epsilon()},
                    {"n", "g", "delta"}, {ClipWeights()}));
}

// Packed words: 16 two-bit codes per 32-bit word.
int64_t TwoBitWords(int64_t n) { return (n + 15) / 16; }

void RegisterCompressionOps(OpRegistry& r) {
  {
    OpDef d;
    d.name = "_quantize_2bit";
    d.description =
        "2-bit gradient compression (MXNet's quantize_2bit): per element r = residual + data; r ≥ t → code 11, "
        "r −= t; r ≤ −t → code 10, r += t; else 00; residual = r. 16 codes per uint32 word, element i in byte "
        "(i mod 16)/4 of word i/16, highest bit pair first.";
    d.attrs = {Threshold()};
    d.list_inputs = Fixed({"data"});
    d.list_outputs = Fixed({"output"});
    d.list_aux = Fixed({"residual"});
    SetShapeFn(d, [](ShapeIO& io) {
      if (io.in(0)) io.AssignAux(0, *io.in(0));
      if (io.aux(0)) io.AssignIn(0, *io.aux(0));
      if (FullyKnown(io.in(0))) io.AssignOut(0, Shape(TwoBitWords(static_cast<int64_t>(io.in(0)->Size()))));
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
    d.attrs = {Req("shape", "shape", "shape of the decoded array"), Threshold()};
    d.list_inputs = Fixed({"data"});
    d.list_outputs = Fixed({"output"});
    SetShapeFn(d, [](ShapeIO& io) {
      const Shape shape(io.attrs().GetTuple("shape"));
      for (size_t i = 0; i < shape.ndim(); ++i)
        if (shape[i] < 0) io.Fail("shape " + io.attrs().GetString("shape") + " has a negative extent");
      io.AssignOut(0, shape);
      io.AssignIn(0, Shape(TwoBitWords(static_cast<int64_t>(shape.Size()))));
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

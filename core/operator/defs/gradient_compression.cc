// The gradient_compression family (docs/adding-an-op.md, "Op families"): the KVStore's 2-bit
// gradient compression, _quantize_2bit / _dequantize_2bit (MXNet's kernels of the same names in
// src/kvstore/gradient_compression-inl.h, which MXNet runs inside its KVStore and never registered
// as operators: weft makes them ops so every device plugin can run them).
#include "weft/sdk/ops/gradient_compression.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {

void RegisterGradientCompressionOps(OpRegistry& r) {
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

}  // namespace weft::opdef

// The norm family (docs/adding-an-op.md, "Op families"): normalisation layers BatchNorm, LRN,
// LayerNorm, InstanceNorm, L2Normalization. Inputs, outputs (hidden statistics included) and shape
// rules are MXNet 1.9's (src/operator/nn/batch_norm.cc, lrn.cc, layer_norm-inl.h,
// instance_norm-inl.h, l2_normalization-inl.h).
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/batch_norm.hpp"
#include "weft/sdk/ops/lrn.hpp"
#include "weft/sdk/ops/normalization.hpp"

namespace weft::opdef {
namespace {

OpDef Base(std::string name, std::string description) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  d.list_inputs = Fixed({"data", "gamma", "beta"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  // The backward recomputes the statistics from data: it needs the inputs only.
  d.backward_uses = kUsesInputs;
  return d;
}

OpDef LayerNorm() {
  OpDef d = Base("LayerNorm",
                 "output = (data − mean) / std · gamma + beta over `axis`, std = sqrt(var + eps); gamma and beta "
                 "have the axis' extent. Hidden outputs mean and std have data's shape with the axis of length 1 "
                 "(visible with output_mean_var). Gradients of data, gamma and beta (the statistics' output "
                 "gradients are ignored, as MXNet).");
  DeclareParams<sdk::LayerNormParam>(d);
  d.list_outputs = Fixed({"output", "mean", "std"});
  d.num_visible_outputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::LayerNormParam>(a).output_mean_var ? 3 : 1;
  };
  SetShapeFn<sdk::LayerNormParam>(d, [](ShapeIO& io, const sdk::LayerNormParam& p) {
    if (!io.in(0)) return;
    Shape s = *io.in(0);
    const size_t axis = static_cast<size_t>(NormalizeAxis(io, p.axis, static_cast<int64_t>(s.ndim()), "axis"));
    io.AssignIn(1, Shape{s[axis]});
    io.AssignIn(2, Shape{s[axis]});
    io.AssignOut(0, s);
    s[axis] = 1;
    io.AssignOut(1, s);
    io.AssignOut(2, s);
  });
  return d;
}

OpDef InstanceNorm() {
  OpDef d = Base("InstanceNorm",
                 "output = (data − mean) / sqrt(var + eps) · gamma[c] + beta[c] with mean and var over the spatial "
                 "axes of each (n, c) of (N, C, …) data. Hidden outputs mean and var (N, C).");
  DeclareParams<sdk::InstanceNormParam>(d);
  d.list_outputs = Fixed({"output", "mean", "var"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& s = *io.in(0);
    if (s.ndim() < 3) io.Fail(fmt::format("input 'data' {} must have at least 3 axes (N, C, …)", s.ToString()));
    io.AssignIn(1, Shape{s[1]});
    io.AssignIn(2, Shape{s[1]});
    io.AssignOut(0, s);
    io.AssignOut(1, Shape{s[0], s[1]});
    io.AssignOut(2, Shape{s[0], s[1]});
  });
  return d;
}

OpDef L2Normalization() {
  OpDef d = Base("L2Normalization",
                 "output = data / sqrt(Σ data² + eps), the sum over all axes but the first (instance), over axis 1 "
                 "(channel) or over the axes after the second (spatial). Hidden output norm: (N,), (N, spatial…) "
                 "or (N, C).");
  DeclareParams<sdk::L2NormalizationParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output", "norm"});
  SetShapeFn<sdk::L2NormalizationParam>(d, [](ShapeIO& io, const sdk::L2NormalizationParam& p) {
    if (!io.in(0)) return;
    const Shape& s = *io.in(0);
    if (s.ndim() < (p.mode == sdk::L2NormMode::kInstance ? 2u : 3u))
      io.Fail(fmt::format("input 'data' {} has too few axes for mode {}", s.ToString(),
                          sdk::kL2NormModes[static_cast<size_t>(p.mode)]));
    io.AssignOut(0, s);
    std::vector<int64_t> n{s[0]};
    if (p.mode == sdk::L2NormMode::kChannel) n.insert(n.end(), s.begin() + 2, s.end());
    if (p.mode == sdk::L2NormMode::kSpatial) n.push_back(s[1]);
    io.AssignOut(1, Shape(n));
  });
  return d;
}

// MXNet keeps gamma, beta, the hidden statistics and the moving statistics in the accumulation
// type: float32 for float16/bfloat16 data.
int BatchNormParamType(int data) {
  if (data == static_cast<int>(DType::kFloat16) || data == static_cast<int>(DType::kBfloat16)) {
    return static_cast<int>(DType::kFloat32);
  }
  return data;
}

// BatchNorm's shape rules, for it and _sg_batch_norm (no hidden statistics).
void BatchNormShape(ShapeIO& io, const sdk::BatchNormParam& p) {
  if (!io.in(0) && io.out(0)) io.AssignIn(0, *io.out(0));
  if (!io.in(0)) return;
  const Shape& data = *io.in(0);
  const int64_t nd = static_cast<int64_t>(data.ndim());
  if (nd == 0) io.Fail("input 'data' must have at least one axis, got shape ()");
  const int64_t axis = NormalizeAxis(io, p.axis, nd, "axis");
  const Shape ch{data[static_cast<size_t>(axis)]};
  io.AssignIn(1, ch);
  io.AssignIn(2, ch);
  io.AssignOut(0, data);
  for (size_t i = 1; i < io.num_out(); ++i) io.AssignOut(i, ch);  // the hidden statistics (not _sg_batch_norm's)
  io.AssignAux(0, ch);
  io.AssignAux(1, ch);
}

OpDef BatchNorm() {
  OpDef d;
  d.name = "BatchNorm";
  d.description =
      "Batch normalisation over all axes but `axis`; hidden outputs are the batch mean and inverse "
      "std (1/sqrt(var + eps)).";
  DeclareParams<sdk::BatchNormParam>(d);
  d.list_inputs = Fixed({"data", "gamma", "beta"});
  d.list_outputs = Fixed({"output", "mean", "var"});
  d.list_aux = Fixed({"moving_mean", "moving_var"});
  d.num_visible_outputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::BatchNormParam>(a).output_mean_var ? 3 : 1;
  };
  SetShapeFn<sdk::BatchNormParam>(d, BatchNormShape);
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>& aux) {
    if (in[0] < 0) return;  // MXNet needs the data dtype
    const int param = BatchNormParamType(in[0]);
    static const char* kIn[] = {"data", "gamma", "beta"};
    for (size_t i = 1; i < in.size(); ++i) AssignType("BatchNorm", "input", kIn[i], in[i], param);
    AssignType("BatchNorm", "output", "output", out[0], in[0]);
    if (out.size() == 3) {  // _sg_batch_norm has no hidden statistics
      AssignType("BatchNorm", "output", "mean", out[1], param);
      AssignType("BatchNorm", "output", "var", out[2], param);
    }
    AssignType("BatchNorm", "aux state", "moving_mean", aux[0], param);
    AssignType("BatchNorm", "aux state", "moving_var", aux[1], param);
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_BatchNorm";
  d.backward_uses = kUsesInputs | kUsesOutputs | kUsesAux;
  return d;
}

// The executor's fused inference BatchNorm (core/executor/fuse_conv.h): BatchNorm's inputs, aux
// states and rules, one output (its hidden statistics have no reader: no gradient).
OpDef SgBatchNorm() {
  OpDef d = BatchNorm();
  d.name = "_sg_batch_norm";
  d.description =
      "Fused inference BatchNorm made by the executor's graph fusion (WEFT_GRAPH_FUSION): act(BatchNorm(data)) "
      "with BatchNorm's attributes and aux states; data and output in data_format.";
  DeclareParams<sdk::SgBatchNormParam>(d);
  d.list_outputs = Fixed({"output"});
  d.num_visible_outputs = nullptr;
  SetShapeFn<sdk::SgBatchNormParam>(d, [](ShapeIO& io, const sdk::SgBatchNormParam& p) { BatchNormShape(io, p.bn); });
  d.grad = GradKind::kNone;
  d.backward_op.clear();
  d.backward_uses = 0;
  d.no_gradient_is_error = true;
  return d;
}

OpDef LRN() {
  OpDef d;
  d.name = "LRN";
  d.description =
      "Local response normalisation across channels (axis 1): output = data · tmp_norm^(−beta) with "
      "tmp_norm = knorm + alpha / nsize · Σ data² over the nsize channels centred on each one. The hidden "
      "output tmp_norm feeds the backward.";
  DeclareParams<sdk::LRNParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output", "tmp_norm"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  SetShapeFn(d, [](ShapeIO& io) {
    SameShapeAll(io);
    if (io.in(0) && io.in(0)->ndim() < 2) {
      io.Fail(fmt::format("input 'data' must have a channel axis (N, C, ...), got shape {}", io.in(0)->ToString()));
    }
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_LRN";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  return d;
}

}  // namespace

void RegisterNormOps(OpRegistry& r) {
  r.Register(BatchNorm());
  r.Register(SgBatchNorm());
  r.Register(LRN());
  r.Register(LayerNorm());
  r.Register(InstanceNorm());
  r.Register(L2Normalization());
}

}  // namespace weft::opdef

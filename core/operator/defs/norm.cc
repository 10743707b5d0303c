// Normalisation layers over groups of elements: LayerNorm, InstanceNorm, L2Normalization. Inputs,
// outputs (hidden statistics included) and shape rules are MXNet 1.9's
// (src/operator/nn/layer_norm-inl.h, instance_norm-inl.h, l2_normalization-inl.h).
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
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
  d.num_visible_outputs = [](const AttrMap& a) { return a.GetBool("output_mean_var") ? 3 : 1; };
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

}  // namespace

void RegisterNormOps(OpRegistry& r) {
  r.Register(LayerNorm());
  r.Register(InstanceNorm());
  r.Register(L2Normalization());
}

}  // namespace weft::opdef

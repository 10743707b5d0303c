// The softmax family (docs/adding-an-op.md, "Op families"): softmax, log_softmax and the loss head
// SoftmaxOutput (alias Softmax). Shape rules are MXNet 1.9's (softmax.cc, softmax_output.cc).
#include "weft/sdk/ops/softmax.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

OpDef SoftmaxOutput() {
  OpDef d;
  d.name = "SoftmaxOutput";
  d.description =
      "Softmax of data viewed as (N, rest) in forward (over axis 1 of (N, C, ...) data with "
      "multi_output); backward makes its own gradient (softmax − one_hot(label))·grad_scale (see OPS.md).";
  DeclareParams<sdk::SoftmaxOutputParam>(d);
  d.list_inputs = Fixed({"data", "label"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::SoftmaxOutputParam>(d, [](ShapeIO& io, const sdk::SoftmaxOutputParam& p) {
    if (!io.in(0) && io.out(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (p.multi_output) {
      // MXNet: label (N, d2, d3, ...) — data's shape without the class axis 1.
      if (data.ndim() < 2) io.Fail(fmt::format("multi_output needs (N, C, ...) data, got {}", data.ToString()));
      std::vector<int64_t> l(data.begin(), data.end());
      l.erase(l.begin() + 1);
      io.AssignIn(1, Shape(l));
      io.AssignOut(0, data);
      return;
    }
    // A label of the data's shape holds probabilities; otherwise it is data's shape without
    // the last axis (MXNet, multi_output=False).
    if (!(io.in(1) && *io.in(1) == data) && data.ndim() > 0) {
      io.AssignIn(1, Shape(std::vector<int64_t>(data.begin(), data.end() - 1)));
    }
    io.AssignOut(0, data);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_SoftmaxOutput";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  d.is_loss = true;
  return d;
}

// softmax and log_softmax differ only in name and formula.
OpDef SoftmaxLike(const std::string& name, const std::string& formula) {
  OpDef d;
  d.name = name;
  d.description = formula + " along `axis`, inputs divided by `temperature` first.";
  DeclareParams<sdk::SoftmaxParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::SoftmaxParam>(d, [](ShapeIO& io, const sdk::SoftmaxParam& p) {
    SameShapeAll(io);
    if (io.in(0)) NormalizeAxis(io, p.axis, static_cast<int64_t>(io.in(0)->ndim()), "axis");
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  d.backward_uses = kUsesOutputs;
  return d;
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& r) {
  r.Register(SoftmaxOutput());
  r.Register(SoftmaxLike("softmax", "exp(x) / sum(exp(x))"));
  r.Register(SoftmaxLike("log_softmax", "x − log(sum(exp(x)))"));
  r.AddAlias("Softmax", "SoftmaxOutput");  // MXNet's deprecated name
}

}  // namespace weft::opdef

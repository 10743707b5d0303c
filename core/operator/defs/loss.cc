// Softmax family and loss heads: SoftmaxOutput, softmax, log_softmax, LinearRegressionOutput,
// MakeLoss, BlockGrad. Shape rules are MXNet 1.9's (softmax_output.cc, regression_output.cc).
#include "weft/sdk/ops/loss.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/softmax.hpp"

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

OpDef LinearRegressionOutput() {
  OpDef d;
  d.name = "LinearRegressionOutput";
  d.description =
      "Identity in forward; backward makes its own gradient (output − label)·grad_scale/ "
      "(elements per sample) as MXNet.";
  DeclareParams<sdk::LinearRegressionOutputParam>(d);
  d.list_inputs = Fixed({"data", "label"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0) && io.out(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (!io.in(1)) {
      // MXNet: a (N, 1) output takes an (N,) label.
      io.AssignIn(1, data.ndim() == 2 && data[1] == 1 ? Shape{data[0]} : data);
    } else {
      const Shape& label = *io.in(1);
      bool same_batch = label.ndim() > 0 && data.ndim() > 0 && (label[0] < 0 || data[0] < 0 || label[0] == data[0]);
      bool same_size = !FullyKnown(label) || !FullyKnown(data) || label.Size() == data.Size();
      if (!same_batch || !same_size) {
        io.Fail(
            fmt::format("shape mismatch for input 'label': has {}, expected {} (or the same batch size and "
                        "element count)",
                        label.ToString(), data.ToString()));
      }
    }
    io.AssignOut(0, data);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_LinearRegressionOutput";
  d.backward_uses = kUsesInputs | kUsesOutputs;
  d.is_loss = true;
  return d;
}

OpDef MakeLoss() {
  OpDef d;
  d.name = "MakeLoss";
  d.description =
      "Identity in forward; its gradient is grad_scale (normalised per `normalization`): turns any "
      "expression into a loss.";
  DeclareParams<sdk::MakeLossParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_MakeLoss";
  d.inplace = InplacePairs({{0, 0}});
  d.is_loss = true;
  return d;
}

OpDef BlockGrad() {
  OpDef d;
  d.name = "BlockGrad";
  d.description = "Identity in forward; stops the gradient (the input gets zeros).";
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kZero;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register(SoftmaxOutput());
  r.Register(SoftmaxLike("softmax", "exp(x) / sum(exp(x))"));
  r.Register(SoftmaxLike("log_softmax", "x − log(sum(exp(x)))"));
  r.Register(LinearRegressionOutput());
  r.Register(MakeLoss());
  r.Register(BlockGrad());
  r.AddAlias("Softmax", "SoftmaxOutput");  // MXNet's deprecated name
  r.AddAlias("stop_gradient", "BlockGrad");
  // MXNet's make_loss (Gluon's losses call it) is MakeLoss at its defaults: the output is the
  // input, the gradient ones.
  r.AddAlias("make_loss", "MakeLoss");
}

}  // namespace weft::opdef

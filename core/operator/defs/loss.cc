// The loss family (docs/adding-an-op.md, "Op families"): the regression heads
// (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput) and the custom loss head
// MakeLoss. Shape rules are MXNet 1.9's (regression_output.cc, make_loss.cc); SoftmaxOutput is in
// defs/softmax.cc, CTCLoss in defs/ctc_loss.cc.
#include "weft/sdk/ops/loss.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

// The three regression heads share MXNet's RegressionOutputParam, shapes and backward inputs; they
// differ in the forward map and the gradient's (sdk/ops/loss.hpp).
OpDef RegressionOutput(const char* name, const char* description) {
  OpDef d;
  d.name = name;
  d.description = description;
  DeclareParams<sdk::RegressionOutputParam>(d);
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
  d.backward_op = std::string("_backward_") + name;
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

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register(RegressionOutput("LinearRegressionOutput",
                              "Identity in forward; backward makes its own gradient (output − label)·grad_scale / "
                              "(elements per sample) as MXNet."));
  r.Register(RegressionOutput("LogisticRegressionOutput",
                              "The sigmoid 1/(1+exp(−x)) in forward; backward makes its own gradient "
                              "(output − label)·grad_scale / (elements per sample) as MXNet."));
  r.Register(RegressionOutput("MAERegressionOutput",
                              "Identity in forward; backward makes its own gradient sign(output − label)·grad_scale / "
                              "(elements per sample), −1 where they are equal, as MXNet."));
  r.Register(MakeLoss());
  // MXNet's make_loss (Gluon's losses call it) is MakeLoss at its defaults: the output is the
  // input, the gradient ones.
  r.AddAlias("make_loss", "MakeLoss");
}

}  // namespace weft::opdef

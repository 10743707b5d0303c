// CTCLoss (MXNet 1.9's src/operator/nn/ctc_loss.cc; also named ctc_loss, _contrib_CTCLoss and
// _contrib_ctc_loss): the connectionist temporal classification loss, attributes in
// weft/sdk/ops/ctc_loss.hpp. The forward writes the loss and, hidden, its gradient with respect to
// the activations; the backward scales that gradient by each sequence's out_grad, as MXNet's does.
#include "weft/sdk/ops/ctc_loss.hpp"

#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

OpDef CTCLoss() {
  OpDef d;
  d.name = "CTCLoss";
  d.description =
      "Connectionist temporal classification loss of (T, N, C) activations (softmax applied inside) "
      "against (N, L) labels: −log p(label | data) per sequence; blank_label picks the blank class and "
      "the label padding.";
  DeclareParams<sdk::CTCLossParam>(d);
  d.list_inputs = [](const AttrMap& a) {
    const auto p = sdk::ParseParams<sdk::CTCLossParam>(a);
    std::vector<std::string> names = {"data", "label"};
    if (p.use_data_lengths) names.push_back("data_lengths");
    if (p.use_label_lengths) names.push_back("label_lengths");
    return names;
  };
  d.list_outputs = Fixed({"output", "grad"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& data = *io.in(0);
    if (data.ndim() != 3)
      io.Fail(fmt::format("data must be (sequence length, batch, classes), got {}", data.ToString()));
    // MXNet requires the label's shape (its length is the data's to choose): it is not inferred.
    if (io.in(1) && io.in(1)->ndim() != 2)
      io.Fail(fmt::format("label must be (batch, label length), got {}", io.in(1)->ToString()));
    if (io.in(1)) io.AssignIn(1, Shape{data[1], (*io.in(1))[1]});
    for (size_t i = 2; i < io.num_in(); ++i) io.AssignIn(i, Shape{data[1]});
    io.AssignOut(0, Shape{data[1]});
    io.AssignOut(1, data);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_ctc_loss";
  d.backward_uses = kUsesOutputs;
  d.is_loss = false;  // the gradient is scaled by out_grad: it composes like any op
  return d;
}

}  // namespace

void RegisterCTCLossOps(OpRegistry& r) {
  r.Register(CTCLoss());
  r.AddAlias("ctc_loss", "CTCLoss");
  r.AddAlias("_contrib_CTCLoss", "CTCLoss");
  r.AddAlias("_contrib_ctc_loss", "CTCLoss");
}

}  // namespace weft::opdef

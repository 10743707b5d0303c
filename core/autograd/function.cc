// weft::autograd::RecordFunction: a call whose gradient the caller computes (MXNet's
// mx.autograd.Function), recorded as a kGraph node whose GraphCall hands the gradients to the
// caller's FunctionGradient instead of running a graph's backward.
#include <algorithm>

#include "autograd/tape.h"
#include "weft/autograd.h"

namespace weft::autograd_detail {
namespace {

class FunctionCall final : public GraphCall {
 public:
  FunctionCall(std::unique_ptr<autograd::FunctionGradient> fn, const Node& n)
      : fn_(std::move(fn)),
        what_(fn_->Describe()),
        in_shapes_(n.in_shapes),
        in_dtypes_(n.in_dtypes),
        out_shapes_(n.out_shapes),
        out_dtypes_(n.out_dtypes),
        ctx_(n.ctx) {}

  std::vector<NDArray> Backward(const std::vector<NDArray>& out_grads, const std::vector<bool>& need,
                                bool is_train) override {
    WEFT_CHECK(fn_ != nullptr, "Backward: {} was already differentiated and released; pass retain_graph=True", what_);
    // With create_graph the pass records; the caller's gradient is opaque to the tape, so its own
    // gradient would silently be zero.
    WEFT_CHECK(!autograd::IsRecording(),
               "Backward: the graph holds {}, whose gradient the frontend computes; a backward with create_graph "
               "cannot differentiate through it",
               what_);
    std::vector<NDArray> og(out_grads);
    for (size_t o = 0; o < og.size(); ++o) {
      if (!og[o].is_none()) continue;
      og[o] = NDArray(out_shapes_[o], ctx_, false, out_dtypes_[o]);
      og[o] = 0.0f;
    }
    std::vector<NDArray> grads = fn_->Backward(og, need, is_train);
    WEFT_CHECK(grads.size() == in_shapes_.size(), "Backward: {} returned {} gradients for {} inputs", what_,
               grads.size(), in_shapes_.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!need[i]) {
        grads[i] = NDArray();
        continue;
      }
      WEFT_CHECK(!grads[i].is_none() && grads[i].GetShape() == in_shapes_[i] && grads[i].GetDType() == in_dtypes_[i],
                 "Backward: {} returned {} as the gradient of input {}, which is of shape {} {}", what_,
                 DescribeArray(grads[i]), i, in_shapes_[i], DTypeName(in_dtypes_[i]));
    }
    return grads;
  }

  // The caller's state (in MXNet's Python, the Function object and its saved tensors) goes as
  // soon as it cannot be used again.
  void Release() override { fn_.reset(); }

  Symbol GetGraph() const override {
    Fail("GetSymbol: the graph holds {}, whose computation the tape did not see; a Symbol cannot express it", what_);
  }

  std::string Describe() const override { return what_; }

 private:
  std::unique_ptr<autograd::FunctionGradient> fn_;
  std::string what_;
  std::vector<Shape> in_shapes_;
  std::vector<DType> in_dtypes_;
  std::vector<Shape> out_shapes_;
  std::vector<DType> out_dtypes_;
  Context ctx_;
};

}  // namespace
}  // namespace weft::autograd_detail

namespace weft::autograd {

bool RecordFunction(const std::vector<NDArray>& inputs, const std::vector<NDArray*>& outputs,
                    std::unique_ptr<FunctionGradient> gradient) {
  using autograd_detail::DescribeArray;
  using autograd_detail::InGraph;
  autograd_detail::EnsureRecorder();
  WEFT_CHECK(gradient != nullptr, "RecordFunction: the gradient is null");
  WEFT_CHECK(IsRecording(), "RecordFunction: the thread is not recording; call it inside autograd.record()");
  WEFT_CHECK(!inputs.empty() && !outputs.empty(), "RecordFunction: {} inputs and {} outputs; give at least one of each",
             inputs.size(), outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) WEFT_CHECK(!inputs[i].is_none(), "RecordFunction: input {} is none", i);
  std::vector<NDArray> outs;
  for (size_t k = 0; k < outputs.size(); ++k) {
    WEFT_CHECK(outputs[k] != nullptr && !outputs[k]->is_none(), "RecordFunction: output {} is {}", k,
               outputs[k] == nullptr ? "a null pointer" : "a none array");
    // An output the forward returned unchanged from its input (or any array already recorded)
    // would lose its place in the graph (a marked variable its gradient).
    WEFT_CHECK(!InGraph(*outputs[k]),
               "RecordFunction: output {} ({}) is already part of a recorded graph ({}); the forward must return new "
               "arrays, e.g. a copy of an input it passes through",
               k, DescribeArray(*outputs[k]), outputs[k]->autograd_node()->Describe());
    outs.push_back(*outputs[k]);
  }
  autograd_detail::NodePtr node =
      autograd_detail::RecordNode(autograd_detail::NodeKind::kGraph, nullptr, AttrMap(), inputs,
                                  static_cast<uint32_t>(inputs.size()), outs, IsTraining(), {}, {});
  if (node == nullptr) return false;  // `gradient` goes here: nothing can call it
  node->graph = std::make_shared<autograd_detail::FunctionCall>(std::move(gradient), *node);
  for (size_t k = 0; k < outputs.size(); ++k) *outputs[k] = outs[k];
  return true;
}

}  // namespace weft::autograd

// The executor call forms of MXNet's executor documentation (issue 32): forward with named
// inputs, backward with a dict of head gradients, and is_train reaching the backward kernels.
#include <map>

#include "test_util.h"

namespace weft {
namespace {

using test::ExpectNear;
using test::Values;

using test::kCpu;

TEST(ExecutorCallForms, ForwardCopiesNamedInputsFirst) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  std::unique_ptr<Executor> e = Executor::SimpleBind(2 * a + b, kCpu, {{"a", Shape{2}}, {"b", Shape{2}}});
  e->Forward(false, {{"a", NDArray({1, 2}, Shape{2}, kCpu)}, {"b", NDArray({10, 20}, Shape{2}, kCpu)}});
  ExpectNear(Values(e->outputs[0]), {12, 24});
  ExpectNear(Values(e->arg_dict().at("a")), {1, 2});  // copied into the bound argument, as MXNet
  // Only the named ones change.
  e->Forward(false, {{"b", NDArray({0, 0}, Shape{2}, kCpu)}});
  ExpectNear(Values(e->outputs[0]), {2, 4});
  EXPECT_THROW(e->Forward(false, {{"c", NDArray({0, 0}, Shape{2}, kCpu)}}), Error);
  EXPECT_THROW(e->Forward(false, {{"a", NDArray({0, 0, 0}, Shape{3}, kCpu)}}), Error);
  ExpectNear(Values(e->arg_dict().at("a")), {1, 2});  // a refused call changes nothing
}

TEST(ExecutorCallForms, BackwardTakesHeadGradientsByOutputName) {
  Symbol x = Symbol::Variable("x");
  Symbol both = Symbol::Group({Operator("_mul_scalar").SetParam("scalar", 3).SetInput("data", x).CreateSymbol("triple"),
                               Operator("elemwise_mul").SetInput("lhs", x).SetInput("rhs", x).CreateSymbol("square")});
  std::unique_ptr<Executor> e = Executor::SimpleBind(both, kCpu, {{"x", Shape{2}}});
  e->Forward(true, {{"x", NDArray({1, 2}, Shape{2}, kCpu)}});
  const std::vector<std::string> outs = both.ListOutputs();
  ASSERT_EQ(outs.size(), 2u);
  // d/dx (3x * g1 + x^2 * g2) = 3 g1 + 2x g2, with g1 = (1, 1) and g2 = (10, 10).
  e->Backward({{outs[1], NDArray({10, 10}, Shape{2}, kCpu)}, {outs[0], NDArray({1, 1}, Shape{2}, kCpu)}}, true);
  ExpectNear(Values(e->grad_dict().at("x")), {23, 43});
  EXPECT_THROW(e->Backward({{"nope", NDArray({1, 1}, Shape{2}, kCpu)}}, true), Error);
}

TEST(ExecutorCallForms, BackwardIsTrainReachesTheKernels) {
  // MXNet's Dropout gradient applies the forward mask when is_train and passes the gradient
  // through unchanged otherwise: after a training forward at p = 0.5 the two calls differ.
  Symbol x = Symbol::Variable("x");
  Symbol y = Operator("Dropout").SetParam("p", 0.5).SetInput("data", x).CreateSymbol("drop");
  std::unique_ptr<Executor> e = Executor::SimpleBind(y, kCpu, {{"x", Shape{256}}});
  std::vector<float> ones(256, 1.0f);
  e->Forward(true, {{"x", NDArray(ones, Shape{256}, kCpu)}});
  e->Backward({NDArray(ones, Shape{256}, kCpu)}, /*is_train=*/true);
  size_t dropped = 0;
  for (float g : Values(e->grad_dict().at("x"))) dropped += g == 0.0f;
  EXPECT_GT(dropped, 64u) << "the training gradient applies the mask";
  e->Backward({NDArray(ones, Shape{256}, kCpu)}, /*is_train=*/false);
  ExpectNear(Values(e->grad_dict().at("x")), ones);
}

}  // namespace
}  // namespace weft

// Every op.h function builds a node that weft's op definitions accept, with MXNet's input names
// and only the attributes given (defaults are not written).
#include <gtest/gtest.h>

#include "weft/op.h"

namespace weft {
namespace {

using Strings = std::vector<std::string>;

TEST(SymbolOps, EveryFunctionBuildsANode) {
  NameManager::Scope names;
  Symbol x("x"), y("y");
  struct Case {
    Symbol s;
    const char* op;
  };
  std::vector<Case> cases = {
      {FullyConnected(x, Symbol(), Symbol(), 3), "FullyConnected"},
      {Convolution(x, Symbol(), Symbol(), Shape(3, 3), 8), "Convolution"},
      {Pooling(x, Shape(2, 2), PoolingPoolType::kAvg), "Pooling"},
      {Activation(x, ActivationActType::kTanh), "Activation"},
      {LeakyReLU(x), "LeakyReLU"},
      {BatchNorm(x, Symbol(), Symbol(), Symbol(), Symbol()), "BatchNorm"},
      {Dropout(x, 0.25f), "Dropout"},
      {SoftmaxOutput(x, y), "SoftmaxOutput"},
      {softmax(x), "softmax"},
      {log_softmax(x), "log_softmax"},
      {LinearRegressionOutput(x, y), "LinearRegressionOutput"},
      {MakeLoss(x), "MakeLoss"},
      {BlockGrad(x), "BlockGrad"},
      {Flatten(x), "Flatten"},
      {Reshape(x, Shape(-1, 2)), "Reshape"},
      {expand_dims(x, 1), "expand_dims"},
      {Concat({x, y}, 2), "Concat"},
      {SliceChannel(x, 2), "SliceChannel"},
      {transpose(x), "transpose"},
      {dot(x, y), "dot"},
      {batch_dot(x, y, true), "batch_dot"},
      {Cast(x, CastDtype::kFloat16), "Cast"},
      {zeros_like(x), "zeros_like"},
      {ones_like(x), "ones_like"},
      {one_hot(x, 4), "one_hot"},
      {argmax(x, 1), "argmax"},
      {sum(x, Shape(1)), "sum"},
      {mean(x), "mean"},
      {max(x), "max"},
      {add_n({x, y}), "add_n"},
      {elemwise_add(x, y), "elemwise_add"},
      {elemwise_sub(x, y), "elemwise_sub"},
      {elemwise_mul(x, y), "elemwise_mul"},
      {elemwise_div(x, y), "elemwise_div"},
      {broadcast_add(x, y), "broadcast_add"},
      {broadcast_sub(x, y), "broadcast_sub"},
      {broadcast_mul(x, y), "broadcast_mul"},
      {broadcast_div(x, y), "broadcast_div"},
      {sin(x), "sin"},
      {cos(x), "cos"},
      {exp(x), "exp"},
      {log(x), "log"},
      {sqrt(x), "sqrt"},
      {square(x), "square"},
      {abs(x), "abs"},
      {negative(x), "negative"},
      {relu(x), "relu"},
      {sigmoid(x), "sigmoid"},
      {tanh(x), "tanh"},
      {sgd_update(x, y, 0.1f), "sgd_update"},
      {sgd_mom_update(x, y, Symbol(), 0.1f, 0.9f), "sgd_mom_update"},
      {adam_update(x, y, Symbol(), Symbol(), 0.01f), "adam_update"},
  };
  for (const Case& c : cases) {
    std::string lower = c.op;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(c.s.GetName().rfind(lower, 0), 0u) << c.op << " named " << c.s.GetName();
    EXPECT_NE(c.s.ToJSON().find(std::string("\"op\": \"") + c.op + "\""), std::string::npos) << c.op;
  }
  // Only non-default attributes are recorded (like MXNet's Python front end).
  EXPECT_EQ(cases[2].s.ListAttributes(),
            (std::map<std::string, std::string>{{"kernel", "(2, 2)"}, {"pool_type", "avg"}}));
  EXPECT_EQ(cases[6].s.ListAttributes(), (std::map<std::string, std::string>{{"p", "0.25"}}));
  EXPECT_EQ(cases[20].s.ListAttributes(), (std::map<std::string, std::string>{{"transpose_a", "True"}}));
  // Optimizer states are aux states, named after the node.
  EXPECT_EQ(cases[50].s.ListAuxiliaryStates(), Strings{"sgd_mom_update0_mom"});
  EXPECT_EQ(cases[51].s.ListAuxiliaryStates(), (Strings{"adam_update0_mean", "adam_update0_var"}));
}

TEST(SymbolOps, ConvNetShapes) {
  Symbol data("data");
  Symbol conv = Convolution("conv", data, Symbol(), Symbol(), Shape(3, 3), 16, Shape(), Shape(), Shape(1, 1));
  Symbol pool = Pooling("pool", Activation(conv, ActivationActType::kRelu), Shape(2, 2), PoolingPoolType::kMax, false,
                        false, PoolingPoolingConvention::kValid, Shape(2, 2));
  Symbol net = SoftmaxOutput("softmax", FullyConnected("fc", Flatten(pool), Symbol(), Symbol(), 10), Symbol());
  ShapeInference r = net.InferShapePartial({{"data", Shape(8, 3, 32, 32)}});
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(net.ListArguments(),
            (Strings{"data", "conv_weight", "conv_bias", "fc_weight", "fc_bias", "softmax_label"}));
  EXPECT_EQ(r.arg_shapes[1], Shape(16, 3, 3, 3));
  EXPECT_EQ(r.arg_shapes[3], Shape(10, 16 * 16 * 16));
  EXPECT_EQ(r.arg_shapes[5], Shape(8));
  EXPECT_EQ(r.out_shapes[0], Shape(8, 10));
}

}  // namespace
}  // namespace weft

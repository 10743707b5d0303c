// weft core — MNIST networks (see weft/networks.h).
#include "weft/networks.h"

#include "weft/operator.h"

namespace weft {
namespace {

Symbol FC(const std::string& name, const Symbol& in, int hidden) {
  return Operator("FullyConnected").SetParam("num_hidden", hidden).SetInput("data", in).CreateSymbol(name);
}
Symbol Act(const std::string& name, const Symbol& in, const char* type) {
  return Operator("Activation").SetParam("act_type", type).SetInput("data", in).CreateSymbol(name);
}
Symbol Conv(const std::string& name, const Symbol& in, int filters) {
  return Operator("Convolution")
      .SetParam("kernel", Shape(5, 5))
      .SetParam("num_filter", filters)
      .SetInput("data", in)
      .CreateSymbol(name);
}
Symbol Pool(const std::string& name, const Symbol& in) {
  return Operator("Pooling")
      .SetParam("pool_type", "max")
      .SetParam("kernel", Shape(2, 2))
      .SetParam("stride", Shape(2, 2))
      .SetInput("data", in)
      .CreateSymbol(name);
}
Symbol Softmax(const Symbol& in) {
  return Operator("SoftmaxOutput")
      .SetInput("data", in)
      .SetInput("label", Symbol::Variable("softmax_label"))
      .CreateSymbol("softmax");
}

}  // namespace

Symbol MnistMLP(int num_classes) {
  Symbol data = Symbol::Variable("data");
  Symbol h = Act("relu1", FC("fc1", data, 128), "relu");
  h = Act("relu2", FC("fc2", h, 64), "relu");
  return Softmax(FC("fc3", h, num_classes));
}

Symbol LeNet(int num_classes) {
  Symbol data = Symbol::Variable("data");
  Symbol h = Pool("pool1", Act("tanh1", Conv("conv1", data, 20), "tanh"));
  h = Pool("pool2", Act("tanh2", Conv("conv2", h, 50), "tanh"));
  h = Operator("Flatten").SetInput("data", h).CreateSymbol("flatten");
  h = Act("tanh3", FC("fc1", h, 500), "tanh");
  return Softmax(FC("fc2", h, num_classes));
}

Symbol MnistNetwork(const std::string& name, int num_classes) {
  if (name == "mlp") return MnistMLP(num_classes);
  if (name == "lenet") return LeNet(num_classes);
  Fail("unknown network '{}'; known: mlp, lenet", name);
}

}  // namespace weft

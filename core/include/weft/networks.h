// weft — MXNet's classic MNIST networks (example/image-classification/symbols/mlp.py and
// lenet.py), with the argument names MXNet gives them (data, fc1_weight, ..., softmax_label).
// Thread-safety: each call builds a new Symbol (automatic names come from NameManager).
#pragma once

#include <string>

#include "weft/export.h"
#include "weft/symbol.h"

namespace weft {

/// fc1 128 -> relu -> fc2 64 -> relu -> fc3 10 -> SoftmaxOutput "softmax". Data (N, 784) or any
/// shape FullyConnected flattens.
WEFT_API Symbol MnistMLP(int num_classes = 10);
/// conv1 20@5x5 -> tanh -> max pool 2x2/2 -> conv2 50@5x5 -> tanh -> max pool 2x2/2 -> flatten ->
/// fc1 500 -> tanh -> fc2 10 -> SoftmaxOutput "softmax". Data (N, 1, 28, 28).
WEFT_API Symbol LeNet(int num_classes = 10);
/// "mlp" or "lenet"; weft::Error naming the known ones otherwise.
WEFT_API Symbol MnistNetwork(const std::string& name, int num_classes = 10);

}  // namespace weft

// A small deterministic MLP (fc 16 -> relu -> fc 4 -> SoftmaxOutput, batch 8) run forward and
// backward on a device: the results the engine and device tests compare.
#pragma once

#include "test_util.h"

namespace weft::test {

inline std::vector<float> Pseudo(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

inline Symbol Mlp() {
  Symbol x = Symbol::Variable("data");
  Symbol h = Operator("FullyConnected").SetParam("num_hidden", 16)(x).CreateSymbol("fc1");
  h = Operator("Activation").SetParam("act_type", "relu")(h).CreateSymbol("relu1");
  h = Operator("FullyConnected").SetParam("num_hidden", 4)(h).CreateSymbol("fc2");
  return Operator("SoftmaxOutput")(h).CreateSymbol("softmax");
}

/// Output then every argument gradient (data excluded), concatenated.
inline std::vector<float> RunMlp(const Context& ctx, int iterations = 2) {
  Symbol net = Mlp();
  auto e = Executor::SimpleBind(net, ctx, {{"data", Shape{8, 10}}}, "write", {{"softmax_label", "null"}});
  uint32_t seed = 1;
  for (const std::string& name : net.ListArguments()) {
    NDArray a = e->arg_dict().at(name);
    std::vector<float> v = Pseudo(a.Size(), seed++);
    if (name == "softmax_label")
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 4);
    a.SyncCopyFromCPU(v);
  }
  for (int it = 0; it < iterations; ++it) {
    e->Forward(true);
    e->Backward();
  }
  std::vector<float> all = Values(e->outputs[0]);
  for (const std::string& name : net.ListArguments()) {
    NDArray g = e->grad_dict().at(name);
    if (g.is_none()) continue;
    std::vector<float> v = Values(g);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace weft::test

// executor_bench [iterations]: prints
//   1. the planned memory of LeNet's training graph (batch 64, MNIST 1x28x28) against the
//      no-sharing total (every internal value in its own block);
//   2. the executor's per-iteration cost (Forward(true) + Backward + wait) on a chain of 50 tiny
//      element-wise ops (4 floats each), in microseconds, for the engine WEFT_ENGINE_TYPE selects.
// Needs WEFT_PLUGIN_PATH to reach the cpu plugin.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "weft/engine.h"
#include "weft/executor.h"
#include "weft/operator.h"

using namespace weft;

namespace {

Symbol LeNet() {
  Symbol x = Symbol::Variable("data");
  auto conv = [](Symbol in, int filters, const char* name) {
    return Operator("Convolution").SetParam("kernel", "(5, 5)").SetParam("num_filter", filters)(in).CreateSymbol(name);
  };
  auto act = [](Symbol in) { return Operator("Activation").SetParam("act_type", "tanh")(in).CreateSymbol(); };
  auto pool = [](Symbol in) {
    return Operator("Pooling")
        .SetParam("kernel", "(2, 2)")
        .SetParam("stride", "(2, 2)")
        .SetParam("pool_type", "max")(in)
        .CreateSymbol();
  };
  Symbol h = pool(act(conv(x, 20, "conv1")));
  h = pool(act(conv(h, 50, "conv2")));
  h = Operator("Flatten")(h).CreateSymbol();
  h = act(Operator("FullyConnected").SetParam("num_hidden", 500)(h).CreateSymbol("fc1"));
  h = Operator("FullyConnected").SetParam("num_hidden", 10)(h).CreateSymbol("fc2");
  return Operator("SoftmaxOutput")(h).CreateSymbol("softmax");
}

Symbol TinyChain(int ops) {
  Symbol y = Symbol::Variable("x");
  for (int i = 0; i < ops; ++i) {
    switch (i % 3) {
      case 0:
        y = Operator("sin")(y).CreateSymbol();
        break;
      case 1:
        y = y * 1.5f;
        break;
      default:
        y = y + 0.25f;
    }
  }
  return y;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  const Context cpu = Context::cpu();
  {
    auto e = Executor::SimpleBind(LeNet(), cpu, {{"data", Shape{64, 1, 28, 28}}}, "write",
                                  {{"data", "null"}, {"softmax_label", "null"}});
    const double planned = static_cast<double>(e->planned_bytes()), flat = static_cast<double>(e->unshared_bytes());
    std::printf("lenet_train_b64: planned %.3f MiB, no-sharing %.3f MiB, ratio %.1f %%\n", planned / (1 << 20),
                flat / (1 << 20), 100.0 * planned / flat);
  }
  {
    const int ops = 50;
    auto e = Executor::SimpleBind(TinyChain(ops), cpu, {{"x", Shape{4}}});
    NDArray head(std::vector<float>{1, 1, 1, 1}, Shape{4}, cpu);
    for (int i = 0; i < 50; ++i) {  // warm-up
      e->Forward(true);
      e->Backward({head});
    }
    Engine::Get()->WaitForAll();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      e->Forward(true);
      e->Backward({head});
    }
    Engine::Get()->WaitForAll();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iterations;
    const char* engine = Engine::Get()->type() == EngineType::kNaive ? "naive" : "threaded";
    std::printf("tiny_chain_%d_ops fwd+bwd (%zu kernels/iter): %.1f us/iter, engine=%s\n", ops,
                static_cast<size_t>(2 * ops + 1), us, engine);
  }
  return 0;
}

// Loads the Swish operator plugin at run time and checks it against a composition of built-in
// ops, forward and backward:
//   Swish(x)            == x * sigmoid(beta * x)
//   _backward_Swish(g,x) == g * (s + beta * x * s * (1 - s)),  s = sigmoid(beta * x)
// Usage: swish_check [path/to/libswish_op.so]   (default: the path baked in at build time).
// Exit status 0 when every check passes; prints what differs otherwise.
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/runtime.h"

#ifndef SWISH_PLUGIN_PATH
#define SWISH_PLUGIN_PATH "libswish_op.so"
#endif

namespace {

using weft::NDArray;

// Largest |a - b| over the two arrays' elements.
float MaxDiff(const NDArray& a, const NDArray& b) {
  std::vector<float> x, y;
  a.SyncCopyToCPU(&x);
  b.SyncCopyToCPU(&y);
  float d = x.size() == y.size() ? 0.0f : INFINITY;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) d = std::fmax(d, std::fabs(x[i] - y[i]));
  return d;
}

NDArray Sigmoid(const NDArray& x) { return weft::InvokeOne("sigmoid", {x}); }

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string path = argc > 1 ? argv[1] : SWISH_PLUGIN_PATH;
    const weft::PluginRecord rec = weft::Runtime::Get().LoadPlugin(path);
    if (!rec.accepted) {
      std::fprintf(stderr, "could not load %s: %s\n", path.c_str(), rec.reason.c_str());
      return 1;
    }
    const weft::Context cpu = weft::Context::cpu(0);
    const weft::Shape shape{4, 7};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    std::vector<float> xs(static_cast<size_t>(shape.Size())), gs(xs.size());
    for (float& v : xs) v = u(rng);
    for (float& v : gs) v = u(rng);
    const NDArray x(xs, shape, cpu), g(gs, shape, cpu);
    int failures = 0;
    for (float beta : {1.0f, 0.5f}) {
      // Forward: the plugin's op against x * sigmoid(beta * x).
      weft::ImperativeCall call;
      call.op = "Swish";
      call.params = {{"beta", std::to_string(beta)}};
      call.inputs = {x};
      const NDArray y = weft::Invoke(call).at(0);
      const NDArray s = Sigmoid(x * beta);
      const NDArray y_ref = x * s;
      const float fwd = MaxDiff(y, y_ref);

      // Backward: the plugin's kernel for the gradient node weft derives from the definition
      // (inputs: out_grad, data; output: d data) against the chain rule spelled with built-ins.
      NDArray dx(shape, cpu);
      weft::ImperativeCall back;
      back.op = "_backward_Swish";
      back.params = call.params;
      back.inputs = {g, x};
      std::vector<NDArray> outs{dx};
      weft::Invoke(back, &outs);
      const NDArray dx_ref = g * (s + x * beta * s * (1.0f - s));
      const float bwd = MaxDiff(dx, dx_ref);

      std::printf("beta %.2f: forward max |diff| %.3g, backward max |diff| %.3g\n", beta, fwd, bwd);
      if (!(fwd <= 1e-5f) || !(bwd <= 1e-5f)) ++failures;
    }
    std::printf("%s\n", failures == 0 ? "Swish plugin: all checks passed" : "Swish plugin: checks FAILED");
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

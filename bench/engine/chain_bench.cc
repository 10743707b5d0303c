// Dependent chains through the whole stack (imperative ops, executor, engine, device plugin).
//   simdev: 1000 in-place `x += 1` on a simdev array whose kernels take 50 us of simulated device
//           time (WEFT_SIMDEV_KERNEL_LATENCY_US, set here unless given). Prints exactly one line
//           "simdev chain: 1000 ops, <X> us/op, <H> host waits": X = wall time per op from the
//           first push until the result was read; H = host waits (Device::TotalHostWaits) other
//           than the one final WaitToRead. Goal: H = 0, X <= 1.1 x the kernel latency.
//   cpu:    the same chain on cpu(0), where the kernel (16 floats) costs next to nothing, so the
//           time per op is the runtime's own cost per dependent op: imperative (one engine op per
//           call, kernel prepared per call), and a bound executor of N chained `_plus_scalar`
//           nodes with bulk execution off (one engine op per node) and on (inference: one op for
//           the whole chain; training: segments of WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD).
// Usage: chain_bench [--ops N] [--skip-simdev] [--skip-cpu]
// The simdev plugin is a test plugin: run with WEFT_PLUGIN_PATH including <build>/test-plugins.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/imperative.h"
#include "weft/internal/device.h"
#include "weft/ndarray.h"
#include "weft/operator.h"
#include "weft/runtime.h"
#include "weft/symbol.h"

namespace {

using Clock = std::chrono::steady_clock;
double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Exits with a message when the chain's result is wrong: a benchmark of wrong work is worthless.
void Expect(const weft::NDArray& x, float want, const char* what) {
  std::vector<float> v;
  x.SyncCopyToCPU(&v);
  for (float f : v) {
    if (f != want) {
      std::fprintf(stderr, "%s: wrong result %g, expected %g\n", what, static_cast<double>(f),
                   static_cast<double>(want));
      std::exit(1);
    }
  }
}

void SimdevChain(int ops) {
  const weft::Context dev("simdev", 0);
  if (weft::Runtime::Get().DeviceCount("simdev") == 0) {
    std::printf(
        "simdev chain: skipped (the simdev test plugin is not loaded; add <build>/test-plugins to "
        "WEFT_PLUGIN_PATH)\n");
    return;
  }
  weft::NDArray x(weft::Shape(16), dev);
  x = 0.0f;
  for (int i = 0; i < 20; ++i) x += 1.0f;  // warm-up: streams, kernels, pools
  x.WaitToRead();
  const uint64_t h0 = weft::Device::TotalHostWaits();
  const auto t0 = Clock::now();
  for (int i = 0; i < ops; ++i) x += 1.0f;
  const uint64_t pushed = weft::Device::TotalHostWaits();
  x.WaitToRead();  // at most one wait (none when the chain has already finished)
  const auto t1 = Clock::now();
  const uint64_t h1 = weft::Device::TotalHostWaits();
  const uint64_t inside = (pushed - h0) + (h1 - pushed > 1 ? h1 - pushed - 1 : 0);
  std::printf("simdev chain: %d ops, %.1f us/op, %llu host waits\n", ops, Us(t1 - t0) / ops,
              static_cast<unsigned long long>(inside));
  std::fflush(stdout);
  Expect(x, static_cast<float>(20 + ops), "simdev chain");
}

double CpuImperative(int ops) {
  weft::NDArray x(weft::Shape(16), weft::Context::cpu(0));
  x = 0.0f;
  for (int i = 0; i < 100; ++i) x += 1.0f;
  x.WaitToRead();
  const auto t0 = Clock::now();
  for (int i = 0; i < ops; ++i) x += 1.0f;
  x.WaitToRead();
  const double us = Us(Clock::now() - t0) / ops;
  Expect(x, static_cast<float>(100 + ops), "cpu imperative chain");
  return us;
}

// A bound chain of `n` _plus_scalar nodes; us per node of Forward(is_train), best of `reps`.
double CpuExecutor(int n, bool bulk, bool is_train, int reps) {
  setenv("WEFT_EXEC_BULK_EXEC_TRAIN", bulk ? "1" : "0", 1);
  setenv("WEFT_EXEC_BULK_EXEC_INFERENCE", bulk ? "1" : "0", 1);
  weft::Symbol s = weft::Symbol::Variable("x");
  for (int i = 0; i < n; ++i)
    s = weft::Operator("_plus_scalar").SetParam("scalar", 1).SetInput("data", s).CreateSymbol("p" + std::to_string(i));
  auto exec = weft::Executor::SimpleBind(s, weft::Context::cpu(0), {{"x", weft::Shape(16)}}, "null");
  exec->Forward(is_train);
  exec->outputs[0].WaitToRead();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    exec->Forward(is_train);
    exec->outputs[0].WaitToRead();
    best = std::min(best, Us(Clock::now() - t0) / n);
  }
  Expect(exec->outputs[0], static_cast<float>(n), "cpu executor chain");
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int ops = 1000;
  bool simdev = true, cpu = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
      ops = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--skip-simdev") == 0) {
      simdev = false;
    } else if (std::strcmp(argv[i], "--skip-cpu") == 0) {
      cpu = false;
    } else {
      std::fprintf(stderr, "usage: %s [--ops N] [--skip-simdev] [--skip-cpu]\n", argv[0]);
      return 2;
    }
  }
  if (ops < 1) ops = 1;
  // Before the runtime loads the plugin: the latency the goal is stated for.
  setenv("WEFT_SIMDEV_KERNEL_LATENCY_US", "50", 0);
  try {
    if (simdev) SimdevChain(ops);
    if (cpu) {
      std::printf("cpu chain: %d ops, imperative %.2f us/op\n", ops, CpuImperative(ops));
      const double off = CpuExecutor(ops, false, false, 5), inf = CpuExecutor(ops, true, false, 5);
      const double toff = CpuExecutor(ops, false, true, 5), ton = CpuExecutor(ops, true, true, 5);
      std::printf(
          "cpu executor chain: %d nodes, inference: bulk off %.2f us/node, bulk on %.2f us/node; "
          "training forward: bulk off %.2f us/node, bulk on %.2f us/node\n",
          ops, off, inf, toff, ton);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chain_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

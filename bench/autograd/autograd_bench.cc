// autograd_bench [--network lenet|mlp] [--batch N] [--steps S] [--rounds R]: one training step
// (forward, backward, SGD with momentum on every parameter) of MXNet's MNIST network on random
// data, three ways in one process:
//   executor   the symbol bound once (Executor), Forward(true) + Backward;
//   autograd   op by op through Invoke inside autograd::Record, then autograd::Backward (what a
//              non-hybridized Gluon network does; samples/train_lenet_autograd);
//   cachedop   the symbol as one CachedOp on the tape (a hybridized Gluon network).
// Prints
//   1. memory: the executor's planned training memory (Executor::planned_bytes: forward and
//      backward values, not parameters, gradients or workspaces) against the tape's, measured as
//      the peak of the cpu pool's bytes in use during an autograd step above what is in use before
//      it (parameters, gradients, optimizer states, the batch and the kernels' workspaces are all
//      allocated by then), sampled every ~20 µs by a second thread; and what the tape keeps
//      between the forward and the backward;
//   2. speed: samples/s of each way, R rounds of S steps each, interleaved so that a change in the
//      machine's load hits all three alike; the median round per way and the ratios.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

#include "weft/autograd.h"
#include "weft/cached_op.h"
#include "weft/executor.h"
#include "weft/imperative.h"
#include "weft/networks.h"
#include "weft/optimizer.h"
#include "weft/storage.h"

using namespace weft;

namespace {

struct Setup {
  Symbol net;
  std::vector<std::string> names;  // ListArguments: data, parameters..., softmax_label
  std::vector<NDArray> args;       // bound arrays (the parameters are shared by all three ways)
};

Setup MakeSetup(const std::string& network, int batch) {
  Setup s;
  s.net = MnistNetwork(network);
  s.names = s.net.ListArguments();
  const Shape data = network == "lenet" ? Shape{batch, 1, 28, 28} : Shape{batch, 784};
  ShapeInference si = s.net.InferShapePartial({{"data", data}});
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.05f);
  for (size_t i = 0; i < s.names.size(); ++i) {
    std::vector<float> v(static_cast<size_t>(si.arg_shapes[i]->Size()));
    for (size_t k = 0; k < v.size(); ++k)
      v[k] =
          s.names[i] == "softmax_label" ? static_cast<float>(k % 10) : (s.names[i] == "data" ? nd(rng) * 20 : nd(rng));
    s.args.emplace_back(v, *si.arg_shapes[i], Context::cpu(0));
  }
  return s;
}

bool IsParam(const std::string& n) { return n != "data" && n != "softmax_label"; }

// LeNet / MLP op by op (the same ops and attributes as MnistNetwork's symbol).
NDArray ForwardOps(const std::string& network, const std::vector<NDArray>& a) {
  auto act = [](const NDArray& x, const char* t) { return InvokeOne("Activation", {x}, {{"act_type", t}}); };
  auto fc = [](const NDArray& x, const NDArray& w, const NDArray& b, int n) {
    return InvokeOne("FullyConnected", {x, w, b}, {{"num_hidden", std::to_string(n)}});
  };
  NDArray x = a[0];
  if (network == "lenet") {
    const std::map<std::string, std::string> pool = {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}};
    x = InvokeOne(
        "Pooling",
        {act(InvokeOne("Convolution", {x, a[1], a[2]}, {{"kernel", "(5, 5)"}, {"num_filter", "20"}}), "tanh")}, pool);
    x = InvokeOne(
        "Pooling",
        {act(InvokeOne("Convolution", {x, a[3], a[4]}, {{"kernel", "(5, 5)"}, {"num_filter", "50"}}), "tanh")}, pool);
    x = fc(act(fc(InvokeOne("Flatten", {x}), a[5], a[6], 500), "tanh"), a[7], a[8], 10);
    return InvokeOne("SoftmaxOutput", {x, a[9]});
  }
  x = act(fc(x, a[1], a[2], 128), "relu");
  x = act(fc(x, a[3], a[4], 64), "relu");
  return InvokeOne("SoftmaxOutput", {fc(x, a[5], a[6], 10), a[7]});
}

// Samples the cpu pool's bytes in use until stopped; keeps the maximum.
class PeakSampler {
 public:
  PeakSampler()
      : thread_([this] {
          while (!stop_.load()) {
            peak_ = std::max(peak_.load(), Storage::Get()->Stats(Context::cpu(0)).bytes_in_use);
            std::this_thread::sleep_for(std::chrono::microseconds(20));
          }
        }) {}
  uint64_t Stop() {
    stop_ = true;
    thread_.join();
    return std::max(peak_.load(), Storage::Get()->Stats(Context::cpu(0)).bytes_in_use);
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> peak_{0};
  std::thread thread_;
};

double Mib(uint64_t b) { return static_cast<double>(b) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft autograd vs executor vs CachedOp: memory and training speed"};
  std::string network = "lenet";
  int batch = 100, steps = 20, rounds = 5;
  app.add_option("--network", network, "lenet or mlp")->check(CLI::IsMember({"lenet", "mlp"}));
  app.add_option("--batch", batch, "batch size")->check(CLI::Range(1, 10000));
  app.add_option("--steps", steps, "steps per round")->check(CLI::Range(1, 100000));
  app.add_option("--rounds", rounds, "rounds (each runs all three ways)")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);

  Setup s = MakeSetup(network, batch);
  const Context cpu = Context::cpu(0);
  // Autograd's parameters: the same arrays, marked (AttachGrad allocates the buffers).
  std::vector<NDArray> vars = s.args;
  for (size_t i = 0; i < vars.size(); ++i)
    if (IsParam(s.names[i])) autograd::AttachGrad(&vars[i]);
  std::vector<NDArray> exec_grads;
  std::vector<OpReqType> reqs;
  for (size_t i = 0; i < s.args.size(); ++i) {
    reqs.push_back(IsParam(s.names[i]) ? kWriteTo : kNullOp);
    exec_grads.push_back(IsParam(s.names[i]) ? NDArray(s.args[i].GetShape(), cpu, false) : NDArray());
  }
  Executor exec(s.net, cpu, s.args, exec_grads, reqs, {});
  CachedOp cached(s.net, {{"static_alloc", "True"}, {"static_shape", "True"}});
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.001f)->SetParam("momentum", 0.9f)->SetParam("rescale_grad", 1.0f / static_cast<float>(batch));
  auto update = [&](const std::vector<NDArray>& grads) {
    for (size_t i = 0; i < s.args.size(); ++i)
      if (IsParam(s.names[i])) opt->Update(static_cast<int>(i), s.args[i], grads[i]);
  };
  std::vector<NDArray> ag_grads(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) ag_grads[i] = autograd::GetGrad(vars[i]);
  auto step_exec = [&] {
    exec.Forward(true);
    exec.Backward();
    update(exec_grads);
  };
  auto step_autograd = [&] {
    NDArray out;
    {
      auto rec = autograd::Record();
      out = ForwardOps(network, vars);
    }
    autograd::Backward({out});
    update(ag_grads);
  };
  auto step_cached = [&] {
    NDArray out;
    {
      auto rec = autograd::Record();
      out = cached.Invoke(vars).at(0);
    }
    autograd::Backward({out});
    update(ag_grads);
  };

  // Warm up all three (kernels prepared, workspaces and optimizer states allocated).
  for (int i = 0; i < 2; ++i) step_exec(), step_autograd(), step_cached();
  NDArray::WaitAll();

  // 1. Memory.
  const uint64_t base = Storage::Get()->Stats(cpu).bytes_in_use;
  NDArray out;
  PeakSampler forward_sampler;
  {
    auto rec = autograd::Record();
    out = ForwardOps(network, vars);
  }
  NDArray::WaitAll();
  const uint64_t forward_peak = forward_sampler.Stop() - base;
  const uint64_t kept = Storage::Get()->Stats(cpu).bytes_in_use - base;
  out = NDArray();
  NDArray::WaitAll();
  uint64_t tape_peak = 0;
  for (int i = 0; i < 3; ++i) {
    const uint64_t b = Storage::Get()->Stats(cpu).bytes_in_use;
    PeakSampler sampler;
    step_autograd();
    NDArray::WaitAll();
    tape_peak = std::max(tape_peak, sampler.Stop() - b);
  }
  std::printf(
      "%s, batch %d: executor planned training memory %.2f MiB (no sharing: %.2f MiB); CachedOp plan %.2f MiB\n",
      network.c_str(), batch, Mib(exec.planned_bytes()), Mib(exec.unshared_bytes()), Mib(cached.planned_bytes()));
  const double plan = static_cast<double>(exec.planned_bytes());
  std::printf(
      "autograd tape: %.2f MiB kept between forward and backward (%.2fx the executor's plan); peak in use "
      "above the step's start %.2f MiB during the forward, %.2f MiB during the whole step (%.2fx)\n",
      Mib(kept), static_cast<double>(kept) / plan, Mib(forward_peak), Mib(tape_peak),
      static_cast<double>(tape_peak) / plan);

  // 2. Speed, interleaved.
  std::vector<double> speed[3];
  const char* names[3] = {"executor", "autograd", "cachedop"};
  const std::function<void()> way[3] = {step_exec, step_autograd, step_cached};
  for (int r = 0; r < rounds; ++r) {
    for (int w = 0; w < 3; ++w) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) way[w]();
      NDArray::WaitAll();
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      speed[w].push_back(static_cast<double>(steps) * batch / sec);
    }
  }
  double median[3];
  for (int w = 0; w < 3; ++w) {
    std::sort(speed[w].begin(), speed[w].end());
    median[w] = speed[w][speed[w].size() / 2];
    std::printf("%-9s %9.0f samples/s (median of %d rounds of %d steps; range %.0f-%.0f)\n", names[w], median[w],
                rounds, steps, speed[w].front(), speed[w].back());
  }
  std::printf("autograd / executor %.2f, cachedop / executor %.2f\n", median[1] / median[0], median[2] / median[0]);
  return 0;
}

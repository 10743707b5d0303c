// Engine overhead per op (the engine's own cost: every op is a no-op).
//   independent: N pushes of ops with no shared variable, timed from the first push until
//                WaitForAll returns (and the push loop alone);
//   chain:       M ops that all write one variable, so each waits for the previous one.
// Usage: engine_bench [--quick] [--workers N]   (--quick: 1/10 of the ops, for busy machines)
// WEFT_ENGINE_SPIN and the other engine settings are read from the environment.
// Goals on the 2-core dev machine: <= 1 us per independent op, <= 5 us per dependent hop.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/engine.h"

namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Process CPU time (all threads), us: on a shared, oversubscribed machine wall time mostly
// measures the scheduler; CPU time per op is the engine's own cost (spinning included).
double CpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Result {
  double push_us_per_op;
  double total_us_per_op;
  double cpu_us_per_op;
};

Result Independent(weft::Engine& engine, int n) {
  const weft::Context cpu = weft::Context::cpu(0);
  double c0 = CpuUs();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) engine.PushSync([](weft::RunContext) {}, cpu, {}, {});
  auto t1 = Clock::now();
  engine.WaitForAll();
  auto t2 = Clock::now();
  return {Us(t1 - t0) / n, Us(t2 - t0) / n, (CpuUs() - c0) / n};
}

Result Chain(weft::Engine& engine, int n) {
  const weft::Context cpu = weft::Context::cpu(0);
  weft::VarHandle v = engine.NewVariable();
  double c0 = CpuUs();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) engine.PushSync([](weft::RunContext) {}, cpu, {}, {v});
  auto t1 = Clock::now();
  engine.WaitForVar(v);
  auto t2 = Clock::now();
  double c1 = CpuUs();
  engine.DeleteVariable({}, cpu, v);
  engine.WaitForAll();
  return {Us(t1 - t0) / n, Us(t2 - t0) / n, (c1 - c0) / n};
}

// Ping-pong: push one op, wait for it, repeat: the full latency of a dependent hop through a
// worker thread (wake-up included), the worst case for a chain.
Result PingPong(weft::Engine& engine, int n) {
  const weft::Context cpu = weft::Context::cpu(0);
  weft::VarHandle v = engine.NewVariable();
  double c0 = CpuUs();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    engine.PushSync([](weft::RunContext) {}, cpu, {}, {v});
    engine.WaitForVar(v);
  }
  auto t1 = Clock::now();
  double c1 = CpuUs();
  engine.DeleteVariable({}, cpu, v);
  engine.WaitForAll();
  return {0.0, Us(t1 - t0) / n, (c1 - c0) / n};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int workers = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
      workers = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--workers N]\n", argv[0]);
      return 2;
    }
  }
  const int n_indep = quick ? 100000 : 1000000;
  const int n_chain = quick ? 10000 : 100000;
  const int n_ping = quick ? 2000 : 20000;
  std::printf("engine_bench: %d independent ops, chain of %d, %d ping-pongs, %d cpu worker(s), spin %d%s\n", n_indep,
              n_chain, n_ping, workers, weft::EngineConfig::FromEnv().spin_rounds, quick ? " (quick)" : "");
  std::printf("%-9s %-12s %12s %12s %12s\n", "engine", "case", "push us/op", "wall us/op", "cpu us/op");
  for (weft::EngineType type : {weft::EngineType::kThreaded, weft::EngineType::kNaive}) {
    weft::EngineConfig config = weft::EngineConfig::FromEnv();  // WEFT_ENGINE_SPIN etc.
    config.type = type;
    config.cpu_workers = workers;
    auto engine = weft::Engine::Create(config);
    const char* name = type == weft::EngineType::kThreaded ? "threaded" : "naive";
    Independent(*engine, n_indep / 10);  // warm-up: worker start, allocator
    auto print = [&](const char* what, const Result& r) {
      std::printf("%-9s %-12s %12.3f %12.3f %12.3f\n", name, what, r.push_us_per_op, r.total_us_per_op,
                  r.cpu_us_per_op);
    };
    print("independent", Independent(*engine, n_indep));
    print("chain", Chain(*engine, n_chain));
    print("ping-pong", PingPong(*engine, n_ping));
  }
  return 0;
}

// Port of MXNet's engine stress test (tests/cpp/engine/threaded_engine_test.cc): random
// workloads on 100 variables, each op reading 2-19 of them and writing one. The threaded
// engine's final values must be bit-identical to a plain serial evaluation and to the naive
// engine's run, and every variable's version must equal the number of writes to it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "engine_test_util.h"
#include "weft/engine.h"

namespace weft {
namespace {

constexpr int kVars = 100;
constexpr int kOps = 10000;
constexpr uint64_t kDefaultSeed = 20261121;

struct Workload {
  std::vector<int> reads;  // may repeat and may contain `write`: exercises de-duplication
  int write;
  int sleep_us;
  int cpu;  // which cpu context
  int priority;
  bool prioritized;
};

std::vector<Workload> Generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> nreads(2, 19), var(0, kVars - 1), sleep(0, 5), cpu(0, 1), prio(-2, 2),
      percent(0, 99);
  std::vector<Workload> w(kOps);
  for (auto& op : w) {
    int n = nreads(rng);
    for (int i = 0; i < n; ++i) op.reads.push_back(var(rng));
    op.write = var(rng);
    op.sleep_us = sleep(rng);
    op.cpu = cpu(rng);
    op.priority = prio(rng);
    op.prioritized = percent(rng) < 5;
  }
  return w;
}

// Order-sensitive update: any reordering of dependent ops changes the result.
void Evaluate(const Workload& op, std::vector<uint64_t>& data) {
  uint64_t acc = data[static_cast<size_t>(op.write)] * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < op.reads.size(); ++i)
    acc ^= (data[static_cast<size_t>(op.reads[i])] + i) * 0x9E3779B97F4A7C15ull;
  data[static_cast<size_t>(op.write)] = acc;
}

std::vector<uint64_t> InitialData() {
  std::vector<uint64_t> d(kVars);
  for (int i = 0; i < kVars; ++i) d[static_cast<size_t>(i)] = static_cast<uint64_t>(i) * 2654435761u + 1;
  return d;
}

std::vector<uint64_t> RunOnEngine(Engine& engine, const std::vector<Workload>& work, bool sleep) {
  std::vector<uint64_t> data = InitialData();
  std::vector<VarHandle> vars;
  for (int i = 0; i < kVars; ++i) vars.push_back(engine.NewVariable());
  std::vector<int> writes(kVars, 0);
  for (const Workload& op : work) {
    std::vector<VarHandle> reads;
    for (int r : op.reads) reads.push_back(vars[static_cast<size_t>(r)]);
    ++writes[static_cast<size_t>(op.write)];
    engine.PushSync(
        [&data, &op, sleep](RunContext) {
          if (sleep && op.sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(op.sleep_us));
          Evaluate(op, data);
        },
        Context::cpu(op.cpu), reads, {vars[static_cast<size_t>(op.write)]},
        op.prioritized ? FnProperty::kCPUPrioritized : FnProperty::kNormal, op.priority, "stress");
  }
  // Waiting on every variable, then on everything, exercises both waits.
  for (VarHandle v : vars) engine.WaitForVar(v);
  engine.WaitForAll();
  for (int i = 0; i < kVars; ++i) {
    EXPECT_EQ(vars[static_cast<size_t>(i)]->version(), static_cast<uint64_t>(writes[static_cast<size_t>(i)]))
        << "var " << i;
    engine.DeleteVariable({}, Context::cpu(0), vars[static_cast<size_t>(i)]);
  }
  engine.WaitForAll();
  return data;
}

TEST(EngineStress, RandomWorkloadsMatchSerialResult) {
  const uint64_t seed = test::TestSeed(kDefaultSeed);
  std::printf("engine stress: seed %llu (set WEFT_TEST_SEED to change)\n", static_cast<unsigned long long>(seed));
  const std::vector<Workload> work = Generate(seed);

  std::vector<uint64_t> serial = InitialData();
  for (const Workload& op : work) Evaluate(op, serial);

  auto naive = test::MakeEngine(EngineType::kNaive);
  std::vector<uint64_t> naive_result = RunOnEngine(*naive, work, /*sleep=*/false);
  EXPECT_EQ(naive_result, serial) << "naive engine differs from the serial evaluation; seed " << seed;

  for (int workers : {1, 4}) {
    auto threaded = test::MakeEngine(EngineType::kThreaded, workers);
    std::vector<uint64_t> result = RunOnEngine(*threaded, work, /*sleep=*/true);
    EXPECT_EQ(result, naive_result) << "threaded engine with " << workers << " workers per cpu context differs; seed "
                                    << seed;
  }
}

}  // namespace
}  // namespace weft

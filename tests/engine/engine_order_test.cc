// Threaded-engine scheduling: what WaitForVar waits for, concurrent readers, priorities.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <vector>

#include "engine_test_util.h"
#include "weft/engine.h"

namespace weft {
namespace {

using namespace std::chrono_literals;
using test::Gate;

TEST(EngineOrder, WaitForVarBlocksUntilPendingWriteIsDone) {
  auto engine = test::MakeEngine(EngineType::kThreaded);
  VarHandle v = engine->NewVariable();
  Gate gate;
  std::atomic<bool> write_done{false};
  engine->PushSync(
      [&](RunContext) {
        gate.Wait();
        write_done = true;
      },
      Context::cpu(0), {}, {v}, FnProperty::kNormal, 0, "long-write");
  auto waiter = std::async(std::launch::async, [&] {
    engine->WaitForVar(v);
    return write_done.load();
  });
  // While the write is held, the wait must not have returned.
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout);
  EXPECT_FALSE(write_done.load());
  gate.Open();
  EXPECT_TRUE(waiter.get()) << "WaitForVar returned before the pending write finished";
  EXPECT_EQ(v->version(), 1u);
  engine->DeleteVariable({}, Context::cpu(0), v);
  engine->WaitForAll();
}

TEST(EngineOrder, PendingReadDoesNotBlockWaitForVar) {
  auto engine = test::MakeEngine(EngineType::kThreaded);
  VarHandle v = engine->NewVariable();
  Gate gate;
  std::atomic<bool> read_started{false};
  std::atomic<bool> read_done{false};
  engine->PushSync(
      [&](RunContext) {
        read_started = true;
        gate.Wait();
        read_done = true;
      },
      Context::cpu(0), {v}, {}, FnProperty::kNormal, 0, "long-read");
  engine->WaitForVar(v);  // must return although the read is held
  EXPECT_FALSE(read_done.load());
  gate.Open();
  engine->WaitForAll();
  EXPECT_TRUE(read_done.load());
  engine->DeleteVariable({}, Context::cpu(0), v);
  engine->WaitForAll();
}

TEST(EngineOrder, ReadersOfOneVersionRunConcurrently) {
  auto engine = test::MakeEngine(EngineType::kThreaded, /*cpu_workers=*/2);
  VarHandle v = engine->NewVariable();
  // Each reader waits for the other to start: serialised readers would never both start.
  std::promise<void> a_started, b_started;
  auto b_future = b_started.get_future().share();
  auto a_future = a_started.get_future().share();
  std::atomic<int> met{0};
  engine->PushSync(
      [&](RunContext) {
        a_started.set_value();
        if (b_future.wait_for(20s) == std::future_status::ready) ++met;
      },
      Context::cpu(0), {v}, {});
  engine->PushSync(
      [&](RunContext) {
        b_started.set_value();
        if (a_future.wait_for(20s) == std::future_status::ready) ++met;
      },
      Context::cpu(0), {v}, {});
  engine->WaitForAll();
  EXPECT_EQ(met.load(), 2) << "two reads of the same version did not overlap";
  engine->DeleteVariable({}, Context::cpu(0), v);
  engine->WaitForAll();
}

TEST(EngineOrder, HigherPriorityRunsFirstWhenWorkIsQueued) {
  auto engine = test::MakeEngine(EngineType::kThreaded, /*cpu_workers=*/1);
  Gate gate;
  VarHandle busy = engine->NewVariable();
  std::promise<void> busy_started;
  engine->PushSync(
      [&](RunContext) {
        busy_started.set_value();
        gate.Wait();
      },
      Context::cpu(0), {}, {busy}, FnProperty::kNormal, 0, "busy");
  // Once the single worker holds "busy", everything below queues behind it.
  busy_started.get_future().wait();
  std::mutex mu;
  std::vector<int> order;
  const std::vector<int> priorities = {0, 5, -3, 10, 5, 1, 0, 7, -1, 10};
  std::vector<VarHandle> vars;
  for (size_t i = 0; i < priorities.size(); ++i) {
    vars.push_back(engine->NewVariable());
    int p = priorities[i];
    engine->PushSync(
        [&, p](RunContext) {
          std::lock_guard<std::mutex> lock(mu);
          order.push_back(p);
        },
        Context::cpu(0), {}, {vars.back()}, FnProperty::kNormal, p);
  }
  gate.Open();
  engine->WaitForAll();
  ASSERT_EQ(order.size(), priorities.size());
  for (size_t i = 1; i < order.size(); ++i) {
    EXPECT_GE(order[i - 1], order[i]) << "priority " << order[i] << " ran after lower priority " << order[i - 1];
  }
  for (VarHandle v : vars) engine->DeleteVariable({}, Context::cpu(0), v);
  engine->DeleteVariable({}, Context::cpu(0), busy);
  engine->WaitForAll();
}

TEST(EngineOrder, CpuPrioritizedDoesNotWaitBehindNormalWork) {
  auto engine = test::MakeEngine(EngineType::kThreaded, /*cpu_workers=*/1);
  Gate gate;
  VarHandle a = engine->NewVariable();
  VarHandle b = engine->NewVariable();
  engine->PushSync([&](RunContext) { gate.Wait(); }, Context::cpu(0), {}, {a});
  std::promise<void> ran;
  auto ran_future = ran.get_future();
  engine->PushSync([&](RunContext) { ran.set_value(); }, Context::cpu(0), {}, {b}, FnProperty::kCPUPrioritized);
  // The only normal worker is held; the prioritized op must still run.
  EXPECT_EQ(ran_future.wait_for(20s), std::future_status::ready);
  gate.Open();
  engine->WaitForAll();
  engine->DeleteVariable({}, Context::cpu(0), a);
  engine->DeleteVariable({}, Context::cpu(0), b);
  engine->WaitForAll();
}

TEST(EngineOrder, WorkersReportTheirIndexAndNullStreamOnCpu) {
  auto engine = test::MakeEngine(EngineType::kThreaded, /*cpu_workers=*/2);
  std::mutex mu;
  std::vector<RunContext> seen;
  std::vector<VarHandle> vars;
  for (int i = 0; i < 20; ++i) {
    vars.push_back(engine->NewVariable());
    engine->PushSync(
        [&](RunContext r) {
          std::lock_guard<std::mutex> lock(mu);
          seen.push_back(r);
        },
        Context::cpu(1), {}, {vars.back()});
  }
  engine->WaitForAll();
  ASSERT_EQ(seen.size(), 20u);
  for (const RunContext& r : seen) {
    EXPECT_EQ(r.ctx, Context::cpu(1));
    EXPECT_EQ(r.stream, nullptr);
    EXPECT_GE(r.worker, 0);
    EXPECT_LT(r.worker, 2);
  }
  for (VarHandle v : vars) engine->DeleteVariable({}, Context::cpu(0), v);
  engine->WaitForAll();
}

}  // namespace
}  // namespace weft

// Engine basics on both engine types: versions, waits, de-duplicated lists, deletion, reusable
// operators, asynchronous completion, bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_util.h"
#include "weft/base.h"
#include "weft/engine.h"

namespace weft {
namespace {

using test::Gate;

class EngineBasic : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override { engine_ = test::MakeEngine(GetParam()); }
  std::unique_ptr<Engine> engine_;
  Context cpu_ = Context::cpu(0);
};

TEST_P(EngineBasic, ReadsKeepVersionWritesBumpIt) {
  VarHandle v = engine_->NewVariable();
  EXPECT_EQ(v->version(), 0u);
  std::atomic<int> runs{0};
  for (int i = 0; i < 10; ++i) engine_->PushSync([&](RunContext) { ++runs; }, cpu_, {v}, {});
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 10);
  EXPECT_EQ(v->version(), 0u);
  for (int i = 0; i < 10; ++i) engine_->PushSync([&](RunContext) { ++runs; }, cpu_, {}, {v});
  engine_->WaitForVar(v);
  EXPECT_EQ(v->version(), 10u);
  EXPECT_EQ(runs.load(), 20);
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, WaitForFreshVarReturns) {
  VarHandle v = engine_->NewVariable();
  engine_->WaitForVar(v);
  EXPECT_EQ(v->version(), 0u);
  engine_->WaitForAll();
  engine_->DeleteVariable({}, cpu_, v);
}

TEST_P(EngineBasic, WritesSeeEachOtherInPushOrder) {
  VarHandle v = engine_->NewVariable();
  std::vector<uint32_t> seen;  // written by ops on v only: the engine serialises them
  uint32_t value = 0;          // unsigned: the recurrence wraps after ~20 steps
  for (uint32_t i = 1; i <= 50; ++i) {
    engine_->PushSync([&, i](RunContext) { value = value * 3 + i; }, cpu_, {}, {v});
    engine_->PushSync([&](RunContext) { seen.push_back(value); }, cpu_, {v}, {});
  }
  engine_->WaitForVar(v);
  engine_->WaitForAll();
  uint32_t expect = 0;
  ASSERT_EQ(seen.size(), 50u);
  for (uint32_t i = 1; i <= 50; ++i) {
    expect = expect * 3 + i;
    EXPECT_EQ(seen[i - 1], expect) << "read after write " << i;
  }
  engine_->DeleteVariable({}, cpu_, v);
}

TEST_P(EngineBasic, DuplicatedVarListsDoNotDeadlock) {
  VarHandle a = engine_->NewVariable();
  VarHandle b = engine_->NewVariable();
  std::atomic<int> runs{0};  // the last two ops share no written variable: they may overlap
  engine_->PushSync([&](RunContext) { ++runs; }, cpu_, {a, a, b}, {a, b, b});
  engine_->PushSync([&](RunContext) { ++runs; }, cpu_, {a}, {a});
  engine_->PushSync([&](RunContext) { ++runs; }, cpu_, {b, b, b}, {});
  engine_->WaitForVar(a);
  engine_->WaitForVar(b);
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 3);
  EXPECT_EQ(a->version(), 2u);  // listed in mutable_vars twice: one write each
  EXPECT_EQ(b->version(), 1u);
  engine_->DeleteVariable({}, cpu_, a);
  engine_->DeleteVariable({}, cpu_, b);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, DeleteVariableRunsAfterPendingUses) {
  VarHandle v = engine_->NewVariable();
  std::vector<std::string> log;
  std::mutex mu;
  auto note = [&](const char* what) {
    std::lock_guard<std::mutex> lock(mu);
    log.emplace_back(what);
  };
  engine_->PushSync([&](RunContext) { note("write"); }, cpu_, {}, {v});
  engine_->PushSync([&](RunContext) { note("read"); }, cpu_, {v}, {});
  engine_->DeleteVariable([&](RunContext) { note("delete"); }, cpu_, v);
  engine_->WaitForAll();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "write");
  EXPECT_EQ(log[1], "read");
  EXPECT_EQ(log[2], "delete");
}

TEST_P(EngineBasic, ReusableOperator) {
  VarHandle in = engine_->NewVariable();
  VarHandle out = engine_->NewVariable();
  int64_t sum = 0;
  int64_t step = 0;
  engine_->PushSync([&](RunContext) { step = 7; }, cpu_, {}, {in});
  OprHandle op = engine_->NewOperator(
      [&](RunContext, CallbackOnComplete done) {
        sum += step;
        done();
      },
      {in}, {out}, FnProperty::kNormal, "accumulate");
  for (int i = 0; i < 100; ++i) engine_->Push(op, cpu_);
  engine_->DeleteOperator(op);
  engine_->WaitForVar(out);
  EXPECT_EQ(sum, 700);
  EXPECT_EQ(out->version(), 100u);
  EXPECT_EQ(in->version(), 1u);  // deleting the operator does not count as a write
  engine_->WaitForAll();
  engine_->DeleteVariable({}, cpu_, in);
  engine_->DeleteVariable({}, cpu_, out);
}

TEST_P(EngineBasic, AsyncCompletionFromAnotherThread) {
  VarHandle v = engine_->NewVariable();
  int value = 0;
  std::vector<std::thread> helpers;
  std::mutex helpers_mu;
  for (FnProperty prop : {FnProperty::kNormal, FnProperty::kAsync}) {
    engine_->PushAsync(
        [&](RunContext, CallbackOnComplete done) {
          std::lock_guard<std::mutex> lock(helpers_mu);
          helpers.emplace_back([&value, done] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            value += 10;
            done();
          });
        },
        cpu_, {}, {v}, prop, 0, "async-write");
  }
  int read = -1;
  engine_->PushSync([&](RunContext) { read = value; }, cpu_, {v}, {});
  engine_->WaitForAll();
  EXPECT_EQ(read, 20);
  EXPECT_EQ(v->version(), 2u);
  for (auto& t : helpers) t.join();
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, ConcurrentPushersOnOneVar) {
  VarHandle v = engine_->NewVariable();
  int64_t counter = 0;
  std::vector<std::thread> pushers;
  for (int t = 0; t < 4; ++t) {
    pushers.emplace_back([&] {
      for (int i = 0; i < 500; ++i) engine_->PushSync([&](RunContext) { ++counter; }, cpu_, {}, {v});
    });
  }
  for (auto& t : pushers) t.join();
  engine_->WaitForVar(v);
  EXPECT_EQ(counter, 2000);
  EXPECT_EQ(v->version(), 2000u);
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, NestedPushFromAnOp) {
  VarHandle a = engine_->NewVariable();
  VarHandle b = engine_->NewVariable();
  int value = 0;
  engine_->PushSync(
      [&](RunContext) {
        value = 1;
        engine_->PushSync([&](RunContext) { value += 5; }, cpu_, {}, {b});
      },
      cpu_, {}, {a});
  engine_->WaitForVar(a);
  engine_->WaitForVar(b);
  EXPECT_EQ(value, 6);
  engine_->WaitForAll();
  engine_->DeleteVariable({}, cpu_, a);
  engine_->DeleteVariable({}, cpu_, b);
}

TEST_P(EngineBasic, BadInputIsRejected) {
  VarHandle v = engine_->NewVariable();
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, cpu_, {nullptr}, {v}), Error);
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, cpu_, {}, {v, nullptr}), Error);
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, Context("nosuchdevice", 0), {}, {v}), Error);
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, Context("cpu", -1), {}, {v}), Error);
  EXPECT_THROW(engine_->WaitForVar(nullptr), Error);
  EXPECT_THROW(engine_->Push(nullptr, cpu_), Error);
  EXPECT_EQ(engine_->PendingOps(), 0);
  EXPECT_EQ(v->version(), 0u);  // nothing was pushed
  try {
    engine_->PushSync([](RunContext) {}, cpu_, {}, {nullptr}, FnProperty::kNormal, 0, "my_op");
    FAIL() << "a null variable was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my_op"), std::string::npos) << e.what();
  }
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, WaitForAllInsideAnOpIsAnError) {
  VarHandle v = engine_->NewVariable();
  bool threw = false;
  engine_->PushSync(
      [&](RunContext) {
        try {
          engine_->WaitForAll();
        } catch (const Error&) {
          threw = true;
        }
      },
      cpu_, {}, {v});
  engine_->WaitForAll();
  EXPECT_TRUE(threw);
  engine_->DeleteVariable({}, cpu_, v);
}

TEST_P(EngineBasic, SecondCallbackCallWhilePendingIsIgnored) {
  VarHandle v = engine_->NewVariable();
  engine_->PushAsync(
      [](RunContext, CallbackOnComplete done) {
        done();
        done();  // still inside the function, so the engine can tell: logged and ignored
      },
      cpu_, {}, {v});
  int after = 0;
  engine_->PushSync([&](RunContext) { after = 1; }, cpu_, {}, {v});
  engine_->WaitForVar(v);
  EXPECT_EQ(after, 1);
  EXPECT_EQ(v->version(), 2u);
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineBasic, NaiveRunsInThePushingThread) {
  VarHandle v = engine_->NewVariable();
  std::thread::id ran_on;
  bool done_at_return = false;
  engine_->PushSync([&](RunContext) { ran_on = std::this_thread::get_id(); }, cpu_, {}, {v});
  // Only the naive engine promises the op has run when the push returns.
  if (GetParam() == EngineType::kNaive) done_at_return = ran_on != std::thread::id();
  engine_->WaitForAll();
  if (GetParam() == EngineType::kNaive) {
    EXPECT_TRUE(done_at_return);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  } else {
    EXPECT_NE(ran_on, std::this_thread::get_id()) << "the threaded engine runs ops on its workers";
  }
  engine_->DeleteVariable({}, cpu_, v);
  engine_->WaitForAll();
}

INSTANTIATE_TEST_SUITE_P(Types, EngineBasic, ::testing::Values(EngineType::kNaive, EngineType::kThreaded),
                         [](const auto& info) { return std::string(test::TypeName(info.param)); });

TEST(EngineConfig, FromEnv) {
  ::setenv("WEFT_ENGINE_TYPE", "naive", 1);
  ::setenv("WEFT_CPU_WORKER_NTHREADS", "3", 1);
  EngineConfig c = EngineConfig::FromEnv();
  EXPECT_EQ(c.type, EngineType::kNaive);
  EXPECT_EQ(c.cpu_workers, 3);
  ::setenv("WEFT_ENGINE_TYPE", "ThreadedEnginePerDevice", 1);
  EXPECT_EQ(EngineConfig::FromEnv().type, EngineType::kThreaded);
  ::setenv("WEFT_ENGINE_TYPE", "bogus", 1);
  EXPECT_THROW(EngineConfig::FromEnv(), Error);
  ::setenv("WEFT_ENGINE_TYPE", "threaded", 1);
  ::setenv("WEFT_CPU_WORKER_NTHREADS", "0", 1);
  EXPECT_THROW(EngineConfig::FromEnv(), Error);
  ::unsetenv("WEFT_ENGINE_TYPE");
  ::unsetenv("WEFT_CPU_WORKER_NTHREADS");
  EngineConfig bad;
  bad.cpu_workers = 0;
  EXPECT_THROW(Engine::Create(bad), Error);
}

TEST(EngineConfig, MathThreadsFollowWorkers) {
  ::unsetenv("WEFT_CPU_MATH_THREADS");
  ::setenv("WEFT_CPU_WORKER_NTHREADS", "1", 1);
  int all = RecommendedCpuMathThreads();
  EXPECT_GE(all, 1);
  ::setenv("WEFT_CPU_WORKER_NTHREADS", "1024", 1);
  EXPECT_EQ(RecommendedCpuMathThreads(), 1);
  ::setenv("WEFT_CPU_MATH_THREADS", "3", 1);
  EXPECT_EQ(RecommendedCpuMathThreads(), 3);
  ::unsetenv("WEFT_CPU_MATH_THREADS");
  ::unsetenv("WEFT_CPU_WORKER_NTHREADS");
}

TEST(EngineGlobal, GetReturnsOneWorkingEngine) {
  Engine* e = Engine::Get();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e, Engine::Get());
  VarHandle v = e->NewVariable();
  int x = 0;
  e->PushSync([&](RunContext) { x = 42; }, Context::cpu(0), {}, {v});
  e->WaitForVar(v);
  EXPECT_EQ(x, 42);
  e->DeleteVariable({}, Context::cpu(0), v);
  e->WaitForAll();
}

}  // namespace
}  // namespace weft

// Exception propagation (MXNet's model): a failing op taints what it writes, dependants are
// skipped and pass the taint on, waits rethrow, and the engine keeps working.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "engine_test_util.h"
#include "weft/engine.h"

namespace weft {
namespace {

class EngineErrors : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override { engine_ = test::MakeEngine(GetParam()); }
  void TearDown() override {
    for (VarHandle v : vars_) engine_->DeleteVariable({}, cpu_, v);
    try {
      engine_->WaitForAll();
    } catch (...) {
    }
  }
  VarHandle Var() {
    vars_.push_back(engine_->NewVariable());
    return vars_.back();
  }
  void PushThrow(VarHandle out, const std::string& msg) {
    engine_->PushSync([msg](RunContext) { throw std::runtime_error(msg); }, cpu_, {}, {out}, FnProperty::kNormal, 0,
                      "thrower");
  }
  static std::string WaitMessage(Engine& e, VarHandle v) {
    try {
      e.WaitForVar(v);
    } catch (const std::exception& ex) {
      return ex.what();
    }
    return "";
  }

  std::unique_ptr<Engine> engine_;
  std::vector<VarHandle> vars_;
  Context cpu_ = Context::cpu(0);
};

TEST_P(EngineErrors, WaitRethrowsOnceThenVarIsClean) {
  VarHandle a = Var();
  PushThrow(a, "boom-a");
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-a");
  EXPECT_EQ(WaitMessage(*engine_, a), "") << "the exception must be cleared by the first wait";
  EXPECT_EQ(a->version(), 1u);  // a failed write still completes
  int after = 0;
  engine_->PushSync([&](RunContext) { after = 1; }, cpu_, {a}, {});
  engine_->WaitForAll();  // already rethrown by WaitForVar: no rethrow here
  EXPECT_EQ(after, 1) << "work pushed after the wait must run";
}

TEST_P(EngineErrors, DependantsAreSkippedAndTainted) {
  VarHandle a = Var();
  VarHandle b = Var();
  VarHandle c = Var();
  std::atomic<int> ran{0};
  PushThrow(a, "boom-dep");
  engine_->PushSync([&](RunContext) { ++ran; }, cpu_, {a}, {b}, FnProperty::kNormal, 0, "reads-a");
  engine_->PushSync([&](RunContext) { ++ran; }, cpu_, {b}, {c}, FnProperty::kNormal, 0, "reads-b");
  EXPECT_EQ(WaitMessage(*engine_, c), "boom-dep");
  // One exception is rethrown once, whichever tainted variable is waited on (MXNet's rule).
  EXPECT_EQ(WaitMessage(*engine_, b), "");
  EXPECT_EQ(WaitMessage(*engine_, a), "");
  EXPECT_EQ(ran.load(), 0) << "ops reading a tainted variable must not run";
  EXPECT_EQ(b->version(), 1u);
}

TEST_P(EngineErrors, RethrownErrorNoLongerTaints) {
  // A variable written by every run of an op (its state) is tainted by a failure; once a wait
  // on the op's output has rethrown the failure, the next run must run, not inherit it.
  VarHandle state = Var();
  VarHandle out1 = Var();
  VarHandle out2 = Var();
  engine_->PushSync([](RunContext) { throw std::runtime_error("boom-state"); }, cpu_, {}, {state, out1});
  EXPECT_EQ(WaitMessage(*engine_, out1), "boom-state");
  bool ran = false;
  engine_->PushSync([&](RunContext) { ran = true; }, cpu_, {}, {state, out2});
  EXPECT_EQ(WaitMessage(*engine_, out2), "");
  EXPECT_TRUE(ran) << "an exception already rethrown must not skip later work";
  EXPECT_NO_THROW(engine_->WaitForAll());
}

TEST_P(EngineErrors, WaitForAllClearsTaintedVariables) {
  VarHandle a = Var();
  VarHandle b = Var();
  PushThrow(a, "boom-clear");
  engine_->PushSync([](RunContext) {}, cpu_, {a}, {b});
  EXPECT_THROW(engine_->WaitForAll(), std::runtime_error);
  EXPECT_EQ(WaitMessage(*engine_, a), "") << "a wait after WaitForAll must not rethrow";
  EXPECT_EQ(WaitMessage(*engine_, b), "");
  PushThrow(a, "boom-new");
  EXPECT_EQ(WaitMessage(*engine_, b), "");
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-new") << "a new failure is reported again";
}

TEST_P(EngineErrors, WritingATaintedVarIsSkippedToo) {
  VarHandle a = Var();
  PushThrow(a, "boom-w");
  bool ran = false;
  engine_->PushSync([&](RunContext) { ran = true; }, cpu_, {}, {a});
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-w");
  EXPECT_FALSE(ran);
}

TEST_P(EngineErrors, NoSkipRunsDespiteTaint) {
  VarHandle a = Var();
  VarHandle b = Var();
  PushThrow(a, "boom-ns");
  bool ran = false;
  engine_->PushSync([&](RunContext) { ran = true; }, cpu_, {a}, {b}, FnProperty::kNoSkip);
  EXPECT_EQ(WaitMessage(*engine_, b), "");
  EXPECT_TRUE(ran);
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-ns");
}

TEST_P(EngineErrors, WaitForAllRethrowsFirstUnseenOnce) {
  VarHandle a = Var();
  PushThrow(a, "boom-all");
  try {
    engine_->WaitForAll();
    FAIL() << "WaitForAll did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom-all");
  }
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_EQ(WaitMessage(*engine_, a), "");
}

TEST_P(EngineErrors, ErrorSeenByWaitForVarIsNotRethrownByWaitForAll) {
  VarHandle a = Var();
  PushThrow(a, "boom-seen");
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-seen");
  EXPECT_NO_THROW(engine_->WaitForAll());
}

TEST_P(EngineErrors, ErrorPassedToCallback) {
  VarHandle a = Var();
  std::thread helper;
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        helper = std::thread([done] { done(std::make_exception_ptr(std::runtime_error("boom-cb"))); });
      },
      cpu_, {}, {a});
  EXPECT_EQ(WaitMessage(*engine_, a), "boom-cb");
  helper.join();
}

TEST_P(EngineErrors, EngineKeepsWorkingAfterErrors) {
  for (int round = 0; round < 3; ++round) {
    VarHandle bad = Var();
    VarHandle good = Var();
    PushThrow(bad, "boom-round");
    int value = 0;
    for (int i = 0; i < 10; ++i) engine_->PushSync([&](RunContext) { ++value; }, cpu_, {}, {good});
    EXPECT_EQ(WaitMessage(*engine_, good), "");
    EXPECT_EQ(value, 10);
    EXPECT_THROW(engine_->WaitForAll(), std::runtime_error);
    EXPECT_NO_THROW(engine_->WaitForAll());
  }
}

TEST_P(EngineErrors, ReusableOperatorFailures) {
  VarHandle out = Var();
  int calls = 0;
  OprHandle op = engine_->NewOperator(
      [&](RunContext, CallbackOnComplete done) {
        ++calls;
        done(std::make_exception_ptr(std::runtime_error("boom-op")));
      },
      {}, {out});
  engine_->Push(op, cpu_);
  engine_->Push(op, cpu_);  // skipped: writes the tainted variable
  EXPECT_EQ(WaitMessage(*engine_, out), "boom-op");
  EXPECT_EQ(calls, 1);
  engine_->Push(op, cpu_);
  EXPECT_EQ(WaitMessage(*engine_, out), "boom-op");
  EXPECT_EQ(calls, 2);
  engine_->DeleteOperator(op);
  engine_->WaitForAll();
}

INSTANTIATE_TEST_SUITE_P(Types, EngineErrors, ::testing::Values(EngineType::kNaive, EngineType::kThreaded),
                         [](const auto& info) { return std::string(test::TypeName(info.param)); });

}  // namespace
}  // namespace weft

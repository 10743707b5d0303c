// The global engine at process exit: pending work finishes, workers are joined, pushes made by
// static destructors after the engine shut down still run, and WEFT_PROFILER_OUTPUT is written.
// Each case runs in a child process (gtest death-test machinery) that calls std::exit.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "weft/engine.h"

namespace weft {
namespace {

std::atomic<int> g_pending_done{0};  // ops of ExitWithPendingWork that ran

// Checks that the pending ops ran, then pushes to the global engine from a static destructor that runs after the
// engine's own at-exit shutdown (it is constructed before the engine, so destroyed after it).
struct PushesAtExit {
  ~PushesAtExit() {
    if (g_pending_done.load() != 50) std::_Exit(4);
    Engine* e = Engine::Get();
    VarHandle v = e->NewVariable();
    int x = 0;
    e->PushSync([&](RunContext) { x = 7; }, Context::cpu(0), {}, {v}, FnProperty::kNormal, 0, "late");
    e->WaitForVar(v);
    e->DeleteVariable({}, Context::cpu(0), v);
    if (x != 7) std::_Exit(3);
    std::fputs("late push ran\n", stderr);
  }
};

void ExitWithPendingWork() {
  static PushesAtExit late;
  Engine* e = Engine::Get();
  VarHandle v = e->NewVariable();
  for (int i = 0; i < 50; ++i) {
    e->PushSync(
        [](RunContext) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          ++g_pending_done;
        },
        Context::cpu(0), {}, {v}, FnProperty::kNormal, 0, "pending_at_exit");
  }
  std::exit(0);  // engine shutdown must finish the 50 ops and join, then the late push runs
}

TEST(EngineExit, PendingWorkAndLatePushesAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ExitWithPendingWork(), ::testing::ExitedWithCode(0), "late push ran");
}

void ExitWithProfilerOutput(const std::string& path) {
  ::setenv("WEFT_PROFILER_OUTPUT", path.c_str(), 1);
  Engine* e = Engine::Get();
  VarHandle v = e->NewVariable();
  e->PushSync([](RunContext) {}, Context::cpu(0), {}, {v}, FnProperty::kNormal, 0, "traced_at_exit");
  std::exit(0);
}

TEST(EngineExit, ProfilerOutputWrittenAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The threadsafe death-test child re-runs this body, so the name must not depend on the pid.
  auto path = std::filesystem::temp_directory_path() / "weft_engine_exit_profile_test.json";
  std::filesystem::remove(path);
  EXPECT_EXIT(ExitWithProfilerOutput(path.string()), ::testing::ExitedWithCode(0), "");
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "no trace at " << path;
  auto doc = nlohmann::json::parse(in);
  bool found = false;
  for (const auto& ev : doc["traceEvents"]) found |= ev["name"] == "traced_at_exit";
  EXPECT_TRUE(found) << doc.dump();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace weft

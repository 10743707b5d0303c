// The profiler records engine ops and writes Chrome trace-event JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "engine_test_util.h"
#include "weft/base.h"
#include "weft/engine.h"
#include "weft/profiler.h"

namespace weft {
namespace {

TEST(Profiler, WritesTraceWithOpNames) {
  Profiler& prof = Profiler::Get();
  prof.Clear();
  prof.SetEnabled(true);
  auto engine = test::MakeEngine(EngineType::kThreaded);
  VarHandle v = engine->NewVariable();
  engine->PushSync([](RunContext) {}, Context::cpu(0), {}, {v}, FnProperty::kNormal, 3, "alpha_op");
  engine->PushSync([](RunContext) {}, Context::cpu(0), {v}, {}, FnProperty::kNormal, 0, "beta_op");
  engine->WaitForAll();
  prof.SetEnabled(false);
  engine->PushSync([](RunContext) {}, Context::cpu(0), {v}, {}, FnProperty::kNormal, 0, "not_recorded");
  engine->WaitForAll();

  auto path = std::filesystem::temp_directory_path() / ("weft_profile_" + std::to_string(::getpid()) + ".json");
  prof.Dump(path.string());
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  nlohmann::json doc = nlohmann::json::parse(in);  // throws on invalid JSON
  std::filesystem::remove(path);

  ASSERT_TRUE(doc.contains("traceEvents"));
  std::set<std::string> names;
  std::set<int> named_threads;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "M") {
      named_threads.insert(ev["tid"].get<int>());
      continue;
    }
    EXPECT_EQ(ev["ph"], "X");
    EXPECT_GE(ev["dur"].get<double>(), 0.0);
    EXPECT_TRUE(ev.contains("ts") && ev.contains("pid") && ev.contains("tid"));
    names.insert(ev["name"].get<std::string>());
    if (ev["name"] == "alpha_op") {
      EXPECT_EQ(ev["args"]["ctx"], "cpu(0)");
      EXPECT_EQ(ev["args"]["priority"], 3);
      EXPECT_TRUE(named_threads.count(ev["tid"].get<int>())) << "the worker thread is named in the trace";
    }
  }
  EXPECT_TRUE(names.count("alpha_op"));
  EXPECT_TRUE(names.count("beta_op"));
  EXPECT_FALSE(names.count("not_recorded"));
  engine->DeleteVariable({}, Context::cpu(0), v);
  engine->WaitForAll();
  prof.Clear();
  EXPECT_EQ(prof.EventCount(), 0u);
}

TEST(Profiler, ArgsThatAreNotJsonAreKeptAsText) {
  Profiler& prof = Profiler::Get();
  prof.Clear();
  prof.SetEnabled(true);
  prof.AddEvent("custom", "test", 1000, 3000, "not json");
  prof.SetEnabled(false);
  auto doc = nlohmann::json::parse(prof.DumpToString());
  bool found = false;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["name"] == "custom") {
      found = true;
      EXPECT_EQ(ev["args"]["args"], "not json");
      EXPECT_DOUBLE_EQ(ev["dur"].get<double>(), 2.0);  // microseconds
    }
  }
  EXPECT_TRUE(found);
  prof.Clear();
}

TEST(Profiler, DumpToBadPathIsAClearError) {
  try {
    Profiler::Get().Dump("/nonexistent-dir/for/sure/trace.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/for/sure/trace.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace weft

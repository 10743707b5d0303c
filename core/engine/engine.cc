// Engine construction, settings and the process-wide instance.
#include <algorithm>
#include <cctype>
#include <string>
#include <thread>

#include "engine_impl.h"
#include "weft/base.h"
#include "weft/env.h"
#include "weft/logging.h"
#include "weft/profiler.h"
#include "weft/runtime.h"

namespace weft {

uint64_t Var::NextStamp() noexcept {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

int PositiveEnv(const char* name, int fallback) {
  return static_cast<int>(GetEnvIntInRange(name, fallback, 1, 1024, "a thread count"));
}

// Finishes the global engine's work and joins its workers at exit, then dumps the profile when
// WEFT_PROFILER_OUTPUT asked for one. The engine object itself is never freed, so pushes made by
// later static destructors still work (inline).
struct GlobalEngineAtExit {
  engine_detail::EngineImpl* engine;
  std::string profile_path;
  ~GlobalEngineAtExit() {
    engine->Shutdown();
    if (!profile_path.empty()) {
      try {
        Profiler::Get().Dump(profile_path);
      } catch (const std::exception& e) {
        LogError("engine: writing the profile requested by WEFT_PROFILER_OUTPUT failed: {}", e.what());
      }
    }
  }
};

}  // namespace

const char* FnPropertyName(FnProperty prop) noexcept {
  switch (prop) {
    case FnProperty::kNormal:
      return "normal";
    case FnProperty::kCopyFromDevice:
      return "copy_from_device";
    case FnProperty::kCopyToDevice:
      return "copy_to_device";
    case FnProperty::kCPUPrioritized:
      return "cpu_prioritized";
    case FnProperty::kAsync:
      return "async";
    case FnProperty::kDeleteVar:
      return "delete_var";
    case FnProperty::kNoSkip:
      return "no_skip";
  }
  return "unknown";
}

EngineConfig EngineConfig::FromEnv() {
  EngineConfig c;
  std::string type = Lower(GetEnvString("WEFT_ENGINE_TYPE", "threaded"));
  // MXNet's engine names are accepted too, so MXNET_ENGINE_TYPE values carry over.
  if (type == "naive" || type == "naiveengine") {
    c.type = EngineType::kNaive;
  } else if (type == "threaded" || type == "threadedengine" || type == "threadedengineperdevice") {
    c.type = EngineType::kThreaded;
  } else {
    Fail("WEFT_ENGINE_TYPE='{}' is not an engine type: use 'threaded' (default) or 'naive'", type);
  }
  c.cpu_workers = PositiveEnv("WEFT_CPU_WORKER_NTHREADS", c.cpu_workers);
  c.cpu_priority_workers = PositiveEnv("WEFT_CPU_PRIORITY_NTHREADS", c.cpu_priority_workers);
  c.device_workers = PositiveEnv("WEFT_GPU_WORKER_NTHREADS", c.device_workers);
  c.copy_workers = PositiveEnv("WEFT_GPU_COPY_NTHREADS", c.copy_workers);
  c.spin_rounds =
      static_cast<int>(GetEnvIntInRange("WEFT_ENGINE_SPIN", c.spin_rounds, 0, 10000000, "a number of spin rounds"));
  return c;
}

Engine::~Engine() = default;

Engine* Engine::Get() {
  static engine_detail::EngineImpl* engine = [] {
    // The runtime is created first so that it outlives the engine's shutdown at exit: the
    // workers' device streams must be released before the plugins shut down.
    try {
      Runtime::Get();
    } catch (const std::exception& e) {
      LogWarning("engine: the plugin runtime failed to start ({}); only cpu contexts will work", e.what());
    }
    auto* e = new engine_detail::EngineImpl(EngineConfig::FromEnv());
    engine_detail::EngineImpl::InstallForkHandlers(e);
    return e;
  }();
  static GlobalEngineAtExit at_exit = [] {
    GlobalEngineAtExit a{engine, GetEnvString("WEFT_PROFILER_OUTPUT", "")};
    if (!a.profile_path.empty()) Profiler::Get().SetEnabled(true);
    return a;
  }();
  (void)at_exit;
  return engine;
}

std::unique_ptr<Engine> Engine::Create(const EngineConfig& config) {
  auto check = [](int v, const char* what) {
    WEFT_CHECK(v >= 1 && v <= 1024, "EngineConfig::{} = {} is out of range: give a thread count from 1 to 1024", what,
               v);
  };
  check(config.cpu_workers, "cpu_workers");
  check(config.cpu_priority_workers, "cpu_priority_workers");
  check(config.device_workers, "device_workers");
  check(config.copy_workers, "copy_workers");
  WEFT_CHECK(config.spin_rounds >= 0, "EngineConfig::spin_rounds = {} is negative", config.spin_rounds);
  return std::make_unique<engine_detail::EngineImpl>(config);
}

int RecommendedCpuMathThreads() {
  int64_t math = GetEnvInt("WEFT_CPU_MATH_THREADS", 0);
  if (math > 0) return static_cast<int>(math);
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int workers = static_cast<int>(std::max<int64_t>(1, GetEnvInt("WEFT_CPU_WORKER_NTHREADS", 1)));
  return std::max(1, cores / workers);
}

}  // namespace weft

// Shared helpers for the engine tests: engines of each type, the contexts to run on, and a
// one-shot gate for holding a worker busy.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/engine.h"
#include "weft/env.h"

namespace weft::test {

inline std::unique_ptr<Engine> MakeEngine(EngineType type, int cpu_workers = 2) {
  EngineConfig c;
  c.type = type;
  c.cpu_workers = cpu_workers;
  c.cpu_priority_workers = 1;
  c.device_workers = 2;
  c.copy_workers = 1;
  return Engine::Create(c);
}

inline const char* TypeName(EngineType t) { return t == EngineType::kNaive ? "naive" : "threaded"; }

/// Seed from WEFT_TEST_SEED, or the given default (printed by the caller).
inline uint64_t TestSeed(uint64_t fallback) {
  return static_cast<uint64_t>(GetEnvInt("WEFT_TEST_SEED", static_cast<int64_t>(fallback)));
}

/// A gate threads wait on until it is opened.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace weft::test

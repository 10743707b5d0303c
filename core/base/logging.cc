#include "weft/logging.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "weft/env.h"

namespace weft {
namespace {
LogLevel LevelFromEnv() {
  auto v = GetEnv("WEFT_LOG_LEVEL");
  if (!v) return LogLevel::kWarning;
  if (*v == "debug") return LogLevel::kDebug;
  if (*v == "info") return LogLevel::kInfo;
  if (*v == "error") return LogLevel::kError;
  return LogLevel::kWarning;
}
std::atomic<int>& Level() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}
constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
}  // namespace

LogLevel GetLogLevel() noexcept { return static_cast<LogLevel>(Level().load(std::memory_order_relaxed)); }
void SetLogLevel(LogLevel level) noexcept { Level().store(static_cast<int>(level)); }

void LogMessage(LogLevel level, std::string_view message) noexcept {
  if (level < GetLogLevel()) return;
  try {
    std::string line = fmt::format("[weft {}] {}\n", kNames[static_cast<int>(level)], message);
    std::fwrite(line.data(), 1, line.size(), stderr);  // one write per line keeps lines whole
  } catch (...) {
  }
}

}  // namespace weft

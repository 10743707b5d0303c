// weft core — logging to stderr. The level comes from WEFT_LOG_LEVEL (debug|info|warning|error,
// default warning). Thread-safe: each call writes one whole line.
#pragma once

#include "weft/export.h"

#include <string_view>

#include <fmt/format.h>

namespace weft {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

/// Current threshold (from WEFT_LOG_LEVEL at first use, or SetLogLevel).
WEFT_API LogLevel GetLogLevel() noexcept;
WEFT_API void SetLogLevel(LogLevel level) noexcept;
/// Writes "[weft <level>] <message>\n" to stderr when level >= the threshold.
WEFT_API void LogMessage(LogLevel level, std::string_view message) noexcept;

template <typename... Args>
void LogDebug(fmt::format_string<Args...> f, Args&&... a) {
  if (GetLogLevel() <= LogLevel::kDebug) LogMessage(LogLevel::kDebug, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void LogInfo(fmt::format_string<Args...> f, Args&&... a) {
  if (GetLogLevel() <= LogLevel::kInfo) LogMessage(LogLevel::kInfo, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void LogWarning(fmt::format_string<Args...> f, Args&&... a) {
  if (GetLogLevel() <= LogLevel::kWarning) LogMessage(LogLevel::kWarning, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void LogError(fmt::format_string<Args...> f, Args&&... a) {
  LogMessage(LogLevel::kError, fmt::format(f, std::forward<Args>(a)...));
}

}  // namespace weft

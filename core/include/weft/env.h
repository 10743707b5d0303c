// weft core — typed reads of WEFT_* environment settings. Every setting weft reads is listed in
// README.md. A malformed value raises weft::Error naming the variable, the value and the expected
// form (it is never silently ignored).
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <optional>
#include <string>

namespace weft {

/// The variable's value, or nullopt when unset or empty.
WEFT_API std::optional<std::string> GetEnv(const char* name);
/// String setting with a default.
WEFT_API std::string GetEnvString(const char* name, const std::string& fallback);
/// Integer setting with a default. Throws weft::Error when set but not an integer.
WEFT_API int64_t GetEnvInt(const char* name, int64_t fallback);
/// Boolean setting: 1/0, true/false, yes/no, on/off (any case). Throws on anything else.
WEFT_API bool GetEnvBool(const char* name, bool fallback);

/// Checks the settings that are read where an error cannot be raised (WEFT_LOG_LEVEL, read by
/// the logger) or first by a plugin (WEFT_CPU_MATH_THREADS, read by the cpu plugin, which can only
/// warn). Runtime::Get() calls it before anything else, so a malformed value stops the program at
/// start-up. Throws weft::Error naming the variable, its value and the allowed values.
void ValidateSettings();

}  // namespace weft

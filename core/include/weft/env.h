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
/// Integer setting with a default that must lie in [lo, hi]. Throws weft::Error when set but not
/// an integer, or when the value (set or the fallback) is outside the range: the message reads
/// "NAME=V is out of range; give `what` from LO to HI" (e.g. what = "a thread count").
WEFT_API int64_t GetEnvIntInRange(const char* name, int64_t fallback, int64_t lo, int64_t hi, const char* what);
/// Boolean setting: 1/0, true/false, yes/no, on/off (any case). Throws on anything else.
WEFT_API bool GetEnvBool(const char* name, bool fallback);
/// The name of a per-device setting: "WEFT_" + `device_type` upper-cased, with every character
/// that is not a letter or digit turned into '_', + "_" + `suffix` (e.g. ("cpu", "MEM_POOL_TYPE")
/// gives "WEFT_CPU_MEM_POOL_TYPE"). Device types are plugin-chosen names, so this keeps the
/// variable a valid shell name whatever the plugin calls its device.
WEFT_API std::string DeviceEnvName(const std::string& device_type, const std::string& suffix);

/// Checks the settings that are read where an error cannot be raised (WEFT_LOG_LEVEL, read by
/// the logger) or first by a plugin (WEFT_CPU_MATH_THREADS, read by the cpu plugin, which can only
/// warn). Runtime::Get() calls it before anything else, so a malformed value stops the program at
/// start-up. Throws weft::Error naming the variable, its value and the allowed values.
void ValidateSettings();

/// The spin count weft gives libgomp (GNU OpenMP, which the cpu plugin and oneDNN use) when the
/// user sets neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT: idle OpenMP threads spin this many rounds
/// (tens of microseconds) after a parallel region, then sleep, instead of libgomp's default
/// 300 000 rounds (about a millisecond), which take cores from weft's engine threads and other
/// processes. Not 1 000 (a few microseconds): the team then slept between a small network's
/// layers and batches, and waking it cost more than the layers (the MNIST MLP's inference at 2
/// threads ran at about 300 k samples/s against 540 k with 10 000; README "Threads").
inline constexpr const char* kDefaultGompSpinCount = "10000";

/// Sets GOMP_SPINCOUNT=kDefaultGompSpinCount in the process environment unless OMP_WAIT_POLICY or
/// GOMP_SPINCOUNT is set (then nothing changes). Runtime::Get() calls it before loading plugins;
/// it has no effect when libgomp was loaded earlier in the process (it reads its settings once).
/// Not thread-safe against concurrent getenv/setenv (it runs at start-up).
WEFT_API void ApplyOpenMPDefaults();

}  // namespace weft

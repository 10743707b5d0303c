// The ISA level chosen at load (see isa_dispatch.h).
#include "isa_dispatch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace weft::cpu::isa {
namespace {

Level Detect() {
#ifdef WEFT_CPU_ISA_DISPATCH
  __builtin_cpu_init();
  if (WEFT_CPU_ISA_MAX_LEVEL >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
    return Level::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("f16c"))
    return Level::kAvx2;
#endif
  return Level::kBaseline;
}

// The machine's level lowered to WEFT_CPU_ISA when that names a lower one. Runs before any host
// exists (a static initialiser), so a bad value can only be reported on stderr.
Level FromEnvironment() {
  // On a machine below Minimum() the plugin refuses to load (MachineShortfall), so no loop runs
  // at the level returned here; it must still never be one the build has no copy of.
  const Level machine = Supported() < Minimum() ? Minimum() : Supported();
  const char* want = std::getenv("WEFT_CPU_ISA");
  if (want == nullptr || *want == '\0') return machine;
  for (Level l : {Level::kBaseline, Level::kAvx2, Level::kAvx512}) {
    if (std::strcmp(want, Name(l)) != 0) continue;
    if (l < Minimum()) {
      std::fprintf(stderr,
                   "weft cpu: WEFT_CPU_ISA=%s, but this plugin has no loops below %s (built with "
                   "WEFT_CPU_ISA_COPIES=host); using %s. Configure with -DWEFT_CPU_ISA_COPIES=all for every level\n",
                   want, Name(Minimum()), Name(Minimum()));
      return Minimum();
    }
    return l < machine ? l : machine;
  }
  std::fprintf(stderr, "weft cpu: WEFT_CPU_ISA='%s' is not one of baseline, avx2, avx512; using %s\n", want,
               Name(machine));
  return machine;
}

}  // namespace

const char* Name(Level level) {
  switch (level) {
    case Level::kAvx512:
      return "avx512";
    case Level::kAvx2:
      return "avx2";
    case Level::kBaseline:
      break;
  }
  return "baseline";
}

Level Supported() {
  static const Level level = Detect();
  return level;
}

std::string MachineShortfall() { return MachineShortfall(Supported()); }

std::string MachineShortfall(Level machine) {
  if (machine >= Minimum()) return {};
  // snprintf rather than std::string's operator+: GCC 12 warns falsely (-Warray-bounds) on the
  // concatenation of literals here.
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "weft cpu plugin: its loops were compiled for %s and up only (WEFT_CPU_ISA_COPIES=host on the "
                "machine that built it), but this CPU runs %s; rebuild the plugin here, or configure with "
                "-DWEFT_CPU_ISA_COPIES=all for a plugin that runs on any x86-64",
                Name(Minimum()), Name(machine));
  return buf;
}

Level Ceiling() {
  static const Level level = FromEnvironment();
  return level;
}

bool SetActiveForTesting(Level level) {
  if (level > Ceiling() || level < Minimum()) return false;
  detail::ActiveSlot().store(static_cast<int>(level), std::memory_order_relaxed);
  return true;
}

namespace detail {
std::atomic<int>& ActiveSlot() {
  static std::atomic<int> slot{static_cast<int>(Ceiling())};
  return slot;
}
}  // namespace detail

}  // namespace weft::cpu::isa

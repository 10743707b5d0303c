// A build of the cpu kernels' dispatch (plugins/cpu/kernels/isa_dispatch.h) with one ISA copy of
// the hot loops: WEFT_CPU_ISA_MIN_LEVEL = WEFT_CPU_ISA_MAX_LEVEL, as WEFT_CPU_ISA_COPIES=host
// compiles the main preset's plugin. Compiled at avx2 (1) and at avx512 (2), and run on whatever
// the CI machine is: on a machine below the copy's level the plugin must refuse to load
// (MachineShortfall) and nothing here may run the copy; at or above it the copy is the only
// level, whatever the hook or WEFT_CPU_ISA ask for.
#include <gtest/gtest.h>

#include <string>

#include "isa_dispatch.h"
#include "run_self.h"

namespace wtest {
namespace {

namespace isa = weft::cpu::isa;
using isa::Level;

constexpr Level kCopy = static_cast<Level>(WEFT_CPU_ISA_MIN_LEVEL);

// Whether this CPU runs kCopy, asked of CPUID here rather than through isa_dispatch.cc: the
// same features its Detect() requires for the level.
bool MachineRunsTheCopy() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("f16c");
  if (kCopy == Level::kAvx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
}

TEST(IsaOneCopy, RefusesOnlyAMachineBelowItsCopy) {
  EXPECT_EQ(isa::Minimum(), kCopy);
  EXPECT_EQ(isa::MachineShortfall().empty(), MachineRunsTheCopy()) << isa::MachineShortfall();
  if (MachineRunsTheCopy()) {
    EXPECT_EQ(isa::Supported(), kCopy) << "a machine above the copy reports the copy's level";
  }
  // The answer for every machine level: empty from the copy's level up; below it, the error the
  // plugin fails to load with, naming the level it needs, the machine's, and the fix.
  for (Level machine : {Level::kBaseline, Level::kAvx2, Level::kAvx512}) {
    SCOPED_TRACE(isa::Name(machine));
    const std::string why = isa::MachineShortfall(machine);
    if (machine >= kCopy) {
      EXPECT_EQ(why, "");
      continue;
    }
    EXPECT_NE(why.find(std::string("compiled for ") + isa::Name(kCopy) + " and up"), std::string::npos) << why;
    EXPECT_NE(why.find(std::string("this CPU runs ") + isa::Name(machine) + ";"), std::string::npos) << why;
    EXPECT_NE(why.find("-DWEFT_CPU_ISA_COPIES=all"), std::string::npos) << why;
  }
}

TEST(IsaOneCopy, RunsItsCopyWhateverTheHookAsks) {
  if (!MachineRunsTheCopy()) GTEST_SKIP() << "this CPU is below " << isa::Name(kCopy) << ": the copy cannot run here";
  EXPECT_EQ(isa::Ceiling(), kCopy);
  EXPECT_EQ(isa::Active(), kCopy);
  for (Level l : {Level::kBaseline, Level::kAvx2, Level::kAvx512}) {
    EXPECT_EQ(isa::SetActiveForTesting(l), l == kCopy) << isa::Name(l);
    EXPECT_EQ(isa::Active(), kCopy) << "after asking for " << isa::Name(l);
  }
  // The one copy runs the callable once, and the loop gives the same sum as written.
  int calls = 0;
  float sum = 0.0f;
  isa::Dispatch([&] {
    ++calls;
    for (int i = 1; i <= 64; ++i) sum += static_cast<float>(i);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(sum, 2080.0f);
}

// Run in a child with a lower WEFT_CPU_ISA by the test below.
TEST(IsaOneCopy, CeilingIsTheCopy) {
  if (!MachineRunsTheCopy()) GTEST_SKIP() << "this CPU is below " << isa::Name(kCopy);
  EXPECT_EQ(isa::Ceiling(), kCopy);
  EXPECT_EQ(isa::Active(), kCopy);
}

TEST(IsaOneCopy, RaisesALowerWeftCpuIsaToItsCopy) {
  if (!MachineRunsTheCopy()) GTEST_SKIP() << "this CPU is below " << isa::Name(kCopy);
  int status = -1;
  const std::string out = RunSelf("IsaOneCopy.CeilingIsTheCopy", "WEFT_CPU_ISA=baseline", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_NE(out.find(std::string("WEFT_CPU_ISA=baseline, but this plugin has no loops below ") + isa::Name(kCopy)),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace wtest

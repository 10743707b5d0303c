// Running one test of the current test binary again in a child process with an environment
// variable set: for settings a process reads once at start-up (WEFT_CPU_ISA, read when the cpu
// kernels load), which a test cannot change in its own process.
#pragma once

#include <unistd.h>

#include <string>

#include "run_command.h"

namespace wtest {

/// Runs this test binary's `test` (a --gtest_filter pattern) with `assignment` (one or more
/// "NAME=value" words, no shell quoting) in its environment, under RunCommand's deadline of
/// 5 minutes; returns its stdout and stderr together and stores the wait status in *status (0: the
/// child passed).
inline std::string RunSelf(const std::string& test, const std::string& assignment, int* status) {
  return RunCommand(assignment + " /proc/" + std::to_string(::getpid()) + "/exe --gtest_filter=" + test + " 2>&1",
                    status);
}

}  // namespace wtest

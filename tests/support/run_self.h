// Running one test of the current test binary again in a child process with an environment
// variable set: for settings a process reads once at start-up (WEFT_CPU_ISA, read when the cpu
// kernels load), which a test cannot change in its own process.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace wtest {

/// Runs this test binary's `test` (a --gtest_filter pattern) with `assignment` ("NAME=value",
/// no shell quoting) in its environment, under a deadline of 5 minutes (timeout(1)); returns its
/// stdout and stderr together and stores pclose's status in *status (0: the child passed).
inline std::string RunSelf(const std::string& test, const std::string& assignment, int* status) {
  const std::string cmd =
      assignment + " timeout 300 /proc/" + std::to_string(::getpid()) + "/exe --gtest_filter=" + test + " 2>&1";
  *status = -1;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  *status = ::pclose(p);
  return out;
}

}  // namespace wtest

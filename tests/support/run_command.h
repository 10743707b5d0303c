// Running a shell command from a test under a deadline: the project's rule is that every wait on
// another process has one, and a child that hangs must fail its test, not stall the suite until
// CTest's own timeout kills the whole binary (and with it every other test's result).
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace wtest {

/// Runs `command` with /bin/sh under a deadline of `deadline_s` seconds (timeout(1): SIGTERM to
/// the command's process group when it passes, SIGKILL 10 s later). Returns what the command wrote
/// to stdout (stderr too when the command redirects it there), with a line naming the deadline
/// appended when it passed; stores pclose's wait status in *status when `status` is not null
/// (0: the command exited with 0; WEXITSTATUS 124, or 137 after the SIGKILL: the deadline passed;
/// -1: popen failed).
/// Thread-safe as popen is; the command is the caller's, quoted for the shell as the caller needs.
inline std::string RunCommand(const std::string& command, int* status = nullptr, int deadline_s = 300) {
  std::string quoted;  // the command as one single-quoted word for sh -c
  for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const std::string line = "timeout -k 10 " + std::to_string(deadline_s) + " /bin/sh -c '" + quoted + "'";
  if (status != nullptr) *status = -1;
  const auto start = std::chrono::steady_clock::now();
  FILE* p = ::popen(line.c_str(), "r");
  if (p == nullptr) return "popen failed for: " + command;
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  const int st = ::pclose(p);
  if (status != nullptr) *status = st;
  // 137 is also what sh reports for a command killed by SIGKILL for another reason (the OOM
  // killer): only a run as long as the deadline is one that passed it.
  const bool late = std::chrono::steady_clock::now() - start >= std::chrono::seconds(deadline_s);
  if (late && WIFEXITED(st) && (WEXITSTATUS(st) == 124 || WEXITSTATUS(st) == 137))
    out += "\n[the deadline of " + std::to_string(deadline_s) + " s passed: " + command + "]\n";
  return out;
}

}  // namespace wtest

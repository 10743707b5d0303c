// The fixture of the distributed KVStore tests: processes started with a deadline for every wait
// (dist_test.cc: Gloo collectives; dist_ps_test.cc: parameter servers).
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/internal/rendezvous.h"

namespace weft_dist_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Proc {
  pid_t pid = -1;
  std::string log;  // file with its stdout and stderr
  int status = -1;
  double exited_s = -1;  // seconds since the test's start when it exited
};

class Dist : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weft-dist-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    start_ = Clock::now();
  }
  void TearDown() override {
    for (auto& p : procs_)
      if (p.status < 0 && p.pid > 0) {
        ::kill(p.pid, SIGKILL);
        ::waitpid(p.pid, nullptr, 0);
      }
    if (!HasFailure()) fs::remove_all(dir_);
  }

  double Now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Starts argv with env added; output goes to a file in the test's directory.
  size_t Start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& name) {
    Proc p;
    p.log = (dir_ / (name + ".log")).string();
    p.pid = ::fork();
    if (p.pid == 0) {
      FILE* f = std::fopen(p.log.c_str(), "w");
      ::dup2(fileno(f), 1);
      ::dup2(fileno(f), 2);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    procs_.push_back(p);
    return procs_.size() - 1;
  }

  // Starts n dist_worker processes with a rendezvous of the given kind.
  void StartWorkers(int n, const std::vector<std::string>& args, std::map<std::string, std::string> env) {
    env["WEFT_NUM_WORKERS"] = std::to_string(n);
    if (env.count("WEFT_RENDEZVOUS") == 0) env["WEFT_RENDEZVOUS"] = "file:" + (dir_ / "rdv").string();
    for (int r = 0; r < n; ++r) {
      env["WEFT_RANK"] = std::to_string(r);
      std::vector<std::string> argv = {DIST_WORKER};
      argv.insert(argv.end(), args.begin(), args.end());
      Start(argv, env, "rank" + std::to_string(r));
    }
  }

  // Starts `n` parameter servers (weft-launch --serve) for a job of `workers` workers.
  void StartServers(int n, int workers, std::map<std::string, std::string> env) {
    env["WEFT_ROLE"] = "server";
    env["WEFT_NUM_SERVERS"] = std::to_string(n);
    env["WEFT_NUM_WORKERS"] = std::to_string(workers);
    if (env.count("WEFT_RENDEZVOUS") == 0) env["WEFT_RENDEZVOUS"] = "file:" + (dir_ / "rdv").string();
    for (int s = 0; s < n; ++s) {
      env["WEFT_RANK"] = std::to_string(s);
      Start({WEFT_LAUNCH, "--serve"}, env, "server" + std::to_string(s));
    }
  }

  // Waits until process i's output contains `text` (true) or `deadline_s` passes (false).
  bool WaitForOutput(size_t i, const std::string& text, double deadline_s) {
    while (Now() < deadline_s) {
      if (Log(i).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Waits for process i until `deadline_s` (seconds since the start); kills it and fails after.
  void Wait(size_t i, double deadline_s) {
    Proc& p = procs_[i];
    while (p.status < 0) {
      int st = 0;
      if (::waitpid(p.pid, &st, WNOHANG) == p.pid) {
        p.status = st;
        p.exited_s = Now();
        break;
      }
      if (Now() > deadline_s) {
        ::kill(p.pid, SIGKILL);
        ::waitpid(p.pid, &st, 0);
        p.status = st;
        ADD_FAILURE() << "process " << i << " still ran at its deadline (" << deadline_s << " s); output:\n" << Log(i);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  void WaitAll(double deadline_s) {
    for (size_t i = 0; i < procs_.size(); ++i) Wait(i, deadline_s);
  }
  // Two dist_worker processes in `mode` (file rendezvous); each must exit 0 printing "<mode> OK".
  void RunTwoWorkers(const std::string& mode) {
    StartWorkers(2, {mode}, {});
    WaitAll(60);
    for (size_t i = 0; i < procs_.size(); ++i) {
      EXPECT_EQ(ExitCode(i), 0) << Log(i);
      EXPECT_NE(Log(i).find(mode + " OK"), std::string::npos) << Log(i);
    }
  }

  std::string Log(size_t i) const {
    std::ifstream in(procs_[i].log);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  int ExitCode(size_t i) const {
    const int st = procs_[i].status;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

  fs::path dir_;
  Clock::time_point start_;
  std::vector<Proc> procs_;
};

// Sums over the log lines holding `marker` of the numbers `format` reads (sscanf, up to three
// %llu) from the text after the line's first ": " past the marker; `lines` counts those lines.
// (Plain parsing: GCC 12's std::regex trips -Wmaybe-uninitialized in the sanitizer builds.)
struct LogCounts {
  unsigned long long a = 0, b = 0, c = 0;
  int lines = 0;
};
inline LogCounts SumLogLines(const std::string& log, const std::string& marker, const char* format) {
  LogCounts sum;
  for (size_t at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
    const size_t colon = log.find(": ", at + marker.size());
    const size_t eol = log.find('\n', at);
    if (colon == std::string::npos || colon > eol) continue;
    const std::string rest = log.substr(colon + 2, eol == std::string::npos ? std::string::npos : eol - colon - 2);
    unsigned long long v[3] = {0, 0, 0};
    if (std::sscanf(rest.c_str(), format, &v[0], &v[1], &v[2]) < 1) continue;
    sum.a += v[0];
    sum.b += v[1];
    sum.c += v[2];
    ++sum.lines;
  }
  return sum;
}

}  // namespace weft_dist_test

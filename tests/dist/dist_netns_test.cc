// A network partition on this machine: rank 1 of a two-worker Gloo dist_sync job (under
// weft-launch) runs in its own network namespace, reached from the host's namespace by a veth pair
// on a private /30; the test takes the host's end of the link down mid-run. Unlike a killed process,
// nothing closes a connection: both ranks only stop hearing from each other, so the deadline
// (--kvstore-timeout 2) must end the job, each rank naming the other as unreachable (README:
// "rank 1 is unreachable (network failure between the ranks)"), the launcher exiting non-zero,
// and no process may be left behind. The workers ignore the launcher's SIGTERM (the wrapper's
// `trap '' TERM` is inherited across exec), so the rank that fails second still reports before
// the launcher's SIGKILL (--kill-grace 20) ends it.
//
// Needs root (CAP_NET_ADMIN), iproute2 and veth support: without them the test skips, saying why.
// Names (namespace, links) and the subnet derive from the test's pid, so parallel runs do not
// collide; TearDown removes the namespace and the link even after a failure. Label: netns.
#include <dirent.h>

#include <cstdio>

#include "dist_fixture.h"
#include "require.h"
#include "run_command.h"

namespace {

using weft_dist_test::Dist;

// Runs a shell command; returns its exit status and (in `out`) its output.
int Sh(const std::string& cmd, std::string* out = nullptr) {
  int st = -1;
  std::string text = wtest::RunCommand(cmd + " 2>&1", &st);
  if (out != nullptr) *out = std::move(text);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Pids of processes whose environment holds `marker` (KEY=VALUE).
std::vector<int> ProcessesWith(const std::string& marker) {
  std::vector<int> pids;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return pids;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(marker + '\0') != std::string::npos) pids.push_back(pid);
  }
  ::closedir(d);
  return pids;
}

class Netns : public Dist {
 protected:
  void SetUp() override {
    Dist::SetUp();
    if (::geteuid() != 0) WEFT_SKIP_UNLESS_REQUIRED() << "needs root (CAP_NET_ADMIN) to create a network namespace";
    const int id = static_cast<int>(::getpid());
    const std::string tag = "wft" + std::to_string(id % 1000000);  // link names: at most 15 characters
    ns_ = tag + "ns";
    host_link_ = tag + "a";
    ns_link_ = tag + "b";
    // 10.213.X.Y/30: .Y+1 on the host's end, .Y+2 in the namespace.
    const std::string net = "10.213." + std::to_string(id % 250) + ".";
    const int y = 4 * ((id / 250) % 62);
    host_addr_ = net + std::to_string(y + 1);
    ns_addr_ = net + std::to_string(y + 2);
    std::string out;
    if (Sh("ip netns add " + ns_, &out) != 0)
      WEFT_SKIP_UNLESS_REQUIRED() << "cannot create a network namespace (ip netns add: " << out
                                  << "); needs iproute2 and CAP_NET_ADMIN";
    made_ns_ = true;
    if (Sh("ip netns exec " + ns_ + " true", &out) != 0)
      WEFT_SKIP_UNLESS_REQUIRED() << "cannot run a process in a network namespace (ip netns exec: " << out << ")";
    if (Sh("ip link add " + host_link_ + " type veth peer name " + ns_link_, &out) != 0)
      WEFT_SKIP_UNLESS_REQUIRED() << "cannot create a veth pair (" << out << ")";
    made_link_ = true;
    const std::string in_ns = "ip netns exec " + ns_ + " ";
    for (const std::string& cmd :
         {"ip link set " + ns_link_ + " netns " + ns_, "ip addr add " + host_addr_ + "/30 dev " + host_link_,
          "ip link set " + host_link_ + " up", in_ns + "ip addr add " + ns_addr_ + "/30 dev " + ns_link_,
          in_ns + "ip link set " + ns_link_ + " up", in_ns + "ip link set lo up"})
      ASSERT_EQ(Sh(cmd, &out), 0) << cmd << ": " << out;
  }

  void TearDown() override {
    Dist::TearDown();  // kills the processes this test started (the launcher)
    if (made_ns_) {
      std::string pids;
      Sh("ip netns pids " + ns_, &pids);
      std::istringstream in(pids);
      for (int pid = 0; in >> pid;) ::kill(pid, SIGKILL);
    }
    for (int pid : ProcessesWith(marker_)) ::kill(pid, SIGKILL);
    if (made_link_) Sh("ip link del " + host_link_);  // removes both ends
    if (made_ns_) Sh("ip netns del " + ns_);
  }

  std::string ns_, host_link_, ns_link_, host_addr_, ns_addr_;
  std::string marker_ = "WEFT_NETNS_TEST=" + std::to_string(::getpid());
  bool made_ns_ = false, made_link_ = false;
};

TEST_F(Netns, CutOffWorkerIsNamedAndTheJobEndsAtTheDeadline) {
  // Rank 1 enters the namespace (ip netns exec execs the worker: the launcher's process group and
  // its SIGTERM still reach it); every rank binds Gloo to its end of the link. The file store works
  // across network namespaces (one filesystem).
  const std::string script = "trap '' TERM; if [ \"$WEFT_RANK\" = 1 ]; then WEFT_GLOO_HOSTNAME=" + ns_addr_ +
                             " exec ip netns exec " + ns_ + " \"$0\" \"$@\"; fi; WEFT_GLOO_HOSTNAME=" + host_addr_ +
                             " exec \"$0\" \"$@\"";
  Start({WEFT_LAUNCH, "-n",
         "2",         "--rendezvous",
         "file",      "--timeout",
         "120",       "--kill-grace",
         "20",        "--kvstore-timeout",
         "2",         "--env",
         marker_,     "--",
         "/bin/sh",   "-c",
         script,      DIST_WORKER,
         "fault",     "-1",
         "none",      "0"},
        {}, "launcher");
  ASSERT_TRUE(WaitForOutput(0, "[0] round 10", 60)) << Log(0);
  ASSERT_TRUE(WaitForOutput(0, "[1] round 10", 60)) << Log(0);
  std::string out;
  ASSERT_EQ(Sh("ip link set " + host_link_ + " down", &out), 0) << out;
  const double cut = Now();
  // Only the deadline can end the job; the job's own --timeout (120 s) must not be what ends it.
  Wait(0, cut + 60);
  const std::string log = Log(0);
  EXPECT_NE(ExitCode(0), 0) << log;
  EXPECT_EQ(log.find("deadline of 120 s passed"), std::string::npos) << log;
  // Each rank names the other as unreachable (neither closed a connection: all each knows is that
  // no data came), as the README says.
  for (const auto& [prefix, peer] : {std::pair{"[0] caught: ",
                                               "rank 1 is unreachable (network failure between the "
                                               "ranks)"},
                                     std::pair{"[1] caught: ",
                                               "rank 0 is unreachable (network failure between the "
                                               "ranks)"}}) {
    const size_t at = log.find(prefix);
    ASSERT_NE(at, std::string::npos) << prefix << "missing:\n" << log;
    const std::string line = log.substr(at, log.find('\n', at) - at);
    EXPECT_NE(line.find(peer), std::string::npos) << line;
    std::printf("%s\n", line.c_str());
  }
  EXPECT_NE(log.find("weft-launch: "), std::string::npos) << log;
  // Nothing left behind: no process of the job, none in the namespace.
  EXPECT_TRUE(ProcessesWith(marker_).empty());
  Sh("ip netns pids " + ns_, &out);
  EXPECT_EQ(out, "");
  std::printf("the job ended %.2f s after the link went down (deadline 2 s, kill grace 20 s)\n",
              procs_[0].exited_s - cut);
}

}  // namespace

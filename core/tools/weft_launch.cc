// weft-launch: starts the processes of a distributed job (MXNet's tools/launch.py, strict).
//
//   weft-launch -n 2 [--timeout 600] [--rendezvous tcp|file] -- ./train_mnist --kvstore dist_sync
//
//   weft-launch -n 2 -s 2 -- ./train_mnist --kvstore dist_async     (2 workers, 2 parameter servers)
//
// --launcher local (the only launcher built so far) starts N worker processes on this host, each
// with WEFT_ROLE=worker, WEFT_RANK=i, WEFT_NUM_WORKERS=N, WEFT_NUM_SERVERS=S, WEFT_RENDEZVOUS (a
// TCP store this launcher serves on 127.0.0.1, or a fresh directory for a file store) and MXNet's
// DMLC_ROLE, DMLC_NUM_WORKER, DMLC_NUM_SERVER, DMLC_PS_ROOT_URI/PORT, and (unless either is set)
// WEFT_CPU_MATH_THREADS = OMP_NUM_THREADS = the host's cores / processes; with -s S also S parameter
// servers (MXNet launch.py's -s): this program run as `weft-launch --serve` with WEFT_ROLE=server
// and WEFT_RANK = the server's rank (KVStore::RunServer). Each output line is prefixed with
// "[rank] " (workers) or "[s<rank>] " (servers). When every worker has ended successfully the
// servers are asked to stop (SIGTERM: they finish cleanly) and the job succeeds. When a process fails (non-zero exit or
// a signal) or the job's deadline passes, the launcher names it, stops the others (SIGTERM, then SIGKILL after
// --kill-grace seconds, to the whole process group) and exits non-zero: the failed process's exit status, 128 + its
// signal, or 124 for the deadline. Children get SIGKILL if the launcher itself dies (PR_SET_PDEATHSIG), so nothing is
// left behind.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "weft/internal/rendezvous.h"
#include "weft/kvstore.h"

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_signal{0};

struct Child {
  int rank = 0;
  bool server = false;
  std::string label;  // "0" for worker 0, "s0" for server 0 (output prefix)
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  std::string out_buf, err_buf;
  bool running = true;
  int status = 0;
};

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

int ExitCodeFor(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status) != 0 ? WEXITSTATUS(status) : 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Writes complete lines of `buf` to `out` with the rank prefix; `flush` writes the rest too.
void EmitLines(const std::string& label, std::string* buf, FILE* out, bool flush) {
  size_t start = 0;
  for (size_t nl; (nl = buf->find('\n', start)) != std::string::npos; start = nl + 1)
    std::fprintf(out, "[%s] %.*s\n", label.c_str(), static_cast<int>(nl - start), buf->data() + start);
  if (flush && start < buf->size()) {
    std::fprintf(out, "[%s] %s\n", label.c_str(), buf->c_str() + start);
    start = buf->size();
  }
  buf->erase(0, start);
  std::fflush(out);
}

// Reads what is available on the children's pipes (waits up to `wait_ms`).
void PumpOutput(std::vector<Child>& children, int wait_ms) {
  std::vector<pollfd> fds;
  std::vector<std::pair<Child*, bool>> who;  // (child, is_stderr)
  for (auto& c : children) {
    if (c.out_fd >= 0) fds.push_back({c.out_fd, POLLIN, 0}), who.push_back({&c, false});
    if (c.err_fd >= 0) fds.push_back({c.err_fd, POLLIN, 0}), who.push_back({&c, true});
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    return;
  }
  if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return;
  char buf[65536];
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    auto [c, is_err] = who[i];
    int& fd = is_err ? c->err_fd : c->out_fd;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    std::string& b = is_err ? c->err_buf : c->out_buf;
    if (n > 0) {
      b.append(buf, static_cast<size_t>(n));
      EmitLines(c->label, &b, is_err ? stderr : stdout, false);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      EmitLines(c->label, &b, is_err ? stderr : stdout, true);
      ::close(fd);
      fd = -1;
    }
  }
}

// Reaps exited children; returns the ranks that ended since the last call.
std::vector<Child*> Reap(std::vector<Child>& children) {
  std::vector<Child*> ended;
  for (auto& c : children) {
    if (!c.running) continue;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
      c.running = false;
      c.status = status;
      ended.push_back(&c);
    }
  }
  return ended;
}

size_t Running(const std::vector<Child>& children) {
  size_t n = 0;
  for (const auto& c : children) n += c.running ? 1 : 0;
  return n;
}

// "rank 3" or "server 1", for messages.
std::string Name(const Child& c) { return (c.server ? "server " : "rank ") + std::to_string(c.rank); }

bool WorkersSucceeded(const std::vector<Child>& children) {
  for (const auto& c : children)
    if (!c.server && (c.running || c.status != 0)) return false;
  return true;
}

// --serve: this process is parameter server WEFT_RANK (KVStore::RunServer) until SIGTERM/SIGINT.
int Serve() {
  struct sigaction sa {};
  sa.sa_handler = [](int sig) { g_signal.store(sig); };
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  try {
    weft::KVStore::RunServer([] { return g_signal.load() != 0; });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-launch --serve: %s\n", e.what());
    return 1;
  }
  return 0;
}

// SIGTERM to every running child's group, SIGKILL after `grace`; reaps them all.
void StopAll(std::vector<Child>& children, pid_t pgid, double grace_s) {
  if (pgid > 0) ::kill(-pgid, SIGTERM);
  const auto kill_at = Clock::now() + std::chrono::duration<double>(grace_s);
  while (Running(children) > 0 && Clock::now() < kill_at) {
    PumpOutput(children, 20);
    for (Child* c : Reap(children))
      std::fprintf(stderr, "weft-launch: %s (pid %d) %s\n", Name(*c).c_str(), c->pid, Describe(c->status).c_str());
  }
  if (Running(children) > 0) {
    std::fprintf(stderr, "weft-launch: %zu process(es) ignored SIGTERM for %.1f s; sending SIGKILL\n",
                 Running(children), grace_s);
    if (pgid > 0) ::kill(-pgid, SIGKILL);
    for (auto& c : children)
      if (c.running) ::kill(c.pid, SIGKILL);
  }
  while (Running(children) > 0) {
    PumpOutput(children, 20);
    Reap(children);
  }
  // Children may have left grandchildren in the group: make sure none survives.
  if (pgid > 0) ::kill(-pgid, SIGKILL);
  for (int i = 0; i < 50 && std::any_of(children.begin(), children.end(), [](auto& c) { return c.out_fd >= 0; }); ++i)
    PumpOutput(children, 10);
}

pid_t Spawn(Child& c, pid_t pgid, const std::vector<std::string>& cmd, const std::map<std::string, std::string>& env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    std::perror("weft-launch: pipe");
    std::exit(1);
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("weft-launch: fork");
    std::exit(1);
  }
  if (pid == 0) {
    ::setpgid(0, pgid);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "weft-launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pgid == 0 ? pid : pgid);  // also in the parent: no race with kill(-pgid)
  ::close(out[1]);
  ::close(err[1]);
  c.pid = pid;
  c.out_fd = out[0];
  c.err_fd = err[0];
  return pid;
}

// --env's KEY=VALUE words as a map; false (after saying which) when one is not KEY=VALUE.
bool ParseExtraEnv(const std::vector<std::string>& words, std::map<std::string, std::string>* out) {
  for (const auto& kv : words) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "weft-launch: --env '%s' is not KEY=VALUE\n", kv.c_str());
      return false;
    }
    (*out)[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return true;
}

// The rendezvous every process of the job meets at: a TCP store served by this launcher (kept
// in *server) or a new temporary directory (its path in *dir, removed when the job ends); sets
// the variables naming it. False (after saying why) when it cannot be made.
bool SetUpRendezvous(const std::string& rendezvous, std::map<std::string, std::string>* env,
                     std::unique_ptr<weft::TcpStoreServer>* server, std::string* dir) {
  try {
    if (rendezvous == "tcp") {
      *server = std::make_unique<weft::TcpStoreServer>("127.0.0.1", 0);
      (*env)["WEFT_RENDEZVOUS"] = "tcp:127.0.0.1:" + std::to_string((*server)->port());
      (*env)["DMLC_PS_ROOT_URI"] = "127.0.0.1";
      (*env)["DMLC_PS_ROOT_PORT"] = std::to_string((*server)->port());
    } else {
      std::string tmpl = (std::filesystem::temp_directory_path() / "weft-rdv-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      *dir = tmpl;
      (*env)["WEFT_RENDEZVOUS"] = "file:" + *dir;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-launch: cannot set up the rendezvous: %s\n", e.what());
    return false;
  }
  return true;
}

// The variables every process of the job gets besides the rendezvous's (MXNet's DMLC_ names
// beside weft's own).
void AddJobEnvironment(int workers, int servers, double kv_timeout_s, std::map<std::string, std::string>* envp) {
  std::map<std::string, std::string>& env = *envp;
  env["WEFT_NUM_WORKERS"] = env["DMLC_NUM_WORKER"] = std::to_string(workers);
  env["WEFT_NUM_SERVERS"] = env["DMLC_NUM_SERVER"] = std::to_string(servers);
  env["WEFT_ROLE"] = env["DMLC_ROLE"] = "worker";
  if (kv_timeout_s > 0) env["WEFT_KVSTORE_TIMEOUT"] = std::to_string(static_cast<int64_t>(kv_timeout_s + 0.5));
  // The processes of the job share this host's cores: without a limit each would size its math
  // thread pools (OpenMP, OpenBLAS, the CPU plugin) for all of them, and their spinning threads
  // would steal each other's cores (measured: 2 workers of train_mnist on 2 cores ran 2-2.5x
  // slower). Split the cores unless the user set the counts (torchrun sets OMP_NUM_THREADS=1).
  if (std::getenv("WEFT_CPU_MATH_THREADS") == nullptr && std::getenv("OMP_NUM_THREADS") == nullptr) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string share = std::to_string(std::max(1u, cores / static_cast<unsigned>(workers + servers)));
    env["WEFT_CPU_MATH_THREADS"] = env["OMP_NUM_THREADS"] = share;
  }
}

// Starts the workers (running `cmd`) and then the servers (this program with --serve: `self`),
// all in the first one's process group; returns that group's id.
pid_t StartAll(std::vector<Child>& children, int workers, const std::vector<std::string>& cmd, const std::string& self,
               const std::map<std::string, std::string>& env) {
  pid_t pgid = 0;
  for (size_t i = 0; i < children.size(); ++i) {
    Child& c = children[i];
    c.server = static_cast<int>(i) >= workers;
    c.rank = c.server ? static_cast<int>(i) - workers : static_cast<int>(i);
    c.label = (c.server ? "s" : "") + std::to_string(c.rank);
    std::map<std::string, std::string> e = env;
    e["WEFT_RANK"] = std::to_string(c.rank);
    if (c.server) {
      e["WEFT_ROLE"] = e["DMLC_ROLE"] = "server";
      e["DMLC_SERVER_ID"] = std::to_string(c.rank);
      e.erase("DMLC_RANK");
    } else {
      e["DMLC_RANK"] = std::to_string(c.rank);
    }
    const std::vector<std::string> argv = c.server ? std::vector<std::string>{self, "--serve"} : cmd;
    const pid_t pid = Spawn(c, pgid, argv, e);
    if (pgid == 0) pgid = pid;
  }
  return pgid;
}

// Forwards the processes' output until the job ends: every worker succeeded (the servers are then
// no longer needed), one process failed, a signal came, or the deadline (timeout_s > 0) passed.
// Returns the launcher's exit code for the last three (0 otherwise); the caller stops the rest.
int Supervise(std::vector<Child>& children, bool has_servers, double timeout_s) {
  const auto start = Clock::now();
  int exit_code = 0;
  while (Running(children) > 0) {
    PumpOutput(children, 50);
    // Of the processes that ended together, a killed one is the likely cause; name it first.
    Child* failed = nullptr;
    for (Child* c : Reap(children)) {
      if (c->status == 0) continue;
      if (failed == nullptr || (WIFSIGNALED(c->status) && !WIFSIGNALED(failed->status))) failed = c;
    }
    if (failed != nullptr) {
      std::fprintf(stderr, "weft-launch: %s (pid %d) %s; stopping the other %zu process(es)\n", Name(*failed).c_str(),
                   failed->pid, Describe(failed->status).c_str(), Running(children));
      for (const auto& c : children)
        if (!c.running && c.status != 0 && &c != failed)
          std::fprintf(stderr, "weft-launch: %s (pid %d) %s too\n", Name(c).c_str(), c.pid, Describe(c.status).c_str());
      exit_code = ExitCodeFor(failed->status);
    }
    if (exit_code != 0) break;
    // Every worker is done: the servers are no longer needed (they end cleanly on SIGTERM).
    if (has_servers && WorkersSucceeded(children)) break;
    if (g_signal.load() != 0) {
      std::fprintf(stderr, "weft-launch: received signal %d; stopping the job\n", g_signal.load());
      exit_code = 128 + g_signal.load();
      break;
    }
    if (timeout_s > 0 && Clock::now() - start > std::chrono::duration<double>(timeout_s)) {
      std::string ranks;
      for (auto& c : children)
        if (c.running) ranks += (ranks.empty() ? "" : ", ") + c.label;
      std::fprintf(stderr,
                   "weft-launch: the job's deadline of %.0f s passed; rank(s) %s still running; stopping them\n",
                   timeout_s, ranks.c_str());
      exit_code = 124;
      break;
    }
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft-launch: start the processes of a distributed weft job and stop them all when one fails"};
  int workers = 1, servers = 0;
  std::string launcher = "local", rendezvous = "tcp";
  double timeout_s = 0, grace_s = 5, kv_timeout_s = 0;
  std::vector<std::string> extra_env;
  app.add_option("-n,--num-workers", workers, "number of worker processes")->check(CLI::Range(1, 4096));
  app.add_option("-s,--num-servers", servers,
                 "parameter servers (dist_async, or dist_sync with --env WEFT_KVSTORE_TRANSPORT=zmq)")
      ->check(CLI::Range(0, 4096));
  bool serve = false;
  app.add_flag("--serve", serve, "run this process as a parameter server of the job in the environment (used by -s)");
  app.add_option("--launcher", launcher, "local (this host); ssh, mpi and slurm are not built yet");
  app.add_option("--rendezvous", rendezvous, "tcp (a store served by this launcher) or file (a temporary directory)")
      ->check(CLI::IsMember({"tcp", "file"}));
  app.add_option("--timeout", timeout_s, "deadline for the whole job in seconds (0: none)");
  app.add_option("--kill-grace", grace_s, "seconds between SIGTERM and SIGKILL when stopping the job");
  app.add_option("--kvstore-timeout", kv_timeout_s, "sets WEFT_KVSTORE_TIMEOUT (per-collective deadline, s)");
  app.add_option("--env", extra_env, "extra KEY=VALUE for every process");
  app.prefix_command();
  CLI11_PARSE(app, argc, argv);
  if (serve) return Serve();
  std::vector<std::string> cmd = app.remaining();
  if (!cmd.empty() && cmd[0] == "--") cmd.erase(cmd.begin());
  if (cmd.empty()) {
    std::fprintf(stderr, "weft-launch: no command given; usage: weft-launch -n 2 -- ./program args...\n");
    return 2;
  }
  if (launcher != "local") {
    std::fprintf(stderr,
                 "weft-launch: --launcher %s is not built yet; only 'local' is. Under mpirun or srun, run the "
                 "program directly with WEFT_RENDEZVOUS=file:<shared dir>: weft reads OMPI_COMM_WORLD_RANK/SIZE "
                 "and SLURM_PROCID/NTASKS\n",
                 launcher.c_str());
    return 2;
  }

  std::map<std::string, std::string> extra;
  if (!ParseExtraEnv(extra_env, &extra)) return 2;
  char self[4096] = {};
  const ssize_t self_len = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (servers > 0 && self_len <= 0) {
    std::perror("weft-launch: cannot find its own executable for the servers (/proc/self/exe)");
    return 1;
  }
  std::map<std::string, std::string> env;
  std::unique_ptr<weft::TcpStoreServer> server;
  std::string dir;
  if (!SetUpRendezvous(rendezvous, &env, &server, &dir)) return 1;
  AddJobEnvironment(workers, servers, kv_timeout_s, &env);
  for (const auto& [key, value] : extra) env[key] = value;  // the user's --env wins

  struct sigaction sa {};
  sa.sa_handler = [](int sig) { g_signal.store(sig); };
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<Child> children(static_cast<size_t>(workers + servers));
  const pid_t pgid = StartAll(children, workers, cmd, self, env);
  int exit_code = Supervise(children, servers > 0, timeout_s);
  StopAll(children, pgid, grace_s);
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  if (exit_code == 0) {
    for (auto& c : children)
      if (c.status != 0) exit_code = ExitCodeFor(c.status);
  }
  return exit_code;
}

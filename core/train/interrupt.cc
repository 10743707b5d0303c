// weft core — InterruptGuard (weft/interrupt.h): the first SIGINT becomes a stop request.
#include "weft/interrupt.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "weft/base.h"

namespace weft {
namespace {

// Written by the handler: lock-free atomics and sigaction are async-signal-safe.
std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool> g_guard_alive{false};
struct sigaction g_previous;

extern "C" void OnInterrupt(int) {
  g_requested.store(true);
  // The second SIGINT takes the default action: the process ends, as a user pressing Ctrl-C
  // twice expects (e.g. when the step in progress hangs).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, nullptr);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  WEFT_CHECK(!g_guard_alive.exchange(true),
             "InterruptGuard: another guard is alive (SIGINT has one handler per process); use that one");
  g_requested.store(false);
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESTART;  // as std::signal: a system call in progress is resumed, not failed
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGINT, &action, &g_previous) != 0) {
    const int err = errno;
    g_guard_alive.store(false);
    Fail("InterruptGuard: cannot install the SIGINT handler: {}", std::strerror(err));
  }
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous, nullptr);
  g_guard_alive.store(false);
}

bool InterruptGuard::requested() const { return g_requested.load(); }

std::function<bool()> InterruptGuard::StopRequested() const {
  return [] { return g_requested.load(); };
}

}  // namespace weft

// weft — stopping a long run cleanly on Ctrl-C.
//
// A training program wants the first SIGINT to stop between steps (so a checkpoint being written
// is finished and the run can resume from it), and a second one to end the process at once, as
// Ctrl-C normally does. InterruptGuard does that for its lifetime:
//
//   weft::InterruptGuard interrupt;                       // just before the long work
//   fit.stop_requested = interrupt.StopRequested();       // weft/module.h FitOptions
//   if (!mod.Fit(train, &val, fit)) { /* interrupted: say where the last checkpoint is */ }
//
// The first SIGINT sets the flag and puts back the default action, so the second one terminates
// the process. The destructor restores the handler that was installed before the guard.
//
// Thread-safety: requested() may be called from any thread. One guard at a time per process (a
// signal handler is process-wide); the guard itself belongs to the thread that made it.
#pragma once

#include <functional>

#include "weft/export.h"

namespace weft {

class WEFT_API InterruptGuard {
 public:
  /// Installs the SIGINT handler. Throws weft::Error when another InterruptGuard is alive or the
  /// handler cannot be installed (sigaction fails).
  InterruptGuard();
  /// Restores the SIGINT disposition that was in effect before the constructor.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// True once a SIGINT arrived while this guard was alive.
  bool requested() const;
  /// requested() as a callable, for FitOptions::stop_requested. It must not outlive the guard.
  std::function<bool()> StopRequested() const;
};

}  // namespace weft

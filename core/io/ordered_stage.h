// weft io (internal) — the sequential first step of a Prefetcher's items: item k's `step` runs
// after item k-1's, whichever workers produce them, one at a time; the rest of each item is made
// in parallel. LibSVMIter cuts batch k's lines from the files here (the reading position is
// where batch k-1 stopped) and parses them outside it.
//
// It relies on the Prefetcher's rule that items are claimed in order 0, 1, 2, ... and every
// claimed item is produced: so a produce function must call Enter(k) on every path before it
// returns (also when it will drop the item, e.g. when stopping), or the producer of k+1 waits for
// ever. A step that fails (returns false) ends the epoch's steps: later Enter calls return false
// at once without running theirs, until Reset.
//
// Thread-safety: Enter from the workers, several at once; Reset with no Enter in progress (the
// Prefetcher stopped, as Producer::Restart runs).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace weft::io_detail {

class OrderedStage {
 public:
  /// Waits until the steps of items 0..k-1 have run, then runs step() (which returns false on
  /// failure). Returns step()'s result, or false without running it after an earlier failure.
  /// step() runs under the stage's lock and must not throw.
  template <typename Step>
  bool Enter(uint64_t k, Step&& step) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return next_ == k || failed_; });
    if (failed_) return false;
    const bool ok = step();
    if (ok)
      ++next_;
    else
      failed_ = true;
    lock.unlock();
    cv_.notify_all();
    return ok;
  }

  /// The next epoch's items begin at 0.
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    next_ = 0;
    failed_ = false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ = 0;    // the item whose step runs next
  bool failed_ = false;  // a step failed in this epoch
};

}  // namespace weft::io_detail

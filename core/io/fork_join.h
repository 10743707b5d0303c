// weft io (internal) — a fixed team of threads that runs one parallel loop at a time: the caller
// and threads-1 helpers take the indices of [0, n) in turn, and Run returns when all are done.
// Helpers sleep on a condition variable between loops (no spinning), so an idle team costs the
// CPU nothing; ImageRecordIter's engine decoding (weft/image_iter.h, decode_on_engine) runs its
// batches on one.
//
// Thread-safety: Run may be called from any thread, one call at a time per team (the calls of
// one iterator's decode operations are serialised by an engine variable).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weft::io_detail {

class ForkJoin {
 public:
  /// A team of `threads` (>= 1): threads - 1 helpers, started now; the caller of Run is the last.
  explicit ForkJoin(int threads);
  /// Joins the helpers (no Run may be in progress).
  ~ForkJoin();
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;

  int threads() const noexcept { return static_cast<int>(helpers_.size()) + 1; }

  /// Calls fn(i, thread) for every i in [0, n), thread in [0, threads()) naming the calling team
  /// member (for per-thread scratch), each index once; returns when every call has returned.
  /// An exception thrown by fn stops the handing out of indices and is rethrown here (the first
  /// one, when several threads throw).
  void Run(size_t n, const std::function<void(size_t, int)>& fn);

 private:
  void Work(int thread);  // takes indices of the current loop until none is left
  void HelperLoop(int thread);

  std::vector<std::thread> helpers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;  // bumped by each Run; helpers wait for a new one
  bool stop_ = false;
  const std::function<void(size_t, int)>* fn_ = nullptr;
  size_t n_ = 0, next_ = 0;  // the loop's size and its next index (under mu_)
  int busy_ = 0;             // helpers still in the current loop
  std::exception_ptr error_;
};

}  // namespace weft::io_detail

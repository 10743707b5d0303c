// A fixed thread team for one parallel loop at a time (io/fork_join.h).
#include "io/fork_join.h"

namespace weft::io_detail {

ForkJoin::ForkJoin(int threads) {
  for (int t = 1; t < threads; ++t) helpers_.emplace_back([this, t] { HelperLoop(t); });
}

ForkJoin::~ForkJoin() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& h : helpers_) h.join();
}

void ForkJoin::Work(int thread) {
  for (;;) {
    size_t i = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_ >= n_) return;
      i = next_++;
    }
    try {
      (*fn_)(i, thread);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_ = n_;  // hand out no more
      return;
    }
  }
}

void ForkJoin::HelperLoop(int thread) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    Work(thread);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
    }
    done_.notify_one();
  }
}

void ForkJoin::Run(size_t n, const std::function<void(size_t, int)>& fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    error_ = nullptr;
    busy_ = static_cast<int>(helpers_.size());
    ++generation_;
  }
  wake_.notify_all();
  Work(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace weft::io_detail

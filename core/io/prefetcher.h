// weft io (internal) — the threaded prefetcher under every data iterator (MXNet's PrefetcherIter
// on dmlc-core's ThreadedIter, with several producers).
//
// Worker threads produce the items 0, 1, 2, ... of an epoch — item k by `produce(k, &item,
// worker)`, which returns false when the epoch has no item k — and the one consumer takes them
// in order with Next(). Workers run ahead of the consumer by at most `ahead` items (the bounded
// queue: items produced or being produced but not yet taken). Several workers make distinct
// items at once; the order of delivery is always 0, 1, 2, ..., whatever finishes first.
//
// Errors: an exception thrown by produce(k) is rethrown by the Next() that would have returned
// item k, after items 0..k-1 (so a failure is reported at the same place whatever the timing);
// that epoch then ends (later Next() calls return false, no item past k is made) until Stop() and
// Start() begin a new one. Items after a Stop() are discarded, errors included.
//
// Stop() (the iterators' BeforeFirst) tells the workers to stop, waits for the items in
// production (produce can poll `stopping()` to give up early; what it returns then is dropped)
// and empties the queue; Start() begins the next epoch at item 0. The destructor stops and joins
// the workers.
//
// Process shutdown (StopDataIterWorkers in weft/prefetching_iter.h: MXNotifyShutdown, and an exit
// handler that runs before the engine and the plugins shut down): every live prefetcher's workers
// finish the item in production and end for good; Next() then throws. Without it a worker still
// making a batch when exit() runs would push to an engine and allocate on a device that static
// destruction is tearing down ("pure virtual method called").
//
// Thread-safety: Start, Stop and Next are called by one consumer thread; produce runs on the
// workers, several at once (one call per worker at a time; `worker` is its index, for per-worker
// state).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "weft/base.h"
#include "weft/export.h"

namespace weft::io_detail {

/// std::thread(fn, self, worker), made in a .cc file: a thread started from this header's template
/// would instantiate std::thread's state type with weft's types, which libweft would then export.
std::thread StartWorkerThread(void (*fn)(void*, int), void* self, int worker);

/// The registry of live prefetchers that StopDataIterWorkers shuts down (prefetching_iter.cc).
/// Register returns false when the process is already shutting down (then start no worker);
/// `shutdown(self)` is called at most once, under the registry's lock, which Unregister takes:
/// a prefetcher unregistered in its destructor is never shut down concurrently with it. So a
/// produce function must not make or destroy a prefetcher (an iterator) itself: StopDataIterWorkers
/// waits for it while holding that lock.
bool RegisterLive(void* self, void (*shutdown)(void*));
void UnregisterLive(void* self);

template <typename Item>
class WEFT_HIDDEN Prefetcher {
 public:
  using Produce = std::function<bool(uint64_t seq, Item* item, int worker)>;

  Prefetcher(int num_workers, size_t ahead, Produce produce)
      : ahead_(std::max<size_t>(ahead, 1)), produce_(std::move(produce)) {
    WEFT_CHECK(num_workers >= 1, "prefetcher: {} worker threads; at least 1 is needed", num_workers);
    if (!RegisterLive(this, &Prefetcher::ShutdownThunk)) {
      shutdown_ = true;  // made during shutdown: no worker starts, Next() reports why
      return;
    }
    try {
      for (int w = 0; w < num_workers; ++w) threads_.push_back(StartWorkerThread(&Prefetcher::Run, this, w));
    } catch (...) {
      Shutdown();
      UnregisterLive(this);
      throw;
    }
  }
  ~Prefetcher() {
    UnregisterLive(this);  // first: after it, StopDataIterWorkers cannot reach this object
    Shutdown();
  }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  /// Begins an epoch at item 0 (after construction or Stop()).
  void Start() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = true;
    }
    cv_.notify_all();
  }

  /// Ends the epoch: waits for the items in production, discards every item not taken.
  void Stop() {
    std::unique_lock<std::mutex> lock(mu_);
    running_ = false;
    ++epoch_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return busy_ == 0; });
    ready_.clear();
    next_claim_ = next_deliver_ = 0;
    end_ = kNoEnd;
  }

  /// True while the epoch whose items the caller is producing is still wanted (produce may poll
  /// it and return early when false).
  bool stopping(uint64_t epoch) const { return epoch_.load(std::memory_order_relaxed) != epoch; }
  /// The epoch a worker is producing for, and its prefetcher (valid inside produce, for
  /// stopping()).
  static uint64_t current_epoch() { return tls_epoch_; }
  static const Prefetcher* current() { return tls_self_; }

  /// The next item of the epoch; false at its end. Rethrows a produce error (see above). Throws
  /// weft::Error once the process is shutting down (StopDataIterWorkers).
  bool Next(Item* out) {
    std::unique_lock<std::mutex> lock(mu_);
    WEFT_CHECK(running_, "prefetcher: Next() before Start()");
    cv_.wait(lock, [&] { return shutdown_ || next_deliver_ >= end_ || ready_.count(next_deliver_) != 0; });
    WEFT_CHECK(!shutdown_,
               "data iterator: the process is shutting down (MXNotifyShutdown or exit was called), so its loader "
               "threads have stopped; no batch can be read after that");
    if (next_deliver_ >= end_) return false;  // items made past an error or the end are not delivered
    auto it = ready_.find(next_deliver_);
    Slot slot = std::move(it->second);
    ready_.erase(it);
    ++next_deliver_;
    lock.unlock();
    cv_.notify_all();  // a worker may claim one more
    if (slot.error) std::rethrow_exception(slot.error);
    *out = std::move(*slot.item);
    return true;
  }

 private:
  struct Slot {
    std::optional<Item> item;
    std::exception_ptr error;
  };
  static constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();

  static void Run(void* self, int worker) { static_cast<Prefetcher*>(self)->WorkerLoop(worker); }
  static void ShutdownThunk(void* self) { static_cast<Prefetcher*>(self)->Shutdown(); }

  // Ends the workers for good: each finishes the item it is producing (which may poll
  // stopping()), then returns; joined here, except the calling thread itself (exit() called from
  // inside produce), which cannot wait for itself and ends with the process.
  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
      ++epoch_;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) {
        if (t.get_id() == std::this_thread::get_id())
          t.detach();
        else
          t.join();
      }
  }

  void WorkerLoop(int worker) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock,
               [&] { return shutdown_ || (running_ && next_claim_ < end_ && next_claim_ < next_deliver_ + ahead_); });
      if (shutdown_) return;
      const uint64_t seq = next_claim_++;
      const uint64_t epoch = epoch_;
      ++busy_;
      lock.unlock();
      Slot slot;
      bool more = true;
      tls_epoch_ = epoch;
      tls_self_ = this;
      try {
        Item item;
        more = produce_(seq, &item, worker);
        if (more) slot.item.emplace(std::move(item));
      } catch (...) {
        slot.error = std::current_exception();
      }
      lock.lock();
      --busy_;
      if (epoch == epoch_) {
        if (slot.error) {
          end_ = std::min(end_, seq + 1);
          ready_.emplace(seq, std::move(slot));
        } else if (!more) {
          end_ = std::min(end_, seq);
        } else {
          ready_.emplace(seq, std::move(slot));
        }
      }
      cv_.notify_all();
    }
  }

  const size_t ahead_;
  const Produce produce_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false, shutdown_ = false;
  std::atomic<uint64_t> epoch_{0};
  uint64_t next_claim_ = 0, next_deliver_ = 0, end_ = kNoEnd;
  int busy_ = 0;
  std::map<uint64_t, Slot> ready_;
  std::vector<std::thread> threads_;
  static inline thread_local uint64_t tls_epoch_ = 0;
  static inline thread_local const Prefetcher* tls_self_ = nullptr;
};

}  // namespace weft::io_detail

// ThreadedDataIter and PrefetchingIter (weft/prefetching_iter.h) on the Prefetcher.
#include "weft/prefetching_iter.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "io/prefetcher.h"
#include "weft/engine.h"
#include "weft/env.h"
#include "weft/logging.h"

namespace weft {

namespace {

// The loader threads' nice increment (WEFT_IO_THREAD_NICE, 0-19, default 19), read on the calling
// thread so that a bad value is an error there and not an exception in a new thread.
int LoaderNiceIncrement() {
  return static_cast<int>(GetEnvIntInRange("WEFT_IO_THREAD_NICE", 19, 0, 19,
                                           "a nice increment (0: the caller's priority, 19: the lowest)"));
}

// Lowers the calling thread's CPU priority by `increment` (Linux keeps a nice value per thread).
// Why: when training's math threads keep every core busy (an OpenMP team per core), a loader
// thread at their priority preempts one team thread, and the rest of the team then waits for it at
// the next barrier, so decoding costs the whole team's time. At the lowest priority the loader
// mostly runs when a core is free, and at the latest when training waits for a batch. Measured on
// 2 cores, LeNet from a PNG .rec against from memory: 0.80 of the in-memory speed at the same
// priority, 0.86 at nice 19 (bench/io/compare.py --lenet-only). Failure (a sandbox that forbids
// it) leaves the priority as it was: it changes speed, never results.
void LowerThisThreadsPriority(int increment) {
#ifdef __linux__
  if (increment == 0) return;
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, 0);  // 0: the calling thread on Linux
  if (errno != 0) return;
  (void)setpriority(PRIO_PROCESS, 0, std::min(19, now + increment));
#else
  (void)increment;
#endif
}

}  // namespace

namespace {

// The live prefetchers (io_detail::RegisterLive). Never destroyed: it is used by the exit handler
// and by destructors that may run during static destruction.
struct LiveRegistry {
  std::mutex mu;
  std::unordered_map<void*, void (*)(void*)> live;
  bool closed = false;            // StopDataIterWorkers ran: no new workers start
  bool exit_handler_set = false;  // StopAtExit is registered with atexit
};

LiveRegistry& Registry() {
  static auto* r = new LiveRegistry;
  return *r;
}

void StopAtExit() { StopDataIterWorkers(); }

}  // namespace

bool io_detail::RegisterLive(void* self, void (*shutdown)(void*)) {
  LiveRegistry& r = Registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.closed) return false;
    if (r.exit_handler_set) {
      r.live.emplace(self, shutdown);
      return true;
    }
  }
  // exit() runs atexit handlers and static destructors in the reverse order of their
  // registration: made after the engine (and, through it, the plugin runtime, which registers the
  // plugins' shutdown handlers), StopAtExit runs before the engine shuts down and before the
  // plugins do, while a batch in production can still finish.
  Engine::Get();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.closed) return false;
  if (!r.exit_handler_set) {
    r.exit_handler_set = true;
    std::atexit(StopAtExit);
  }
  r.live.emplace(self, shutdown);
  return true;
}

void io_detail::UnregisterLive(void* self) {
  LiveRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live.erase(self);
}

void StopDataIterWorkers() noexcept {
  LiveRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.closed = true;
  for (auto& [self, shutdown] : r.live) {
    try {
      shutdown(self);
    } catch (const std::exception& e) {  // a failed join: nothing better to do at shutdown
      LogWarning("data iterator: stopping a loader thread at shutdown failed: {}", e.what());
    }
  }
  r.live.clear();
}

std::thread io_detail::StartWorkerThread(void (*fn)(void*, int), void* self, int worker) {
  const int increment = LoaderNiceIncrement();
  return std::thread([fn, self, worker, increment] {
    LowerThisThreadsPriority(increment);
    fn(self, worker);
  });
}

struct ThreadedDataIter::State {
  std::unique_ptr<Producer> producer;
  DataBatch current;
  uint64_t delivered = 0;
  bool touched = false;  // Next() was called in this epoch
  // Last: destroyed first, so the workers stop before the producer goes.
  std::unique_ptr<io_detail::Prefetcher<DataBatch>> prefetcher;
};

// state_ is the Prefetcher itself: it lives until its destructor has joined the workers (the
// unique_ptr holding it is already null while that destructor runs).
bool ThreadedDataIter::Worker::stopping() const {
  return static_cast<const io_detail::Prefetcher<DataBatch>*>(state_)->stopping(epoch_);
}

ThreadedDataIter::ThreadedDataIter() : state_(std::make_unique<State>()) {}

ThreadedDataIter::~ThreadedDataIter() { state_->prefetcher.reset(); }

void ThreadedDataIter::StartWorkers(std::unique_ptr<Producer> producer, int workers, size_t ahead) {
  WEFT_CHECK(producer != nullptr && state_->prefetcher == nullptr, "ThreadedDataIter: StartWorkers called twice");
  State& s = *state_;
  s.producer = std::move(producer);
  s.prefetcher =
      std::make_unique<io_detail::Prefetcher<DataBatch>>(workers, ahead, [&s](uint64_t k, DataBatch* out, int worker) {
        using P = io_detail::Prefetcher<DataBatch>;
        return s.producer->Produce(k, out, Worker(worker, P::current(), P::current_epoch()));
      });
  s.prefetcher->Start();
}

void ThreadedDataIter::BeforeFirst() {
  State& s = *state_;
  WEFT_CHECK(s.prefetcher != nullptr, "ThreadedDataIter: the iterator was not started");
  if (!s.touched) return;  // nothing asked for: the batches made ahead are this epoch's
  s.prefetcher->Stop();
  const uint64_t delivered = s.delivered;
  s.delivered = 0;
  s.touched = false;
  try {
    s.producer->Restart(delivered);
  } catch (...) {
    s.prefetcher->Start();  // Next() then reports whatever state the producer is in
    throw;
  }
  s.prefetcher->Start();
}

bool ThreadedDataIter::Next() {
  State& s = *state_;
  WEFT_CHECK(s.prefetcher != nullptr, "ThreadedDataIter: the iterator was not started");
  s.touched = true;
  DataBatch b;
  if (!s.prefetcher->Next(&b)) return false;
  ++s.delivered;
  s.current = std::move(b);
  return true;
}

NDArray ThreadedDataIter::GetData() { return state_->current.data; }
NDArray ThreadedDataIter::GetLabel() { return state_->current.label; }
int ThreadedDataIter::GetPadNum() { return state_->current.pad_num; }
std::vector<int> ThreadedDataIter::GetIndex() { return state_->current.index; }

// ---- PrefetchingIter ---------------------------------------------------------------------------

namespace {

class WrappedIter : public ThreadedDataIter::Producer {
 public:
  explicit WrappedIter(std::unique_ptr<DataIter> base) : base_(std::move(base)) {}
  bool Produce(uint64_t, DataBatch* out, const ThreadedDataIter::Worker&) override {
    if (!base_->Next()) return false;
    *out = base_->GetDataBatch();
    return true;
  }
  void Restart(uint64_t) override { base_->BeforeFirst(); }

 private:
  std::unique_ptr<DataIter> base_;
};

}  // namespace

PrefetchingIter::PrefetchingIter(std::unique_ptr<DataIter> base, int prefetch_buffer) {
  WEFT_CHECK(base != nullptr, "PrefetchingIter: no iterator given");
  WEFT_CHECK(prefetch_buffer >= 0, "PrefetchingIter: prefetch_buffer must not be negative, got {}", prefetch_buffer);
  data_desc_ = base->ProvideData();
  label_desc_ = base->ProvideLabel();
  // One worker: the wrapped iterator's Next() calls stay sequential and in order.
  StartWorkers(std::make_unique<WrappedIter>(std::move(base)), 1, static_cast<size_t>(std::max(prefetch_buffer, 1)));
}

}  // namespace weft

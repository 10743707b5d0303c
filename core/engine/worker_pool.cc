#include "worker_pool.h"

#include <pthread.h>

#include <utility>

#include "weft/internal/device.h"
#include "weft/logging.h"
#include "weft/profiler.h"

namespace weft::engine_detail {

WorkerPool::WorkerPool(EngineImpl* engine, Context ctx, std::string label, int nthreads, Device* device,
                       int spin_rounds, uint32_t stream_flags)
    : engine_(engine), ctx_(std::move(ctx)), label_(std::move(label)), device_(device), spin_rounds_(spin_rounds) {
  if (nthreads < 1) nthreads = 1;
  if (device_) {
    try {
      for (int i = 0; i < nthreads; ++i)
        streams_.push_back(std::make_shared<StreamState>(device_, device_->CreateStream(stream_flags), this));
    } catch (const std::exception& e) {
      LogWarning("engine: {}: cannot create a stream ({}); its device work runs synchronously", label_, e.what());
      streams_.clear();
    }
  }
  threads_.reserve(static_cast<size_t>(nthreads));
  for (int i = 0; i < nthreads; ++i) threads_.emplace_back([this, i] { Run(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (const auto& ss : streams_) {
    std::vector<std::function<void()>> finished;
    {
      std::lock_guard<std::mutex> lock(ss->mu);
      try {
        ss->device->SynchronizeStream(ss->stream);
      } catch (const std::exception& e) {
        LogWarning("engine: {}: an error nobody waited for was pending on a stream at shutdown: {}", label_, e.what());
      }
      ss->drained.store(true, std::memory_order_release);
      ss->last.reset();
      for (auto& d : ss->deferred) finished.push_back(std::move(d.second));
      ss->deferred.clear();
    }
    for (auto& fn : finished) {
      try {
        fn();
      } catch (const std::exception& e) {
        LogError("engine: {}: deferred work failed at shutdown: {}", label_, e.what());
      }
    }
  }
}

StreamState* WorkerPool::PickStream(const OprBlock* block, const std::vector<EventPtr>& events) const {
  if (streams_.empty()) return nullptr;
  for (const EventPtr& e : events)
    if (e->owner->pool == this && !e->owner->drained.load(std::memory_order_acquire)) return e->owner.get();
  // A fresh chain: spread by the first variable (written ones come first), the same every time.
  const auto key = block->num_nodes > 0 ? reinterpret_cast<uintptr_t>(block->nodes[0].var) : uintptr_t{0};
  return streams_[(key >> 6) % streams_.size()].get();
}

void WorkerPool::Push(OprBlock* block) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_[block->priority].push_back(block);
    queued_.store(queued_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    wake = idle_ > 0;
  }
  if (wake) cv_.notify_one();
}

OprBlock* WorkerPool::PopLocked() {
  auto it = queue_.begin();
  while (it->second.empty()) ++it;  // only the kept default bucket can be empty
  OprBlock* block = it->second.front();
  it->second.pop_front();
  // Keep the default-priority bucket: re-creating a deque on every drain would cost an
  // allocation per op when the workers keep up with the pusher.
  if (it->second.empty() && it->first != 0) queue_.erase(it);
  queued_.store(queued_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  return block;
}

void WorkerPool::Run(int index) {
  std::string name = fmt::format("{} {}", label_, index);
  // Linux limits thread names to 15 characters; the trace gets the full name.
  pthread_setname_np(pthread_self(), fmt::format("weft-{}", label_).substr(0, 15).c_str());
  Profiler::SetThreadName(name);
  CurrentWorkerEngine() = engine_;
  RunContext rctx{ctx_, nullptr, index};

  int spin_budget = spin_rounds_;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queued_.load(std::memory_order_relaxed) == 0) {
      if (stop_) break;
      // Spin briefly before sleeping: when ops arrive back to back this saves the pusher a
      // futex wake-up per op (the dominant cost of a push otherwise).
      lock.unlock();
      const bool arrived =
          AdaptiveSpin(spin_budget, spin_rounds_, [this] { return queued_.load(std::memory_order_acquire) > 0; });
      lock.lock();
      if (arrived) continue;
      ++idle_;
      cv_.wait(lock, [this] { return queued_.load(std::memory_order_relaxed) > 0 || stop_; });
      --idle_;
      continue;
    }
    OprBlock* block = PopLocked();
    lock.unlock();
    engine_->Execute(block, rctx, this);
    lock.lock();
  }
  lock.unlock();
  CurrentWorkerEngine() = nullptr;
}

}  // namespace weft::engine_detail

// weft engine internals: a pool of worker threads for one (Context, kind) that runs ready
// blocks, highest priority first and FIFO among equal priorities. On devices that are not
// host-addressable the pool owns one stream per worker; an operation runs on the stream its data
// was last written on (so chains stay on one stream), else on one chosen by its first variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_impl.h"

namespace weft::engine_detail {

class WorkerPool {
 public:
  /// Starts `nthreads` workers. `device` null: host work, RunContext::stream stays null;
  /// otherwise the pool creates `nthreads` streams on `device` with `stream_flags` (falling back
  /// to the synchronous null stream, with a warning, when the device cannot create one).
  /// `spin_rounds`: pause instructions an idle worker spins through before it sleeps.
  WorkerPool(EngineImpl* engine, Context ctx, std::string label, int nthreads, Device* device, int spin_rounds,
             uint32_t stream_flags);
  /// Stops and joins the workers (blocks still queued are run first), then synchronises the
  /// streams and runs their deferred work.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Push(OprBlock* block);
  const std::string& label() const noexcept { return label_; }
  /// The stream `block` should run on: the stream of the first of `events` that belongs to this
  /// pool, else one picked by the block's first variable. Null when the pool has no streams.
  StreamState* PickStream(const OprBlock* block, const std::vector<EventPtr>& events) const;
  const std::vector<std::shared_ptr<StreamState>>& streams() const noexcept { return streams_; }

 private:
  void Run(int index);
  OprBlock* PopLocked();

  EngineImpl* engine_;
  Context ctx_;
  std::string label_;
  Device* device_;
  int spin_rounds_;

  std::mutex mu_;
  std::condition_variable cv_;
  // priority -> FIFO; highest priority first.
  std::map<int, std::deque<OprBlock*>, std::greater<int>> queue_;
  // Written under mu_, read without it by spinning workers.
  std::atomic<size_t> queued_{0};
  int idle_ = 0;
  bool stop_ = false;
  std::vector<std::shared_ptr<StreamState>> streams_;
  std::vector<std::thread> threads_;
};

}  // namespace weft::engine_detail

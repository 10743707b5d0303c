// fork() around the global engine (see EngineImpl::BeforeFork in engine_impl.h). Python's
// multiprocessing forks worker processes (gluon.data.DataLoader with num_workers > 0): a child
// inherits the engine's state but none of its worker threads, so without this its first wait
// blocks for ever on work queued to threads that do not exist.
#include <pthread.h>

#include <atomic>
#include <mutex>

#include "engine_impl.h"
#include "weft/logging.h"
#include "worker_pool.h"

namespace weft::engine_detail {
namespace {

std::atomic<EngineImpl*> g_forking_engine{nullptr};

void Prepare() {
  if (EngineImpl* e = g_forking_engine.load(std::memory_order_acquire)) e->BeforeFork();
}
void Child() {
  if (EngineImpl* e = g_forking_engine.load(std::memory_order_acquire)) e->AfterForkChild();
}

}  // namespace

void EngineImpl::InstallForkHandlers(EngineImpl* engine) {
  g_forking_engine.store(engine, std::memory_order_release);
  static std::once_flag once;
  std::call_once(once, [] {
    // The parent needs nothing after the fork: its pools are recreated on the next push.
    if (pthread_atfork(&Prepare, nullptr, &Child) != 0)
      LogWarning("engine: pthread_atfork failed; a forked child process cannot use the engine");
  });
}

void EngineImpl::BeforeFork() noexcept {
  if (CurrentWorkerEngine() == this) return;  // fork() inside a pushed function: nothing is safe to stop
  {
    std::unique_lock<std::mutex> lock(all_mu_);
    all_cv_.wait(lock, [&] { return pending_ops_.load(std::memory_order_acquire) == 0; });
  }
  std::vector<std::unique_ptr<WorkerPool>> host_pools;
  {
    std::lock_guard<std::mutex> lock(pools_mu_);
    for (auto& p : cpu_pools_) p.store(nullptr, std::memory_order_release);
    for (auto it = pools_.begin(); it != pools_.end();) {
      if (it->second->streams().empty()) {
        host_pools.push_back(std::move(it->second));
        it = pools_.erase(it);
      } else {
        ++it;
      }
    }
  }
  host_pools.clear();  // joins their (idle) workers
}

void EngineImpl::AfterForkChild() noexcept {
  // Only the forking thread exists here. The device pools' threads stayed in the parent: their
  // objects cannot be destroyed (no thread to join), so they are dropped without it.
  for (auto& p : cpu_pools_) p.store(nullptr, std::memory_order_relaxed);
  for (auto& [key, pool] : pools_) (void)pool.release();
  pools_.clear();
}

}  // namespace weft::engine_detail

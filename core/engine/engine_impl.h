// weft engine internals: variables, operations, pushed blocks, and the engine that schedules
// them. One implementation serves both engine types: the naive engine is this engine with
// every ready block executed inline in the thread that made it ready.
//
// Scheduling (MXNet's ThreadedVar/OprBlock scheme, re-derived): each variable keeps a FIFO of
// dependencies that are not yet granted; a granted write is exclusive, granted reads share.
// Each pushed block counts its ungranted dependencies; it is dispatched when the count reaches
// zero. Completing a block releases its variables, which grants the next writer or the next run
// of readers, and bumps the version of the variables it wrote.
//
// Device work (the asynchronous engine, after MXNet's apache/mxnet#18951): an operation of a
// device that is not host-addressable runs on one of its pool's streams, chosen so that a chain
// of operations on the same data stays on one stream. It queues its work there and returns; the
// engine records an event on the stream and completes the operation at once. The variables it
// wrote carry that event (`write_event`), those it read remember it (`read_events`: a later writer
// must not overwrite memory a stream may still read). A later operation orders itself after the
// events of its variables: nothing for an event of its own stream, stream_wait_event for another
// stream of the same plugin, a host wait (event_synchronize) for host code or another plugin.
// The captures of a one-shot function are destroyed (and a kDeleteVar function run) only after
// its stream has passed the event, so memory its queued work uses is never reused too early.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/engine.h"
#include "weft/sdk/device.h"

namespace weft {
class Device;
}

namespace weft::engine_detail {

class WorkerPool;
class VarImpl;
struct StreamState;

/// An event recorded on a stream after one operation's work. Shared by the variables that
/// depend on that work; the event goes back to its stream's free list when the last user drops it.
struct EventRef {
  std::shared_ptr<StreamState> owner;
  weft_event event = nullptr;
  uint64_t error_epoch = 0;  // ErrorEpoch() when recorded
  ~EventRef();
};
using EventPtr = std::shared_ptr<EventRef>;

/// One stream of a device worker pool. Any worker may use it, one at a time (`mu`).
struct StreamState : std::enable_shared_from_this<StreamState> {
  StreamState(Device* d, weft_stream s, WorkerPool* p) : device(d), stream(s), pool(p) {}
  /// Destroys the pooled events and the stream (unless the plugin has shut down).
  ~StreamState();
  /// A recorded-or-reusable event of this stream (caller holds mu).
  EventPtr NewEvent(const std::shared_ptr<StreamState>& self);
  /// Moves the deferred work whose event has completed into `out` (caller holds mu).
  void TakeFinished(std::vector<std::function<void()>>& out);

  Device* const device;
  const weft_stream stream;
  WorkerPool* const pool;
  std::mutex mu;  // held while an operation queues work on the stream
  // Work to run once the stream has passed an event: destroying a finished operation's captures,
  // kDeleteVar functions. In record order, so completion is checked from the front. Under mu.
  std::deque<std::pair<EventPtr, std::function<void()>>> deferred;
  EventPtr last;                            // the latest event recorded here since WaitForAll looked (under mu)
  std::atomic<bool> reset{false};           // a waiter saw this stream's sticky error: clear it
  std::atomic<bool> error_reported{false};  // ... and reported it, so WaitForAll does not again
  std::atomic<bool> drained{false};         // synchronised for good: every event has completed
  std::mutex events_mu;
  std::vector<weft_event> free_events;  // under events_mu
};

/// Counts device errors reported to waiters (OnDeviceError). An event recorded before the
/// latest report may carry that already-reported failure: ordering skips it once it has finished.
std::atomic<uint64_t>& ErrorEpoch() noexcept;

/// Blocks the host until `ev` has completed (not counted as a wait when it already had);
/// rethrows the error of the work it captured.
void HostWait(const EventRef& ev);

/// An exception shared by every variable it has tainted. `seen` records that some wait has
/// rethrown it: from then on it is cleared everywhere (MXNet's engine shares one exception slot
/// among the variables and clears that slot on rethrow), so it taints nothing more and no wait
/// rethrows it again.
struct ErrorRecord {
  std::exception_ptr error;
  std::atomic<bool> seen{false};
};
using ErrorPtr = std::shared_ptr<ErrorRecord>;

/// True when `error` is set and no wait has rethrown it yet.
inline bool IsLive(const ErrorPtr& error) noexcept { return error && !error->seen.load(std::memory_order_acquire); }

/// One dependency of one block on one variable, linked into the variable's wait list.
struct VarNode {
  OprBlock* block = nullptr;
  VarImpl* var = nullptr;
  VarNode* next = nullptr;
  bool write = false;
};

class VarImpl final : public Var {
 public:
  std::mutex mu;
  VarNode* head = nullptr;  // dependencies not granted yet, in push order
  VarNode* tail = nullptr;
  int running_reads = 0;       // granted reads not yet complete
  bool write_granted = false;  // a write is granted and not complete
  ErrorPtr error;              // exception carried by the current value
  // Device work behind the current value (see the top of this file); under mu. `has_events` is
  // a hint read without the lock: false means neither is set, so host-only variables cost nothing.
  EventPtr write_event;
  std::vector<EventPtr> read_events;
  std::atomic<bool> has_events{false};
  void BumpVersion() noexcept {
    stamp_.store(NextStamp(), std::memory_order_release);  // before the version: a reader that
    version_.fetch_add(1, std::memory_order_acq_rel);      // sees the new version sees the new stamp
  }
};

}  // namespace weft::engine_detail

namespace weft {

/// A function with its de-duplicated variable lists (reusable, or owned by one block).
class Opr {
 public:
  AsyncFn fn;
  SyncFn sync_fn;  // set instead of fn for PushSync: no wrapper allocation
  std::vector<engine_detail::VarImpl*> const_vars;
  std::vector<engine_detail::VarImpl*> mutable_vars;
  FnProperty prop = FnProperty::kNormal;
  std::string name;
  /// For kDeleteVar blocks made by DeleteVariable: the variable to free once released.
  engine_detail::VarImpl* var_to_delete = nullptr;
  /// False for DeleteOperator's ordering-only "writes".
  bool bump_version = true;
};

}  // namespace weft

namespace weft::engine_detail {

/// Where a ready block runs.
enum class PoolKind : int { kCompute = 0, kCopyFrom = 1, kCopyTo = 2, kCpuPriority = 3 };

/// One pushed run of an Opr.
struct OprBlock {
  EngineImpl* engine = nullptr;
  Opr* opr = nullptr;
  std::optional<Opr> owned_opr;  // set for PushAsync's one-shot operations
  Context ctx;
  WorkerPool* pool = nullptr;  // null: run in the thread that makes it ready
  int priority = 0;
  bool profiling = true;
  std::atomic<int> pending{0};
  // The block's dependencies, de-duplicated; small lists live inside the block.
  static constexpr int kInlineNodes = 4;
  VarNode inline_nodes[kInlineNodes];
  std::unique_ptr<VarNode[]> heap_nodes;
  VarNode* nodes = inline_nodes;
  int num_nodes = 0;
  VarNode* begin() noexcept { return nodes; }
  VarNode* end() noexcept { return nodes + num_nodes; }
  /// Room for `n` nodes (num_nodes is left for the caller to set).
  VarNode* ReserveNodes(size_t n) {
    if (n > static_cast<size_t>(kInlineNodes)) {
      heap_nodes = std::make_unique<VarNode[]>(n);
      nodes = heap_nodes.get();
    }
    return nodes;
  }

  // Exception carried in by a tainted variable at grant time (guarded by error_lock).
  std::atomic_flag error_lock = ATOMIC_FLAG_INIT;
  ErrorPtr inherited_error;

  // Completion handshake between the thread that ran fn and the CallbackOnComplete.
  std::atomic<int> parties{2};
  std::atomic<bool> callback_called{false};
  std::exception_ptr callback_error;
  std::exception_ptr stream_error;  // ordering or recording on the device stream failed
  EventPtr done_event;              // recorded on the stream after fn returned
  bool ran = false;                 // fn ran (or was attempted): the block's events are set
  bool orders_events = true;        // false for internal blocks that neither wait nor record

  uint64_t start_ns = 0;
  int trace_tid = -1;

  // Naive execution waits here for an asynchronous completion.
  struct InlineWaiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  InlineWaiter* inline_waiter = nullptr;

  void InheritError(const ErrorPtr& error);
};

class EngineImpl final : public Engine {
 public:
  explicit EngineImpl(const EngineConfig& config);
  ~EngineImpl() override;

  EngineType type() const noexcept override { return config_.type; }
  const EngineConfig& config() const noexcept override { return config_; }
  VarHandle NewVariable() override;
  void DeleteVariable(SyncFn delete_fn, const Context& ctx, VarHandle var) override;
  OprHandle NewOperator(AsyncFn fn, const std::vector<VarHandle>& const_vars,
                        const std::vector<VarHandle>& mutable_vars, FnProperty prop, const char* name) override;
  void DeleteOperator(OprHandle op) override;
  void Push(OprHandle op, const Context& ctx, int priority, bool profiling) override;
  void PushAsync(AsyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                 const std::vector<VarHandle>& mutable_vars, FnProperty prop, int priority, const char* name) override;
  void PushSync(SyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                const std::vector<VarHandle>& mutable_vars, FnProperty prop, int priority, const char* name) override;
  void WaitForVar(VarHandle var) override;
  void WaitForAll() override;
  int64_t PendingOps() const noexcept override { return pending_ops_.load(std::memory_order_relaxed); }

  /// Finishes pending work (errors logged), joins every worker, and from then on runs pushes
  /// inline. Idempotent.
  void Shutdown() noexcept;

  /// fork() support (engine_fork.cc; MXNet stops its engine around fork the same way): before
  /// the fork, waits until nothing is pending (errors stay recorded for the next wait) and joins
  /// the host worker pools, which both processes then recreate on their next push; after it, the
  /// child drops (leaks) the pools whose threads stayed in the parent. Device pools with streams
  /// keep running in the parent; a forked child must not use those devices (as with CUDA).
  void BeforeFork() noexcept;
  void AfterForkChild() noexcept;
  /// Installs pthread_atfork handlers calling the two above on `engine` (the global engine).
  static void InstallForkHandlers(EngineImpl* engine);

  /// Runs a ready block on the calling thread; `pool`: the worker pool it came from (null when
  /// run inline), whose streams it may use.
  void Execute(OprBlock* block, const RunContext& rctx, WorkerPool* pool);
  /// A host wait reported the sticky error of `owner`: every stream of its plugin is cleared
  /// before its next use, and WaitForAll does not report it again.
  void OnDeviceError(const StreamState* owner);
  /// A CallbackOnComplete was called.
  void OnCallback(OprBlock* block, std::exception_ptr error);

 private:
  static void FillVars(Opr* opr, const std::vector<VarHandle>& const_vars, const std::vector<VarHandle>& mutable_vars);
  OprBlock* NewBlock(Opr* opr, const Context& ctx, int priority, bool profiling);
  /// A block owning a one-shot Opr with de-duplicated nodes for the given lists; throws (and
  /// frees it) on bad input.
  OprBlock* NewOneShot(AsyncFn fn, SyncFn sync_fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                       const std::vector<VarHandle>& mutable_vars, FnProperty prop, int priority, const char* name);
  static void SetNodes(OprBlock* block, const std::vector<VarHandle>& const_vars,
                       const std::vector<VarHandle>& mutable_vars);
  static void SetNodes(OprBlock* block, const std::vector<VarImpl*>& const_vars,
                       const std::vector<VarImpl*>& mutable_vars);
  void PushBlock(OprBlock* block);
  void Dispatch(OprBlock* block);
  void ExecuteInline(OprBlock* block);
  /// Orders the block after its variables' events (on `ss`, or on the host when ss is null).
  void OrderAfterEvents(const std::vector<EventPtr>& events, StreamState* ss);
  /// Records the block's completion event on `ss` and defers its captures past it.
  void RecordCompletion(OprBlock* block, StreamState* ss);
  /// Every stream of every device pool.
  std::vector<std::shared_ptr<StreamState>> AllStreams();
  /// Host-waits the latest event of every stream and runs their deferred work; returns the
  /// first device error no waiter has reported.
  std::exception_ptr DrainStreams();
  void FinishParty(OprBlock* block);
  void Complete(OprBlock* block);
  WorkerPool* ResolvePool(const Context& ctx, FnProperty prop);
  void RecordError(const ErrorPtr& error);
  void CheckNotInWorker(const char* what) const;

  EngineConfig config_;
  // WaitForVar's AdaptiveSpin budget, shared by all waiting threads (a racy update only mistunes
  // one spin): on a busy machine, where spinning only delays the worker it waits for, it soon stops.
  std::atomic<int> wait_spin_budget_{0};
  std::atomic<bool> inline_mode_;

  std::atomic<int64_t> pending_ops_{0};
  std::mutex all_mu_;
  std::condition_variable all_cv_;

  std::mutex errors_mu_;
  std::vector<ErrorPtr> errors_;  // recorded since the last WaitForAll

  struct PoolKey {
    Context ctx;
    PoolKind kind;
    bool operator==(const PoolKey&) const = default;
  };
  struct PoolKeyHash {
    size_t operator()(const PoolKey& k) const noexcept {
      return std::hash<Context>()(k.ctx) * 7u + static_cast<size_t>(k.kind);
    }
  };
  std::mutex pools_mu_;
  std::unordered_map<PoolKey, std::unique_ptr<WorkerPool>, PoolKeyHash> pools_;
  static constexpr int kCpuFastPools = 16;
  std::atomic<WorkerPool*> cpu_pools_[kCpuFastPools] = {};  // cpu(i) compute pools, i < 16
  bool shut_down_ = false;                                  // guarded by pools_mu_
};

/// A spin-wait hint to the CPU (pause); no yield to the OS, which on a loaded machine can cost a
/// whole time slice.
inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Spins (CpuRelax between checks) until ready() or `budget` rounds have passed, then adapts the
/// budget like glibc's adaptive mutexes: doubled (up to `max_rounds`) when ready() was seen, halved
/// when not, so a spin that keeps missing (a busy machine, long work) soon stops costing CPU.
/// A budget of 0 stays 0 on purpose: a version that raised it again after each sleep, to the
/// rounds the measured wait would have needed, let the host thread spin beside two math threads
/// on two cores and cut MLP inference at 2 threads to a third, for no gain at 1 thread
/// (bench/results/2026-12-02-zen4_zoo_rounds_mlp_handoff.txt, section 5). Raising it only where
/// the math threads leave a core kept 2 threads whole and the 1-thread median the same, but
/// weft-launch's processes each count a core that the others compute on
/// (bench/results/2026-12-02-zen4_waiter_spin_not_kept.txt).
/// Returns whether ready() was seen. Shared by idle workers and WaitForVar.
template <typename Ready>
bool AdaptiveSpin(int& budget, int max_rounds, Ready ready) {
  bool seen = false;
  for (int i = 0; i < budget && !seen; ++i) {
    seen = ready();
    CpuRelax();
  }
  budget = seen ? std::min(max_rounds, budget * 2 + 16) : budget / 2;
  return seen;
}

/// The engine whose worker is running on this thread (null elsewhere).
EngineImpl*& CurrentWorkerEngine() noexcept;

}  // namespace weft::engine_detail

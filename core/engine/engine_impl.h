// weft engine internals: variables, operations, pushed blocks, and the engine that schedules
// them. One implementation serves both engine types: the naive engine is this engine with
// every ready block executed inline in the thread that made it ready.
//
// Scheduling (MXNet's ThreadedVar/OprBlock scheme, re-derived): each variable keeps a FIFO of
// dependencies that are not yet granted; a granted write is exclusive, granted reads share.
// Each pushed block counts its ungranted dependencies; it is dispatched when the count reaches
// zero. Completing a block releases its variables, which grants the next writer or the next run
// of readers, and bumps the version of the variables it wrote.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/engine.h"

namespace weft {
class Device;
}

namespace weft::engine_detail {

class WorkerPool;
class VarImpl;

/// An exception shared by every variable it has tainted. `seen` records that some wait has
/// rethrown it, so WaitForAll does not rethrow it again.
struct ErrorRecord {
  std::exception_ptr error;
  std::atomic<bool> seen{false};
};
using ErrorPtr = std::shared_ptr<ErrorRecord>;

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
  void BumpVersion() noexcept { version_.fetch_add(1, std::memory_order_acq_rel); }
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
  std::exception_ptr stream_error;  // synchronising the device stream failed
  Device* device = nullptr;         // set when the block ran on a device stream
  weft_stream stream = nullptr;
  void* event = nullptr;  // weft_event recorded after fn returned, when needed

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

  /// Runs a ready block on the calling thread. `stream`/`device`: the worker's stream (or null).
  void Execute(OprBlock* block, const RunContext& rctx, Device* device);
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
  void FinishParty(OprBlock* block);
  void Complete(OprBlock* block);
  WorkerPool* ResolvePool(const Context& ctx, FnProperty prop);
  void RecordError(const ErrorPtr& error);
  [[noreturn]] void Rethrow(const ErrorPtr& error);
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

// weft core — the dependency engine (MXNet's model, src/engine/ in MXNet 1.9).
//
// Every piece of mutable state that asynchronous work touches (an array's memory, a random
// generator, a KVStore slot) is tagged with a *variable* (VarHandle). Work is pushed as a
// function together with the variables it reads (`const_vars`) and the variables it writes
// (`mutable_vars`); the engine runs it when its dependencies allow, on a worker thread of the
// Context it names, and returns from Push at once.
//
// Ordering (the only guarantee): two pushed functions that share a variable, where at least one
// of them writes it, run in push order, each seeing the other's complete effects. Functions
// that only read a variable may run concurrently with each other. Nothing else is ordered:
// independent work may run in any order and in parallel. "Push order" is the order of the Push
// calls as observed by the engine (calls from one thread are in program order; calls from two
// threads racing on the same variable are ordered by whichever takes the engine's lock first).
//
// Variable lists: a variable may be listed more than once and in both lists; the engine
// de-duplicates, and a variable that appears in `mutable_vars` is treated as written even when it
// also appears in `const_vars` (MXNet deadlocked on such lists; weft does not).
//
// Versions: every variable starts at version 0 and its version goes up by one each time a
// function that writes it completes (reads leave it unchanged).
//
// Errors (MXNet's exception propagation): when a pushed function throws, or passes an exception
// to its CallbackOnComplete, the exception is stored on every variable that function writes.
// A later function that reads or writes a variable carrying an exception is not run (unless its
// property is kNoSkip / kDeleteVar); instead the same exception is stored on the variables it
// writes. WaitForVar(v) rethrows the exception stored on v in the caller's thread. WaitForAll
// waits for all pushed work, then rethrows the first exception that no wait has rethrown yet.
// Each exception is rethrown once (MXNet's rule: the variables it tainted share one exception
// slot, which a rethrow empties): once WaitForVar or WaitForAll has rethrown it, or WaitForAll
// has passed it over for an earlier one, it is cleared from every variable it tainted, so later
// waits on any of them return normally and work pushed afterwards runs. The engine keeps working
// after any error.
//
// Device work (stream-ordered, event-completed; MXNet's async GPU dependency engine): on a device
// that is not host-addressable, a function runs on one of its Context's streams and only queues
// work there (RunContext::stream). When it returns, the engine records an event on the stream;
// the variables it wrote carry that event and it counts as complete, with no host wait. A later
// function on the same stream needs nothing (queue order); one on another stream of the same
// plugin makes its stream wait for the event (stream_wait_event); host code — a function on a
// cpu Context, a device of another plugin, WaitForVar, WaitForAll — blocks on the event. Streams
// are chosen so that a chain of functions on the same data stays on one stream. The captures of
// a one-shot function (PushSync/PushAsync) are destroyed, and a DeleteVariable function is run,
// only after the stream has passed the work queued so far, so a function may own the buffers its
// queued work uses (pinned staging, workspaces). A failure of queued work (a sticky stream error)
// is reported by WaitForVar on a variable that depends on it, by a host function reading such a
// variable (stored on its outputs like any exception), or by WaitForAll; after a waiter has seen
// it the engine clears the sticky errors of that plugin's streams (failures of other work pending
// at that moment are reported with it).
//
// Engines: WEFT_ENGINE_TYPE selects the global engine at first use of Engine::Get():
//   threaded (default)  worker threads per Context, see EngineConfig for the counts;
//   naive               runs every function inline in the pushing thread, in push order
//                       (debugging, and the serial oracle in tests).
//
// Threads and CPU math libraries: the engine is the owner of CPU parallelism. With W worker
// threads per cpu context running ops concurrently, a kernel should not use more than
// RecommendedCpuMathThreads() threads in OpenBLAS/oneDNN (cores / W, at least 1). The CPU plugin
// reads WEFT_CPU_MATH_THREADS (through the host's config_get); when that is unset it should use
// the same rule: hardware cores divided by WEFT_CPU_WORKER_NTHREADS (default 1).
//
// Thread-safety: every Engine method may be called from any thread, including from inside a
// pushed function, except WaitForVar/WaitForAll, which must not be called from inside a pushed
// function (they would wait for themselves; the engine detects the case on its own workers and
// throws weft::Error).
#pragma once

#include "weft/export.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/context.h"

// Defined in weft/sdk/device.h; repeated so this header does not pull the C ABI in.
typedef struct weft_stream_s* weft_stream;

namespace weft {

namespace engine_detail {
class EngineImpl;
struct OprBlock;
}  // namespace engine_detail

/// An engine variable: a tag for some piece of state. Created by Engine::NewVariable, destroyed
/// by Engine::DeleteVariable. Opaque except for its version.
class WEFT_API Var {
 public:
  /// Number of completed writes to this variable (0 for a fresh one). Thread-safe; the value may
  /// be stale by the time it is used when writes are still pending.
  uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }
  /// A value that no other variable and no other version of this one ever has (drawn from one
  /// process-wide counter at creation and at each completed write, never 0): equal stamps mean
  /// the same variable with no write completed in between. Kernels get it as their inputs'
  /// content stamps (SDK weft_kernel_args.input_stamps). Thread-safe; as stale as version().
  uint64_t stamp() const noexcept { return stamp_.load(std::memory_order_acquire); }

 protected:
  Var() noexcept : stamp_(NextStamp()) {}
  ~Var() = default;
  static uint64_t NextStamp() noexcept;
  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> stamp_;
};
using VarHandle = Var*;

/// A reusable operation (Engine::NewOperator): a function and its variables, pushed many times.
class Opr;
using OprHandle = Opr*;

/// What a pushed function gets to run with.
struct WEFT_API RunContext {
  /// The Context the function was pushed for.
  Context ctx;
  /// The stream to queue device work on, on devices that are not host-addressable (NULL on the
  /// CPU, on host-addressable devices and in the naive engine, which means "synchronous" to every
  /// device call). The engine is stream-ordered (see "Device work" above): when the function
  /// starts, the device work of the operations it depends on is ordered before anything it queues
  /// on this stream, but may not have finished; so every device call inside the function must
  /// take this stream (a synchronous NULL-stream call could see the inputs unfinished). The
  /// function counts as complete when it returns (or calls back); its queued work completes later.
  weft_stream stream = nullptr;
  /// Index of the worker thread running the function within its pool (0 in the naive engine
  /// and for functions run outside a pool). Useful for per-worker scratch state.
  int worker = 0;
};

/// Tells the engine that an asynchronous function has finished. Call it exactly once (one of its
/// copies, from any thread), with an exception to report a failure: the exception is then stored
/// on the function's written variables as described at the top of this file. Never calling it
/// leaves the function's variables blocked for ever. A second call made while the function is
/// still pending (e.g. before it returned) is ignored and logged as an error; one made after the
/// function completed is undefined behaviour, like any use of a finished callback.
class WEFT_API CallbackOnComplete {
 public:
  CallbackOnComplete() = default;
  /// Marks the function complete; `error` (may be null) is its failure.
  void operator()(std::exception_ptr error = nullptr) const;

 private:
  friend class engine_detail::EngineImpl;
  explicit CallbackOnComplete(engine_detail::OprBlock* block) : block_(block) {}
  engine_detail::OprBlock* block_ = nullptr;
};

/// How and where a function runs.
enum class FnProperty : int {
  /// Computation on the Context's compute workers.
  kNormal = 0,
  /// A copy whose source is on the (non-host) device named by the Context, to the host or a peer:
  /// runs on that device's copy-from workers (their own stream), so it overlaps compute.
  kCopyFromDevice = 1,
  /// A copy into the device named by the Context: runs on its copy-to workers. (On cpu
  /// Contexts both copy properties run on the ordinary cpu workers.)
  kCopyToDevice = 2,
  /// CPU work that should not wait behind ordinary CPU ops (e.g. KVStore reduction): runs on a
  /// separate CPU pool (WEFT_CPU_PRIORITY_NTHREADS). Same as kNormal on non-CPU Contexts.
  kCPUPrioritized = 3,
  /// The function only starts asynchronous work and returns at once; it is run directly by the
  /// thread that satisfies its last dependency (the pusher or a worker), not queued on a pool.
  /// It must not block. RunContext::stream is NULL.
  kAsync = 4,
  /// Internal: deleting a variable or operator. Runs even when its variables carry exceptions.
  kDeleteVar = 5,
  /// Runs even when its variables carry exceptions (and does not propagate them).
  kNoSkip = 6,
};

/// Names kNormal -> "normal", ... (for messages and traces).
WEFT_API const char* FnPropertyName(FnProperty prop) noexcept;

/// Function types. A SyncFn is complete when it returns (or throws); an AsyncFn when it calls
/// its CallbackOnComplete (a throw from an AsyncFn counts as completion with that error, and
/// the callback must then not be called).
using SyncFn = std::function<void(RunContext)>;
using AsyncFn = std::function<void(RunContext, CallbackOnComplete)>;

enum class EngineType { kNaive, kThreaded };

/// Engine settings; FromEnv() reads them from the environment (all WEFT_* variables are
/// documented in README.md). Invalid values raise weft::Error naming the variable.
struct WEFT_API EngineConfig {
  /// WEFT_ENGINE_TYPE=naive|threaded (default threaded).
  EngineType type = EngineType::kThreaded;
  /// WEFT_CPU_WORKER_NTHREADS: compute workers per cpu Context (default 1, MXNet's default).
  int cpu_workers = 1;
  /// WEFT_CPU_PRIORITY_NTHREADS: workers of the kCPUPrioritized pool (default 1), created on
  /// first use.
  int cpu_priority_workers = 1;
  /// WEFT_GPU_WORKER_NTHREADS: compute workers per non-CPU device (default 2); the device gets as many
  /// streams (any worker may use any of them) when it is not host-addressable.
  int device_workers = 2;
  /// WEFT_GPU_COPY_NTHREADS: workers for each copy direction per non-CPU device (default 1).
  int copy_workers = 1;
  /// WEFT_ENGINE_SPIN: pause instructions an idle worker, or a thread waiting for a result, spins
  /// through before it sleeps (default 20000; 0 = sleep at once). A pause takes 1-40 ns by CPU: 27
  /// ns on a Zen 4, so 20000 rounds last about 0.55 ms there. Each worker's budget, and the one that
  /// waiting threads share, halves after every spin that misses and is not raised again once it
  /// reaches 0 (engine_impl.h AdaptiveSpin), so threads whose waits outlast their spin soon stop
  /// spinning: a waiting host thread then stays off the cores of the cpu plugin's math threads
  /// (raising it again was measured to cut MNIST MLP inference at 2 threads to a third;
  /// bench/results/2026-12-02-zen4_zoo_rounds_mlp_handoff.txt). Spinning spares the pusher a
  /// wake-up per op when ops arrive back to back; set 0 on machines shared by many processes.
  /// Not 2000: in a small network's inference the worker and the waiting host thread then slept
  /// between batches, and waking them cost more than the batch (the MNIST MLP at 1 thread,
  /// predict_mnist: 223-238 k samples/s with 2000, 376-419 k with 20000-100000;
  /// bench/results/2026-11-30-engine_spin.txt).
  int spin_rounds = 20000;

  static EngineConfig FromEnv();
};

/// The dependency engine. See the top of this file for ordering, errors and thread-safety.
class WEFT_API Engine {
 public:
  /// The process-wide engine, created on first call from EngineConfig::FromEnv() (thread-safe).
  /// It lives until process exit: at exit it finishes pending work, joins its workers and then
  /// runs anything pushed later (e.g. from static destructors) inline. With
  /// WEFT_PROFILER_OUTPUT=file.json set, profiling is on from the start and the trace is
  /// written there at exit.
  static Engine* Get();
  /// A separate engine (tests, benchmarks). Destroying it waits for its pending work (errors are
  /// logged, not thrown) and joins its workers; its variables must not be used afterwards.
  static std::unique_ptr<Engine> Create(const EngineConfig& config);

  virtual ~Engine();

  /// Which engine this is.
  virtual EngineType type() const noexcept = 0;
  /// The settings it was created with.
  virtual const EngineConfig& config() const noexcept = 0;

  /// A fresh variable (version 0, no exception).
  virtual VarHandle NewVariable() = 0;

  /// Schedules `delete_fn` to run after every function pushed before it that uses `var` (and,
  /// on a device, after their queued device work; delete_fn then gets a NULL stream), then
  /// frees the variable. delete_fn may be empty; it runs even if `var` carries an exception
  /// (which is then dropped). Using `var` in a push after this call is undefined.
  virtual void DeleteVariable(SyncFn delete_fn, const Context& ctx, VarHandle var) = 0;

  /// A reusable operation. The lists are de-duplicated as for PushAsync. `name` (copied) labels
  /// it in traces and error messages; may be null.
  virtual OprHandle NewOperator(AsyncFn fn, const std::vector<VarHandle>& const_vars,
                                const std::vector<VarHandle>& mutable_vars, FnProperty prop = FnProperty::kNormal,
                                const char* name = nullptr) = 0;
  /// Frees `op` after every push of it made before this call has completed.
  virtual void DeleteOperator(OprHandle op) = 0;
  /// Pushes one run of `op` on `ctx`. `priority`: among functions ready at the same time on the
  /// same pool, higher runs first (FIFO among equals). `profiling` false leaves this run out of
  /// the trace.
  virtual void Push(OprHandle op, const Context& ctx, int priority = 0, bool profiling = true) = 0;

  /// Pushes an asynchronous function (see AsyncFn). Throws weft::Error (and pushes nothing) for a
  /// null variable or a Context whose device does not exist.
  virtual void PushAsync(AsyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                         const std::vector<VarHandle>& mutable_vars, FnProperty prop = FnProperty::kNormal,
                         int priority = 0, const char* name = nullptr) = 0;
  /// Pushes a synchronous function: complete when it returns or throws.
  virtual void PushSync(SyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                        const std::vector<VarHandle>& mutable_vars, FnProperty prop = FnProperty::kNormal,
                        int priority = 0, const char* name = nullptr) = 0;

  /// Blocks until every function pushed before this call that writes `var` has completed
  /// (pending reads do not block it), together with the device work they queued, then rethrows
  /// the exception stored on `var` (or the failure of that device work), if any and if no wait
  /// has rethrown it before; that clears it from every variable it tainted.
  /// Returns at once for a variable with no pending writes.
  virtual void WaitForVar(VarHandle var) = 0;
  /// Blocks until every function pushed so far (from any thread) and every device stream of
  /// this engine have completed, then rethrows the first exception not rethrown before (see the
  /// top of this file).
  virtual void WaitForAll() = 0;

  /// Number of pushed functions not yet complete (for diagnostics; racy by nature).
  virtual int64_t PendingOps() const noexcept = 0;
};

/// Threads a CPU kernel should give its math library (OpenBLAS, oneDNN) so that the engine's
/// concurrent CPU workers do not oversubscribe the cores: WEFT_CPU_MATH_THREADS when set, else
/// max(1, hardware threads / WEFT_CPU_WORKER_NTHREADS).
WEFT_API int RecommendedCpuMathThreads();

}  // namespace weft

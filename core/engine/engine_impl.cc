#include "engine_impl.h"

#include <algorithm>
#include <utility>

#include "weft/device.h"
#include "weft/logging.h"
#include "weft/profiler.h"
#include "weft/runtime.h"
#include "worker_pool.h"

namespace weft::engine_detail {

EngineImpl*& CurrentWorkerEngine() noexcept {
  thread_local EngineImpl* engine = nullptr;
  return engine;
}

namespace {

// Functions with these properties run even on tainted variables and do not pass taint on.
bool RunsDespiteErrors(FnProperty prop) { return prop == FnProperty::kNoSkip || prop == FnProperty::kDeleteVar; }

const char* TraceCategory(FnProperty prop) {
  switch (prop) {
    case FnProperty::kCopyFromDevice:
    case FnProperty::kCopyToDevice:
      return "copy";
    case FnProperty::kAsync:
      return "async";
    case FnProperty::kDeleteVar:
      return "delete";
    default:
      return "op";
  }
}

std::string OpLabel(const Opr* opr) { return opr->name.empty() ? std::string("<unnamed>") : opr->name; }

void SortUnique(std::vector<VarImpl*>& vars) {
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
}

// Records that `block` now holds its dependency on `var` (caller holds var->mu).
void OnGrantedLocked(VarImpl* var, OprBlock* block) {
  if (var->error && !RunsDespiteErrors(block->opr->prop)) block->InheritError(var->error);
}

}  // namespace

void OprBlock::InheritError(const ErrorPtr& error) {
  while (error_lock.test_and_set(std::memory_order_acquire)) {
  }
  if (!inherited_error) inherited_error = error;
  error_lock.clear(std::memory_order_release);
}

EngineImpl::EngineImpl(const EngineConfig& config)
    : config_(config), wait_spin_budget_(config.spin_rounds), inline_mode_(config.type == EngineType::kNaive) {}

EngineImpl::~EngineImpl() { Shutdown(); }

VarHandle EngineImpl::NewVariable() { return new VarImpl(); }

void EngineImpl::FillVars(Opr* opr, const std::vector<VarHandle>& const_vars,
                          const std::vector<VarHandle>& mutable_vars) {
  auto convert = [&](const std::vector<VarHandle>& in, std::vector<VarImpl*>& out, const char* list) {
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i]) {
        Fail("engine: operation '{}': {}[{}] is a null variable; create variables with Engine::NewVariable",
             OpLabel(opr), list, i);
      }
      out.push_back(static_cast<VarImpl*>(in[i]));
    }
  };
  convert(mutable_vars, opr->mutable_vars, "mutable_vars");
  convert(const_vars, opr->const_vars, "const_vars");
  if (opr->mutable_vars.size() > 1) SortUnique(opr->mutable_vars);
  if (opr->const_vars.size() > 1) SortUnique(opr->const_vars);
  // A variable that is both read and written is only written (a read dependency as well would
  // wait for the op's own write).
  if (!opr->mutable_vars.empty() && !opr->const_vars.empty()) {
    std::erase_if(opr->const_vars, [&](VarImpl* v) {
      return std::binary_search(opr->mutable_vars.begin(), opr->mutable_vars.end(), v);
    });
  }
}

void EngineImpl::SetNodes(OprBlock* block, const std::vector<VarImpl*>& const_vars,
                          const std::vector<VarImpl*>& mutable_vars) {
  VarNode* nodes = block->ReserveNodes(const_vars.size() + mutable_vars.size());
  int n = 0;
  for (VarImpl* v : mutable_vars) nodes[n++] = VarNode{block, v, nullptr, true};
  for (VarImpl* v : const_vars) nodes[n++] = VarNode{block, v, nullptr, false};
  block->num_nodes = n;
}

void EngineImpl::SetNodes(OprBlock* block, const std::vector<VarHandle>& const_vars,
                          const std::vector<VarHandle>& mutable_vars) {
  const size_t total = const_vars.size() + mutable_vars.size();
  if (total > 16) {
    // Long lists: sort-based de-duplication.
    Opr lists;
    lists.name = block->opr->name;
    FillVars(&lists, const_vars, mutable_vars);
    SetNodes(block, lists.const_vars, lists.mutable_vars);
    return;
  }
  VarNode* nodes = block->ReserveNodes(total);
  int n = 0;
  auto listed = [&](VarImpl* v) {
    for (int i = 0; i < n; ++i) {
      if (nodes[i].var == v) return true;
    }
    return false;
  };
  auto add = [&](const std::vector<VarHandle>& in, bool write, const char* list) {
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i]) {
        Fail("engine: operation '{}': {}[{}] is a null variable; create variables with Engine::NewVariable",
             OpLabel(block->opr), list, i);
      }
      auto* v = static_cast<VarImpl*>(in[i]);
      // Writes are added first, so a variable that is also read stays a write only.
      if (!listed(v)) nodes[n++] = VarNode{block, v, nullptr, write};
    }
  };
  add(mutable_vars, true, "mutable_vars");
  add(const_vars, false, "const_vars");
  block->num_nodes = n;
}

OprBlock* EngineImpl::NewBlock(Opr* opr, const Context& ctx, int priority, bool profiling) {
  auto* block = new OprBlock();
  block->engine = this;
  block->opr = opr;
  block->ctx = ctx;
  block->priority = priority;
  block->profiling = profiling;
  SetNodes(block, opr->const_vars, opr->mutable_vars);
  return block;
}

OprBlock* EngineImpl::NewOneShot(AsyncFn fn, SyncFn sync_fn, const Context& ctx,
                                 const std::vector<VarHandle>& const_vars, const std::vector<VarHandle>& mutable_vars,
                                 FnProperty prop, int priority, const char* name) {
  auto block = std::make_unique<OprBlock>();
  Opr& opr = block->owned_opr.emplace();
  opr.fn = std::move(fn);
  opr.sync_fn = std::move(sync_fn);
  opr.prop = prop;
  if (name) opr.name = name;
  block->engine = this;
  block->opr = &opr;
  block->ctx = ctx;
  block->priority = priority;
  SetNodes(block.get(), const_vars, mutable_vars);
  return block.release();
}

OprHandle EngineImpl::NewOperator(AsyncFn fn, const std::vector<VarHandle>& const_vars,
                                  const std::vector<VarHandle>& mutable_vars, FnProperty prop, const char* name) {
  auto opr = std::make_unique<Opr>();
  opr->fn = std::move(fn);
  opr->prop = prop;
  if (name) opr->name = name;
  FillVars(opr.get(), const_vars, mutable_vars);
  return opr.release();
}

void EngineImpl::DeleteOperator(OprHandle op) {
  if (!op) return;
  std::vector<VarHandle> vars(op->const_vars.begin(), op->const_vars.end());
  vars.insert(vars.end(), op->mutable_vars.begin(), op->mutable_vars.end());
  OprBlock* block = NewOneShot(
      [op](RunContext, CallbackOnComplete done) {
        delete op;
        done();
      },
      {}, Context::cpu(0), {}, vars, FnProperty::kDeleteVar, 0, "DeleteOperator");
  // Writing every variable of the operator orders the deletion after all its pushed runs (a
  // read would run alongside earlier reads); it is not a real write, so versions stay.
  block->opr->bump_version = false;
  block->profiling = false;
  PushBlock(block);
}

void EngineImpl::Push(OprHandle op, const Context& ctx, int priority, bool profiling) {
  WEFT_CHECK(op != nullptr, "engine: Push of a null operator; create one with Engine::NewOperator");
  WorkerPool* pool = ResolvePool(ctx, op->prop);
  OprBlock* block = NewBlock(op, ctx, priority, profiling);
  block->pool = pool;
  PushBlock(block);
}

void EngineImpl::PushAsync(AsyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                           const std::vector<VarHandle>& mutable_vars, FnProperty prop, int priority,
                           const char* name) {
  WorkerPool* pool = ResolvePool(ctx, prop);
  OprBlock* block = NewOneShot(std::move(fn), {}, ctx, const_vars, mutable_vars, prop, priority, name);
  block->pool = pool;
  PushBlock(block);
}

void EngineImpl::PushSync(SyncFn fn, const Context& ctx, const std::vector<VarHandle>& const_vars,
                          const std::vector<VarHandle>& mutable_vars, FnProperty prop, int priority, const char* name) {
  WorkerPool* pool = ResolvePool(ctx, prop);
  OprBlock* block = NewOneShot({}, std::move(fn), ctx, const_vars, mutable_vars, prop, priority, name);
  block->pool = pool;
  PushBlock(block);
}

void EngineImpl::DeleteVariable(SyncFn delete_fn, const Context& ctx, VarHandle var) {
  WEFT_CHECK(var != nullptr, "engine: DeleteVariable of a null variable");
  // Without a function there is nothing to run on a worker: the deletion completes in whichever
  // thread releases the variable.
  WorkerPool* pool = delete_fn ? ResolvePool(ctx, FnProperty::kDeleteVar) : nullptr;
  if (!delete_fn) delete_fn = [](RunContext) {};
  OprBlock* block = NewOneShot({}, std::move(delete_fn), ctx, {}, {var}, FnProperty::kDeleteVar, 0, "DeleteVariable");
  block->opr->var_to_delete = static_cast<VarImpl*>(var);
  block->pool = pool;
  block->profiling = pool != nullptr;
  PushBlock(block);
}

void EngineImpl::PushBlock(OprBlock* block) {
  pending_ops_.fetch_add(1, std::memory_order_acq_rel);
  const int n = block->num_nodes;
  // One extra count keeps the block from being dispatched before all its dependencies are queued.
  block->pending.store(n + 1, std::memory_order_relaxed);
  int granted = 0;
  for (VarNode& node : *block) {
    VarImpl* v = node.var;
    std::lock_guard<std::mutex> lock(v->mu);
    bool free_now = node.write ? (!v->write_granted && v->running_reads == 0 && v->head == nullptr)
                               : (!v->write_granted && v->head == nullptr);
    if (free_now) {
      if (node.write) {
        v->write_granted = true;
      } else {
        ++v->running_reads;
      }
      OnGrantedLocked(v, block);
      ++granted;
    } else {
      node.next = nullptr;
      if (v->tail) {
        v->tail->next = &node;
      } else {
        v->head = &node;
      }
      v->tail = &node;
    }
  }
  if (block->pending.fetch_sub(granted + 1, std::memory_order_acq_rel) == granted + 1) Dispatch(block);
}

void EngineImpl::Dispatch(OprBlock* block) {
  if (inline_mode_.load(std::memory_order_acquire)) {
    ExecuteInline(block);
  } else if (block->pool == nullptr) {
    Execute(block, RunContext{block->ctx, nullptr, 0}, nullptr);
  } else {
    block->pool->Push(block);
  }
}

void EngineImpl::ExecuteInline(OprBlock* block) {
  OprBlock::InlineWaiter waiter;
  block->inline_waiter = &waiter;
  Execute(block, RunContext{block->ctx, nullptr, 0}, nullptr);
  // An asynchronous function may complete later, from another thread; the naive engine's
  // contract is that the push has finished when it returns.
  std::unique_lock<std::mutex> lock(waiter.mu);
  waiter.cv.wait(lock, [&] { return waiter.done; });
}

void EngineImpl::Execute(OprBlock* block, const RunContext& rctx, Device* device) {
  Opr* opr = block->opr;
  if (block->profiling && Profiler::Get().enabled()) {
    block->start_ns = Profiler::NowNs();
    block->trace_tid = Profiler::ThreadId();
  }
  if (block->inherited_error && !RunsDespiteErrors(opr->prop)) {
    // Skipped: its inputs or outputs carry an exception, which Complete passes on.
    Complete(block);
    return;
  }
  block->device = device;
  block->stream = rctx.stream;
  EngineImpl*& current = CurrentWorkerEngine();
  EngineImpl* outer = current;
  current = this;
  try {
    if (opr->sync_fn) {
      opr->sync_fn(rctx);
      OnCallback(block, nullptr);
    } else {
      opr->fn(rctx, CallbackOnComplete(block));
    }
  } catch (...) {
    if (!block->callback_called.exchange(true, std::memory_order_acq_rel)) {
      block->callback_error = std::current_exception();
      FinishParty(block);
    } else {
      LogError("engine: operation '{}' threw after calling its CallbackOnComplete; the exception is dropped",
               OpLabel(opr));
    }
  }
  current = outer;
  if (device != nullptr && rctx.stream != nullptr) {
    // Work the function queued on the stream must be finished before dependants run.
    try {
      if (block->callback_called.load(std::memory_order_acquire)) {
        device->SynchronizeStream(rctx.stream);
      } else {
        weft_event event = device->CreateEvent();
        block->event = event;
        device->RecordEvent(event, rctx.stream);
      }
    } catch (...) {
      block->stream_error = std::current_exception();
    }
  }
  FinishParty(block);
}

void EngineImpl::OnCallback(OprBlock* block, std::exception_ptr error) {
  if (block->callback_called.exchange(true, std::memory_order_acq_rel)) {
    LogError("engine: CallbackOnComplete of operation '{}' called more than once; the extra call is ignored",
             OpLabel(block->opr));
    return;
  }
  block->callback_error = std::move(error);
  FinishParty(block);
}

void EngineImpl::FinishParty(OprBlock* block) {
  if (block->parties.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (block->event) {
    auto event = static_cast<weft_event>(block->event);
    try {
      block->device->SynchronizeEvent(event);
    } catch (...) {
      if (!block->stream_error) block->stream_error = std::current_exception();
    }
    try {
      block->device->DestroyEvent(event);
    } catch (const std::exception& e) {
      LogWarning("engine: destroying an event failed: {}", e.what());
    }
    block->event = nullptr;
  }
  Complete(block);
}

void EngineImpl::Complete(OprBlock* block) {
  Opr* opr = block->opr;
  ErrorPtr error;
  std::exception_ptr own = block->callback_error ? block->callback_error : block->stream_error;
  if (own) {
    error = std::make_shared<ErrorRecord>();
    error->error = own;
    if (opr->prop == FnProperty::kDeleteVar) {
      // Nobody can wait on a deleted variable: report the failure now.
      try {
        std::rethrow_exception(own);
      } catch (const std::exception& e) {
        LogError("engine: '{}' failed: {}", OpLabel(opr), e.what());
      } catch (...) {
        LogError("engine: '{}' failed with a non-standard exception", OpLabel(opr));
      }
      error.reset();
    } else {
      RecordError(error);
    }
  } else if (!RunsDespiteErrors(opr->prop)) {
    error = block->inherited_error;
  }

  if (block->start_ns != 0) {
    std::string args = fmt::format(R"({{"ctx":"{}","priority":{}}})", block->ctx.ToString(), block->priority);
    Profiler::Get().AddEvent(OpLabel(opr), TraceCategory(opr->prop), block->start_ns, Profiler::NowNs(), args,
                             block->trace_tid);
  }

  // Everything needed from `opr` is read before the variables are released: a DeleteOperator
  // queued behind this block may free a reusable opr as soon as they are.
  VarImpl* to_delete = opr->var_to_delete;
  const bool bump_version = opr->bump_version;
  std::vector<OprBlock*> ready;
  for (VarNode& node : *block) {
    VarImpl* v = node.var;
    bool free_var = false;
    {
      std::lock_guard<std::mutex> lock(v->mu);
      if (!node.write) {
        if (--v->running_reads == 0 && v->head != nullptr) {
          // Reads are only queued behind a write, so what waits here is a write.
          VarNode* next = v->head;
          v->head = next->next;
          if (!v->head) v->tail = nullptr;
          v->write_granted = true;
          OnGrantedLocked(v, next->block);
          ready.push_back(next->block);
        }
      } else {
        if (v == to_delete) {
          v->error.reset();
        } else if (error) {
          v->error = error;
        }
        if (bump_version) v->BumpVersion();
        v->write_granted = false;
        if (v->head != nullptr && v->head->write) {
          VarNode* next = v->head;
          v->head = next->next;
          if (!v->head) v->tail = nullptr;
          v->write_granted = true;
          OnGrantedLocked(v, next->block);
          ready.push_back(next->block);
        } else {
          while (v->head != nullptr && !v->head->write) {
            VarNode* next = v->head;
            v->head = next->next;
            if (!v->head) v->tail = nullptr;
            ++v->running_reads;
            OnGrantedLocked(v, next->block);
            ready.push_back(next->block);
          }
        }
        if (v == to_delete) {
          free_var = v->head == nullptr && v->running_reads == 0 && !v->write_granted;
          if (!free_var) {
            LogError("engine: a variable was used in a push after DeleteVariable; it is kept alive (leaked)");
          }
        }
      }
    }
    if (free_var) delete v;
  }
  for (OprBlock* next : ready) {
    if (next->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) Dispatch(next);
  }

  OprBlock::InlineWaiter* waiter = block->inline_waiter;
  // Drop this thread's references to the exception before the op counts as complete: the
  // waiter may then free it (exception_ptr's count lives in uninstrumented libstdc++, so
  // ThreadSanitizer could not see that the release here happens first).
  error.reset();
  own = nullptr;
  delete block;
  if (pending_ops_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Taking the lock orders this notification after a waiter's check of the counter.
    std::lock_guard<std::mutex> lock(all_mu_);
    all_cv_.notify_all();
  }
  if (waiter) {
    std::lock_guard<std::mutex> lock(waiter->mu);
    waiter->done = true;
    waiter->cv.notify_all();
  }
}

void EngineImpl::RecordError(const ErrorPtr& error) {
  std::lock_guard<std::mutex> lock(errors_mu_);
  errors_.push_back(error);
}

void EngineImpl::CheckNotInWorker(const char* what) const {
  if (CurrentWorkerEngine() == this) {
    Fail(
        "engine: {} called from inside a pushed function; it would wait for that function itself. Push the "
        "dependent work with the right variables instead",
        what);
  }
}

void EngineImpl::WaitForVar(VarHandle var) {
  WEFT_CHECK(var != nullptr, "engine: WaitForVar of a null variable");
  auto* v = static_cast<VarImpl*>(var);
  ErrorPtr error;
  bool pending;
  {
    std::lock_guard<std::mutex> lock(v->mu);
    pending = v->write_granted || v->head != nullptr;
    if (!pending) error = std::exchange(v->error, nullptr);
  }
  if (pending) {
    CheckNotInWorker("WaitForVar on a variable with pending writes");
    struct WaitState {
      std::mutex mu;
      std::condition_variable cv;
      std::atomic<bool> done{false};  // set under mu, also read without it while spinning
      ErrorPtr error;
    } state;
    // A read queued behind the pending writes; it takes the variable's exception when it runs,
    // so work pushed after this call sees the variable clean.
    WaitState* st = &state;
    OprBlock* block = NewOneShot(
        [v, st](RunContext, CallbackOnComplete done) {
          ErrorPtr taken;
          {
            std::lock_guard<std::mutex> lock(v->mu);
            taken = std::exchange(v->error, nullptr);
          }
          done();
          std::lock_guard<std::mutex> lock(st->mu);
          st->error = std::move(taken);
          st->done.store(true, std::memory_order_release);
          st->cv.notify_all();
        },
        {}, Context::cpu(0), {var}, {}, FnProperty::kNoSkip, 0, "WaitForVar");
    block->profiling = false;
    PushBlock(block);
    // Spin first, as idle workers do: when the pending work is short this saves a sleep and a
    // futex wake-up on each side of a push-then-wait round trip (55 us -> about 1 us on 2 idle
    // cores, where waking an idle core is what costs). Taking the lock afterwards also waits for
    // the notifier to leave `state`.
    int budget = wait_spin_budget_.load(std::memory_order_relaxed);
    AdaptiveSpin(budget, config_.spin_rounds, [&] { return state.done.load(std::memory_order_acquire); });
    wait_spin_budget_.store(budget, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(state.mu);
    state.cv.wait(lock, [&] { return state.done.load(std::memory_order_relaxed); });
    error = std::move(state.error);
  }
  if (error) Rethrow(error);
}

void EngineImpl::WaitForAll() {
  CheckNotInWorker("WaitForAll");
  {
    std::unique_lock<std::mutex> lock(all_mu_);
    all_cv_.wait(lock, [&] { return pending_ops_.load(std::memory_order_acquire) == 0; });
  }
  ErrorPtr first;
  {
    std::lock_guard<std::mutex> lock(errors_mu_);
    for (const ErrorPtr& e : errors_) {
      if (!e->seen.exchange(true) && !first) first = e;
    }
    errors_.clear();
  }
  if (first) std::rethrow_exception(first->error);
}

void EngineImpl::Rethrow(const ErrorPtr& error) {
  error->seen.store(true);
  std::rethrow_exception(error->error);
}

WorkerPool* EngineImpl::ResolvePool(const Context& ctx, FnProperty prop) {
  const bool is_cpu = ctx.GetDeviceType() == "cpu";
  WEFT_CHECK(ctx.GetDeviceId() >= 0, "engine: context {} has a negative device id", ctx.ToString());
  if (prop == FnProperty::kAsync) {
    if (!is_cpu) Runtime::Get().GetDevice(ctx);  // throws the clear error for an unknown device
    return nullptr;
  }
  PoolKind kind = PoolKind::kCompute;
  if (is_cpu) {
    if (prop == FnProperty::kCPUPrioritized) kind = PoolKind::kCpuPriority;
    if (kind == PoolKind::kCompute && ctx.GetDeviceId() < kCpuFastPools) {
      if (WorkerPool* pool = cpu_pools_[ctx.GetDeviceId()].load(std::memory_order_acquire)) return pool;
    }
  } else {
    if (prop == FnProperty::kCopyFromDevice) kind = PoolKind::kCopyFrom;
    if (prop == FnProperty::kCopyToDevice) kind = PoolKind::kCopyTo;
  }
  if (inline_mode_.load(std::memory_order_acquire)) {
    if (!is_cpu) Runtime::Get().GetDevice(ctx);  // validates the context
    return nullptr;
  }
  // The priority pool serves every cpu context.
  PoolKey key{kind == PoolKind::kCpuPriority ? Context::cpu(0) : ctx, kind};
  std::lock_guard<std::mutex> lock(pools_mu_);
  if (shut_down_) return nullptr;
  auto it = pools_.find(key);
  if (it != pools_.end()) return it->second.get();

  Device* stream_device = nullptr;
  int threads = config_.cpu_workers;
  std::string label = ctx.ToString();
  if (is_cpu) {
    if (kind == PoolKind::kCpuPriority) {
      threads = config_.cpu_priority_workers;
      label = "cpu-priority";
    }
  } else {
    Device& device = Runtime::Get().GetDevice(ctx);  // throws for an unknown device
    if (!device.host_addressable()) stream_device = &device;
    threads = kind == PoolKind::kCompute ? config_.device_workers : config_.copy_workers;
    if (kind == PoolKind::kCopyFrom) label += " copy-from";
    if (kind == PoolKind::kCopyTo) label += " copy-to";
  }
  auto pool = std::make_unique<WorkerPool>(this, key.ctx, label, threads, stream_device, config_.spin_rounds);
  WorkerPool* raw = pool.get();
  pools_.emplace(key, std::move(pool));
  if (is_cpu && kind == PoolKind::kCompute && ctx.GetDeviceId() < kCpuFastPools) {
    cpu_pools_[ctx.GetDeviceId()].store(raw, std::memory_order_release);
  }
  return raw;
}

void EngineImpl::Shutdown() noexcept {
  if (CurrentWorkerEngine() == this) {
    // exit() called from inside an op: waiting or joining would wait for this very thread.
    LogWarning("engine: shut down from inside a pushed function; its workers are left running");
    inline_mode_.store(true, std::memory_order_release);
    return;
  }
  try {
    WaitForAll();
  } catch (const std::exception& e) {
    LogWarning("engine: an error nobody waited for was pending at shutdown: {}", e.what());
  } catch (...) {
    LogWarning("engine: a non-standard error nobody waited for was pending at shutdown");
  }
  std::unordered_map<PoolKey, std::unique_ptr<WorkerPool>, PoolKeyHash> pools;
  {
    std::lock_guard<std::mutex> lock(pools_mu_);
    shut_down_ = true;
    inline_mode_.store(true, std::memory_order_release);
    for (auto& p : cpu_pools_) p.store(nullptr, std::memory_order_release);
    pools.swap(pools_);
  }
  pools.clear();  // joins the workers; anything still queued runs first
}

}  // namespace weft::engine_detail

namespace weft {

void CallbackOnComplete::operator()(std::exception_ptr error) const {
  if (!block_) {
    LogError("engine: an empty CallbackOnComplete was called; ignored");
    return;
  }
  block_->engine->OnCallback(block_, std::move(error));
}

}  // namespace weft

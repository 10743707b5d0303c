#include "engine_impl.h"

#include <algorithm>
#include <utility>

#include "weft/internal/device.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"
#include "weft/profiler.h"
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
  if (IsLive(var->error) && !RunsDespiteErrors(block->opr->prop)) block->InheritError(var->error);
}

// Records on `v` that `done` (null: host work, which waited for everything first) completes the
// block's write of it, or one of the reads of its current value. Caller holds v->mu.
void AttachEvent(VarImpl* v, bool write, const EventPtr& done) {
  if (write) {
    v->write_event = done;
    v->read_events.clear();
  } else if (done) {
    // A later event of the same stream covers an earlier one.
    auto same = std::find_if(v->read_events.begin(), v->read_events.end(),
                             [&](const EventPtr& e) { return e->owner == done->owner; });
    if (same != v->read_events.end()) {
      *same = done;
    } else {
      v->read_events.push_back(done);
    }
  }
  if (done) v->has_events.store(true, std::memory_order_relaxed);
}

}  // namespace

void OprBlock::InheritError(const ErrorPtr& error) {
  while (error_lock.test_and_set(std::memory_order_acquire)) {
  }
  if (!inherited_error) inherited_error = error;
  error_lock.clear(std::memory_order_release);
}

EventRef::~EventRef() {
  if (!event) return;
  std::lock_guard<std::mutex> lock(owner->events_mu);
  owner->free_events.push_back(event);
}

StreamState::~StreamState() {
  try {
    for (weft_event e : free_events) device->DestroyEvent(e);
    device->DestroyStream(stream);
  } catch (const std::exception& e) {
    LogWarning("engine: releasing a stream of {} failed: {}", device->context(), e.what());
  }
}

EventPtr StreamState::NewEvent(const std::shared_ptr<StreamState>& self) {
  weft_event e = nullptr;
  {
    std::lock_guard<std::mutex> lock(events_mu);
    if (!free_events.empty()) {
      e = free_events.back();
      free_events.pop_back();
    }
  }
  if (!e) e = device->CreateEvent();
  auto ref = std::make_shared<EventRef>();
  ref->owner = self;
  ref->event = e;
  ref->error_epoch = ErrorEpoch().load(std::memory_order_acquire);
  return ref;
}

void StreamState::TakeFinished(std::vector<std::function<void()>>& out) {
  while (!deferred.empty()) {
    bool done = true;
    try {
      done = device->QueryEvent(deferred.front().first->event);
    } catch (...) {
      // The captured work failed: it is over all the same (its waiters get the error).
    }
    if (!done) break;
    out.push_back(std::move(deferred.front().second));
    deferred.pop_front();
  }
}

std::atomic<uint64_t>& ErrorEpoch() noexcept {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

void HostWait(const EventRef& ev) {
  if (ev.owner->drained.load(std::memory_order_acquire)) return;
  Device* d = ev.owner->device;
  if (d->QueryEvent(ev.event)) return;
  d->SynchronizeEvent(ev.event);
}

namespace {

// Runs deferred work outside any lock; a failure is logged (nobody waits for it).
void RunFinished(std::vector<std::function<void()>>& fns) {
  for (auto& fn : fns) {
    try {
      if (fn) fn();
    } catch (const std::exception& e) {
      LogError("engine: deferred work after a device operation failed: {}", e.what());
    }
    fn = nullptr;
  }
  fns.clear();
}

// The events `block` must be ordered after: each variable's write event, and for a write also
// the events of the reads of the current value. Written variables come first (PickStream).
void GatherEvents(OprBlock* block, std::vector<EventPtr>& out) {
  auto add = [&](const EventPtr& e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  for (VarNode& node : *block) {
    VarImpl* v = node.var;
    if (!v->has_events.load(std::memory_order_relaxed)) continue;
    std::lock_guard<std::mutex> lock(v->mu);
    if (v->write_event) add(v->write_event);
    if (node.write)
      for (const EventPtr& e : v->read_events) add(e);
  }
}

}  // namespace

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
  block->orders_events = false;
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
  block->orders_events = pool != nullptr;  // without a function nothing needs the device work done
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

void EngineImpl::Execute(OprBlock* block, const RunContext& rctx, WorkerPool* pool) {
  Opr* opr = block->opr;
  if (block->profiling && Profiler::Get().enabled()) {
    block->start_ns = Profiler::NowNs();
    block->trace_tid = Profiler::ThreadId();
  }
  if (IsLive(block->inherited_error) && !RunsDespiteErrors(opr->prop)) {
    // Skipped: its inputs or outputs carry an exception, which Complete passes on.
    Complete(block);
    return;
  }
  block->ran = true;
  std::vector<EventPtr> events;
  if (block->orders_events) GatherEvents(block, events);
  StreamState* ss = pool != nullptr ? pool->PickStream(block, events) : nullptr;
  std::unique_lock<std::mutex> stream_lock;
  std::vector<std::function<void()>> finished;
  RunContext run = rctx;
  if (ss != nullptr) {
    stream_lock = std::unique_lock<std::mutex>(ss->mu);
    if (ss->reset.exchange(false)) {
      // A waiter has reported this stream's sticky error; clear it so later work runs.
      try {
        ss->device->SynchronizeStream(ss->stream);
      } catch (...) {
      }
    }
    ss->TakeFinished(finished);
    run.stream = ss->stream;
  }
  bool ordered = true;
  if (!events.empty()) {
    try {
      OrderAfterEvents(events, ss);
    } catch (...) {
      // Work this block depends on failed on its device: the block fails with that error.
      block->stream_error = std::current_exception();
      ordered = false;
    }
  }
  // A variable's deletion function runs once its device work is over, not when it is queued.
  const bool defer_delete = ss != nullptr && opr->prop == FnProperty::kDeleteVar && block->owned_opr;
  EngineImpl*& current = CurrentWorkerEngine();
  EngineImpl* outer = current;
  current = this;
  try {
    if (!ordered || defer_delete) {
      OnCallback(block, nullptr);
    } else if (opr->sync_fn) {
      opr->sync_fn(run);
      OnCallback(block, nullptr);
    } else {
      opr->fn(run, CallbackOnComplete(block));
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
  if (ss != nullptr) {
    try {
      RecordCompletion(block, ss);
    } catch (...) {
      if (!block->stream_error) block->stream_error = std::current_exception();
    }
    stream_lock.unlock();
  }
  RunFinished(finished);
  FinishParty(block);
}

void EngineImpl::OrderAfterEvents(const std::vector<EventPtr>& events, StreamState* ss) {
  for (const EventPtr& e : events) {
    StreamState* owner = e->owner.get();
    if (owner == ss || owner->drained.load(std::memory_order_acquire)) continue;  // queue order suffices
    if (e->error_epoch < ErrorEpoch().load(std::memory_order_acquire)) {
      // Recorded before a failure was reported: once finished, its (reported) error must not
      // poison this stream again.
      try {
        if (owner->device->QueryEvent(e->event)) continue;
      } catch (...) {
        continue;
      }
    }
    try {
      if (ss != nullptr && &owner->device->plugin() == &ss->device->plugin()) {
        ss->device->StreamWaitEvent(ss->stream, e->event);
      } else {
        HostWait(*e);  // host code, or a device of another plugin
      }
    } catch (...) {
      OnDeviceError(owner);
      throw;
    }
  }
}

void EngineImpl::RecordCompletion(OprBlock* block, StreamState* ss) {
  EventPtr e = ss->NewEvent(ss->shared_from_this());
  ss->device->RecordEvent(e->event, ss->stream);
  block->done_event = e;
  ss->last = e;
  if (!block->owned_opr) return;
  // The function's captures (buffers, kernel state) may be used by the queued work: keep them
  // until the stream has passed the event. A deletion function runs then.
  Opr& o = *block->owned_opr;
  std::function<void()> later;
  if (o.prop == FnProperty::kDeleteVar) {
    if (o.sync_fn) later = [fn = std::move(o.sync_fn), rc = RunContext{block->ctx, nullptr, 0}] { fn(rc); };
  } else if (o.fn || o.sync_fn) {
    later = [a = std::move(o.fn), b = std::move(o.sync_fn)] {};
  }
  if (later) ss->deferred.emplace_back(std::move(e), std::move(later));
}

void EngineImpl::OnDeviceError(const StreamState* owner) {
  ErrorEpoch().fetch_add(1, std::memory_order_acq_rel);
  for (const auto& ss : AllStreams()) {
    if (&ss->device->plugin() != &owner->device->plugin()) continue;
    ss->error_reported.store(true, std::memory_order_relaxed);
    ss->reset.store(true, std::memory_order_relaxed);
  }
  // A stream of another engine (Engine::Create) is not in this engine's pools.
  auto* o = const_cast<StreamState*>(owner);
  o->error_reported.store(true, std::memory_order_relaxed);
  o->reset.store(true, std::memory_order_relaxed);
}

std::vector<std::shared_ptr<StreamState>> EngineImpl::AllStreams() {
  std::vector<std::shared_ptr<StreamState>> out;
  std::lock_guard<std::mutex> lock(pools_mu_);
  for (const auto& [key, pool] : pools_)
    for (const auto& ss : pool->streams()) out.push_back(ss);
  return out;
}

std::exception_ptr EngineImpl::DrainStreams() {
  std::exception_ptr first;
  for (const auto& ss : AllStreams()) {
    EventPtr last;
    {
      std::lock_guard<std::mutex> lock(ss->mu);
      last = std::move(ss->last);
      ss->last.reset();
    }
    if (last) {
      try {
        HostWait(*last);
      } catch (...) {
        if (!ss->error_reported.load(std::memory_order_relaxed) && !first) first = std::current_exception();
        ss->reset.store(true, std::memory_order_relaxed);
      }
    }
    ss->error_reported.store(false, std::memory_order_relaxed);
    std::vector<std::function<void()>> finished;
    {
      std::lock_guard<std::mutex> lock(ss->mu);
      ss->TakeFinished(finished);
    }
    RunFinished(finished);
  }
  return first;
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
  } else if (!RunsDespiteErrors(opr->prop) && IsLive(block->inherited_error)) {
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
  const bool set_events = block->ran && block->orders_events;
  const EventPtr& done_event = block->done_event;
  for (VarNode& node : *block) {
    VarImpl* v = node.var;
    bool free_var = false;
    {
      std::lock_guard<std::mutex> lock(v->mu);
      if (set_events) AttachEvent(v, node.write, done_event);
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
  EventPtr event;  // the device work behind the value, when a device op wrote it last
  bool pending;
  {
    std::lock_guard<std::mutex> lock(v->mu);
    pending = v->write_granted || v->head != nullptr;
    if (!pending) {
      error = std::exchange(v->error, nullptr);
      event = v->write_event;
    }
  }
  if (pending) {
    CheckNotInWorker("WaitForVar on a variable with pending writes");
    struct WaitState {
      std::mutex mu;
      std::condition_variable cv;
      std::atomic<bool> done{false};  // set under mu, also read without it while spinning
      ErrorPtr error;
      EventPtr event;
    } state;
    // A read queued behind the pending writes; it takes the variable's exception when it runs,
    // so work pushed after this call sees the variable clean.
    WaitState* st = &state;
    OprBlock* block = NewOneShot(
        [v, st](RunContext, CallbackOnComplete done) {
          ErrorPtr taken;
          EventPtr event;
          {
            std::lock_guard<std::mutex> lock(v->mu);
            taken = std::exchange(v->error, nullptr);
            event = v->write_event;
          }
          done();
          std::lock_guard<std::mutex> lock(st->mu);
          st->error = std::move(taken);
          st->event = std::move(event);
          st->done.store(true, std::memory_order_release);
          st->cv.notify_all();
        },
        {}, Context::cpu(0), {var}, {}, FnProperty::kNoSkip, 0, "WaitForVar");
    block->profiling = false;
    block->orders_events = false;  // the waiting thread waits for the device, not a worker
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
    event = std::move(state.event);
  }
  // Rethrown once: a wait elsewhere may have rethrown (and so cleared) the same exception.
  if (error && !error->seen.exchange(true)) std::rethrow_exception(error->error);
  if (event) {
    try {
      HostWait(*event);
    } catch (...) {
      // Reported here once: the value no longer carries the failed work, and the streams that
      // hold the sticky error are cleared before their next use.
      OnDeviceError(event->owner.get());
      {
        std::lock_guard<std::mutex> lock(v->mu);
        if (v->write_event == event) v->write_event.reset();
      }
      throw;
    }
  }
}

void EngineImpl::WaitForAll() {
  CheckNotInWorker("WaitForAll");
  {
    std::unique_lock<std::mutex> lock(all_mu_);
    all_cv_.wait(lock, [&] { return pending_ops_.load(std::memory_order_acquire) == 0; });
  }
  std::exception_ptr device_error = DrainStreams();
  ErrorPtr first;
  {
    std::lock_guard<std::mutex> lock(errors_mu_);
    for (const ErrorPtr& e : errors_) {
      if (!e->seen.exchange(true) && !first) first = e;
    }
    errors_.clear();
  }
  if (first) std::rethrow_exception(first->error);
  if (device_error) std::rethrow_exception(device_error);
}

WorkerPool* EngineImpl::ResolvePool(const Context& ctx, FnProperty prop) {
  const bool is_cpu = ctx.GetDeviceType() == "cpu";
  WEFT_CHECK(ctx.GetDeviceId() >= 0, "engine: context {} has a negative device id", ctx.ToString());
  if (prop == FnProperty::kAsync) {
    if (!is_cpu) internal::GetDevice(Runtime::Get(), ctx);  // throws the clear error for an unknown device
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
    if (!is_cpu) internal::GetDevice(Runtime::Get(), ctx);  // validates the context
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
    Device& device = internal::GetDevice(Runtime::Get(), ctx);  // throws for an unknown device
    if (!device.host_addressable()) stream_device = &device;
    threads = kind == PoolKind::kCompute ? config_.device_workers : config_.copy_workers;
    if (kind == PoolKind::kCopyFrom) label += " copy-from";
    if (kind == PoolKind::kCopyTo) label += " copy-to";
  }
  const uint32_t stream_flags = kind == PoolKind::kCompute ? WEFT_STREAM_COMPUTE : WEFT_STREAM_COPY;
  auto pool =
      std::make_unique<WorkerPool>(this, key.ctx, label, threads, stream_device, config_.spin_rounds, stream_flags);
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

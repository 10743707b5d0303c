// weft core — DeviceCollectives (see device_comm.h).
#include "kvstore/device_comm.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "weft/base.h"
#include "weft/engine.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::kv {

namespace {

using Clock = std::chrono::steady_clock;

// `err` (owned, not null) as an exception whose message starts with `what`.
std::exception_ptr ToException(weft_error* err, const std::string& what) {
  try {
    ThrowIfError(err, what);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

std::string Message(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return "(unknown error)";
}

}  // namespace

std::string TransportDeviceType(const weft_transport_api& t) {
  return t.device_type != nullptr && *t.device_type != '\0' ? t.device_type : "cuda";
}

std::optional<Transport> FindDeviceTransport(const std::string& kvstore_type, const std::string& name,
                                             std::string* why) {
  std::string passed;
  for (const Plugin* p : internal::Plugins(Runtime::Get())) {
    const weft_transport_api* t = p->transport_api();
    if (t == nullptr || t->device_count == nullptr || !ServesType(*t, kvstore_type)) continue;
    if (!name.empty() && name != t->name) continue;
    const char* reason = nullptr;
    const int32_t n = t->device_count(p->state(), &reason);
    if (n > 0) return Transport{p, t, p->state()};
    passed += fmt::format("{}'{}' reports 0 usable devices: {}", passed.empty() ? "" : "; ", t->name,
                          reason ? reason : "(no reason given)");
  }
  if (why != nullptr)
    *why = passed.empty() ? fmt::format("no loaded device transport{} serves {}",
                                        name.empty() ? "" : " named '" + name + "'", kvstore_type)
                          : passed;
  return std::nullopt;
}

struct DeviceCollectives::State {
  const Plugin* plugin = nullptr;
  const weft_transport_api* api = nullptr;
  void* pstate = nullptr;
  weft_comm comm = nullptr;
  std::string type, tname;
  int rank = 0;
  int64_t op_timeout_ms = 0;
  Context ctx;
  Device* device = nullptr;
  VarHandle order = nullptr;         // written by every operation: the issue order
  weft_stream own_stream = nullptr;  // for engines that give the function no stream
  struct Pending {
    weft_event event;
    Clock::time_point deadline;
    std::string what;
    CallbackOnComplete done;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;  // issue order = completion order (one communicator)
  bool stop = false;
  bool aborted = false;
  std::exception_ptr failed;  // the first failure: every later operation gets it
  std::thread watchdog;

  // The watchdog's slack past the op deadline: the transport bounds its own waits by the deadline
  // and names the peer it waited for, which says more than core's "did not complete".
  int64_t Grace() const { return std::clamp<int64_t>(op_timeout_ms / 10, 100, 5000); }
  std::exception_ptr Failed() {
    std::lock_guard<std::mutex> lock(mu);
    return failed;
  }
  // Keeps the first failure, aborts the communicator once; returns the failure kept.
  std::exception_ptr KeepFailure(std::exception_ptr e);
  void Run(Collectives::Kind kind, const std::string& key, const NDArray& send, const NDArray& recv, RunContext rc,
           CallbackOnComplete done);
  void RunBarrier(CallbackOnComplete done, std::promise<void>* result);
  // The failure of the oldest pending operation, if any (its event's error, the transport's
  // comm_status, or its deadline); `done` says whether its queued work completed.
  std::exception_ptr Check(const Pending& p, bool* done);
  void Watch();
};

std::exception_ptr DeviceCollectives::State::KeepFailure(std::exception_ptr e) {
  bool abort = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!failed) {
      failed = e;
      LogError("{}", Message(e));
    }
    e = failed;
    abort = !aborted;
    aborted = true;
  }
  // Releases the peers' and this rank's queued work that waits for a dead or stalled peer.
  if (abort && plugin->alive()) {
    weft_error* err = api->comm_abort(pstate, comm);
    if (err != nullptr) {
      LogWarning("KVStore({}) rank {}: comm_abort: {}", type, rank, ErrorMessage(err));
      ReleaseError(err);
    }
  }
  return e;
}

void DeviceCollectives::State::Run(Collectives::Kind kind, const std::string& key, const NDArray& send,
                                   const NDArray& recv, RunContext rc, CallbackOnComplete done) {
  if (std::exception_ptr f = Failed()) {
    done(f);
    return;
  }
  const bool allreduce = kind == Collectives::Kind::kAllreduce;
  const std::string what = fmt::format("KVStore({}) rank {}: {} of key {} through the '{}' transport on {}", type, rank,
                                       allreduce ? "allreduce" : "broadcast", key, tname, ctx.ToString());
  weft_stream stream = rc.stream != nullptr ? rc.stream : own_stream;
  weft_collective_args a{};
  a.struct_size = sizeof(a);
  a.comm = comm;
  a.key = key.c_str();
  a.send = weft_buffer{sizeof(weft_buffer), nullptr, send.dptr(), send.offset(), send.Size(), WEFT_DTYPE_FLOAT32};
  a.recv = weft_buffer{sizeof(weft_buffer), nullptr, recv.dptr(), recv.offset(), recv.Size(), WEFT_DTYPE_FLOAT32};
  a.reduce_op = WEFT_REDUCE_SUM;
  a.root = 0;
  a.timeout_ms = op_timeout_ms;
  a.stream = stream;
  a.failed_rank = -1;
  weft_error* err = allreduce ? api->allreduce(pstate, &a) : api->broadcast(pstate, &a);
  if (err != nullptr) {
    done(KeepFailure(ToException(err, what + " failed")));
    return;
  }
  weft_event event = device->CreateEvent();
  try {
    device->RecordEvent(event, stream);
  } catch (...) {
    device->DestroyEvent(event);
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    pending.push_back(Pending{event, Clock::now() + std::chrono::milliseconds(op_timeout_ms + Grace()), what, done});
  }
  cv.notify_all();
}

std::exception_ptr DeviceCollectives::State::Check(const Pending& p, bool* done) {
  *done = false;
  try {
    *done = device->QueryEvent(p.event);
  } catch (const std::exception& e) {
    // The queued collective failed on the stream (the transport's error names the peer).
    try {
      Fail("{} failed: {}", p.what, e.what());
    } catch (...) {
      return std::current_exception();
    }
  }
  if (api->comm_status != nullptr) {
    if (weft_error* err = api->comm_status(pstate, comm)) return ToException(err, p.what + " failed");
  }
  if (!*done && Clock::now() >= p.deadline) {
    try {
      Fail(
          "{} did not complete within {} ms (WEFT_KVSTORE_TIMEOUT {} ms and the watchdog's slack; a peer is missing "
          "or stalled); the communicator was aborted",
          p.what, op_timeout_ms + Grace(), op_timeout_ms);
    } catch (...) {
      return std::current_exception();
    }
  }
  return nullptr;
}

void DeviceCollectives::State::Watch() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    if (pending.empty()) {
      if (stop) return;
      cv.wait(lock);
      continue;
    }
    const Pending& front = pending.front();
    lock.unlock();
    bool done = false;
    std::exception_ptr error = Check(front, &done);
    if (error) error = KeepFailure(error);
    if (!done && !error) {
      // Collectives take at least tens of microseconds; a short sleep keeps the latency low
      // without a busy core.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      lock.lock();
      continue;
    }
    lock.lock();
    // After a failure every pending operation fails with it; else the front one completed.
    std::deque<Pending> finished;
    if (error) {
      finished.swap(pending);
    } else {
      finished.push_back(std::move(pending.front()));
      pending.pop_front();
    }
    lock.unlock();
    for (Pending& p : finished) {
      try {
        device->DestroyEvent(p.event);
      } catch (const std::exception& e) {
        LogWarning("KVStore({}): releasing an event: {}", type, e.what());
      }
      p.done(error);
    }
    lock.lock();
  }
}

void DeviceCollectives::State::RunBarrier(CallbackOnComplete done, std::promise<void>* result) {
  std::exception_ptr error = Failed();
  if (!error) {
    weft_collective_args a{};
    a.struct_size = sizeof(a);
    a.comm = comm;
    a.key = "(barrier)";
    a.timeout_ms = op_timeout_ms;
    a.failed_rank = -1;
    if (weft_error* err = api->barrier(pstate, &a))
      error = KeepFailure(ToException(
          err, fmt::format("KVStore({}) rank {}: barrier through the '{}' transport failed", type, rank, tname)));
  }
  if (error)
    result->set_exception(error);
  else
    result->set_value();
  done();
}

DeviceCollectives::DeviceCollectives(const std::string& kvstore_type, const Transport& t, const DistConfig& config,
                                     const std::string& prefix, const Context& device)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.plugin = t.plugin;
  s.api = t.api;
  s.pstate = t.state;
  s.type = kvstore_type;
  s.tname = t.api->name;
  s.rank = config.rank;
  s.op_timeout_ms = config.op_timeout_ms;
  s.ctx = device;
  s.device = &internal::GetDevice(Runtime::Get(), device);
  s.comm = InitComm(t, config, WEFT_ROLE_WORKER, prefix,
                    fmt::format("KVStore({}): joining the job as rank {} of {} through the '{}' device transport on {}",
                                kvstore_type, config.rank, config.num_workers, s.tname, device.ToString()),
                    device.GetDeviceType().c_str(), device.GetDeviceId());
  s.own_stream = s.device->CreateStream();
  s.order = Engine::Get()->NewVariable();
  s.watchdog = std::thread([st = state_.get()] { st->Watch(); });
}

DeviceCollectives::~DeviceCollectives() {
  State& s = *state_;
  try {
    Engine::Get()->WaitForVar(s.order);  // every operation issued has completed or failed
  } catch (const std::exception&) {
    // Reported on the arrays the operation wrote.
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop = true;
  }
  s.cv.notify_all();
  s.watchdog.join();
  Engine::Get()->DeleteVariable({}, Context::cpu(0), s.order);
  if (!s.plugin->alive()) return;
  try {
    s.device->DestroyStream(s.own_stream);
  } catch (const std::exception& e) {
    LogWarning("KVStore({}) rank {}: releasing a stream: {}", s.type, s.rank, e.what());
  }
  if (s.failed && !s.aborted) s.api->comm_abort(s.pstate, s.comm);
  weft_error* err = s.api->comm_finalize(s.pstate, s.comm);
  if (err != nullptr) {
    LogWarning("KVStore({}) rank {}: finalize: {}", s.type, s.rank, ErrorMessage(err));
    ReleaseError(err);
  }
}

const Context& DeviceCollectives::device() const { return state_->ctx; }
const std::string& DeviceCollectives::transport_name() const { return state_->tname; }

void DeviceCollectives::Issue(Collectives::Kind kind, const std::string& key, const NDArray& send, const NDArray& recv,
                              int priority) {
  send.CheckAndAlloc();
  recv.CheckAndAlloc();
  std::vector<VarHandle> reads;
  if (send.var() != recv.var()) reads.push_back(send.var());
  Engine::Get()->PushAsync(
      [st = state_, kind, key, send, recv](RunContext rc, CallbackOnComplete done) {
        st->Run(kind, key, send, recv, rc, done);
      },
      state_->ctx, reads, {recv.var(), state_->order}, FnProperty::kNormal, priority,
      kind == Collectives::Kind::kAllreduce ? "DeviceCollectives::allreduce" : "DeviceCollectives::broadcast");
}

void DeviceCollectives::Barrier() {
  std::promise<void> result;
  auto fut = result.get_future();
  // kNoSkip: the barrier runs (and reports the communicator's failure) even after an operation
  // before it failed; it holds `order`, so nothing is issued while it waits.
  Engine::Get()->PushAsync(
      [st = state_, &result](RunContext, CallbackOnComplete done) { st->RunBarrier(done, &result); }, Context::cpu(0),
      {}, {state_->order}, FnProperty::kNoSkip, 0, "DeviceCollectives::barrier");
  fut.get();
}

}  // namespace weft::kv

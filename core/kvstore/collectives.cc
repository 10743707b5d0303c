// weft core — Collectives (see collectives.h).
#include "kvstore/collectives.h"

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "weft/base.h"
#include "weft/env.h"
#include "weft/internal/host_services.h"
#include "weft/internal/rendezvous.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::kv {

namespace {

// The first of the variables that is set, as an int (weft::Error naming it when malformed).
std::optional<int64_t> FirstInt(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (GetEnv(n)) return GetEnvInt(n, 0);
  return std::nullopt;
}

// The deadlines of one collective operation and of the rendezvous, read in seconds (at most a
// week, so the milliseconds cannot overflow) for workers and servers alike: every wait on another
// process needs a positive deadline.
void ReadTimeouts(DistConfig* c) {
  constexpr int64_t kWeek = 7 * 24 * 3600;
  c->op_timeout_ms = GetEnvIntInRange("WEFT_KVSTORE_TIMEOUT", 120, 1, kWeek, "a number of seconds") * 1000;
  c->rendezvous_timeout_ms = GetEnvIntInRange("WEFT_RENDEZVOUS_TIMEOUT", 300, 1, kWeek, "a number of seconds") * 1000;
}

}  // namespace

bool ServesType(const weft_transport_api& t, const std::string& kvstore_type) {
  std::stringstream in(t.kvstore_types ? t.kvstore_types : "");
  for (std::string item; std::getline(in, item, ',');)
    if (item == kvstore_type) return true;
  return false;
}

Transport FindTransport(const std::string& kvstore_type, const std::string& name, bool parameter_server) {
  std::string served;
  for (const Plugin* p : internal::Plugins(Runtime::Get())) {
    const weft_transport_api* t = p->transport_api();
    if (t == nullptr) continue;
    const bool is_ps = t->ps_call != nullptr;
    // Device transports (NCCL) work on device buffers and streams: DeviceCollectives
    // (device_comm.h) drives them, these collectives stage device data through host memory.
    const bool is_device = t->device_count != nullptr;
    served += fmt::format("{}{} ({}{})", served.empty() ? "" : ", ", t->name, t->kvstore_types,
                          is_ps ? "; parameter server" : (is_device ? "; device collectives" : "; collectives"));
    if (is_device || (!name.empty() && name != t->name)) continue;
    if (is_ps == parameter_server && ServesType(*t, kvstore_type)) return Transport{p, t, p->state()};
  }
  Fail(
      "KVStore({}): no loaded {} transport plugin serves it{}; loaded transports: {}. The gloo plugin "
      "(libweft-gloo.so, Debian libgloo-dev) serves dist_sync / dist_device_sync, the zmq plugin (libweft-zmq.so, "
      "libzmq3-dev) dist_async (and dist_sync with WEFT_KVSTORE_TRANSPORT=zmq); `weft-info` shows why a plugin was "
      "not loaded",
      kvstore_type, parameter_server ? "parameter-server" : "collective",
      name.empty() ? "" : fmt::format(" under the name '{}'", name), served.empty() ? "none" : served);
}

weft_comm InitComm(const Transport& t, const DistConfig& config, const char* role, const std::string& prefix,
                   const std::string& what, const char* device_type, int device) {
  const std::string op_timeout = std::to_string(config.op_timeout_ms);
  weft_kv attr{"op_timeout_ms", op_timeout.c_str()};
  weft_comm_init_args a{};
  a.struct_size = sizeof(a);
  a.rank = config.rank;
  a.world_size = config.num_workers;
  a.num_servers = t.api->ps_call != nullptr ? config.num_servers : 0;  // the SDK: 0 for collective transports
  a.role = role;
  a.prefix = prefix.c_str();
  a.timeout_ms = config.rendezvous_timeout_ms;
  a.num_attrs = 1;
  a.attrs = &attr;
  a.device_type = device_type;
  a.device = device;
  ThrowIfError(t.api->comm_init(t.state, &a), what);
  return a.comm;
}

std::string NcclStatus() {
  for (const Plugin* p : internal::Plugins(Runtime::Get())) {
    const weft_transport_api* t = p->transport_api();
    if (t == nullptr || std::string(t->name) != "nccl" || t->device_count == nullptr) continue;
    const char* reason = nullptr;
    const int32_t n = t->device_count(p->state(), &reason);
    if (n <= 0)
      return fmt::format("the nccl transport plugin is loaded but reports 0 usable devices: {}",
                         reason ? reason : "(no reason given)");
    return fmt::format("the nccl transport plugin reports {} usable device(s)", n);
  }
  return "the nccl transport plugin (libweft-nccl.so, built with the CUDA plugin when the toolkit has NCCL) is not "
         "loaded; `weft-info` shows why";
}

bool JoinRendezvous(const std::string& kvstore_type, const DistConfig& config) {
  if (config.num_workers == 1) {
    LogInfo("KVStore({}): one worker (WEFT_NUM_WORKERS unset or 1): no transport needed", kvstore_type);
    return false;
  }
  auto store = RendezvousFromEnv();
  WEFT_CHECK(store != nullptr,
             "KVStore({}): {} workers but no rendezvous: set WEFT_RENDEZVOUS=file:<shared dir> or "
             "tcp:<host>:<port> (weft-launch does)",
             kvstore_type, config.num_workers);
  SetRendezvousStore(store);
  return true;
}

bool IsParameterServerTransport(const std::string& name) {
  if (name.empty()) return false;
  for (const Plugin* p : internal::Plugins(Runtime::Get())) {
    const weft_transport_api* t = p->transport_api();
    if (t != nullptr && name == t->name) return t->ps_call != nullptr;
  }
  return false;
}

DistConfig DistConfig::FromEnv() {
  DistConfig c;
  c.role = GetEnvString("WEFT_ROLE", GetEnvString("DMLC_ROLE", "worker"));
  WEFT_CHECK(c.role == "worker" || c.role == "server",
             "distributed KVStore: role '{}' (WEFT_ROLE / DMLC_ROLE) is not known; weft has workers and servers "
             "(no scheduler process)",
             c.role);
  c.num_servers = static_cast<int>(FirstInt({"WEFT_NUM_SERVERS", "DMLC_NUM_SERVER"}).value_or(0));
  WEFT_CHECK(c.num_servers >= 0, "WEFT_NUM_SERVERS must be >= 0, got {}", c.num_servers);
  const int64_t bound = FirstInt({"WEFT_KVSTORE_BIGARRAY_BOUND", "MXNET_KVSTORE_BIGARRAY_BOUND"}).value_or(1000000);
  WEFT_CHECK(bound > 0, "WEFT_KVSTORE_BIGARRAY_BOUND / MXNET_KVSTORE_BIGARRAY_BOUND must be positive, got {}", bound);
  c.bigarray_bound = static_cast<uint64_t>(bound);
  c.bucket_bytes = static_cast<uint64_t>(GetEnvIntInRange("WEFT_KVSTORE_BUCKET_BYTES", 4 << 20, 0, int64_t{1} << 40,
                                                          "a size in bytes (0 turns bucket fusion off)"));
  const auto rank = c.role == "server" ? FirstInt({"WEFT_RANK", "DMLC_SERVER_ID"})
                                       : FirstInt({"WEFT_RANK", "DMLC_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"});
  const auto size = FirstInt({"WEFT_NUM_WORKERS", "DMLC_NUM_WORKER", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"});
  c.num_workers = static_cast<int>(size.value_or(1));
  c.rank = static_cast<int>(rank.value_or(0));
  if (c.role == "server") {
    WEFT_CHECK(c.num_servers >= 1 && c.rank >= 0 && c.rank < c.num_servers && c.num_workers >= 1,
               "KVStore server: rank {} is outside 0..{} (WEFT_RANK / WEFT_NUM_SERVERS); weft-launch -s S sets them",
               c.rank, c.num_servers - 1);
    ReadTimeouts(&c);
    c.transport = GetEnvString("WEFT_KVSTORE_TRANSPORT", "");
    return c;
  }
  WEFT_CHECK(c.num_workers >= 1 && c.rank >= 0 && c.rank < c.num_workers,
             "distributed KVStore: rank {} is outside 0..{} (WEFT_RANK / WEFT_NUM_WORKERS); start the job with "
             "weft-launch, which sets them",
             c.rank, c.num_workers - 1);
  WEFT_CHECK(c.num_workers == 1 || rank.has_value(),
             "distributed KVStore: {} workers but no rank for this process; set WEFT_RANK (weft-launch does)",
             c.num_workers);
  ReadTimeouts(&c);
  c.transport = GetEnvString("WEFT_KVSTORE_TRANSPORT", "");
  return c;
}

struct Collectives::State {
  const Plugin* plugin = nullptr;
  const weft_transport_api* api = nullptr;
  void* pstate = nullptr;
  weft_comm comm = nullptr;
  std::string type;
  int rank = 0;
  int64_t op_timeout_ms = 0;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t next_reserve = 0;
  uint64_t next_run = 0;
  std::map<uint64_t, Op> ready;
  bool stop = false;
  std::exception_ptr failed;  // the first failure: every later op gets it
  std::thread dispatcher;

  void Loop();
  std::exception_ptr Issue(const Op& op);
};

std::exception_ptr Collectives::State::Issue(const Op& op) {
  weft_collective_args a{};
  a.struct_size = sizeof(a);
  a.comm = comm;
  a.key = op.key.c_str();
  a.send = weft_buffer{sizeof(weft_buffer), const_cast<void*>(op.send), 0, 0, op.count, op.dtype};
  a.recv = weft_buffer{sizeof(weft_buffer), op.recv, 0, 0, op.count, op.dtype};
  a.reduce_op = WEFT_REDUCE_SUM;
  a.root = op.root;
  a.timeout_ms = op_timeout_ms;
  a.failed_rank = -1;
  weft_error* err = nullptr;
  const char* name = "barrier";
  switch (op.kind) {
    case Kind::kAllreduce:
      name = "allreduce";
      err = api->allreduce(pstate, &a);
      break;
    case Kind::kBroadcast:
      name = "broadcast";
      err = api->broadcast(pstate, &a);
      break;
    case Kind::kBarrier:
      err = api->barrier(pstate, &a);
      break;
  }
  if (err == nullptr) return nullptr;
  try {
    ThrowIfError(err, fmt::format("KVStore({}) rank {}: {} of key {} failed", type, rank, name, op.key));
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void Collectives::State::Loop() {
  std::unique_lock<std::mutex> lock(mu);
  auto waiting_since = std::chrono::steady_clock::time_point::max();
  while (true) {
    cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return stop || ready.count(next_run) != 0; });
    auto it = ready.find(next_run);
    if (it == ready.end()) {
      if (stop) break;
      if (ready.empty()) {
        waiting_since = std::chrono::steady_clock::time_point::max();
        continue;
      }
      // Later ops wait for one that has not come: give it one op deadline, then fail them.
      const auto now = std::chrono::steady_clock::now();
      if (waiting_since == std::chrono::steady_clock::time_point::max()) waiting_since = now;
      if (now - waiting_since < std::chrono::milliseconds(op_timeout_ms)) continue;
      if (!failed) {
        try {
          Fail(
              "KVStore({}) rank {}: collective #{} was never issued on this rank within {} ms (an earlier error "
              "skipped it), so the later ones cannot run",
              type, rank, next_run, op_timeout_ms);
        } catch (...) {
          failed = std::current_exception();
        }
      }
      for (auto& [seq, op] : ready) op.done(failed);
      ready.clear();
      continue;
    }
    waiting_since = std::chrono::steady_clock::time_point::max();
    Op op = std::move(it->second);
    ready.erase(it);
    ++next_run;
    std::exception_ptr error = failed;
    lock.unlock();
    if (!error) {
      error = Issue(op);
      if (error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          LogError("{}", e.what());
        }
        // Later collectives cannot succeed on a broken communicator: fail them fast.
        std::lock_guard<std::mutex> l(mu);
        if (!failed) failed = error;
      }
    }
    op.done(error);
    lock.lock();
  }
}

Collectives::Collectives(const std::string& kvstore_type, const DistConfig& config, const std::string& prefix)
    : config_(config), state_(std::make_shared<State>()) {
  State& s = *state_;
  const Transport t = FindTransport(kvstore_type, config.transport, false);
  s.plugin = t.plugin;
  s.api = t.api;
  s.pstate = t.state;
  s.type = kvstore_type;
  s.rank = config.rank;
  s.op_timeout_ms = config.op_timeout_ms;
  s.comm = InitComm(t, config, WEFT_ROLE_WORKER, prefix,
                    fmt::format("KVStore({}): joining the job as rank {} of {} through the '{}' transport",
                                kvstore_type, config.rank, config.num_workers, s.api->name));
  s.dispatcher = std::thread([st = state_] { st->Loop(); });
}

Collectives::~Collectives() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop = true;
  }
  s.cv.notify_all();
  s.dispatcher.join();
  if (s.plugin->alive()) {
    if (s.failed) s.api->comm_abort(s.pstate, s.comm);
    weft_error* err = s.api->comm_finalize(s.pstate, s.comm);
    if (err != nullptr) {
      LogWarning("KVStore({}) rank {}: finalize: {}", s.type, s.rank, ErrorMessage(err));
      ReleaseError(err);
    }
  }
}

const std::string& Collectives::transport_name() const {
  static thread_local std::string name;
  name = state_->api->name;
  return name;
}

uint64_t Collectives::Reserve() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->next_reserve++;
}

void Collectives::Submit(uint64_t seq, Op op) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->ready.emplace(seq, std::move(op));
  }
  state_->cv.notify_all();
}

void Collectives::Run(Op op) {
  std::promise<void> done;
  auto fut = done.get_future();
  op.done = [&done](std::exception_ptr e) {
    if (e)
      done.set_exception(e);
    else
      done.set_value();
  };
  Submit(Reserve(), std::move(op));
  fut.get();
}

}  // namespace weft::kv

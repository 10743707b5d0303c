// weft core — the parameter-server KVStore, worker side (see kvstore_ps.h).
#include "kvstore/kvstore_ps.h"

#include <signal.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>

#include "weft/engine.h"
#include "weft/logging.h"
#include "weft/rendezvous.h"
#include "weft/runtime.h"

namespace weft::kv {

namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Worker stores of one process get distinct prefixes, in creation order (the servers serve store
// n after store n-1, see ps_server.cc).
std::string NextPsPrefix() {
  static std::atomic<int> count{0};
  return "weft/ps" + std::to_string(count++);
}

// Heap state of one request: the weft_ps_call's done_data.
struct CallState {
  PsClient::Done done;
  std::string what;
  const weft_host_api* host = nullptr;
};

void CallDone(void* data, weft_error* err, int32_t) {
  std::unique_ptr<CallState> st(static_cast<CallState*>(data));
  std::exception_ptr e;
  if (err != nullptr) {
    try {
      ThrowIfError(err, st->what);
    } catch (...) {
      e = std::current_exception();
    }
  }
  st->done(e);
}

}  // namespace

PsClient::PsClient(const DistConfig& config, const std::string& prefix)
    : config_(config), t_(FindTransport(config.num_workers > 0 ? "dist_async" : "", config.transport, true)) {
  name_ = t_.api->name;
  comm_ = InitComm(t_, config, WEFT_ROLE_WORKER, prefix,
                   fmt::format("KVStore: worker {} of {} joining {} parameter server(s) through '{}'", config.rank,
                               config.num_workers, config.num_servers, name_));
}

PsClient::~PsClient() {
  if (!t_.plugin->alive()) return;
  if (failed_.load()) t_.api->comm_abort(t_.state, comm_);
  weft_error* err = t_.api->comm_finalize(t_.state, comm_);
  if (err != nullptr) {
    LogWarning("KVStore worker {}: finalize: {}", config_.rank, ErrorMessage(err));
    ReleaseError(err);
  }
}

void PsClient::Call(int kind, int server, const std::string& key, const float* send, uint64_t send_count, float* recv,
                    uint64_t recv_count, Done done) {
  static const char* kinds[] = {"", "init", "push", "pull", "command"};
  auto st = std::make_unique<CallState>();
  const size_t colon = key.find(':');  // the wire key is "<opt index>:<key>": name the key
  st->what = fmt::format("KVStore worker {}: {} of key {} on server {}", config_.rank, kinds[kind],
                         colon == std::string::npos ? key : key.substr(colon + 1), server);
  st->done = [this, d = std::move(done)](std::exception_ptr e) {
    if (e) failed_.store(true);
    d(e);
  };
  weft_ps_call c{};
  c.struct_size = sizeof(c);
  c.comm = comm_;
  c.kind = kind;
  c.server = server;
  c.key = key.c_str();
  c.send = weft_buffer{sizeof(weft_buffer), const_cast<float*>(send), 0, 0, send_count, WEFT_DTYPE_FLOAT32};
  c.recv = weft_buffer{sizeof(weft_buffer), recv, 0, 0, recv_count, WEFT_DTYPE_FLOAT32};
  c.timeout_ms = config_.op_timeout_ms;
  c.done = CallDone;
  c.done_data = st.get();
  CallState* raw = st.release();
  weft_error* err = t_.api->ps_call(t_.state, &c);
  if (err != nullptr) CallDone(raw, err, c.failed_rank);  // a refused call never calls done
}

void PsClient::Command(int server, const std::string& json) {
  // The payload travels as float32 elements: pad the text to a multiple of 4 bytes with spaces.
  std::string text = json;
  text.resize((text.size() + 3) / 4 * 4, ' ');
  std::promise<void> p;
  Call(WEFT_PS_COMMAND, server, "(command)", reinterpret_cast<const float*>(text.data()), text.size() / 4, nullptr, 0,
       [&p](std::exception_ptr e) {
         if (e)
           p.set_exception(e);
         else
           p.set_value();
       });
  p.get_future().get();  // the transport completes every call by its deadline
}

std::vector<KVStorePS::Part> KVStorePS::Shard(const Key& key, int opt_index, uint64_t size, int num_servers,
                                              uint64_t bound) {
  const std::string base = std::to_string(opt_index) + ":" + key.display();
  if (size < bound || num_servers <= 1) {
    const uint64_t h = key.is_string ? Fnv1a(key.str_key) : static_cast<uint64_t>(key.int_key) * 9973u;
    return {Part{static_cast<int>(h % static_cast<uint64_t>(num_servers)), 0, size, base}};
  }
  std::vector<Part> parts;
  for (int s = 0; s < num_servers; ++s) {
    const uint64_t b = size * static_cast<uint64_t>(s) / num_servers, e = size * (s + 1ull) / num_servers;
    parts.push_back(Part{s, b, e - b, base + "#" + std::to_string(s)});
  }
  return parts;
}

KVStorePS::KVStorePS(std::string type, bool sync)
    : KVStoreLocal(std::move(type), std::make_unique<CommCPU>()), config_(DistConfig::FromEnv()), sync_(sync) {
  WEFT_CHECK(config_.role == "worker",
             "KVStore({}): this process has role '{}'; servers run KVStore::RunServer (weft-launch -s starts them)",
             this->type(), config_.role);
  const std::string prefix = NextPsPrefix();
  if (config_.num_servers == 0) {
    WEFT_CHECK(config_.num_workers == 1,
               "KVStore({}): {} workers but no parameter server (WEFT_NUM_SERVERS is 0); start the job with "
               "weft-launch -n {} -s <servers>",
               this->type(), config_.num_workers, config_.num_workers);
    LogInfo("KVStore({}): one worker and no servers: the local store", this->type());
    return;
  }
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  auto store = RendezvousFromEnv();
  WEFT_CHECK(store != nullptr, "KVStore({}): no rendezvous: set WEFT_RENDEZVOUS (weft-launch does)", this->type());
  SetRendezvousStore(store);
  // The servers wait for this key before joining the store's communicator (ps_server.cc).
  store->Set(prefix + "/join/" + std::to_string(config_.rank), sync ? "sync" : "async");
  ps_ = std::make_shared<PsClient>(config_, prefix);
  nlohmann::json mode = {{"cmd", "mode"}, {"sync", sync}};
  for (int s = 0; s < config_.num_servers; ++s) ps_->Command(s, mode.dump());
  LogInfo("KVStore({}): worker {} of {} joined {} server(s) through '{}'", this->type(), config_.rank,
          config_.num_workers, config_.num_servers, ps_->transport_name());
}

KVStorePS::~KVStorePS() {
  if (!ps_) return;
  try {
    Engine::Get()->WaitForAll();
    // After a failure the servers may be dead or hung: leave without a goodbye (which would wait
    // for a deadline); the servers see this worker's connection close.
    if (!ps_->failed())
      for (int s = 0; s < config_.num_servers; ++s) ps_->Command(s, R"({"cmd":"stop"})");
  } catch (const std::exception& e) {
    LogWarning("KVStore({}) worker {}: closing: {}", type(), config_.rank, e.what());
  }
  ps_.reset();
}

void KVStorePS::Issue(int kind, const Key& key, const NDArray& data, const NDArray& order, int priority) {
  data.CheckAndAlloc();
  order.CheckAndAlloc();
  std::vector<VarHandle> reads, writes{order.var()};
  if (data.var() != order.var()) (kind == WEFT_PS_PULL ? writes : reads).push_back(data.var());
  Engine::Get()->PushAsync(
      [ps = ps_, kind, parts = parts_.at(key.id()), data](RunContext, CallbackOnComplete on_complete) {
        struct Join {
          std::atomic<size_t> left;
          std::mutex mu;
          std::exception_ptr first;
          CallbackOnComplete cb;
        };
        auto join = std::make_shared<Join>();
        join->left = parts.size();
        join->cb = on_complete;
        float* base = static_cast<float*>(const_cast<void*>(data.GetRawData()));
        for (const Part& p : parts) {
          float* at = base + p.begin;
          const bool pull = kind == WEFT_PS_PULL;
          ps->Call(kind, p.server, p.wire, pull ? nullptr : at, pull ? 0 : p.count, pull ? at : nullptr,
                   pull ? p.count : 0, [join, data](std::exception_ptr e) {
                     if (e) {
                       std::lock_guard<std::mutex> lock(join->mu);
                       if (!join->first) join->first = e;
                     }
                     if (--join->left == 0) join->cb(join->first);
                   });
        }
      },
      Context::cpu(0), reads, writes, FnProperty::kAsync, priority,
      kind == WEFT_PS_PULL   ? "KVStorePS::pull"
      : kind == WEFT_PS_PUSH ? "KVStorePS::push"
                             : "KVStorePS::init");
}

void KVStorePS::InitImpl(const Key& key, const NDArray& value) {
  KVStoreLocal::InitImpl(key, value);
  if (!ps_) return;
  NDArray& stored = Stored(key);
  parts_[key.id()] = Shard(key, OptIndex(key), stored.Size(), config_.num_servers, config_.bigarray_bound);
  Issue(WEFT_PS_INIT, key, stored, stored, 0);
  // Rank 0's value wins: read it back so every worker's copy starts equal.
  Issue(WEFT_PS_PULL, key, stored, stored, 0);
}

void KVStorePS::PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (!ps_) {
    KVStoreLocal::PushImpl(key, values, priority);
    return;
  }
  const NDArray merged = comm().Reduce(key.id(), values, priority);
  Issue(WEFT_PS_PUSH, key, merged, Stored(key), priority);
}

void KVStorePS::PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) {
  if (ps_) Issue(WEFT_PS_PULL, key, Stored(key), Stored(key), priority);
  KVStoreLocal::PullImpl(key, outs, priority);
}

void KVStorePS::BarrierLocked() {
  Engine::Get()->WaitForAll();
  ps_->Command(0, R"({"cmd":"barrier"})");
}

void KVStorePS::Barrier() {
  if (ps_) BarrierLocked();
}

void KVStorePS::OnUpdaterChanged() {
  if (!ps_) return;
  Optimizer* opt = current_optimizer();
  WEFT_CHECK(opt != nullptr,
             "KVStore({}): SetUpdater cannot run a C++ function on the parameter servers; use SetOptimizer (its "
             "type and parameters are sent to the servers), or dist_sync on Gloo, where workers update",
             type());
  if (config_.rank == 0) {
    nlohmann::json cmd = {{"cmd", "optimizer"}, {"type", opt->GetType()}, {"state", opt->Serialize()}};
    for (int s = 0; s < config_.num_servers; ++s) ps_->Command(s, cmd.dump());
  }
  BarrierLocked();
}

void KVStorePS::SaveOptimizerStates(const std::string& file_name, bool dump_optimizer) {
  if (!ps_) return KVStoreLocal::SaveOptimizerStates(file_name, dump_optimizer);
  Fail(
      "KVStore({}) SaveOptimizerStates: the optimizer states live on the parameter servers, and fetching them is "
      "not built yet; save the weights (Pull), or use dist_sync on Gloo, whose workers hold the states",
      type());
}

void KVStorePS::LoadOptimizerStates(const std::string& file_name) {
  if (!ps_) return KVStoreLocal::LoadOptimizerStates(file_name);
  Fail("KVStore({}) LoadOptimizerStates: not built for parameter servers yet (see SaveOptimizerStates)", type());
}

}  // namespace weft::kv

// weft core — the parameter-server KVStore, worker side (see kvstore_ps.h).
#include "kvstore/kvstore_ps.h"

#include <signal.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>

#include "ndarray/sparse_rows.h"
#include "weft/engine.h"
#include "weft/internal/rendezvous.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

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
  static const char* kinds[] = {"", "init", "push", "pull", "command", "row_sparse_pull", "row_sparse push"};
  auto st = std::make_unique<CallState>();
  const size_t colon = key.find(':');  // the wire key is "<opt index>:<key>": name the key
  st->what = kind == WEFT_PS_COMMAND
                 ? fmt::format("KVStore worker {}: {} on server {}", config_.rank, key, server)
                 : fmt::format("KVStore worker {}: {} of key {} on server {}", config_.rank, kinds[kind],
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

std::vector<float> PsClient::Request(int server, const std::vector<float>& payload, uint64_t reply_floats,
                                     const std::string& what) {
  std::vector<float> reply(reply_floats);
  std::promise<void> p;
  Call(WEFT_PS_COMMAND, server, what, payload.data(), payload.size(), reply.data(), reply.size(),
       [&p](std::exception_ptr e) {
         if (e)
           p.set_exception(e);
         else
           p.set_value();
       });
  p.get_future().get();  // the transport completes every call by its deadline
  return reply;
}

void PsClient::Command(int server, const std::string& json) {
  // The payload travels as float32 elements: pad the text to a multiple of 4 bytes with spaces.
  std::vector<float> payload((json.size() + 3) / 4);
  std::string text = json;
  text.resize(payload.size() * 4, ' ');
  std::memcpy(payload.data(), text.data(), text.size());
  Request(server, payload, 0, "(command)");
}

std::vector<float> PackStates(nlohmann::json header,
                              const std::vector<std::pair<std::string, std::vector<float>>>& states) {
  size_t elements = 0;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, v] : states) {
    list.push_back({name, v.size()});
    elements += v.size();
  }
  header["states"] = list;
  const std::string text = header.dump();
  const size_t head = (text.size() + 1 + 3) / 4;  // text, NUL, zeros to a float boundary
  std::vector<float> out(head + elements, 0.0f);
  std::memcpy(out.data(), text.data(), text.size());
  float* at = out.data() + head;
  for (const auto& [name, v] : states) at = std::copy(v.begin(), v.end(), at);
  return out;
}

PackedStates UnpackStates(const void* data, size_t bytes, const std::string& what) {
  const char* c = static_cast<const char*>(data);
  const void* nul = std::memchr(c, 0, bytes);
  WEFT_CHECK(nul != nullptr, "{}: malformed (no header)", what);
  const size_t text = static_cast<size_t>(static_cast<const char*>(nul) - c);
  PackedStates out;
  out.header = nlohmann::json::parse(std::string(c, text), nullptr, false);
  WEFT_CHECK(out.header.is_object() && out.header.contains("states") && out.header["states"].is_array(),
             "{}: malformed header", what);
  size_t at = (text + 1 + 3) / 4 * 4;
  for (const auto& entry : out.header["states"]) {
    WEFT_CHECK(entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_number_unsigned(),
               "{}: malformed state entry", what);
    const uint64_t n = entry[1].get<uint64_t>();
    WEFT_CHECK(n <= (bytes - std::min(at, bytes)) / sizeof(float), "{}: state {} runs past the end ({} bytes)", what,
               entry[0].get<std::string>(), bytes);
    std::vector<float>& v = out.states[entry[0].get<std::string>()];
    v.resize(n);
    std::memcpy(v.data(), c + at, n * sizeof(float));
    at += n * sizeof(float);
  }
  WEFT_CHECK(at == bytes, "{}: {} bytes after the last state", what, bytes - std::min(at, bytes));
  return out;
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
    : KVStoreLocal(std::move(type), std::make_unique<CommCPU>()), config_(DistConfig::FromEnv()) {
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

namespace {

// The completion of one of `n` requests: `on_complete` runs with the first failure once all `n`
// have finished. Each copy holds the join; `keep` stays alive until then (the requests' buffers).
PsClient::Done JoinCalls(size_t n, CallbackOnComplete on_complete, std::shared_ptr<const void> keep) {
  struct Join {
    std::atomic<size_t> left;
    std::mutex mu;
    std::exception_ptr first;
    CallbackOnComplete cb;
    std::shared_ptr<const void> keep;
  };
  auto join = std::make_shared<Join>();
  join->left = n;
  join->cb = on_complete;
  join->keep = std::move(keep);
  return [join](std::exception_ptr e) {
    if (e) {
      std::lock_guard<std::mutex> lock(join->mu);
      if (!join->first) join->first = e;
    }
    if (--join->left == 0) join->cb(join->first);
  };
}

}  // namespace

void KVStorePS::Issue(int kind, const Key& key, const NDArray& data, const NDArray& order, int priority) {
  data.CheckAndAlloc();
  order.CheckAndAlloc();
  std::vector<VarHandle> reads, writes{order.var()};
  if (data.var() != order.var()) (kind == WEFT_PS_PULL ? writes : reads).push_back(data.var());
  Engine::Get()->PushAsync(
      [ps = ps_, kind, parts = plans_.at(key.id()).parts, data](RunContext, CallbackOnComplete on_complete) {
        const PsClient::Done done = JoinCalls(parts.size(), on_complete, std::make_shared<NDArray>(data));
        float* base = static_cast<float*>(const_cast<void*>(data.GetRawData()));
        for (const Part& p : parts) {
          float* at = base + p.begin;
          const bool pull = kind == WEFT_PS_PULL;
          ps->Call(kind, p.server, p.wire, pull ? nullptr : at, pull ? 0 : p.count, pull ? at : nullptr,
                   pull ? p.count : 0, done);
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
  plans_[key.id()] = KeyPlan{key.display(), OptIndex(key), stored.GetShape(),
                             Shard(key, OptIndex(key), stored.Size(), config_.num_servers, config_.bigarray_bound)};
  Issue(WEFT_PS_INIT, key, stored, stored, 0);
  // Rank 0's value wins: read it back so every worker's copy starts equal.
  Issue(WEFT_PS_PULL, key, stored, stored, 0);
}

void KVStorePS::PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (!ps_) {
    KVStoreLocal::PushImpl(key, values, priority);
    return;
  }
  if (!values.empty() && values[0].storage_type() == StorageType::kRowSparse) {  // see RowSparsePushes
    PushRows(key, SumRowSparse(values, Context::cpu(0)), priority);
    return;
  }
  const NDArray merged = comm().Reduce(key.id(), values, priority);
  Issue(WEFT_PS_PUSH, key, merged, Stored(key), priority);
}

void KVStorePS::PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) {
  if (ps_) Issue(WEFT_PS_PULL, key, Stored(key), Stored(key), priority);
  KVStoreLocal::PullImpl(key, outs, priority);
}

void KVStorePS::PushRows(const Key& key, const NDArray& merged, int priority) {
  const KeyPlan& plan = plans_.at(key.id());
  const int64_t num_rows = plan.shape.ndim() == 0 ? 0 : plan.shape[0];
  const int64_t row_len = num_rows == 0 ? 0 : static_cast<int64_t>(plan.shape.Size()) / num_rows;
  const NDArray idx_array = merged.aux_ndarray(kRowSparseIndices);
  std::vector<int64_t> rows(idx_array.Size());
  if (!rows.empty()) idx_array.SyncCopyToCPUBytes(rows.data(), rows.size() * sizeof(int64_t));
  std::vector<float> values(rows.size() * static_cast<size_t>(row_len));
  if (!values.empty()) merged.data_ndarray().SyncCopyToCPU(values.data(), values.size());
  // Per part (WEFT_PS_PUSH_ROWS): int64 [row_len, part begin, n, the n rows with elements in the
  // part], then those elements (float32), packed into one float buffer (the transport moves bytes).
  struct Message {
    int server;
    std::string wire;
    std::vector<float> payload;
  };
  auto messages = std::make_shared<std::vector<Message>>();
  for (const Part& p : plan.parts) {
    const auto begin = static_cast<int64_t>(p.begin), end = begin + static_cast<int64_t>(p.count);
    std::vector<int64_t> head{row_len, begin, 0};
    std::vector<float> pieces;
    for (size_t k = 0; k < rows.size(); ++k) {
      const auto [lo, hi] = RowInPart(rows[k], row_len, begin, end);
      if (lo >= hi) continue;
      head.push_back(rows[k]);
      const auto from =
          values.begin() + static_cast<std::ptrdiff_t>(k * static_cast<size_t>(row_len)) + (lo - rows[k] * row_len);
      pieces.insert(pieces.end(), from, from + (hi - lo));
    }
    head[2] = static_cast<int64_t>(head.size()) - 3;
    // Every part gets a message, empty or not: in dist_sync each server's round counts every worker.
    Message m{p.server, p.wire, std::vector<float>(head.size() * 2)};
    std::memcpy(m.payload.data(), head.data(), head.size() * sizeof(int64_t));
    m.payload.insert(m.payload.end(), pieces.begin(), pieces.end());
    messages->push_back(std::move(m));
  }
  const NDArray& order = Stored(key);
  order.CheckAndAlloc();
  Engine::Get()->PushAsync(
      [ps = ps_, messages](RunContext, CallbackOnComplete on_complete) {
        const PsClient::Done done = JoinCalls(messages->size(), on_complete, messages);
        for (const Message& m : *messages)
          ps->Call(WEFT_PS_PUSH_ROWS, m.server, m.wire, m.payload.data(), m.payload.size(), nullptr, 0, done);
      },
      Context::cpu(0), {}, {order.var()}, FnProperty::kAsync, priority, "KVStorePS::push_rows");
}

void KVStorePS::PullRowSparseImpl(const Key& key, const std::vector<NDArray>& outs,
                                  const std::vector<std::vector<int64_t>>& rows, int priority) {
  if (!ps_) {
    KVStoreLocal::PullRowSparseImpl(key, outs, rows, priority);
    return;
  }
  const KeyPlan& plan = plans_.at(key.id());
  const int64_t num_rows = plan.shape.ndim() == 0 ? 0 : plan.shape[0];
  const int64_t row_len = num_rows == 0 ? 0 : static_cast<int64_t>(plan.shape.Size()) / num_rows;
  Stored(key).WaitToWrite();  // this worker's earlier pushes of the key have been answered
  for (size_t o = 0; o < outs.size(); ++o) {
    std::vector<float> values(rows[o].size() * static_cast<size_t>(row_len));
    // Per part: the request (int64 row_len, part begin, ids) and, per row asked, where its
    // elements in that part go in `values`.
    struct Ask {
      std::vector<int64_t> request;
      std::vector<std::pair<size_t, size_t>> pieces;  // (offset in values, elements)
      std::vector<float> reply;
    };
    std::vector<Ask> asks(plan.parts.size());
    std::vector<std::future<void>> done;
    for (size_t pi = 0; pi < plan.parts.size(); ++pi) {
      const Part& p = plan.parts[pi];
      const auto begin = static_cast<int64_t>(p.begin), end = begin + static_cast<int64_t>(p.count);
      Ask& a = asks[pi];
      a.request = {row_len, begin};
      for (size_t k = 0; k < rows[o].size(); ++k) {
        const auto [lo, hi] = RowInPart(rows[o][k], row_len, begin, end);
        if (lo >= hi) continue;
        a.request.push_back(rows[o][k]);
        a.pieces.emplace_back(k * static_cast<size_t>(row_len) + static_cast<size_t>(lo - rows[o][k] * row_len),
                              static_cast<size_t>(hi - lo));
      }
      if (a.pieces.empty()) continue;
      size_t count = 0;
      for (const auto& piece : a.pieces) count += piece.second;
      a.reply.resize(count);
      auto promise = std::make_shared<std::promise<void>>();
      done.push_back(promise->get_future());
      // The ids travel as int64: the transport moves bytes (2 float32 slots per id).
      ps_->Call(WEFT_PS_PULL_ROWS, p.server, p.wire, reinterpret_cast<const float*>(a.request.data()),
                a.request.size() * 2, a.reply.data(), a.reply.size(), [promise](std::exception_ptr e) {
                  if (e)
                    promise->set_exception(e);
                  else
                    promise->set_value();
                });
    }
    for (auto& f : done) f.wait();  // every reply in (or failed) before `asks` may go
    for (auto& f : done) f.get();
    for (const Ask& a : asks) {
      size_t at = 0;
      for (const auto& [offset, n] : a.pieces) {
        std::copy_n(a.reply.begin() + static_cast<std::ptrdiff_t>(at), n,
                    values.begin() + static_cast<std::ptrdiff_t>(offset));
        at += n;
      }
    }
    SetRowSparseRows(outs[o], rows[o], values.data(), values.size() * sizeof(float));
  }
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

std::map<std::string, NDArray> KVStorePS::GatherOptimizerStates(std::string* meta_json) {
  if (!ps_) return KVStoreLocal::GatherOptimizerStates(meta_json);
  Engine::Get()->WaitForAll();  // this worker's pushes are applied (dist_sync: their rounds are complete)
  // Each server snapshots its optimizer at "states_size" and sends that snapshot at "states": the
  // reply's size is known before it is asked for, while other workers may go on pushing.
  std::vector<PackedStates> from;
  for (int s = 0; s < config_.num_servers; ++s) {
    const std::vector<float> size = ps_->Request(s, PackStates({{"cmd", "states_size"}}, {}), 2, "SaveOptimizerStates");
    uint64_t bytes = 0;
    std::memcpy(&bytes, size.data(), sizeof(bytes));
    const std::vector<float> blob =
        ps_->Request(s, PackStates({{"cmd", "states"}}, {}), bytes / sizeof(float), "SaveOptimizerStates");
    from.push_back(
        UnpackStates(blob.data(), bytes, fmt::format("KVStore({}): server {}'s optimizer states", type(), s)));
  }
  // Counts: each index's from the servers holding it (the parts of a sliced key count alike).
  nlohmann::json meta = from[0].header["meta"], counts = nlohmann::json::object();
  unsigned num_update = 0;
  for (const PackedStates& p : from) {
    for (const auto& [k, v] : p.header["meta"]["counts"].items())
      counts[k] = std::max(counts.contains(k) ? counts[k].get<unsigned>() : 0u, v.get<unsigned>());
    num_update = std::max(num_update, p.header["meta"]["num_update"].get<unsigned>());
  }
  meta["counts"] = counts;
  meta["num_update"] = num_update;
  *meta_json = meta.dump();
  std::map<std::string, NDArray> out;
  for (const auto& [id, plan] : plans_) {
    for (int k = 0;; ++k) {
      const std::string name = fmt::format("{}:{}", plan.opt_index, k);
      size_t have = 0;
      for (const Part& part : plan.parts) have += from[part.server].states.count(name);
      if (have == 0) break;  // never updated (or the optimizer's last state)
      WEFT_CHECK(have == plan.parts.size(),
                 "KVStore({}) SaveOptimizerStates: key {} has optimizer state {} on {} of its {} servers: a push was "
                 "still being applied (dist_async: Barrier on every worker before saving)",
                 type(), plan.display, name, have, plan.parts.size());
      std::vector<float> full(plan.shape.Size());
      for (const Part& part : plan.parts) {
        const std::vector<float>& v = from[part.server].states.at(name);
        WEFT_CHECK(v.size() == part.count,
                   "KVStore({}) SaveOptimizerStates: server {} sent {} elements of state {} "
                   "of key {}, whose part there has {}",
                   type(), part.server, v.size(), name, plan.display, part.count);
        std::copy(v.begin(), v.end(), full.begin() + static_cast<std::ptrdiff_t>(part.begin));
      }
      out.emplace(name, NDArray(full, plan.shape, Context::cpu(0)));
    }
  }
  return out;
}

void KVStorePS::ScatterOptimizerStates(const std::string& meta_json, const std::map<std::string, NDArray>& states) {
  if (!ps_) return KVStoreLocal::ScatterOptimizerStates(meta_json, states);
  current_optimizer()->Deserialize(meta_json);  // what optimizer() reports here follows the file too
  Engine::Get()->WaitForAll();                  // this worker's pushes are applied with the old states
  std::map<int, const KeyPlan*> by_index;
  for (const auto& [id, plan] : plans_) by_index[plan.opt_index] = &plan;
  std::vector<std::vector<std::pair<std::string, std::vector<float>>>> to(config_.num_servers);
  for (const auto& [name, array] : states) {
    const int index = std::atoi(name.substr(0, name.find(':')).c_str());  // names checked by the file reader
    auto it = by_index.find(index);
    WEFT_CHECK(it != by_index.end(),
               "KVStore({}) LoadOptimizerStates: the file has state '{}' of optimizer index {}, which no key of this "
               "store has; Init every key before loading the optimizer states",
               type(), name, index);
    const KeyPlan& plan = *it->second;
    WEFT_CHECK(array.Size() == static_cast<size_t>(plan.shape.Size()) && array.GetDType() == DType::kFloat32,
               "KVStore({}) LoadOptimizerStates: state '{}' has shape {} and dtype {}, but key {} has shape {} "
               "(float32); the file belongs to other parameters",
               type(), name, array.GetShape(), DTypeName(array.GetDType()), plan.display, plan.shape);
    std::vector<float> v;
    array.SyncCopyToCPU(&v);
    for (const Part& part : plan.parts)
      to[part.server].emplace_back(
          name, std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(part.begin),
                                   v.begin() + static_cast<std::ptrdiff_t>(part.begin + part.count)));
  }
  const nlohmann::json meta = nlohmann::json::parse(meta_json);
  for (int s = 0; s < config_.num_servers; ++s)
    ps_->Request(s, PackStates({{"cmd", "set_states"}, {"meta", meta}}, to[s]), 0, "LoadOptimizerStates");
}

}  // namespace weft::kv

// weft core — the parameter server (MXNet's KVStoreDistServer), on a transport offering
// ps_poll / ps_respond (see kvstore_ps.h for the semantics the workers see).
//
// Per key part (the wire key "<opt index>:<key>[#part]"): the stored value (rank 0's Init wins;
// requests for a part rank 0 has not initialised yet wait for it), and in sync mode the round's
// sum and the pushes waiting for it. dist_async: each push is applied as it arrives — the
// optimizer's Update(opt index, stored, gradient), or, with no optimizer, the push replaces the
// value — and answered at once. dist_sync: pushes are summed until every worker has pushed, then
// applied once and all answered (so a worker's next Pull sees the round's result). Pulls are
// answered with the stored value; row pushes (a worker's row_sparse gradient with an optimizer set)
// carry only the rows, and a round of them is applied as a row_sparse gradient (the optimizer's
// lazy update); row_sparse_pulls with the rows asked for (PullRows). Commands (JSON): mode, optimizer
// (type + Serialize() state, from rank 0), barrier (server 0 answers when every worker asked), stop (a worker's
// goodbye).
//
// Deadlines: a sync round, a barrier or a request waiting for rank 0's Init that stays open 3/4
// of WEFT_KVSTORE_TIMEOUT (so that the server's error, which names the missing workers, reaches
// the waiting workers before their own deadline) is answered with that error (ps_respond_error)
// and ends the server; a worker that dies (the transport reports it) ends it naming the worker.
// The other workers then see the server's connection close and fail naming it; weft-launch stops
// the job.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "kvstore/kvstore_ps.h"
#include "weft/internal/rendezvous.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::kv {

namespace {

using Clock = std::chrono::steady_clock;

struct Request {
  uint64_t id = 0;
  int kind = 0;
  int sender = 0;
  std::vector<float> payload;
  Clock::time_point at;
};

struct Part {
  std::string name;  // for messages
  int opt_index = 0;
  bool inited = false;
  NDArray stored;
  std::vector<float> sum;        // sync round
  bool round_rows = false;       // every push of the round was a row push
  std::vector<uint8_t> touched;  // the round's row pushes: the elements they cover
  std::vector<uint64_t> round_ids;
  std::set<int> round_senders;
  Clock::time_point round_start;
  std::vector<Request> waiting;  // before rank 0's Init
};

std::string Ranks(int n, const std::set<int>& have) {
  std::string s;
  for (int r = 0; r < n; ++r)
    if (have.count(r) == 0) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

class Server {
 public:
  Server(const DistConfig& c, const Transport& t, weft_comm comm) : c_(c), t_(t), comm_(comm) {}

  // Serves until every worker said stop (true) or `stop` asks (false).
  bool Serve(const std::function<bool()>& stop) {
    while (stopped_.size() < static_cast<size_t>(c_.num_workers)) {
      if (stop && stop()) return false;
      weft_ps_request r{};
      r.struct_size = sizeof(r);
      r.sender = -1;
      weft_error* err = t_.api->ps_poll(t_.state, comm_, &r, 200);
      if (err != nullptr) {
        const int code = ErrorCode(err);
        if (code == WEFT_ERR_TIMEOUT) {
          ReleaseError(err);
        } else if (code == WEFT_ERR_UNAVAILABLE && r.sender >= 0 && stopped_.count(r.sender) != 0) {
          ReleaseError(err);  // a worker that said goodbye has ended: expected
        } else {
          ThrowIfError(err, fmt::format("KVStore server {}", c_.rank));
        }
      } else {
        Request q;
        q.id = r.request_id;
        q.kind = r.kind;
        q.sender = r.sender;
        q.payload.resize(r.payload_bytes / sizeof(float));
        if (r.payload_bytes > 0) std::memcpy(q.payload.data(), r.payload, q.payload.size() * sizeof(float));
        q.at = Clock::now();
        const std::string key = r.key ? r.key : "";
        if (q.kind == WEFT_PS_COMMAND) {
          // JSON text, possibly followed by a NUL and binary data (PackStates).
          const char* text = static_cast<const char*>(r.payload);
          const void* nul = r.payload_bytes > 0 ? std::memchr(text, 0, r.payload_bytes) : nullptr;
          const size_t n = nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : r.payload_bytes;
          Command(std::move(q), std::string(text, n), r.payload_bytes);
        } else {
          Handle(key, std::move(q));
        }
      }
      CheckDeadlines();
    }
    return true;
  }

 private:
  void Respond(uint64_t id, const void* data = nullptr, uint64_t bytes = 0) {
    ThrowIfError(t_.api->ps_respond(t_.state, comm_, id, data, bytes),
                 fmt::format("KVStore server {}: reply", c_.rank));
  }

  void Command(Request q, const std::string& text, size_t bytes) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    WEFT_CHECK(j.is_object() && j.contains("cmd"), "KVStore server {}: malformed command from worker {}", c_.rank,
               q.sender);
    const std::string cmd = j["cmd"].get<std::string>();
    if (cmd == "states_size" || cmd == "states" || cmd == "set_states") {
      // A worker's mistake (no optimizer, a file of other parameters) fails its call, not the server.
      try {
        States(cmd, q, bytes);
      } catch (const std::exception& e) {
        if (t_.api->ps_respond_error == nullptr) throw;
        ThrowIfError(t_.api->ps_respond_error(t_.state, comm_, q.id, WEFT_ERR_INVALID_ARGUMENT, e.what()),
                     fmt::format("KVStore server {}: reply", c_.rank));
      }
      return;
    }
    if (cmd == "mode") {
      sync_ = j["sync"].get<bool>();
    } else if (cmd == "optimizer") {
      opt_ = OptimizerRegistry::Create(j["type"].get<std::string>());
      opt_->Deserialize(j["state"].get<std::string>());
      LogInfo("KVStore server {}: optimizer {} from worker {}", c_.rank, opt_->GetType(), q.sender);
    } else if (cmd == "barrier") {
      if (barrier_ids_.empty()) barrier_start_ = Clock::now();
      barrier_ids_.push_back(q.id);
      barrier_senders_.insert(q.sender);
      if (barrier_senders_.size() == static_cast<size_t>(c_.num_workers)) {
        for (uint64_t id : barrier_ids_) Respond(id);
        barrier_ids_.clear();
        barrier_senders_.clear();
      }
      return;
    } else if (cmd == "stop") {
      stopped_.insert(q.sender);
    } else {
      Fail("KVStore server {}: unknown command '{}' from worker {}", c_.rank, cmd, q.sender);
    }
    Respond(q.id);
  }

  // The optimizer-state commands (see kvstore_ps.h): "states_size" snapshots the optimizer for the
  // asking worker and answers the snapshot's size in bytes (uint64); "states" sends the snapshot;
  // "set_states" installs the parameters, counts and this server's parts of the states.
  void States(const std::string& cmd, const Request& q, size_t bytes) {
    WEFT_CHECK(opt_ != nullptr, "KVStore server {}: no optimizer is set on the servers (SetOptimizer first)", c_.rank);
    if (cmd == "states_size") {
      std::vector<std::pair<std::string, std::vector<float>>> states;
      for (const auto& [name, array] : opt_->GetStates()) {
        states.emplace_back(name, std::vector<float>());
        array.SyncCopyToCPU(&states.back().second);
      }
      std::vector<float>& snap = snapshots_[q.sender];
      snap = PackStates({{"meta", nlohmann::json::parse(opt_->Serialize())}}, states);
      const uint64_t size = snap.size() * sizeof(float);
      Respond(q.id, &size, sizeof(size));
    } else if (cmd == "states") {
      auto it = snapshots_.find(q.sender);
      WEFT_CHECK(it != snapshots_.end(), "KVStore server {}: worker {} asked for states before their size", c_.rank,
                 q.sender);
      const std::vector<float> snap = std::move(it->second);
      snapshots_.erase(it);
      Respond(q.id, snap.data(), snap.size() * sizeof(float));
    } else {
      PackedStates in = UnpackStates(q.payload.data(), std::min(bytes, q.payload.size() * sizeof(float)),
                                     fmt::format("KVStore server {}: states from worker {}", c_.rank, q.sender));
      std::map<std::string, NDArray> states;
      for (auto& [name, v] : in.states) {
        const Shape shape(static_cast<int64_t>(v.size()));
        states.emplace(name, NDArray(std::move(v), shape, Context::cpu(0)));
      }
      opt_->Deserialize(in.header["meta"].dump());
      opt_->SetStates(states);
      LogInfo("KVStore server {}: {} optimizer state(s) loaded from worker {}", c_.rank, states.size(), q.sender);
      Respond(q.id);
    }
  }

  void Handle(const std::string& wire, Request q) {
    auto [it, fresh] = parts_.try_emplace(wire);
    Part& p = it->second;
    if (fresh) {
      const size_t colon = wire.find(':');
      p.opt_index = std::atoi(wire.substr(0, colon).c_str());
      p.name = colon == std::string::npos ? wire : wire.substr(colon + 1);
    }
    if (q.kind == WEFT_PS_INIT) {
      if (!p.inited && q.sender == 0) {
        p.stored = NDArray(q.payload, Shape(static_cast<int64_t>(q.payload.size())), Context::cpu(0));
        p.inited = true;
        LogInfo("KVStore server {}: holds key {} ({} elements)", c_.rank, p.name, q.payload.size());
        Respond(q.id);
        std::vector<Request> waiting = std::move(p.waiting);
        for (auto& w : waiting) Handle(wire, std::move(w));
        return;
      }
      Respond(q.id);
      return;
    }
    if (!p.inited) {
      p.waiting.push_back(std::move(q));
      return;
    }
    if (q.kind == WEFT_PS_PULL_ROWS) {
      PullRows(p, q);
      return;
    }
    if (q.kind == WEFT_PS_PULL) {
      std::vector<float> value;
      p.stored.SyncCopyToCPU(&value);
      Respond(q.id, value.data(), value.size() * sizeof(float));
      return;
    }
    // A push: the dense gradient of the part, and for a row push the elements it holds.
    std::vector<uint8_t> touched;
    std::vector<float> grad = q.kind == WEFT_PS_PUSH_ROWS ? RowsToDense(p, q, &touched) : std::move(q.payload);
    WEFT_CHECK(grad.size() == p.stored.Size(),
               "KVStore server {}: worker {} pushed {} elements of key {}, which holds {}", c_.rank, q.sender,
               grad.size(), p.name, p.stored.Size());
    if (!sync_) {
      Apply(p, std::move(grad), q.kind == WEFT_PS_PUSH_ROWS ? &touched : nullptr);
      Respond(q.id);
      return;
    }
    if (p.round_ids.empty()) {
      p.round_start = Clock::now();
      p.sum = std::move(grad);
      p.round_rows = q.kind == WEFT_PS_PUSH_ROWS;
      p.touched = std::move(touched);
    } else {
      for (size_t i = 0; i < p.sum.size(); ++i) p.sum[i] += grad[i];
      p.round_rows = p.round_rows && q.kind == WEFT_PS_PUSH_ROWS;
      for (size_t i = 0; i < touched.size() && i < p.touched.size(); ++i) p.touched[i] |= touched[i];
    }
    p.round_ids.push_back(q.id);
    p.round_senders.insert(q.sender);
    if (p.round_ids.size() == static_cast<size_t>(c_.num_workers)) {
      Apply(p, std::move(p.sum), p.round_rows ? &p.touched : nullptr);
      for (uint64_t id : p.round_ids) Respond(id);
      p.round_ids.clear();
      p.round_senders.clear();
    }
  }

  // WEFT_PS_PUSH_ROWS: the payload is int64 [row_len, part_begin, n, n row ids], then float32, row
  // by row in that order, the elements of each row that fall in this part. Returns the part's
  // dense gradient (zeros elsewhere) and marks the elements the rows cover in `touched`.
  std::vector<float> RowsToDense(const Part& p, const Request& q, std::vector<uint8_t>* touched) const {
    const size_t bytes = q.payload.size() * sizeof(float);
    int64_t head[3] = {0, 0, 0};
    if (bytes >= sizeof(head)) std::memcpy(head, q.payload.data(), sizeof(head));
    const auto size = static_cast<int64_t>(p.stored.Size());
    const int64_t row_len = head[0], begin = head[1], n = head[2];
    WEFT_CHECK(bytes >= sizeof(head) && row_len > 0 && begin >= 0 && n >= 0 &&
                   static_cast<uint64_t>(n) <= (bytes - sizeof(head)) / sizeof(int64_t),
               "KVStore server {}: worker {} sent a malformed row push of key {} ({} bytes)", c_.rank, q.sender, p.name,
               bytes);
    std::vector<int64_t> ids(static_cast<size_t>(n));
    if (n > 0) std::memcpy(ids.data(), reinterpret_cast<const char*>(q.payload.data()) + sizeof(head), n * 8);
    const size_t values_at = (3 + static_cast<size_t>(n)) * sizeof(int64_t) / sizeof(float);
    std::vector<float> grad(static_cast<size_t>(size), 0.0f);
    touched->assign(static_cast<size_t>(size), 0);
    size_t at = values_at;
    for (int64_t r : ids) {
      const auto [lo, hi] = RowInPart(r, row_len, begin, begin + size);
      WEFT_CHECK(r >= 0 && lo < hi && at + static_cast<size_t>(hi - lo) <= q.payload.size(),
                 "KVStore server {}: worker {} pushed row {} of key {}, which this server's part does not hold or the "
                 "message does not carry",
                 c_.rank, q.sender, r, p.name);
      std::copy_n(q.payload.begin() + static_cast<std::ptrdiff_t>(at), hi - lo, grad.begin() + (lo - begin));
      std::fill(touched->begin() + (lo - begin), touched->begin() + (hi - begin), 1);
      at += static_cast<size_t>(hi - lo);
    }
    LogDebug("KVStore server {}: row push of key {} from worker {}: {} rows, {} bytes", c_.rank, p.name, q.sender, n,
             bytes);
    return grad;
  }

  // WEFT_PS_PULL_ROWS: the payload is int64 [row_len, part_begin, row ids...] (elements; the part
  // holds elements [part_begin, part_begin + size) of the flat value); the reply is, row by row in
  // the given order, the elements of each row that fall in this part. Only those bytes travel.
  void PullRows(Part& p, const Request& q) {
    const size_t n = q.payload.size() * sizeof(float) / sizeof(int64_t);
    std::vector<int64_t> head(n);
    if (n > 0) std::memcpy(head.data(), q.payload.data(), n * sizeof(int64_t));
    WEFT_CHECK(n >= 2 && head[0] > 0 && head[1] >= 0,
               "KVStore server {}: worker {} sent a malformed row_sparse_pull of key {} ({} bytes)", c_.rank, q.sender,
               p.name, q.payload.size() * sizeof(float));
    const int64_t row_len = head[0], begin = head[1], end = begin + static_cast<int64_t>(p.stored.Size());
    p.stored.WaitToRead();
    const auto* value = static_cast<const float*>(p.stored.GetRawData());
    std::vector<float> reply;
    for (size_t i = 2; i < n; ++i) {
      const auto [lo, hi] = RowInPart(head[i], row_len, begin, end);
      WEFT_CHECK(head[i] >= 0 && lo < hi,
                 "KVStore server {}: worker {} asked for row {} of key {}, which this server's part "
                 "(elements {} to {}) does not hold",
                 c_.rank, q.sender, head[i], p.name, begin, end);
      reply.insert(reply.end(), value + (lo - begin), value + (hi - begin));
    }
    LogDebug("KVStore server {}: row_sparse_pull of key {}: {} rows, {} bytes requested, {} bytes sent", c_.rank,
             p.name, n - 2, n * sizeof(int64_t), reply.size() * sizeof(float));
    Respond(q.id, reply.data(), reply.size() * sizeof(float));
  }

  // Applies a gradient of the part: the optimizer's update, or (none) the gradient replaces the
  // value. With `touched` (row pushes only), the optimizer gets it row_sparse over the touched
  // elements (each element is a row of the flat part), so its lazy update changes only the pushed
  // rows, as MXNet's server does with a row_sparse gradient.
  void Apply(Part& p, std::vector<float> grad, const std::vector<uint8_t>* touched = nullptr) {
    NDArray g(grad, p.stored.GetShape(), Context::cpu(0));
    if (!opt_) {
      NDArray::CopyFromTo(g, p.stored);
      return;
    }
    if (touched == nullptr) {
      opt_->Update(p.opt_index, p.stored, g);
      return;
    }
    std::vector<int64_t> ids;
    std::vector<float> values;
    for (size_t i = 0; i < touched->size(); ++i)
      if ((*touched)[i] != 0) {
        ids.push_back(static_cast<int64_t>(i));
        values.push_back(grad[i]);
      }
    NDArray idx(Shape(static_cast<int64_t>(ids.size())), Context::cpu(0), false, DType::kInt64);
    if (!ids.empty()) idx.SyncCopyFromCPUBytes(ids.data(), ids.size() * sizeof(int64_t));
    const NDArray data(values, Shape(static_cast<int64_t>(values.size())), Context::cpu(0));
    opt_->Update(p.opt_index, p.stored,
                 NDArray::FromSparseParts(StorageType::kRowSparse, p.stored.GetShape(), data, {idx}));
  }

  // Answers `ids` with `message` as a failure (when the transport can), then throws it.
  [[noreturn]] void FailWaiting(const std::vector<uint64_t>& ids, const std::string& message) {
    if (t_.api->ps_respond_error != nullptr)
      for (uint64_t id : ids)
        if (weft_error* e = t_.api->ps_respond_error(t_.state, comm_, id, WEFT_ERR_TIMEOUT, message.c_str()))
          ReleaseError(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the replies leave before we end
    Fail("{}", message);
  }

  void CheckDeadlines() {
    const int64_t ms = c_.op_timeout_ms * 3 / 4;
    const auto limit = std::chrono::milliseconds(ms);
    const auto now = Clock::now();
    for (auto& [wire, p] : parts_) {
      if (!p.round_ids.empty() && now - p.round_start > limit)
        FailWaiting(p.round_ids, fmt::format("KVStore server {}: the sync round of key {} waited {} ms for worker "
                                             "rank(s) {} (pushed: {} of {})",
                                             c_.rank, p.name, ms, Ranks(c_.num_workers, p.round_senders),
                                             p.round_senders.size(), c_.num_workers));
      if (!p.waiting.empty() && now - p.waiting.front().at > limit) {
        std::vector<uint64_t> ids;
        for (const auto& w : p.waiting) ids.push_back(w.id);
        FailWaiting(ids, fmt::format("KVStore server {}: worker 0 never initialised key {} within {} ms, but "
                                     "worker {} uses it",
                                     c_.rank, p.name, ms, p.waiting.front().sender));
      }
    }
    if (!barrier_ids_.empty() && now - barrier_start_ > limit)
      FailWaiting(barrier_ids_, fmt::format("KVStore server {}: Barrier waited {} ms for worker rank(s) {}", c_.rank,
                                            ms, Ranks(c_.num_workers, barrier_senders_)));
  }

  const DistConfig& c_;
  const Transport& t_;
  weft_comm comm_;
  bool sync_ = false;
  std::unique_ptr<Optimizer> opt_;
  std::map<int, std::vector<float>> snapshots_;  // by worker: "states_size" until "states"
  std::map<std::string, Part> parts_;
  std::set<int> stopped_;
  std::vector<uint64_t> barrier_ids_;
  std::set<int> barrier_senders_;
  Clock::time_point barrier_start_;
};

// Waits for worker 0 to announce store `prefix`; false when `stop` asks or the deadline passes.
bool WaitForStore(RendezvousStore& store, const std::string& prefix, int64_t timeout_ms,
                  const std::function<bool()>& stop) {
  const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < until) {
    if (stop && stop()) return false;
    if (store.Get(prefix + "/join/0", std::chrono::milliseconds(200))) return true;
  }
  return false;
}

}  // namespace

void RunServer(const std::function<bool()>& stop) {
  const DistConfig c = DistConfig::FromEnv();
  WEFT_CHECK(c.role == "server", "KVStore::RunServer: this process's role is '{}' (WEFT_ROLE=server expected)", c.role);
  auto store = RendezvousFromEnv();
  WEFT_CHECK(store != nullptr, "KVStore server: no rendezvous: set WEFT_RENDEZVOUS (weft-launch does)");
  SetRendezvousStore(store);
  const Transport t = FindTransport("dist_async", IsParameterServerTransport(c.transport) ? c.transport : "", true);
  for (int n = 0;; ++n) {
    const std::string prefix = "weft/ps" + std::to_string(n);
    if (!WaitForStore(*store, prefix, c.rendezvous_timeout_ms, stop)) {
      if (stop && stop()) return;
      WEFT_CHECK(n > 0, "KVStore server {}: no worker joined within {} ms (WEFT_RENDEZVOUS_TIMEOUT)", c.rank,
                 c.rendezvous_timeout_ms);
      LogInfo("KVStore server {}: no further store within {} ms; ending", c.rank, c.rendezvous_timeout_ms);
      return;
    }
    weft_comm comm = InitComm(
        t, c, WEFT_ROLE_SERVER, prefix,
        fmt::format("KVStore server {} of {}: joining store {} through '{}'", c.rank, c.num_servers, n, t.api->name));
    bool finished = false;
    try {
      Server server(c, t, comm);
      finished = server.Serve(stop);
    } catch (const std::exception& e) {
      LogError("{}", e.what());
      t.api->comm_abort(t.state, comm);
      if (weft_error* err = t.api->comm_finalize(t.state, comm)) ReleaseError(err);
      throw;
    }
    if (weft_error* err = t.api->comm_finalize(t.state, comm)) ReleaseError(err);
    if (!finished) return;
  }
}

}  // namespace weft::kv

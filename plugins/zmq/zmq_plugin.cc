// ZeroMQ transport plugin — the parameter-server message layer for the "dist_async" KVStore (and
// "dist_sync" when WEFT_KVSTORE_TRANSPORT=zmq), on Debian's libzmq (sdk/transport.h).
//
// Roles: each server binds a ROUTER socket (WEFT_ZMQ_HOSTNAME, default 127.0.0.1, a free port) and
// publishes its endpoint in the host's rendezvous store ("<prefix>/zmq/server/<rank>"); each
// worker publishes "host\npid" ("<prefix>/zmq/worker/<rank>"), reads every server's endpoint and
// connects one DEALER per server. Core does the rest (sharding, sums, optimizer); this file moves
// requests and replies.
//
// Wire format (multipart): request  = [Header{id, kind, sender, dtype}, key, payload];
//                          reply    = [Reply{id, status}, payload or error text].
// ZeroMQ sockets are not thread-safe, so one I/O thread per communicator owns them: callers queue
// requests (ps_call) or replies (ps_respond) and wake it through an eventfd; it polls the sockets,
// the wake-up fd and the sockets' monitors.
//
// Deadlines and failures (never a wait without a deadline):
//   worker  every request carries a deadline (call timeout_ms, else the communicator's
//           op_timeout_ms); an overdue one fails with WEFT_ERR_TIMEOUT naming the server, the
//           request kind and the key (a warning half-way). A server whose connection closes (its
//           process died) fails every pending and later request to it at once with
//           WEFT_ERR_UNAVAILABLE naming it; failed_rank = the server's rank.
//   server  a closed worker connection triggers checks (for 3 s) of the workers' processes on
//           this host (pid published at rendezvous; gone or zombie = dead); ps_poll then returns
//           WEFT_ERR_UNAVAILABLE with request->sender = the dead worker's rank (once per worker).
//           A worker that ends normally closes its connection too: core knows which workers said
//           goodbye and ignores those. Workers on other hosts are not checked (the launcher and the
//           workers' own deadlines catch them).
//   ps_respond_error sends a reply with a status: the worker's call fails with that code and
//   message (core's server uses it to name the workers a sync round waits for).
//
// Configuration: WEFT_ZMQ_HOSTNAME (address servers bind and publish; "0.0.0.0" is not
// publishable, name the host's address). Comm attrs: "op_timeout_ms".
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/process.hpp"

namespace weft::zmq_transport {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

struct Header {
  uint64_t id;
  int32_t kind;
  int32_t sender;
  int32_t dtype;
  int32_t pad;
};
struct ReplyHeader {
  uint64_t id;
  int32_t status;  // 0 ok, else a WEFT_ERR_* code and the payload is the message
  int32_t pad;
};

const char* KindName(int32_t kind) {
  switch (kind) {
    case WEFT_PS_INIT:
      return "init";
    case WEFT_PS_PUSH:
      return "push";
    case WEFT_PS_PULL:
      return "pull";
    case WEFT_PS_PULL_ROWS:
      return "row_sparse_pull";
    case WEFT_PS_PUSH_ROWS:
      return "row_sparse push";
    default:
      return "command";
  }
}

size_t ElemSize(int32_t dtype) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT64:
    case WEFT_DTYPE_INT64:
      return 8;
    case WEFT_DTYPE_UINT8:
    case WEFT_DTYPE_INT8:
      return 1;
    default:
      return 4;
  }
}

std::string ZmqError(const char* what) { return std::string(what) + ": " + zmq_strerror(zmq_errno()); }

// Sends `parts` as one multipart message (blocking: HWM is unlimited, so this only copies).
bool SendParts(void* sock, const std::vector<std::pair<const void*, size_t>>& parts) {
  for (size_t i = 0; i < parts.size(); ++i) {
    const int flags = i + 1 < parts.size() ? ZMQ_SNDMORE : 0;
    if (zmq_send(sock, parts[i].first, parts[i].second, flags) < 0) return false;
  }
  return true;
}

// Receives one multipart message (the socket is readable).
std::vector<zmq_msg_t> RecvParts(void* sock) {
  std::vector<zmq_msg_t> parts;
  while (true) {
    parts.emplace_back();
    zmq_msg_init(&parts.back());
    if (zmq_msg_recv(&parts.back(), sock, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&parts.back());
      parts.pop_back();
      break;
    }
    if (!zmq_msg_more(&parts.back())) break;
  }
  return parts;
}
void CloseParts(std::vector<zmq_msg_t>& parts) {
  for (auto& m : parts) zmq_msg_close(&m);
  parts.clear();
}

// The socket's monitor: a PAIR connected to zmq_socket_monitor's endpoint; returns the socket.
void* Monitor(void* ctx, void* sock, const std::string& name) {
  const std::string ep = "inproc://weft-monitor-" + name;
  if (zmq_socket_monitor(sock, ep.c_str(), ZMQ_EVENT_DISCONNECTED) != 0)
    throw sdk::Error(WEFT_ERR_INTERNAL, ZmqError("zmq_socket_monitor"));
  void* mon = zmq_socket(ctx, ZMQ_PAIR);
  if (mon == nullptr || zmq_connect(mon, ep.c_str()) != 0) throw sdk::Error(WEFT_ERR_INTERNAL, ZmqError("monitor"));
  return mon;
}

// Drains a monitor socket; returns the number of DISCONNECTED events.
int DrainMonitor(void* mon) {
  int disconnects = 0;
  while (true) {
    auto parts = RecvParts(mon);
    if (parts.empty()) break;
    if (zmq_msg_size(&parts[0]) >= 2) {
      uint16_t event = 0;
      std::memcpy(&event, zmq_msg_data(&parts[0]), 2);
      if (event == ZMQ_EVENT_DISCONNECTED) ++disconnects;
    }
    CloseParts(parts);
  }
  return disconnects;
}

struct Pending {  // a worker's request waiting for its reply
  int32_t server = 0;
  int32_t kind = 0;
  std::string key;
  void* recv = nullptr;
  uint64_t recv_bytes = 0;
  Clock::time_point deadline, warn_at;
  bool warned = false;
  int64_t timeout_ms = 0;
  std::function<void(weft_error*, int32_t)> done;
};

struct Outgoing {          // queued for the I/O thread
  int32_t server = -1;     // worker: destination; server: -1
  std::string identity;    // server: the worker's routing id
  std::vector<char> head;  // Header or ReplyHeader
  std::string key;         // worker requests only
  std::vector<char> payload;
};

struct Incoming {  // a request a server received, or a worker death
  uint64_t id = 0;
  Header head{};
  std::string identity, key;
  zmq_msg_t payload;
  int32_t dead_worker = -1;
  std::string dead_message;
};

struct Comm {
  const weft_host_api* host = nullptr;
  bool server = false;
  int32_t rank = 0, num_workers = 0, num_servers = 0;
  int64_t op_timeout_ms = 120000;
  std::string prefix;
  void* ctx = nullptr;
  std::vector<void*> socks;     // worker: one DEALER per server; server: the ROUTER
  std::vector<void*> monitors;  // one per socket
  std::vector<std::string> endpoints;
  int wake_fd = -1;
  std::thread io;
  std::atomic<bool> stop{false}, aborted{false};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Outgoing> out;
  // worker
  uint64_t next_id = 1;
  std::map<uint64_t, Pending> pending;
  std::vector<std::string> server_dead;  // non-empty: why that server is gone
  // server
  std::deque<Incoming> in;
  std::map<uint64_t, Incoming> held;  // delivered by ps_poll, waiting for ps_respond
  std::vector<int> worker_pids;
  std::set<int> reported_dead;
  Clock::time_point check_workers_until{};

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof(one));
  }
  void Log(int32_t level, const std::string& m) const { sdk::Log(host, level, m); }
  std::string Who() const { return (server ? "server " : "worker ") + std::to_string(rank); }
  void Loop();
  void WorkerEvents(std::vector<zmq_pollitem_t>& items);
  void ServerEvents(std::vector<zmq_pollitem_t>& items);
  void FailServer(int32_t s, int32_t code, const std::string& why);
  void CheckDeadlines();
  void CheckWorkers();
  void FailAll(int32_t code, const std::string& why);
};

void Comm::FailServer(int32_t s, int32_t code, const std::string& why) {
  std::vector<std::pair<std::function<void(weft_error*, int32_t)>, std::string>> fail;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (server_dead[s].empty()) server_dead[s] = why;
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second.server != s) {
        ++it;
        continue;
      }
      fail.emplace_back(std::move(it->second.done), std::string(KindName(it->second.kind)) + " of key " +
                                                        it->second.key + " failed: " + server_dead[s]);
      it = pending.erase(it);
    }
  }
  // Without pending requests this may be the normal end (a server closes after every worker's
  // goodbye, possibly before this worker finalizes); a later request reports it anyway.
  if (!fail.empty()) Log(WEFT_LOG_ERROR, "worker " + std::to_string(rank) + ": " + why);
  for (auto& [done, msg] : fail) done(sdk::MakeError(host, code, msg), s);
}

void Comm::FailAll(int32_t code, const std::string& why) {
  std::map<uint64_t, Pending> all;
  {
    std::lock_guard<std::mutex> lock(mu);
    all.swap(pending);
  }
  for (auto& [id, p] : all) p.done(sdk::MakeError(host, code, why), -1);
}

void Comm::CheckDeadlines() {
  const auto now = Clock::now();
  std::vector<Pending> overdue;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = pending.begin(); it != pending.end();) {
      Pending& p = it->second;
      if (!p.warned && now >= p.warn_at) {
        p.warned = true;
        Log(WEFT_LOG_WARNING, "worker " + std::to_string(rank) + ": server " + std::to_string(p.server) +
                                  " has not answered " + KindName(p.kind) + " of key " + p.key + " for " +
                                  std::to_string(p.timeout_ms / 2) + " ms (deadline " + std::to_string(p.timeout_ms) +
                                  " ms)");
      }
      if (now >= p.deadline) {
        overdue.push_back(std::move(p));
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& p : overdue) {
    const std::string msg = "worker " + std::to_string(rank) + ": server " + std::to_string(p.server) +
                            " did not answer " + KindName(p.kind) + " of key " + p.key + " within " +
                            std::to_string(p.timeout_ms) +
                            " ms (WEFT_KVSTORE_TIMEOUT): the server is hung or "
                            "overloaded, or a sync round waits for a worker that stopped";
    Log(WEFT_LOG_ERROR, msg);
    p.done(sdk::MakeError(host, WEFT_ERR_TIMEOUT, msg), p.server);
  }
}

void Comm::CheckWorkers() {
  if (Clock::now() > check_workers_until) return;
  for (int r = 0; r < num_workers; ++r) {
    if (reported_dead.count(r) != 0 || !sdk::ProcessGone(worker_pids[r])) continue;
    reported_dead.insert(r);
    Incoming inc;
    zmq_msg_init(&inc.payload);
    inc.dead_worker = r;
    inc.dead_message = "server " + std::to_string(rank) + ": worker rank " + std::to_string(r) + " (pid " +
                       std::to_string(worker_pids[r]) + ") closed its connection and its process is gone";
    {
      std::lock_guard<std::mutex> lock(mu);
      in.push_back(std::move(inc));
    }
    cv.notify_all();
  }
}

void Comm::WorkerEvents(std::vector<zmq_pollitem_t>& items) {
  for (int s = 0; s < num_servers; ++s) {
    if (items[1 + s].revents & ZMQ_POLLIN) {
      while (true) {
        auto parts = RecvParts(socks[s]);
        if (parts.empty()) break;
        ReplyHeader rh{};
        if (parts.size() == 2 && zmq_msg_size(&parts[0]) == sizeof(rh)) {
          std::memcpy(&rh, zmq_msg_data(&parts[0]), sizeof(rh));
          std::optional<Pending> p;
          {
            std::lock_guard<std::mutex> lock(mu);
            auto it = pending.find(rh.id);
            if (it != pending.end()) {
              p = std::move(it->second);
              pending.erase(it);
            }
          }
          const size_t n = zmq_msg_size(&parts[1]);
          if (p && rh.status != 0) {
            p->done(sdk::MakeError(host, rh.status, std::string(static_cast<const char*>(zmq_msg_data(&parts[1])), n)),
                    s);
          } else if (p && n != p->recv_bytes) {
            p->done(
                sdk::MakeError(host, WEFT_ERR_INTERNAL,
                               "server " + std::to_string(s) + " answered " + KindName(p->kind) + " of key " + p->key +
                                   " with " + std::to_string(n) + " bytes, expected " + std::to_string(p->recv_bytes)),
                s);
          } else if (p) {
            if (n > 0) std::memcpy(p->recv, zmq_msg_data(&parts[1]), n);
            p->done(nullptr, -1);
          }
        }
        CloseParts(parts);
      }
    }
    if ((items[1 + num_servers + s].revents & ZMQ_POLLIN) && DrainMonitor(monitors[s]) > 0)
      FailServer(s, WEFT_ERR_UNAVAILABLE,
                 "server " + std::to_string(s) + " (" + endpoints[s] +
                     ") closed its connection: the server process died or ended");
  }
}

void Comm::ServerEvents(std::vector<zmq_pollitem_t>& items) {
  if (items[1].revents & ZMQ_POLLIN) {
    while (true) {
      auto parts = RecvParts(socks[0]);
      if (parts.empty()) break;
      if (parts.size() == 4 && zmq_msg_size(&parts[1]) == sizeof(Header)) {
        Incoming inc;
        inc.identity.assign(static_cast<const char*>(zmq_msg_data(&parts[0])), zmq_msg_size(&parts[0]));
        std::memcpy(&inc.head, zmq_msg_data(&parts[1]), sizeof(Header));
        inc.key.assign(static_cast<const char*>(zmq_msg_data(&parts[2])), zmq_msg_size(&parts[2]));
        zmq_msg_init(&inc.payload);
        zmq_msg_move(&inc.payload, &parts[3]);
        {
          std::lock_guard<std::mutex> lock(mu);
          in.push_back(std::move(inc));
        }
        cv.notify_all();
      } else {
        Log(WEFT_LOG_WARNING, Who() + ": dropped a malformed message of " + std::to_string(parts.size()) + " parts");
      }
      CloseParts(parts);
    }
  }
  if ((items[2].revents & ZMQ_POLLIN) && DrainMonitor(monitors[0]) > 0) check_workers_until = Clock::now() + Ms(3000);
  CheckWorkers();
}

void Comm::Loop() {
  std::vector<zmq_pollitem_t> items;
  items.push_back({nullptr, wake_fd, ZMQ_POLLIN, 0});
  for (void* s : socks) items.push_back({s, 0, ZMQ_POLLIN, 0});
  for (void* m : monitors) items.push_back({m, 0, ZMQ_POLLIN, 0});
  while (!stop.load()) {
    for (auto& it : items) it.revents = 0;
    if (zmq_poll(items.data(), static_cast<int>(items.size()), 50) < 0 && zmq_errno() != EINTR) {
      Log(WEFT_LOG_ERROR, ZmqError("zmq_poll"));
      break;
    }
    if (items[0].revents & ZMQ_POLLIN) {
      uint64_t v = 0;
      [[maybe_unused]] ssize_t n = ::read(wake_fd, &v, sizeof(v));
    }
    std::deque<Outgoing> sends;
    {
      std::lock_guard<std::mutex> lock(mu);
      sends.swap(out);
    }
    for (auto& o : sends) {
      bool ok;
      if (server) {
        ok = SendParts(socks[0], {{o.identity.data(), o.identity.size()},
                                  {o.head.data(), o.head.size()},
                                  {o.payload.data(), o.payload.size()}});
      } else {
        ok = SendParts(
            socks[o.server],
            {{o.head.data(), o.head.size()}, {o.key.data(), o.key.size()}, {o.payload.data(), o.payload.size()}});
      }
      if (!ok) Log(WEFT_LOG_WARNING, Who() + ": " + ZmqError("send"));
    }
    if (server)
      ServerEvents(items);
    else {
      WorkerEvents(items);
      CheckDeadlines();
    }
  }
  // Replies queued just before finalize (a server's answer to the last worker's goodbye) still go
  // out; the sockets' linger (set by Finalize) bounds how long closing waits for them.
  std::deque<Outgoing> sends;
  {
    std::lock_guard<std::mutex> lock(mu);
    sends.swap(out);
  }
  for (auto& o : sends)
    if (server)
      SendParts(socks[0], {{o.identity.data(), o.identity.size()},
                           {o.head.data(), o.head.size()},
                           {o.payload.data(), o.payload.size()}});
}

class ZmqPlugin final : public sdk::Plugin {
 public:
  explicit ZmqPlugin(const weft_host_api* host) : sdk::Plugin(host) {
    api_.struct_size = sizeof(api_);
    api_.name = "zmq";
    api_.kvstore_types = "dist_async,dist_sync";
    api_.comm_init = [](void* s, weft_comm_init_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { static_cast<ZmqPlugin*>(s)->Init(a); });
    };
    api_.comm_finalize = [](void* s, weft_comm c) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Finalize(reinterpret_cast<Comm*>(c)); });
    };
    api_.comm_abort = [](void* s, weft_comm c) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] {
        auto* comm = reinterpret_cast<Comm*>(c);
        if (comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "zmq comm_abort: comm is NULL");
        comm->aborted.store(true);
        comm->FailAll(WEFT_ERR_ABORTED, "zmq: the communicator was aborted");
        comm->cv.notify_all();
      });
    };
    // A parameter-server transport: no collectives (core uses Gloo for them).
    auto no_collective = [](void* s, weft_collective_args*) noexcept {
      return sdk::MakeError(sdk::HostOf(s), WEFT_ERR_UNSUPPORTED,
                            "zmq is a parameter-server transport: it offers no collectives (use gloo)");
    };
    api_.allreduce = no_collective;
    api_.broadcast = no_collective;
    api_.barrier = no_collective;
    api_.group_start = [](void*) noexcept -> weft_error* { return nullptr; };
    api_.group_end = [](void*) noexcept -> weft_error* { return nullptr; };
    api_.ps_call = [](void* s, weft_ps_call* c) noexcept { return Call(sdk::HostOf(s), c); };
    api_.ps_poll = [](void* s, weft_comm c, weft_ps_request* r, int64_t t) noexcept {
      return Poll(sdk::HostOf(s), reinterpret_cast<Comm*>(c), r, t);
    };
    api_.ps_respond = [](void* s, weft_comm c, uint64_t id, const void* reply, uint64_t bytes) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Respond(reinterpret_cast<Comm*>(c), id, reply, bytes, 0); });
    };
    api_.comm_status = [](void*, weft_comm) noexcept -> weft_error* { return nullptr; };
    api_.ps_respond_error = [](void* s, weft_comm c, uint64_t id, int32_t code, const char* msg) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] {
        const std::string m = msg ? msg : "";
        Respond(reinterpret_cast<Comm*>(c), id, m.data(), m.size(), code != 0 ? code : WEFT_ERR_UNKNOWN);
      });
    };
    Provide(&api_);
  }

  void Init(weft_comm_init_args* a);
  static void Finalize(Comm* c);
  static weft_error* Call(const weft_host_api* host, weft_ps_call* call);
  static weft_error* Poll(const weft_host_api* host, Comm* c, weft_ps_request* r, int64_t timeout_ms);
  // status 0: a reply; else a failure (WEFT_ERR_*) whose message is `reply`.
  static void Respond(Comm* c, uint64_t id, const void* reply, uint64_t bytes, int32_t status);

 private:
  std::vector<char> KvGet(const std::string& key, int64_t timeout_ms) {
    size_t len = 0;
    std::vector<char> buf(256);
    sdk::ThrowIfError(host(), host()->kv_get(host()->host_ctx, key.c_str(), buf.data(), buf.size(), &len, timeout_ms));
    if (len > buf.size()) {
      buf.resize(len);
      sdk::ThrowIfError(host(), host()->kv_get(host()->host_ctx, key.c_str(), buf.data(), buf.size(), &len, 0));
    }
    buf.resize(len);
    return buf;
  }
  void KvSet(const std::string& key, const std::string& v) {
    sdk::ThrowIfError(host(), host()->kv_set(host()->host_ctx, key.c_str(), v.data(), v.size()));
  }
  weft_transport_api api_{};
};

void ZmqPlugin::Init(weft_comm_init_args* a) {
  if (a == nullptr || a->role == nullptr)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "zmq comm_init: args or role is NULL");
  auto c = std::make_unique<Comm>();
  c->host = host();
  c->server = std::strcmp(a->role, WEFT_ROLE_SERVER) == 0;
  if (!c->server && std::strcmp(a->role, WEFT_ROLE_WORKER) != 0)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, std::string("zmq comm_init: role '") + a->role +
                                                    "' is not served (worker or server; no scheduler is needed)");
  c->rank = a->rank;
  c->num_workers = a->world_size;
  c->num_servers = a->num_servers;
  if (c->num_servers < 1 || c->num_workers < 1 || c->rank < 0 ||
      c->rank >= (c->server ? c->num_servers : c->num_workers))
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                     "zmq comm_init: " + std::string(a->role) + " rank " + std::to_string(a->rank) + " with " +
                         std::to_string(a->world_size) + " workers and " + std::to_string(a->num_servers) +
                         " servers is not a valid job (at least one server; weft-launch -s S starts them)");
  if (host()->kv_set == nullptr || host()->kv_get == nullptr)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "zmq comm_init: the host offers no rendezvous store");
  if (a->device_type != nullptr && std::strcmp(a->device_type, "cpu") != 0)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, "zmq comm_init: only host memory (core stages device data)");
  const int64_t rdv_ms = a->timeout_ms > 0 ? a->timeout_ms : 300000;
  c->op_timeout_ms = rdv_ms;
  for (int32_t i = 0; i < a->num_attrs; ++i) {
    const std::string k = a->attrs[i].key ? a->attrs[i].key : "", v = a->attrs[i].value ? a->attrs[i].value : "";
    if (k != "op_timeout_ms")
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       "zmq comm_init: unknown attribute '" + k + "' (known: op_timeout_ms)");
    c->op_timeout_ms = std::stoll(v);
  }
  c->prefix = a->prefix ? a->prefix : "zmq";
  const std::string hostname = Config("WEFT_ZMQ_HOSTNAME").value_or("127.0.0.1");
  c->ctx = zmq_ctx_new();
  c->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (c->ctx == nullptr || c->wake_fd < 0) throw sdk::Error(WEFT_ERR_INTERNAL, "zmq comm_init: no context/eventfd");
  const int zero = 0, one = 1;
  const std::string tag = std::to_string(reinterpret_cast<uintptr_t>(c.get()));
  try {
    if (c->server) {
      void* s = zmq_socket(c->ctx, ZMQ_ROUTER);
      c->socks.push_back(s);
      zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof(zero));
      zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof(zero));
      zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &one, sizeof(one));
      zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
      const std::string bind = "tcp://" + hostname + ":*";
      if (zmq_bind(s, bind.c_str()) != 0)
        throw sdk::Error(WEFT_ERR_UNAVAILABLE, ZmqError(("zmq server cannot bind " + bind).c_str()));
      char ep[256] = {};
      size_t len = sizeof(ep);
      zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len);
      c->endpoints.push_back(ep);
      c->monitors.push_back(Monitor(c->ctx, s, tag));
      KvSet(c->prefix + "/zmq/server/" + std::to_string(c->rank), ep);
      c->worker_pids.assign(c->num_workers, -1);
      char me[256] = {};
      ::gethostname(me, sizeof(me) - 1);
      for (int r = 0; r < c->num_workers; ++r) {
        auto v = KvGet(c->prefix + "/zmq/worker/" + std::to_string(r), rdv_ms);
        std::istringstream in(std::string(v.begin(), v.end()));
        std::string h, pid;
        std::getline(in, h);
        std::getline(in, pid);
        if (h == me) c->worker_pids[r] = std::atoi(pid.c_str());
      }
    } else {
      char me[256] = {};
      ::gethostname(me, sizeof(me) - 1);
      KvSet(c->prefix + "/zmq/worker/" + std::to_string(c->rank), std::string(me) + "\n" + std::to_string(::getpid()));
      const std::string id = "w" + std::to_string(c->rank);
      c->server_dead.assign(c->num_servers, "");
      for (int s = 0; s < c->num_servers; ++s) {
        auto v = KvGet(c->prefix + "/zmq/server/" + std::to_string(s), rdv_ms);
        c->endpoints.emplace_back(v.begin(), v.end());
        void* d = zmq_socket(c->ctx, ZMQ_DEALER);
        c->socks.push_back(d);
        zmq_setsockopt(d, ZMQ_ROUTING_ID, id.data(), id.size());
        zmq_setsockopt(d, ZMQ_SNDHWM, &zero, sizeof(zero));
        zmq_setsockopt(d, ZMQ_RCVHWM, &zero, sizeof(zero));
        zmq_setsockopt(d, ZMQ_LINGER, &zero, sizeof(zero));
        if (zmq_connect(d, c->endpoints.back().c_str()) != 0)
          throw sdk::Error(WEFT_ERR_UNAVAILABLE, ZmqError(("connect to server " + std::to_string(s)).c_str()));
        c->monitors.push_back(Monitor(c->ctx, d, tag + "-" + std::to_string(s)));
      }
    }
  } catch (const sdk::Error& e) {
    Finalize(c.release());
    throw sdk::Error(
        e.code(), std::string("zmq rendezvous of ") + a->role + " " + std::to_string(a->rank) + " failed: " + e.what());
  }
  Comm* raw = c.get();
  c->io = std::thread([raw] { raw->Loop(); });
  a->comm = reinterpret_cast<weft_comm>(c.release());
}

void ZmqPlugin::Finalize(Comm* c) {
  if (c == nullptr) return;
  std::unique_ptr<Comm> owned(c);
  c->stop.store(true);
  if (c->io.joinable()) {
    c->Wake();
    c->io.join();
  }
  c->FailAll(WEFT_ERR_ABORTED, "zmq: the communicator was finalized");
  {
    std::lock_guard<std::mutex> lock(c->mu);
    for (auto& i : c->in) zmq_msg_close(&i.payload);
    for (auto& [id, i] : c->held) zmq_msg_close(&i.payload);
    c->in.clear();
    c->held.clear();
  }
  // Up to 1 s for messages still queued (a reply to a goodbye); none of them after an abort.
  const int linger = c->aborted.load() ? 0 : 1000, zero = 0;
  for (void* s : c->socks) zmq_socket_monitor(s, nullptr, 0);
  for (void* m : c->monitors) {
    zmq_setsockopt(m, ZMQ_LINGER, &zero, sizeof(zero));
    zmq_close(m);
  }
  for (void* s : c->socks) {
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_close(s);
  }
  if (c->ctx) zmq_ctx_term(c->ctx);
  if (c->wake_fd >= 0) ::close(c->wake_fd);
}

weft_error* ZmqPlugin::Call(const weft_host_api* host, weft_ps_call* call) {
  if (call == nullptr || call->comm == nullptr)
    return sdk::MakeError(host, WEFT_ERR_INVALID_ARGUMENT, "zmq ps_call: call or comm is NULL");
  Comm& c = *reinterpret_cast<Comm*>(call->comm);
  call->failed_rank = -1;
  if (c.server) return sdk::MakeError(host, WEFT_ERR_INVALID_ARGUMENT, "zmq ps_call: called on a server");
  if (call->server < 0 || call->server >= c.num_servers)
    return sdk::MakeError(
        host, WEFT_ERR_INVALID_ARGUMENT,
        "zmq ps_call: server " + std::to_string(call->server) + " is outside 0.." + std::to_string(c.num_servers - 1));
  if (c.aborted.load()) return sdk::MakeError(host, WEFT_ERR_ABORTED, "zmq: the communicator was aborted");
  const std::string key = call->key ? call->key : "";
  Pending p;
  p.server = call->server;
  p.kind = call->kind;
  p.key = key;
  p.recv = call->recv.host != nullptr ? static_cast<char*>(call->recv.host) + call->recv.offset : nullptr;
  p.recv_bytes = call->recv.count * ElemSize(call->recv.dtype);
  p.timeout_ms = call->timeout_ms > 0 ? call->timeout_ms : c.op_timeout_ms;
  const auto now = Clock::now();
  p.deadline = now + Ms(p.timeout_ms);
  p.warn_at = now + Ms(p.timeout_ms / 2);
  std::promise<std::pair<weft_error*, int32_t>> result;
  const bool blocking = call->done == nullptr;
  if (blocking) {
    p.done = [&result](weft_error* e, int32_t r) { result.set_value({e, r}); };
  } else {
    p.done = [fn = call->done, data = call->done_data](weft_error* e, int32_t r) { fn(data, e, r); };
  }
  Outgoing o;
  o.server = call->server;
  o.key = key;
  const size_t bytes = call->send.count * ElemSize(call->send.dtype);
  if (bytes > 0) {
    const char* src = static_cast<const char*>(call->send.host) + call->send.offset;
    o.payload.assign(src, src + bytes);
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.server_dead[call->server].empty()) {
      call->failed_rank = call->server;
      return sdk::MakeError(
          host, WEFT_ERR_UNAVAILABLE,
          std::string(KindName(call->kind)) + " of key " + key + " failed: " + c.server_dead[call->server]);
    }
    const uint64_t id = c.next_id++;
    Header h{id, call->kind, c.rank, call->send.dtype, 0};
    o.head.assign(reinterpret_cast<char*>(&h), reinterpret_cast<char*>(&h) + sizeof(h));
    c.pending.emplace(id, std::move(p));
    c.out.push_back(std::move(o));
  }
  c.Wake();
  if (!blocking) return nullptr;
  auto fut = result.get_future();
  // The I/O thread completes every request by its deadline; the margin only guards against a bug.
  if (fut.wait_for(Ms(call->timeout_ms > 0 ? call->timeout_ms : c.op_timeout_ms) + Ms(10000)) !=
      std::future_status::ready)
    return sdk::MakeError(host, WEFT_ERR_INTERNAL, "zmq ps_call: the I/O thread missed the deadline");
  auto [err, rank] = fut.get();
  call->failed_rank = rank;
  return err;
}

weft_error* ZmqPlugin::Poll(const weft_host_api* host, Comm* c, weft_ps_request* r, int64_t timeout_ms) {
  if (c == nullptr || r == nullptr || !c->server)
    return sdk::MakeError(host, WEFT_ERR_INVALID_ARGUMENT, "zmq ps_poll: needs a server communicator and a request");
  std::unique_lock<std::mutex> lock(c->mu);
  c->cv.wait_for(lock, Ms(std::max<int64_t>(timeout_ms, 0)), [&] { return !c->in.empty() || c->aborted.load(); });
  if (c->aborted.load()) return sdk::MakeError(host, WEFT_ERR_ABORTED, "zmq: the communicator was aborted");
  if (c->in.empty()) return sdk::MakeError(host, WEFT_ERR_TIMEOUT, "zmq ps_poll: no request");
  Incoming inc = std::move(c->in.front());
  c->in.pop_front();
  if (inc.dead_worker >= 0) {
    r->sender = inc.dead_worker;
    zmq_msg_close(&inc.payload);
    return sdk::MakeError(host, WEFT_ERR_UNAVAILABLE, inc.dead_message);
  }
  const uint64_t id = c->next_id++;
  auto [it, ok] = c->held.emplace(id, std::move(inc));
  Incoming& h = it->second;
  r->request_id = id;
  r->kind = h.head.kind;
  r->sender = h.head.sender;
  r->key = h.key.c_str();
  r->payload = zmq_msg_data(&h.payload);
  r->payload_bytes = zmq_msg_size(&h.payload);
  r->dtype = h.head.dtype;
  return nullptr;
}

void ZmqPlugin::Respond(Comm* c, uint64_t id, const void* reply, uint64_t bytes, int32_t status) {
  if (c == nullptr || !c->server) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "zmq ps_respond: not a server comm");
  Outgoing o;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    auto it = c->held.find(id);
    if (it == c->held.end())
      throw sdk::Error(WEFT_ERR_NOT_FOUND, "zmq ps_respond: request " + std::to_string(id) + " is not pending");
    ReplyHeader rh{it->second.head.id, status, 0};
    o.identity = it->second.identity;
    zmq_msg_close(&it->second.payload);
    c->held.erase(it);
    o.head.assign(reinterpret_cast<char*>(&rh), reinterpret_cast<char*>(&rh) + sizeof(rh));
    if (bytes > 0) o.payload.assign(static_cast<const char*>(reply), static_cast<const char*>(reply) + bytes);
    c->out.push_back(std::move(o));
  }
  c->Wake();
}

}  // namespace
}  // namespace weft::zmq_transport

WEFT_SDK_PLUGIN(weft::zmq_transport::ZmqPlugin, "zmq", "0.1.0",
                "KVStore transport: a ZeroMQ parameter server (dist_async; dist_sync with WEFT_KVSTORE_TRANSPORT=zmq)",
                WEFT_PLUGIN_PROVIDES_TRANSPORT)

// Gloo transport plugin — collectives (allreduce, broadcast, barrier) over TCP for the
// "dist_sync" and "dist_device_sync" KVStores, on Debian's libgloo (sdk/transport.h).
//
// Rendezvous: gloo::rendezvous::Context::connectFullMesh through a gloo Store that adapts the
// host's kv_set / kv_get (the host's store is a file store on a shared directory or the small TCP
// store the launcher serves; core picks it). Each rank then publishes the TCP addresses of its
// pairs, so that a "connection closed by [ip]:port" from Gloo can be turned into the peer's rank.
//
// Deadlines: every collective carries Gloo's per-operation timeout (args timeout_ms, else the
// communicator's op_timeout_ms). Half-way to a deadline a waiting rank publishes that it waits on
// collective #n and warns naming the ranks that have not said so; a timeout names them in the
// error (a stopped or hung peer never publishes). A closed connection (crashed peer) fails at
// once with WEFT_ERR_UNAVAILABLE naming the peer's rank. After the first failure every call fails
// at once with that error: a Gloo context is unusable after an I/O error.
//
// Configuration (host config_get, i.e. environment first): WEFT_GLOO_IFACE (network interface,
// e.g. "eth0"), else WEFT_GLOO_HOSTNAME (address to bind and publish), else 127.0.0.1 (one host).
// Comm attrs: "iface", "hostname", "op_timeout_ms" override them per communicator.
//
// Threading: calls on one communicator are serialised (one Gloo op at a time; core issues them
// from one thread in the same order on every rank). comm_abort may run concurrently: it closes
// the pairs, so a pending Gloo op fails at once.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/process.hpp"

namespace weft::gloo_transport {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// A gloo Store on the host's rendezvous store (kv_set / kv_get with deadlines).
class HostStore final : public ::gloo::rendezvous::Store {
 public:
  HostStore(const weft_host_api* host, std::string prefix, int64_t timeout_ms)
      : host_(host), prefix_(std::move(prefix)), timeout_ms_(timeout_ms) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    sdk::ThrowIfError(host_, host_->kv_set(host_->host_ctx, Full(key).c_str(), data.data(), data.size()));
  }
  std::vector<char> get(const std::string& key) override { return Get(key, timeout_ms_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, Ms(timeout_ms_)); }
  void wait(const std::vector<std::string>& keys, const Ms& timeout) override {
    for (const auto& k : keys) Get(k, timeout.count() > 0 ? timeout.count() : timeout_ms_);
  }

  std::vector<char> Get(const std::string& key, int64_t timeout_ms) {
    size_t len = 0;
    std::vector<char> buf(256);
    sdk::ThrowIfError(host_,
                      host_->kv_get(host_->host_ctx, Full(key).c_str(), buf.data(), buf.size(), &len, timeout_ms));
    if (len > buf.size()) {
      buf.resize(len);
      sdk::ThrowIfError(host_, host_->kv_get(host_->host_ctx, Full(key).c_str(), buf.data(), buf.size(), &len, 0));
    }
    buf.resize(len);
    return buf;
  }
  // True when `key` is present now (no waiting).
  bool Has(const std::string& key) {
    size_t len = 0;
    weft_error* e = host_->kv_get(host_->host_ctx, Full(key).c_str(), nullptr, 0, &len, 0);
    if (e == nullptr) return true;
    host_->error_release(host_->host_ctx, e);
    return false;
  }

 private:
  std::string Full(const std::string& key) const { return prefix_ + "/" + key; }
  const weft_host_api* host_;
  std::string prefix_;
  int64_t timeout_ms_;
};

struct Comm;
void WarnStall(Comm& c, uint32_t seq, int64_t timeout_ms, const std::string& what);

// One thread per communicator that wakes half-way to the deadline of the op in progress (see the
// top of the file). Begin/End bracket each op.
class Watchdog {
 public:
  void Start(Comm* c) {
    thread_ = std::thread([this, c] { Loop(*c); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Begin(uint32_t seq, int64_t timeout_ms, const std::string& what) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_ = true;
      ++generation_;
      seq_ = seq;
      timeout_ms_ = timeout_ms;
      what_ = what;
      half_ = Clock::now() + Ms(timeout_ms / 2);
    }
    cv_.notify_all();
  }
  void End() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_ = false;
    }
    cv_.notify_all();
  }

 private:
  void Loop(Comm& c) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait(lock, [&] { return stop_ || active_; });
      if (stop_) break;
      const uint64_t gen = generation_;
      auto changed = [&] { return stop_ || !active_ || generation_ != gen; };
      if (cv_.wait_until(lock, half_, changed)) continue;
      const uint32_t seq = seq_;
      const int64_t timeout = timeout_ms_;
      const std::string what = what_;
      lock.unlock();
      WarnStall(c, seq, timeout, what);
      lock.lock();
      cv_.wait(lock, changed);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false, active_ = false;
  uint64_t generation_ = 0;
  uint32_t seq_ = 0;
  int64_t timeout_ms_ = 0;
  std::string what_;
  Clock::time_point half_;
};

struct Comm {
  const weft_host_api* host = nullptr;
  int rank = 0, size = 1;
  int64_t op_timeout_ms = 0;
  std::unique_ptr<HostStore> store;
  std::shared_ptr<::gloo::rendezvous::Context> ctx;
  std::map<int, int> port_rank;    // TCP port of a peer's end of a pair -> the peer's rank
  std::vector<std::string> hosts;  // each rank's host name and pid (a dead peer on this host is
  std::vector<int> pids;           // found by its pid when Gloo's error does not name it)
  std::mutex op_mu;                // one Gloo op at a time
  uint32_t seq = 0;                // collectives issued (Gloo tag)
  std::vector<char> scratch;       // RingAllreduce's received segments (under op_mu)
  std::atomic<bool> aborted{false};
  std::mutex err_mu;
  int32_t failed_code = 0;  // first failure: later calls repeat it
  std::string failed_message;
  int32_t failed_rank = -1;
  Watchdog watchdog;  // last member: its thread stops before the rest goes
};

// Turns the failure of a Gloo op into (code, rank, message).
struct Failure {
  int32_t code;
  int32_t rank;
  std::string message;
};

std::string RankList(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// Ranks that have not published "waiting on collective #seq".
std::vector<int> MissingRanks(Comm& c, uint32_t seq) {
  std::vector<int> missing;
  for (int r = 0; r < c.size; ++r) {
    if (r == c.rank) continue;
    if (!c.store->Has("wait/" + std::to_string(seq) + "/" + std::to_string(r))) missing.push_back(r);
  }
  return missing;
}

// Half-way to a deadline: say this rank waits on collective `seq`, warn naming who has not.
void WarnStall(Comm& c, uint32_t seq, int64_t timeout_ms, const std::string& what) {
  try {
    c.store->set("wait/" + std::to_string(seq) + "/" + std::to_string(c.rank), {'1'});
    std::this_thread::sleep_for(Ms(std::min<int64_t>(200, timeout_ms / 10)));
    const auto missing = MissingRanks(c, seq);
    sdk::Log(c.host, WEFT_LOG_WARNING,
             "rank " + std::to_string(c.rank) + ": " + what + " has waited " + std::to_string(timeout_ms / 2) +
                 " ms of its " + std::to_string(timeout_ms) + " ms deadline; " +
                 (missing.empty() ? std::string("every rank is waiting too (a slow network?)")
                                  : "no word from rank(s) " + RankList(missing)));
  } catch (const std::exception&) {  // the store may be gone at shutdown: the warning is best effort
  }
}

// Why collective `seq` timed out on this rank, given the ranks that never said they wait on it.
// Ranks that wait on it too, or wait on the previous collective (which this rank completed) or on
// the next one (so they completed this one), are alive but data between them and this rank stopped:
// the network between the ranks failed (a partition, a link down). Ranks with no word at all
// stopped or hung.
std::string ExplainTimeout(Comm& c, uint32_t seq, const std::vector<int>& missing) {
  const std::string unreachable = " (network failure between the ranks)";
  if (missing.empty())
    return c.size == 2 ? "rank " + std::to_string(1 - c.rank) + " reached it too but none of its data arrived: rank " +
                             std::to_string(1 - c.rank) + " is unreachable" + unreachable
                       : "every rank reached it but data stopped arriving" + unreachable;
  std::vector<int> elsewhere;  // waiting on the previous or the next collective
  try {
    for (int r : missing)
      for (uint32_t other : {seq - 1, seq + 1})
        if ((other != seq - 1 || seq > 0) && c.store->Has("wait/" + std::to_string(other) + "/" + std::to_string(r))) {
          elsewhere.push_back(r);
          break;
        }
  } catch (const std::exception&) {
  }
  if (elsewhere.size() == missing.size()) {
    const std::string who = (elsewhere.size() == 1 ? "rank " : "ranks ") + RankList(elsewhere);
    return who + " waited on the collective before or after this one: " + who +
           " and this rank are alive but their data stopped arriving; " + who +
           (elsewhere.size() == 1 ? " is unreachable" : " are unreachable") + unreachable;
  }
  return "rank(s) " + RankList(missing) + " never reached it (stopped or hung)";
}

// The port of an address string "[ip]:port" (gloo's Address::str), or -1.
int PortOf(const std::string& addr) {
  const size_t colon = addr.rfind("]:");
  if (colon == std::string::npos) return -1;
  try {
    return std::stoi(addr.substr(colon + 2));
  } catch (const std::exception&) {
    return -1;
  }
}

int Swap16(int port) { return ((port & 0xff) << 8) | ((port >> 8) & 0xff); }

// Remote ports of this process's established TCP connections whose local port is `port`
// (/proc/net/tcp and tcp6: "sl local:PORT rem:PORT st ..." in hex). A pair this rank accepted
// names the peer by that ephemeral remote port in Gloo's errors.
std::vector<int> RemotePortsOn(int port) {
  std::vector<int> out;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, st;
      f >> sl >> local >> remote >> st;
      const size_t lc = local.rfind(':'), rc = remote.rfind(':');
      if (lc == std::string::npos || rc == std::string::npos || st != "01") continue;
      if (std::stoi(local.substr(lc + 1), nullptr, 16) == port)
        out.push_back(std::stoi(remote.substr(rc + 1), nullptr, 16));
    }
  }
  return out;
}

// Peers on this host whose process is gone (or a zombie), asked again every 5 ms for up to
// `limit` while none is and a peer shares this host. A peer's sockets close while it exits, before
// /proc shows it as a zombie, so the survivor that sees the connection close can look in between:
// on a loaded machine it did (the survivor then named no rank; tests/dist
// Dist.KilledWorkerMakesSurvivorsFailFastNamingIt).
std::vector<int> DeadLocalRanks(const Comm& c, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    std::vector<int> dead;
    bool local_peer = false;
    for (int r = 0; r < static_cast<int>(c.pids.size()); ++r) {
      if (r == c.rank || c.hosts[r] != c.hosts[c.rank]) continue;
      local_peer = true;
      if (sdk::ProcessGone(c.pids[r])) dead.push_back(r);
    }
    if (!dead.empty() || !local_peer || std::chrono::steady_clock::now() >= deadline) return dead;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The rank whose end of a pair appears ("]:port") in a Gloo error message, or -1.
int32_t RankInMessage(const Comm& c, const std::string& what) {
  for (size_t at = what.find("]:"); at != std::string::npos; at = what.find("]:", at + 2)) {
    size_t end = at + 2;
    while (end < what.size() && std::isdigit(static_cast<unsigned char>(what[end]))) ++end;
    if (end == at + 2) continue;
    const int port = std::stoi(what.substr(at + 2, end - at - 2));
    auto it = c.port_rank.find(port);
    if (it != c.port_rank.end()) return it->second;
  }
  return c.size == 2 ? 1 - c.rank : -1;
}

// Runs `op` (a Gloo call) with the stall watchdog: half-way to the deadline this rank publishes
// that it waits on collective `seq` and warns about ranks that have not. Returns the failure.
template <typename F>
std::optional<Failure> RunOp(Comm& c, const char* op_name, const char* key, uint32_t seq, int64_t timeout_ms, F&& op) {
  const std::string what = std::string(op_name) + " #" + std::to_string(seq) + " (key " + (key ? key : "?") + ")";
  c.watchdog.Begin(seq, timeout_ms, what);
  std::optional<Failure> failure;
  try {
    op();
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    const bool timed_out = msg.find("imed out") != std::string::npos || msg.find("timeout") != std::string::npos;
    if (c.aborted.load()) {
      failure = Failure{WEFT_ERR_ABORTED, -1, "gloo " + what + " on rank " + std::to_string(c.rank) + ": aborted"};
    } else if (timed_out) {
      std::vector<int> missing;
      try {
        missing = MissingRanks(c, seq);
      } catch (const std::exception&) {
      }
      failure =
          Failure{WEFT_ERR_TIMEOUT, missing.size() == 1 ? missing[0] : -1,
                  "gloo " + what + " on rank " + std::to_string(c.rank) + ": deadline of " +
                      std::to_string(timeout_ms) + " ms passed; " + ExplainTimeout(c, seq, missing) + " [" + msg + "]"};
      if (missing.empty() && c.size == 2) failure->rank = 1 - c.rank;
    } else {
      int32_t peer = RankInMessage(c, msg);
      if (peer < 0) {
        const auto dead = DeadLocalRanks(c, std::chrono::milliseconds(500));
        if (!dead.empty()) peer = dead[0];
      }
      failure = Failure{WEFT_ERR_UNAVAILABLE, peer,
                        "gloo " + what + " on rank " + std::to_string(c.rank) + ": peer rank " +
                            (peer >= 0 ? std::to_string(peer) : std::string("(unknown)")) +
                            " is gone (its connection closed: crashed or exited) [" + msg + "]"};
      // A peer that gave up on this op itself (its own peer died or stalled) said why before it
      // left: report the cause, not the messenger.
      if (peer >= 0) {
        try {
          auto why = c.store->Get("fail/" + std::to_string(seq) + "/" + std::to_string(peer), 0);
          const std::string text(why.begin(), why.end());
          const size_t nl = text.find('\n');
          failure->rank = std::stoi(text.substr(0, nl));
          failure->message = "gloo " + what + " on rank " + std::to_string(c.rank) + ": peer rank " +
                             std::to_string(peer) + " gave up on it: " + text.substr(nl + 1);
        } catch (const std::exception&) {  // no word from it: it crashed
        }
      }
    }
    if (failure->code != WEFT_ERR_ABORTED) {
      try {
        const std::string note = std::to_string(failure->rank) + "\n" + failure->message;
        c.store->set("fail/" + std::to_string(seq) + "/" + std::to_string(c.rank),
                     std::vector<char>(note.begin(), note.end()));
      } catch (const std::exception&) {  // best effort: the store may be gone
      }
    }
  }
  c.watchdog.End();
  return failure;
}

template <typename T>
::gloo::AllreduceOptions::Func ReduceFn(int32_t op) {
  switch (op) {
    case WEFT_REDUCE_SUM:
      return [](void* c, const void* a, const void* b, size_t n) { ::gloo::sum<T>(c, a, b, n); };
    case WEFT_REDUCE_PROD:
      return [](void* c, const void* a, const void* b, size_t n) { ::gloo::product<T>(c, a, b, n); };
    case WEFT_REDUCE_MIN:
      return [](void* c, const void* a, const void* b, size_t n) { ::gloo::min<T>(c, a, b, n); };
    case WEFT_REDUCE_MAX:
      return [](void* c, const void* a, const void* b, size_t n) { ::gloo::max<T>(c, a, b, n); };
    default:
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "gloo allreduce: unknown reduce_op " + std::to_string(op) +
                                                      " (WEFT_REDUCE_SUM, _PROD, _MIN or _MAX)");
  }
}

size_t ElemSize(int32_t dtype) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
    case WEFT_DTYPE_INT32:
      return 4;
    case WEFT_DTYPE_FLOAT64:
    case WEFT_DTYPE_INT64:
      return 8;
    case WEFT_DTYPE_UINT8:
      return 1;
    default:
      throw sdk::Error(WEFT_ERR_UNSUPPORTED, "gloo transport: dtype code " + std::to_string(dtype) +
                                                 " is not supported (float32, float64, int32, int64, uint8)");
  }
}

::gloo::AllreduceOptions::Func ReduceFor(int32_t dtype, int32_t op) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return ReduceFn<float>(op);
    case WEFT_DTYPE_FLOAT64:
      return ReduceFn<double>(op);
    case WEFT_DTYPE_INT32:
      return ReduceFn<int32_t>(op);
    case WEFT_DTYPE_INT64:
      return ReduceFn<int64_t>(op);
    default:
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       "gloo allreduce: dtype code " + std::to_string(dtype) + " cannot be reduced here");
  }
}

char* HostPtr(const weft_buffer& b) { return static_cast<char*>(b.host) + b.offset; }

// Ring allreduce reading `in` and writing `out` (they may be the same memory): a reduce-scatter
// then an allgather, N-1 steps each, every chunk split into segments of at most kSegmentBytes so
// that the next segment travels while this one is reduced. Unlike gloo::allreduce with an input
// distinct from the output, `in` is never copied into `out` first: the reduce-scatter computes
// out = in + received, and the allgather receives straight into `out`. The scratch for received
// segments is the communicator's (kept, not allocated per call). One slot per call (the tag):
// Gloo matches a pair's messages of one slot in order.
constexpr size_t kSegmentBytes = size_t{1} << 20;
constexpr uint8_t kRingSlotPrefix = 0x57;  // distinct from Gloo's own collectives' prefixes

void RingAllreduce(Comm& c, const char* in, char* out, size_t count, size_t esize,
                   const ::gloo::AllreduceOptions::Func& fn, uint32_t tag, Ms timeout) {
  const size_t bytes = count * esize;
  const int n = c.size;
  if (n == 1 || bytes == 0) {
    if (in != out && bytes > 0) std::memcpy(out, in, bytes);
    return;
  }
  // Chunk i: elements [i*per, min((i+1)*per, count)); segments of a chunk: kSegmentBytes each.
  const size_t per = (count + n - 1) / n;
  const size_t seg_elems = std::max<size_t>(1, kSegmentBytes / esize);
  const size_t nseg = (per + seg_elems - 1) / seg_elems;
  auto range = [&](int chunk, size_t k) {  // byte offset and length of segment k of `chunk`
    const int ch = ((chunk % n) + n) % n;
    const size_t begin = std::min(count, ch * per + k * seg_elems);
    const size_t end = std::min({count, ch * per + per, begin + seg_elems});
    return std::pair<size_t, size_t>{begin * esize, (end - begin) * esize};
  };
  if (c.scratch.size() < 2 * seg_elems * esize) c.scratch.resize(2 * seg_elems * esize);
  auto in_buf = c.ctx->createUnboundBuffer(const_cast<char*>(in), bytes);
  auto out_buf = c.ctx->createUnboundBuffer(out, bytes);
  auto tmp_buf = c.ctx->createUnboundBuffer(c.scratch.data(), c.scratch.size());
  const int right = (c.rank + 1) % n, left = (c.rank + n - 1) % n;
  const uint64_t slot = ::gloo::Slot::build(kRingSlotPrefix, tag);
  const auto deadline = Clock::now() + timeout;
  auto left_ms = [&] { return std::max(Ms(1), std::chrono::duration_cast<Ms>(deadline - Clock::now())); };
  // Item i = step t (0..N-2 reduce-scatter, N-1..2N-3 allgather), segment k. Its send needs item
  // i - nseg done (the segment reduced or received one step earlier).
  const size_t steps = 2 * static_cast<size_t>(n - 1), items = steps * nseg;
  auto send_of = [&](size_t i) { return range(c.rank - static_cast<int>(i / nseg), i % nseg); };
  auto recv_of = [&](size_t i) { return range(c.rank - static_cast<int>(i / nseg) - 1, i % nseg); };
  auto reduces = [&](size_t i) { return i / nseg < static_cast<size_t>(n - 1); };
  auto post_recv = [&](size_t i) {
    const auto [off, len] = recv_of(i);
    if (len == 0) return;
    if (reduces(i))
      tmp_buf->recv(left, slot, (i % 2) * seg_elems * esize, len);
    else
      out_buf->recv(left, slot, off, len);
  };
  auto complete = [&](size_t i) {
    const auto [roff, rlen] = recv_of(i);
    if (rlen > 0) {
      (reduces(i) ? tmp_buf : out_buf)->waitRecv(left_ms());
      if (reduces(i)) fn(out + roff, in + roff, c.scratch.data() + (i % 2) * seg_elems * esize, rlen / esize);
    }
    if (send_of(i).second > 0) (i < nseg ? in_buf : out_buf)->waitSend(left_ms());
  };
  for (size_t i = 0; i <= items; ++i) {
    // Receives into scratch may be posted before the previous item completes (its half of the
    // scratch was freed two items ago); receives into out wait, so they never overlap a send.
    if (i < items && reduces(i)) post_recv(i);
    if (i > 0) complete(i - 1);
    if (i == items) break;
    if (!reduces(i)) post_recv(i);
    const auto [soff, slen] = send_of(i);
    if (slen > 0) (i < nseg ? in_buf : out_buf)->send(right, slot, soff, slen);
  }
}

// ----- the C entries ------------------------------------------------------------------------
enum class OpKind { kAllreduce, kBroadcast, kBarrier };

weft_error* RunCollective(void* state, weft_collective_args* a, OpKind kind);

class GlooPlugin final : public sdk::Plugin {
 public:
  explicit GlooPlugin(const weft_host_api* host) : sdk::Plugin(host) {
    api_.struct_size = sizeof(api_);
    api_.name = "gloo";
    api_.kvstore_types = "dist_sync,dist_device_sync";
    api_.comm_init = [](void* s, weft_comm_init_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { static_cast<GlooPlugin*>(s)->Init(a); });
    };
    api_.comm_finalize = [](void* s, weft_comm c) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { static_cast<GlooPlugin*>(s)->Finalize(c); });
    };
    api_.comm_abort = [](void* s, weft_comm c) noexcept { return sdk::Guard(sdk::HostOf(s), [&] { Abort(c); }); };
    api_.allreduce = [](void* s, weft_collective_args* a) noexcept { return RunCollective(s, a, OpKind::kAllreduce); };
    api_.broadcast = [](void* s, weft_collective_args* a) noexcept { return RunCollective(s, a, OpKind::kBroadcast); };
    api_.barrier = [](void* s, weft_collective_args* a) noexcept { return RunCollective(s, a, OpKind::kBarrier); };
    // Gloo has no launch groups: calls run as they come, which is what a group of blocking
    // calls issued in order amounts to.
    api_.group_start = [](void*) noexcept -> weft_error* { return nullptr; };
    api_.group_end = [](void*) noexcept -> weft_error* { return nullptr; };
    api_.comm_status = [](void* s, weft_comm c) noexcept -> weft_error* {
      auto* comm = reinterpret_cast<Comm*>(c);
      std::lock_guard<std::mutex> lock(comm->err_mu);
      if (comm->failed_code == 0) return nullptr;
      return sdk::MakeError(sdk::HostOf(s), comm->failed_code, comm->failed_message);
    };
    Provide(&api_);
  }

  void Init(weft_comm_init_args* a);
  void Finalize(weft_comm c);
  static void Abort(weft_comm c) {
    auto* comm = reinterpret_cast<Comm*>(c);
    if (comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "gloo comm_abort: comm is NULL");
    comm->aborted.store(true);
    if (comm->ctx) comm->ctx->closeConnections();
  }

 private:
  weft_transport_api api_{};
};

void GlooPlugin::Init(weft_comm_init_args* a) {
  if (a == nullptr || a->world_size < 1 || a->rank < 0 || a->rank >= a->world_size)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "gloo comm_init: rank " + std::to_string(a ? a->rank : -1) +
                                                    " is outside world_size " + std::to_string(a ? a->world_size : 0));
  if (a->device_type != nullptr && std::strcmp(a->device_type, "cpu") != 0)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, std::string("gloo comm_init: device communicators on '") + a->device_type +
                                               "' are not supported; Gloo works on host memory (core stages "
                                               "device data through the host)");
  if (host()->kv_set == nullptr || host()->kv_get == nullptr)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "gloo comm_init: the host offers no rendezvous store");
  ::gloo::transport::tcp::attr attr;
  if (auto v = Config("WEFT_GLOO_IFACE"); v && !v->empty()) attr.iface = *v;
  if (auto v = Config("WEFT_GLOO_HOSTNAME"); v && !v->empty()) attr.hostname = *v;
  auto c = std::make_unique<Comm>();
  c->op_timeout_ms = a->timeout_ms > 0 ? a->timeout_ms : 300000;
  for (int32_t i = 0; i < a->num_attrs; ++i) {
    const std::string k = a->attrs[i].key ? a->attrs[i].key : "", v = a->attrs[i].value ? a->attrs[i].value : "";
    if (k == "iface") {
      attr.iface = v;
    } else if (k == "hostname") {
      attr.hostname = v;
    } else if (k == "op_timeout_ms") {
      c->op_timeout_ms = std::stoll(v);
    } else {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       "gloo comm_init: unknown attribute '" + k + "' (known: iface, hostname, op_timeout_ms)");
    }
  }
  if (attr.iface.empty() && attr.hostname.empty()) attr.hostname = "127.0.0.1";
  c->host = host();
  c->rank = a->rank;
  c->size = a->world_size;
  const int64_t rdv_ms = a->timeout_ms > 0 ? a->timeout_ms : 300000;
  c->store = std::make_unique<HostStore>(host(), a->prefix ? a->prefix : "gloo", rdv_ms);
  try {
    auto dev = ::gloo::transport::tcp::CreateDevice(attr);
    c->ctx = std::make_shared<::gloo::rendezvous::Context>(a->rank, a->world_size);
    c->ctx->setTimeout(Ms(rdv_ms));
    c->ctx->connectFullMesh(*c->store, dev);
    c->ctx->setTimeout(Ms(c->op_timeout_ms));
    // Learn which TCP ports are whose (see RankInMessage): the listening ports every rank
    // publishes for its pairs, and the ephemeral ports of the peers whose connections we accepted.
    std::string mine;
    for (int r = 0; r < c->size; ++r) {
      if (r == c->rank) continue;
      const std::string addr = c->ctx->getPair(r)->address().str();
      mine += addr + "\n";
      // Debian's Gloo prints ports in network byte order (Address::str misses an ntohs): look
      // for both readings, and record the peers' ports in both too.
      const int port = PortOf(addr);
      for (int local : {port, Swap16(port)})
        for (int remote : RemotePortsOn(local)) c->port_rank[remote] = c->port_rank[Swap16(remote)] = r;
    }
    char hostname[256] = {};
    ::gethostname(hostname, sizeof(hostname) - 1);
    mine = std::string(hostname) + "\n" + std::to_string(::getpid()) + "\n" + mine;
    c->store->set("addr/" + std::to_string(c->rank), std::vector<char>(mine.begin(), mine.end()));
    c->hosts.assign(c->size, hostname);
    c->pids.assign(c->size, ::getpid());
    for (int r = 0; r < c->size; ++r) {
      if (r == c->rank) continue;
      auto bytes = c->store->Get("addr/" + std::to_string(r), rdv_ms);
      std::istringstream in(std::string(bytes.begin(), bytes.end()));
      std::string pid;
      std::getline(in, c->hosts[r]);
      std::getline(in, pid);
      c->pids[r] = std::atoi(pid.c_str());
      for (std::string line; std::getline(in, line);)
        if (PortOf(line) > 0) c->port_rank[PortOf(line)] = r;
    }
    std::string known;
    for (auto [port, r] : c->port_rank) known += " " + std::to_string(port) + ":" + std::to_string(r);
    Log(WEFT_LOG_DEBUG, "rank " + std::to_string(c->rank) + " knows peer ports (port:rank)" + known);
    c->watchdog.Start(c.get());
  } catch (const sdk::Error& e) {
    throw sdk::Error(e.code(), "gloo rendezvous of rank " + std::to_string(a->rank) + " of " +
                                   std::to_string(a->world_size) + " failed: " + e.what());
  } catch (const std::exception& e) {
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "gloo rendezvous of rank " + std::to_string(a->rank) + " of " +
                                               std::to_string(a->world_size) + " failed within " +
                                               std::to_string(rdv_ms) + " ms: " + e.what());
  }
  a->comm = reinterpret_cast<weft_comm>(c.release());
}

void GlooPlugin::Finalize(weft_comm cm) {
  std::unique_ptr<Comm> c(reinterpret_cast<Comm*>(cm));
  if (!c) return;
  bool healthy;
  {
    std::lock_guard<std::mutex> lock(c->err_mu);
    healthy = c->failed_code == 0 && !c->aborted.load();
  }
  // A last barrier so no rank closes its sockets while a peer still reads from them.
  if (healthy && c->size > 1) {
    std::lock_guard<std::mutex> lock(c->op_mu);
    const uint32_t seq = c->seq++;
    auto f = RunOp(*c, "finalize barrier", "-", seq, c->op_timeout_ms, [&] {
      ::gloo::BarrierOptions opts(c->ctx);
      opts.setTag(seq);
      opts.setTimeout(Ms(c->op_timeout_ms));
      ::gloo::barrier(opts);
    });
    if (f) Log(WEFT_LOG_WARNING, f->message);
  }
}

weft_error* Fail(const weft_host_api* host, weft_collective_args* a, int32_t code, int32_t rank,
                 const std::string& msg) {
  if (a->struct_size >= WEFT_STRUCT_SIZE(weft_collective_args, failed_rank)) a->failed_rank = rank;
  return sdk::MakeError(host, code, msg);
}

weft_error* RunCollective(void* state, weft_collective_args* a, OpKind kind) {
  const weft_host_api* host = sdk::HostOf(state);
  if (a == nullptr || a->comm == nullptr)
    return sdk::MakeError(host, WEFT_ERR_INVALID_ARGUMENT, "gloo collective: args or comm is NULL");
  if (a->stream != nullptr)
    return sdk::MakeError(host, WEFT_ERR_INVALID_ARGUMENT, "gloo collective: stream must be NULL (host buffers)");
  Comm& c = *reinterpret_cast<Comm*>(a->comm);
  if (a->struct_size >= WEFT_STRUCT_SIZE(weft_collective_args, failed_rank)) a->failed_rank = -1;
  std::optional<Failure> failure;
  weft_error* err = sdk::Guard(host, [&] {
    std::lock_guard<std::mutex> lock(c.op_mu);
    {
      std::lock_guard<std::mutex> el(c.err_mu);
      if (c.failed_code != 0) {
        failure = Failure{c.failed_code, c.failed_rank, c.failed_message};
        return;
      }
    }
    if (c.aborted.load()) {
      failure = Failure{WEFT_ERR_ABORTED, -1, "gloo: the communicator was aborted"};
      return;
    }
    const uint32_t seq = c.seq++;
    const int64_t timeout = a->timeout_ms > 0 ? a->timeout_ms : c.op_timeout_ms;
    const char* names[] = {"allreduce", "broadcast", "barrier"};
    const size_t esize = kind == OpKind::kBarrier ? 1 : ElemSize(a->recv.dtype);
    ::gloo::AllreduceOptions::Func fn;
    if (kind == OpKind::kAllreduce) fn = ReduceFor(a->recv.dtype, a->reduce_op);
    if (kind == OpKind::kBroadcast && (a->root < 0 || a->root >= c.size))
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "gloo broadcast: root " + std::to_string(a->root) +
                                                      " is outside world_size " + std::to_string(c.size));
    // What each allreduce moves, for tests that count a key's traffic (WEFT_LOG_LEVEL=debug).
    if (kind == OpKind::kAllreduce)
      sdk::Log(c.host, WEFT_LOG_DEBUG,
               "allreduce #" + std::to_string(seq) + " of key " + std::string(a->key != nullptr ? a->key : "") + ": " +
                   std::to_string(a->recv.count * esize) + " bytes");
    failure = RunOp(c, names[static_cast<int>(kind)], a->key, seq, timeout, [&] {
      const size_t bytes = a->recv.count * esize;
      if (kind == OpKind::kAllreduce) {
        char* out = HostPtr(a->recv);
        const char* in = a->send.host != nullptr ? HostPtr(a->send) : out;
        RingAllreduce(c, in, out, a->recv.count, esize, fn, seq, Ms(timeout));
      } else if (kind == OpKind::kBroadcast) {
        ::gloo::BroadcastOptions opts(c.ctx);
        if (c.rank == a->root && a->send.host != nullptr && HostPtr(a->send) != HostPtr(a->recv))
          opts.setInput<char>(c.ctx->createUnboundBuffer(HostPtr(a->send), bytes));
        opts.setOutput<char>(c.ctx->createUnboundBuffer(HostPtr(a->recv), bytes));
        opts.setRoot(a->root);
        opts.setTag(seq);
        opts.setTimeout(Ms(timeout));
        ::gloo::broadcast(opts);
      } else {
        ::gloo::BarrierOptions opts(c.ctx);
        opts.setTag(seq);
        opts.setTimeout(Ms(timeout));
        ::gloo::barrier(opts);
      }
    });
    if (failure) {
      std::lock_guard<std::mutex> el(c.err_mu);
      c.failed_code = failure->code;
      c.failed_rank = failure->rank;
      c.failed_message = failure->message;
    }
  });
  if (err == nullptr && failure) err = Fail(host, a, failure->code, failure->rank, failure->message);
  if (a->done != nullptr && err == nullptr) a->done(a->done_data, nullptr, -1);
  return err;
}

}  // namespace
}  // namespace weft::gloo_transport

WEFT_SDK_PLUGIN(weft::gloo_transport::GlooPlugin, "gloo", "0.1.0",
                "KVStore transport: Gloo allreduce/broadcast/barrier over TCP (dist_sync, dist_device_sync)",
                WEFT_PLUGIN_PROVIDES_TRANSPORT)

// simcoll — a test-only device transport (libweft-simcoll.so in <build>/test-plugins, never
// installed). It stands in for the nccl transport only because no machine of this project has a
// GPU: it implements the *device* side of sdk/transport.h the way plugins/nccl does, on the
// simulated device simdev (tests/plugins/simdev: private address space, asynchronous streams), so
// that core's device-communicator path (core/kvstore/device_comm.h: the engine operation on the
// device's stream, the issue order, the watchdog, the errors) runs for real in multi-process
// tests. Nothing in core knows about it: it is picked like NCCL would be, as a loaded transport
// serving "nccl,dist_device_sync" that reports devices.
//
//   device_count  WEFT_SIMCOLL_DEVICES (0..16, default 0: the plugin then reports 0 devices with
//                 the reason, so loading it changes nothing unless a test asks for it).
//   comm_init     device_type "simdev" only. Bootstrap as NCCL: rank 0 makes a random 16-byte id
//                 and publishes it through the host's rendezvous store, the others read it within
//                 the rendezvous deadline (plugins/nccl/nccl_support.h ExchangeId, the nccl
//                 plugin's own code); the id names this communicator's keys in the store.
//   allreduce / broadcast  the stream and device addresses come from the host's native_handle
//                 (a simdev stream is a host queue, its memory a host pointer behind the handle);
//                 the collective is queued on the stream and returns (NCCL's contract). When the
//                 stream reaches it, it publishes this rank's data under "<id>/<seq>/<rank>" in
//                 the rendezvous store (file or TCP store: a real channel between processes) and
//                 reads the peers' (allreduce: summed in rank order, so every rank gets the same
//                 bits; broadcast: the root's). `seq` counts the calls in issue order, so ranks
//                 that issue collectives in different orders read each other's wrong data, which
//                 shows as a size mismatch (an error naming the peer) or as wrong sums.
//   deadlines     a read waits in 20 ms slices up to the op's deadline; a peer that never
//                 publishes (dead or stopped) fails the queued work with WEFT_ERR_TIMEOUT naming
//                 its rank; that becomes the stream's sticky error and comm_status's failure.
//                 comm_abort makes queued and later work fail within one slice.
//   barrier       blocking, in the calling thread, on the same sequence.
// float32 only (what core's KVStore moves). Keys are never deleted from the store (tests only).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nccl_support.h"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/device.h"

namespace weft::simcoll {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// The message of a host error (released).
std::string Take(const weft_host_api* host, weft_error* e, int32_t* code) {
  size_t n = 0;
  const char* m = host->error_message(host->host_ctx, e, &n);
  std::string text = m != nullptr ? std::string(m, n) : "(no message)";
  *code = host->error_code(host->host_ctx, e);
  host->error_release(host->host_ctx, e);
  return text;
}

struct Comm {
  const weft_host_api* host = nullptr;
  int rank = 0, size = 1;
  int64_t op_timeout_ms = 0;
  std::string ns;  // the store namespace (the bootstrap id)
  std::atomic<uint64_t> seq{0};
  std::atomic<bool> aborted{false};
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;      // queued collectives not finished
  std::string failure;  // the first failure: comm_status reports it

  void SetFailure(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = why;
  }
  std::string Failure() {
    std::lock_guard<std::mutex> lock(mu);
    return failure;
  }
  std::string Key(uint64_t s, int r) const { return ns + "/" + std::to_string(s) + "/" + std::to_string(r); }

  void Publish(uint64_t s, const void* data, size_t bytes) {
    sdk::ThrowIfError(host, host->kv_set(host->host_ctx, Key(s, rank).c_str(), data, bytes));
  }
  // Reads rank `peer`'s data of call `s` (exactly `bytes` bytes) by `deadline`. `what` names the call.
  void Fetch(uint64_t s, int peer, void* out, size_t bytes, Clock::time_point deadline, const std::string& what) {
    const std::string key = Key(s, peer);
    while (true) {
      if (aborted.load()) throw sdk::Error(WEFT_ERR_ABORTED, what + ": the communicator was aborted");
      const int64_t left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
      if (left <= 0)
        throw sdk::Error(WEFT_ERR_TIMEOUT, what + ": rank " + std::to_string(peer) + " sent nothing within " +
                                               std::to_string(op_timeout_ms) + " ms (dead or stalled)");
      size_t len = 0;
      weft_error* e = host->kv_get(host->host_ctx, key.c_str(), out, bytes, &len, std::min<int64_t>(left, 20));
      if (e == nullptr) {
        if (len != bytes)
          throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                           what + ": rank " + std::to_string(peer) + " sent " + std::to_string(len) +
                               " bytes, this rank expected " + std::to_string(bytes) +
                               " (the ranks issued different collectives as call #" + std::to_string(s) + ")");
        return;
      }
      int32_t code = 0;
      const std::string why = Take(host, e, &code);
      if (code != WEFT_ERR_TIMEOUT && code != WEFT_ERR_NOT_FOUND)
        throw sdk::Error(WEFT_ERR_UNAVAILABLE, what + ": reading rank " + std::to_string(peer) + "'s data: " + why);
    }
  }
};

// One queued collective.
struct Task {
  Comm* comm = nullptr;
  bool allreduce = true;
  uint64_t seq = 0;
  const float* send = nullptr;
  float* recv = nullptr;
  uint64_t count = 0;
  int root = 0;
  int64_t timeout_ms = 0;
  std::string what;
};

void Execute(const Task& t) {
  Comm& c = *t.comm;
  const size_t bytes = t.count * sizeof(float);
  const auto deadline = Clock::now() + Ms(t.timeout_ms);
  if (!t.allreduce) {
    if (c.rank == t.root) {
      c.Publish(t.seq, t.send, bytes);
      if (t.recv != t.send) std::memcpy(t.recv, t.send, bytes);
    } else {
      c.Fetch(t.seq, t.root, t.recv, bytes, deadline, t.what);
    }
    return;
  }
  c.Publish(t.seq, t.send, bytes);
  std::vector<float> sum(t.send, t.send + t.count), peer(t.count);
  for (int q = 0; q < c.size; ++q) {  // rank order: every rank adds the same numbers the same way
    const float* x = t.send;
    if (q != c.rank) {
      c.Fetch(t.seq, q, peer.data(), bytes, deadline, t.what);
      x = peer.data();
    }
    if (q == 0)
      std::copy(x, x + t.count, sum.begin());
    else
      for (uint64_t i = 0; i < t.count; ++i) sum[i] += x[i];
  }
  std::memcpy(t.recv, sum.data(), bytes);
}

// Runs on the stream's thread; an error becomes the stream's sticky error.
weft_error* RunTask(void* data) {
  std::unique_ptr<Task> t(static_cast<Task*>(data));
  Comm& c = *t->comm;
  weft_error* err = sdk::Guard(c.host, [&] {
    try {
      Execute(*t);
    } catch (const sdk::Error& e) {
      c.SetFailure(e.what());
      throw;
    }
  });
  {
    std::lock_guard<std::mutex> lock(c.mu);
    --c.running;
  }
  c.cv.notify_all();
  return err;
}

// The native object behind a simdev stream or buffer (host.h native_handle).
weft_native_handle_args Native(const weft_host_api* host, int32_t what, weft_stream stream, const weft_buffer* buf) {
  weft_native_handle_args n{};
  n.struct_size = sizeof(n);
  n.what = what;
  n.stream = stream;
  if (buf != nullptr) {
    n.ptr = buf->data;
    n.offset = buf->offset;
  }
  sdk::ThrowIfError(host, host->native_handle(host->host_ctx, "simdev", &n));
  return n;
}

float* HostPointer(const weft_host_api* host, const weft_buffer& b, const char* which) {
  if (b.dtype != WEFT_DTYPE_FLOAT32)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, std::string("simcoll: ") + which + " dtype " + std::to_string(b.dtype) +
                                               " is not supported (float32 only)");
  const weft_native_handle_args n = Native(host, WEFT_NATIVE_MEMORY, nullptr, &b);
  if (n.kind != WEFT_NATIVE_KIND_HOST_POINTER || n.size < b.count * sizeof(float))
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                     std::string("simcoll: the ") + which + " buffer is not simdev memory of count elements");
  return static_cast<float*>(n.handle);
}

constexpr const char* kNoDevices =
    "WEFT_SIMCOLL_DEVICES is 0 (simcoll is a test stand-in for NCCL on simdev; tests set it to use it)";

class SimcollPlugin final : public sdk::Plugin {
 public:
  explicit SimcollPlugin(const weft_host_api* host)
      : sdk::Plugin(host), devices_(static_cast<int32_t>(ConfigInt("WEFT_SIMCOLL_DEVICES", 0, 0, 16))) {
    api_.struct_size = sizeof(api_);
    api_.name = "simcoll";
    api_.kvstore_types = "nccl,dist_device_sync";
    api_.device_type = "simdev";
    api_.comm_init = [](void* s, weft_comm_init_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { static_cast<SimcollPlugin*>(s)->Init(a); });
    };
    api_.comm_finalize = [](void* s, weft_comm c) noexcept { return sdk::Guard(sdk::HostOf(s), [&] { Finalize(c); }); };
    api_.comm_abort = [](void* s, weft_comm c) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] {
        if (c == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll comm_abort: comm is NULL");
        Comm& comm = *reinterpret_cast<Comm*>(c);
        comm.SetFailure("simcoll rank " + std::to_string(comm.rank) + ": aborted by the host");
        comm.aborted = true;
      });
    };
    api_.allreduce = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Queue(sdk::HostOf(s), a, true); });
    };
    api_.broadcast = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Queue(sdk::HostOf(s), a, false); });
    };
    api_.barrier = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Barrier(a); });
    };
    api_.group_start = [](void*) noexcept -> weft_error* { return nullptr; };  // calls run in issue order anyway
    api_.group_end = [](void*) noexcept -> weft_error* { return nullptr; };
    api_.comm_status = [](void* s, weft_comm c) noexcept -> weft_error* {
      if (c == nullptr) return sdk::MakeError(sdk::HostOf(s), WEFT_ERR_INVALID_ARGUMENT, "simcoll: comm is NULL");
      const std::string f = reinterpret_cast<Comm*>(c)->Failure();
      return f.empty() ? nullptr : sdk::MakeError(sdk::HostOf(s), WEFT_ERR_UNAVAILABLE, f);
    };
    api_.device_count = [](void* s, const char** reason) noexcept -> int32_t {
      auto* p = static_cast<SimcollPlugin*>(s);
      if (reason != nullptr && p->devices_ == 0) *reason = kNoDevices;
      return p->devices_;
    };
    Provide(&api_);
  }

 private:
  void Init(weft_comm_init_args* a);
  static void Finalize(weft_comm c);
  static void Queue(const weft_host_api* host, weft_collective_args* a, bool allreduce);
  static void Barrier(weft_collective_args* a);

  int32_t devices_ = 0;
  weft_transport_api api_{};
};

void SimcollPlugin::Init(weft_comm_init_args* a) {
  const nccl_transport::CommSettings settings =
      nccl_transport::ReadCommArgs(a, "simcoll", "simdev", devices_, kNoDevices);
  auto c = std::make_unique<Comm>();
  c->host = host();
  c->rank = settings.rank;
  c->size = settings.size;
  c->op_timeout_ms = settings.op_timeout_ms;
  const int64_t rdv_ms = settings.rendezvous_ms;
  const std::string id = nccl_transport::ExchangeId(
      host(), a->prefix ? a->prefix : "simcoll", c->rank, 16,
      [] {
        std::random_device rd;
        std::string s(16, '\0');
        for (char& ch : s) ch = static_cast<char>(rd());
        return s;
      },
      rdv_ms);
  static const char* kHex = "0123456789abcdef";
  c->ns = "simcoll/";
  for (unsigned char ch : id) c->ns += std::string{kHex[ch >> 4], kHex[ch & 15]};
  a->comm = reinterpret_cast<weft_comm>(c.release());
}

void SimcollPlugin::Finalize(weft_comm cm) {
  auto* c = reinterpret_cast<Comm*>(cm);
  if (c == nullptr) return;
  // Queued collectives hold the communicator: wait for them (they end by their deadline).
  std::unique_lock<std::mutex> lock(c->mu);
  if (!c->cv.wait_for(lock, Ms(c->op_timeout_ms + 1000), [&] { return c->running == 0; })) {
    sdk::Log(c->host, WEFT_LOG_WARNING, "simcoll finalize: queued collectives did not end; the communicator leaks");
    return;
  }
  lock.unlock();
  delete c;
}

void SimcollPlugin::Queue(const weft_host_api* host, weft_collective_args* a, bool allreduce) {
  if (a == nullptr || a->comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll: args or comm is NULL");
  Comm& c = *reinterpret_cast<Comm*>(a->comm);
  if (a->struct_size >= WEFT_STRUCT_SIZE(weft_collective_args, failed_rank)) a->failed_rank = -1;
  if (const std::string f = c.Failure(); !f.empty()) throw sdk::Error(WEFT_ERR_UNAVAILABLE, f);
  if (a->stream == nullptr)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll: a device collective needs the stream to queue it on");
  auto t = std::make_unique<Task>();
  t->comm = &c;
  t->allreduce = allreduce;
  t->recv = HostPointer(host, a->recv, "recv");
  t->send = a->send.data != 0 ? HostPointer(host, a->send, "send") : t->recv;
  t->count = a->recv.count;
  t->root = a->root;
  if (!allreduce && (t->root < 0 || t->root >= c.size))
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll broadcast: root " + std::to_string(t->root) + " out of range");
  t->timeout_ms = a->timeout_ms > 0 ? a->timeout_ms : c.op_timeout_ms;
  const weft_native_handle_args q = Native(host, WEFT_NATIVE_STREAM, a->stream, nullptr);
  if (q.kind != WEFT_NATIVE_KIND_HOST_QUEUE || q.handle == nullptr)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll: the stream is not a simdev stream");
  auto* queue = static_cast<weft_host_queue*>(q.handle);
  t->seq = c.seq.fetch_add(1);  // issue order: the same on every rank (core's contract)
  t->what = "simcoll rank " + std::to_string(c.rank) + ": " + (allreduce ? "allreduce" : "broadcast") + " of key " +
            (a->key ? a->key : "?") + " (call #" + std::to_string(t->seq) + ")";
  {
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.running;
  }
  Task* raw = t.release();
  if (weft_error* e = queue->enqueue(queue->queue, &RunTask, raw)) {
    delete raw;
    {
      std::lock_guard<std::mutex> lock(c.mu);
      --c.running;
    }
    sdk::ThrowIfError(host, e);
  }
}

void SimcollPlugin::Barrier(weft_collective_args* a) {
  if (a == nullptr || a->comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "simcoll: args or comm is NULL");
  Comm& c = *reinterpret_cast<Comm*>(a->comm);
  if (const std::string f = c.Failure(); !f.empty()) throw sdk::Error(WEFT_ERR_UNAVAILABLE, f);
  const uint64_t s = c.seq.fetch_add(1);
  const int64_t timeout = a->timeout_ms > 0 ? a->timeout_ms : c.op_timeout_ms;
  const std::string what = "simcoll rank " + std::to_string(c.rank) + ": barrier (call #" + std::to_string(s) + ")";
  const char mark = 1;
  c.Publish(s, &mark, 1);
  const auto deadline = Clock::now() + Ms(timeout);
  for (int q = 0; q < c.size; ++q) {
    if (q == c.rank) continue;
    char got = 0;
    try {
      c.Fetch(s, q, &got, 1, deadline, what);
    } catch (const sdk::Error& e) {
      if (a->struct_size >= WEFT_STRUCT_SIZE(weft_collective_args, failed_rank)) a->failed_rank = q;
      c.SetFailure(e.what());
      throw;
    }
  }
}

}  // namespace
}  // namespace weft::simcoll

WEFT_SDK_PLUGIN(weft::simcoll::SimcollPlugin, "simcoll", "0.1.0",
                "test-only device transport on simdev streams (stands in for NCCL where no GPU exists)",
                WEFT_PLUGIN_PROVIDES_TRANSPORT)

// The parts of the nccl transport plugin that need neither NCCL nor a GPU, so that tests can run
// them on any machine (tests/kvstore/nccl_support_test.cc):
//   ExchangeId       the bootstrap: rank 0 publishes NCCL's unique id through the host's
//                    rendezvous store (kv_set); every other rank reads it (kv_get) within the
//                    rendezvous deadline, and fails naming rank 0 and the deadline otherwise.
//   DeadlineWatchdog one thread watching the collectives a communicator has queued: each op is
//                    tracked with its deadline and a "done?" poll (a CUDA event query in the
//                    plugin); a poll of the communicator's asynchronous error runs too. When an
//                    op is overdue or the poll reports an error, the watchdog calls `abort` once
//                    (ncclCommAbort in the plugin) with the reason, so a stream blocked in an NCCL
//                    kernel waiting for a dead or stalled peer is released and the host sees the
//                    failure instead of waiting for ever.
//   ReadCommArgs     the checks and settings of a device communicator's comm_init arguments,
//                    shared with the test transport that stands in for NCCL (tests/plugins/simcoll).
// Header-only; plugin code (no exceptions across the C ABI: callers wrap these in sdk::Guard).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/host.h"
#include "weft/sdk/transport.h"

namespace weft::nccl_transport {

/// Rank 0: stores `id` (make_id()'s bytes) under "<prefix>/nccl_unique_id" and returns it. Other
/// ranks: waits up to `timeout_ms` for the key and returns its bytes, which must be `id_bytes`
/// long. Throws sdk::Error: WEFT_ERR_TIMEOUT naming rank 0 when it never published, or
/// WEFT_ERR_UNAVAILABLE when the host has no store.
inline std::string ExchangeId(const weft_host_api* host, const std::string& prefix, int rank, size_t id_bytes,
                              const std::function<std::string()>& make_id, int64_t timeout_ms) {
  if (host == nullptr || host->kv_set == nullptr || host->kv_get == nullptr)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "nccl bootstrap: the host offers no rendezvous store (kv_set / kv_get)");
  const std::string key = prefix + "/nccl_unique_id";
  if (rank == 0) {
    const std::string id = make_id();
    sdk::ThrowIfError(host, host->kv_set(host->host_ctx, key.c_str(), id.data(), id.size()));
    return id;
  }
  std::string id(id_bytes, '\0');
  size_t len = 0;
  weft_error* e = host->kv_get(host->host_ctx, key.c_str(), id.data(), id.size(), &len, timeout_ms);
  if (e != nullptr) {
    std::string why = "(no message)";
    if (host->error_message != nullptr) {
      size_t n = 0;
      const char* m = host->error_message(host->host_ctx, e, &n);
      if (m != nullptr) why.assign(m, n);
    }
    const int32_t code = host->error_code != nullptr ? host->error_code(host->host_ctx, e) : WEFT_ERR_UNKNOWN;
    if (host->error_release != nullptr) host->error_release(host->host_ctx, e);
    throw sdk::Error(code == WEFT_ERR_TIMEOUT || code == WEFT_ERR_NOT_FOUND ? WEFT_ERR_TIMEOUT : code,
                     "nccl bootstrap of rank " + std::to_string(rank) +
                         ": rank 0 did not publish the NCCL unique id (" + key + ") within " +
                         std::to_string(timeout_ms) + " ms: " + why);
  }
  if (len != id_bytes)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl bootstrap of rank " + std::to_string(rank) + ": " + key +
                                                    " holds " + std::to_string(len) +
                                                    " bytes, not an NCCL unique id (" + std::to_string(id_bytes) +
                                                    " bytes); another program's store?");
  return id;
}

/// What a device communicator's comm_init arguments say.
struct CommSettings {
  int rank = 0, size = 1, device = 0;
  int64_t rendezvous_ms = 300000;  // args timeout_ms (default 300 s)
  int64_t op_timeout_ms = 300000;  // attribute "op_timeout_ms" (default: rendezvous_ms)
};

/// Checks `a` for transport `name` working on `devices` devices of `device_type` and returns its
/// settings. Throws sdk::Error: WEFT_ERR_INVALID_ARGUMENT for a rank outside world_size, a device
/// index out of range, an unknown attribute or a malformed op_timeout_ms; WEFT_ERR_UNSUPPORTED
/// for another device_type (host buffers: naming the gloo transport); WEFT_ERR_UNAVAILABLE
/// "0 usable devices: <no_device_reason>" when `devices` is 0.
inline CommSettings ReadCommArgs(const weft_comm_init_args* a, const std::string& name, const std::string& device_type,
                                 int devices, const std::string& no_device_reason) {
  const std::string what = name + " comm_init: ";
  if (a == nullptr || a->world_size < 1 || a->rank < 0 || a->rank >= a->world_size)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, what + "rank outside world_size");
  if (a->device_type == nullptr || device_type != a->device_type)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, what + "it communicates on " + device_type +
                                               " device memory (device_type \"" + device_type + "\"), not on " +
                                               (a->device_type ? a->device_type : "host memory") +
                                               "; host buffers go through the gloo transport");
  if (devices == 0) throw sdk::Error(WEFT_ERR_UNAVAILABLE, what + "0 usable devices: " + no_device_reason);
  if (a->device < 0 || a->device >= devices)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, what + device_type + "(" + std::to_string(a->device) +
                                                    ") does not exist (" + std::to_string(devices) + " devices)");
  CommSettings c;
  c.rank = a->rank;
  c.size = a->world_size;
  c.device = a->device;
  c.rendezvous_ms = a->timeout_ms > 0 ? a->timeout_ms : 300000;
  c.op_timeout_ms = c.rendezvous_ms;
  for (int32_t i = 0; i < a->num_attrs; ++i) {
    const std::string k = a->attrs[i].key ? a->attrs[i].key : "";
    if (k != "op_timeout_ms")
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, what + "unknown attribute '" + k + "' (known: op_timeout_ms)");
    try {
      c.op_timeout_ms = std::stoll(a->attrs[i].value ? a->attrs[i].value : "");
    } catch (const std::exception&) {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, what + "op_timeout_ms '" +
                                                      (a->attrs[i].value ? a->attrs[i].value : "") +
                                                      "' is not a number of milliseconds");
    }
  }
  return c;
}

/// See the top of the file. Thread-safe; `abort` runs on the watchdog's thread, at most once.
class DeadlineWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  /// `async_error` returns "" while the communicator is healthy, else the failure; `abort` gets
  /// the reason. `poll` is how often ops and the error are checked.
  DeadlineWatchdog(std::function<std::string()> async_error, std::function<void(const std::string&)> abort,
                   std::chrono::milliseconds poll = std::chrono::milliseconds(10))
      : async_error_(std::move(async_error)), abort_(std::move(abort)), poll_(poll) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~DeadlineWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  /// Watches an op named `what` until `done()` returns true; overdue after `timeout`.
  void Track(std::string what, std::chrono::milliseconds timeout, std::function<bool()> done) {
    std::lock_guard<std::mutex> lock(mu_);
    ops_.push_back(Op{std::move(what), Clock::now() + timeout, timeout, std::move(done)});
  }
  /// The reason the watchdog aborted, or "" while it has not.
  std::string aborted() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reason_;
  }
  /// Ops still tracked (not yet seen done).
  size_t pending() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ops_.size();
  }

 private:
  struct Op {
    std::string what;
    Clock::time_point deadline;
    std::chrono::milliseconds timeout;
    std::function<bool()> done;
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, poll_, [&] { return stop_; });
      if (stop_ || !reason_.empty()) continue;
      std::string why;
      const auto now = Clock::now();
      for (auto it = ops_.begin(); it != ops_.end();) {
        if (it->done()) {
          it = ops_.erase(it);
          continue;
        }
        if (why.empty() && now >= it->deadline)
          why = it->what + " did not complete within its deadline of " + std::to_string(it->timeout.count()) +
                " ms (a peer stopped, hung or died)";
        ++it;
      }
      if (why.empty()) why = async_error_();
      if (why.empty()) continue;
      reason_ = why;
      ops_.clear();
      lock.unlock();
      abort_(why);
      lock.lock();
    }
  }

  std::function<std::string()> async_error_;
  std::function<void(const std::string&)> abort_;
  std::chrono::milliseconds poll_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::list<Op> ops_;
  std::string reason_;
  bool stop_ = false;
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace weft::nccl_transport

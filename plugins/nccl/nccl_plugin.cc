// NCCL transport plugin — allreduce / broadcast on CUDA device buffers for the "nccl" and
// "dist_device_sync" KVStores (sdk/transport.h, device communicators), on the NCCL shipped with
// the CUDA toolkit (/usr/local/cuda).
//
// Loading: the plugin links the shared CUDA runtime and libnccl, never libcuda (the driver), so it
// loads on machines without a driver or GPU; there device_count reports 0 with the CUDA runtime's
// reason and comm_init refuses with it. Only weft_plugin_entry is exported (cmake/plugin.map).
//
// comm_init (device_type "cuda", device = the CUDA ordinal): rank 0 makes an ncclUniqueId and
// publishes it through the host's rendezvous store, the others read it within the rendezvous
// deadline (nccl_support.h ExchangeId); then ncclCommInitRankConfig in non-blocking mode, polled
// with ncclCommGetAsyncError until ready or the deadline (then ncclCommAbort, WEFT_ERR_TIMEOUT).
// allreduce / broadcast: ncclAllReduce / ncclBroadcast on the stream the host passes (its
// cudaStream_t and the device addresses come from the host's native_handle), followed by an event
// the watchdog polls: an op not done by its deadline, or an asynchronous NCCL error, makes the
// watchdog call ncclCommAbort (nccl_support.h DeadlineWatchdog), which releases the stream; the
// host then sees the failure from comm_status and every later call fails at once with it.
// barrier: a one-element allreduce on the plugin's own stream, waited for with the deadline.
// group_start / group_end: ncclGroupStart / ncclGroupEnd. finalize: ncclCommFinalize (polled with
// the deadline) + ncclCommDestroy; after a failure, ncclCommAbort.
//
// Not run in this project's CI (no GPU there): it is built and loaded, and its host-side logic
// (bootstrap, watchdog) is tested on its own.
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "nccl_support.h"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::nccl_transport {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

void CheckCuda(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();
  throw sdk::Error(e == cudaErrorMemoryAllocation ? WEFT_ERR_OUT_OF_MEMORY : WEFT_ERR_UNAVAILABLE,
                   "nccl: " + what + ": " + cudaGetErrorString(e));
}

struct Comm {
  const weft_host_api* host = nullptr;
  int rank = 0, size = 1, device = 0;
  int64_t op_timeout_ms = 0;
  ncclComm_t nccl = nullptr;
  cudaStream_t own_stream = nullptr;  // barrier
  float* one = nullptr;               // barrier's element
  std::mutex issue_mu;                // NCCL calls on one communicator come from one thread at a time
  std::atomic<bool> aborted{false};
  std::mutex err_mu;
  std::string failure;  // the first failure (watchdog, NCCL, abort): later calls repeat it
  std::unique_ptr<DeadlineWatchdog> watchdog;

  void SetFailure(const std::string& why) {
    std::lock_guard<std::mutex> lock(err_mu);
    if (failure.empty()) failure = why;
  }
  std::string Failure() {
    std::lock_guard<std::mutex> lock(err_mu);
    return failure;
  }
  // "" while healthy, else NCCL's asynchronous error with its last message.
  std::string AsyncError() {
    ncclResult_t r = ncclSuccess;
    if (ncclCommGetAsyncError(nccl, &r) != ncclSuccess) return "ncclCommGetAsyncError failed";
    if (r == ncclSuccess || r == ncclInProgress) return "";
    return std::string("NCCL reports ") + ncclGetErrorString(r) + ": " + ncclGetLastError(nccl);
  }
  void Abort(const std::string& why) {
    SetFailure("nccl rank " + std::to_string(rank) + ": " + why);
    if (!aborted.exchange(true)) (void)ncclCommAbort(nccl);
  }
  // Waits (polling, up to `deadline`) while a non-blocking NCCL call is still in progress.
  void WaitReady(Clock::time_point deadline, const std::string& what) {
    while (true) {
      ncclResult_t r = ncclSuccess;
      const ncclResult_t q = ncclCommGetAsyncError(nccl, &r);
      if (q != ncclSuccess) r = q;
      if (r == ncclSuccess) return;
      if (r != ncclInProgress)
        throw sdk::Error(WEFT_ERR_UNAVAILABLE, "nccl rank " + std::to_string(rank) + ": " + what + ": " +
                                                   ncclGetErrorString(r) + " (" + ncclGetLastError(nccl) + ")");
      if (Clock::now() >= deadline) {
        Abort(what + " did not complete within its deadline");
        throw sdk::Error(WEFT_ERR_TIMEOUT, "nccl rank " + std::to_string(rank) + ": " + what +
                                               " did not complete within its deadline (a peer is missing or "
                                               "stalled); the communicator was aborted");
      }
      std::this_thread::sleep_for(Ms(1));
    }
  }
};

ncclDataType_t NcclType(int32_t dtype) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return ncclFloat32;
    case WEFT_DTYPE_FLOAT64:
      return ncclFloat64;
    case WEFT_DTYPE_FLOAT16:
      return ncclFloat16;
    case WEFT_DTYPE_BFLOAT16:
      return ncclBfloat16;
    case WEFT_DTYPE_INT32:
      return ncclInt32;
    case WEFT_DTYPE_INT64:
      return ncclInt64;
    case WEFT_DTYPE_UINT8:
      return ncclUint8;
    case WEFT_DTYPE_INT8:
      return ncclInt8;
    case WEFT_DTYPE_UINT32:
      return ncclUint32;
    case WEFT_DTYPE_UINT64:
      return ncclUint64;
    default:
      throw sdk::Error(WEFT_ERR_UNSUPPORTED, "nccl: dtype code " + std::to_string(dtype) + " is not supported");
  }
}

ncclRedOp_t NcclOp(int32_t op) {
  switch (op) {
    case WEFT_REDUCE_SUM:
      return ncclSum;
    case WEFT_REDUCE_PROD:
      return ncclProd;
    case WEFT_REDUCE_MIN:
      return ncclMin;
    case WEFT_REDUCE_MAX:
      return ncclMax;
    default:
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl allreduce: unknown reduce_op " + std::to_string(op));
  }
}

enum class OpKind { kAllreduce, kBroadcast };

class NcclPlugin final : public sdk::Plugin {
 public:
  explicit NcclPlugin(const weft_host_api* host) : sdk::Plugin(host) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      devices_ = 0;
      reason_ = std::string("the CUDA runtime finds no usable GPU: ") +
                (e == cudaSuccess ? "no CUDA-capable device is detected" : cudaGetErrorString(e));
    } else {
      devices_ = n;
    }
    int version = 0;
    (void)ncclGetVersion(&version);
    Log(WEFT_LOG_DEBUG, "NCCL " + std::to_string(version) + ": " + std::to_string(devices_) + " usable device(s)" +
                            (devices_ == 0 ? ": " + reason_ : ""));
    api_.struct_size = sizeof(api_);
    api_.name = "nccl";
    api_.kvstore_types = "nccl,dist_device_sync";
    api_.device_type = "cuda";
    api_.comm_init = [](void* s, weft_comm_init_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { static_cast<NcclPlugin*>(s)->Init(a); });
    };
    api_.comm_finalize = [](void* s, weft_comm c) noexcept { return sdk::Guard(sdk::HostOf(s), [&] { Finalize(c); }); };
    api_.comm_abort = [](void* s, weft_comm c) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] {
        if (c == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl comm_abort: comm is NULL");
        reinterpret_cast<Comm*>(c)->Abort("aborted by the host");
      });
    };
    api_.allreduce = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Run(sdk::HostOf(s), a, OpKind::kAllreduce); });
    };
    api_.broadcast = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Run(sdk::HostOf(s), a, OpKind::kBroadcast); });
    };
    api_.barrier = [](void* s, weft_collective_args* a) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Barrier(a); });
    };
    api_.group_start = [](void* s) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Check(ncclGroupStart(), "ncclGroupStart"); });
    };
    api_.group_end = [](void* s) noexcept {
      return sdk::Guard(sdk::HostOf(s), [&] { Check(ncclGroupEnd(), "ncclGroupEnd"); });
    };
    api_.comm_status = [](void* s, weft_comm c) noexcept -> weft_error* {
      if (c == nullptr) return sdk::MakeError(sdk::HostOf(s), WEFT_ERR_INVALID_ARGUMENT, "nccl: comm is NULL");
      const std::string f = reinterpret_cast<Comm*>(c)->Failure();
      return f.empty() ? nullptr : sdk::MakeError(sdk::HostOf(s), WEFT_ERR_UNAVAILABLE, f);
    };
    api_.device_count = [](void* s, const char** reason) noexcept -> int32_t {
      auto* p = static_cast<NcclPlugin*>(s);
      if (reason != nullptr) *reason = p->devices_ == 0 ? p->reason_.c_str() : nullptr;
      return p->devices_;
    };
    Provide(&api_);
  }

 private:
  static void Check(ncclResult_t r, const std::string& what) {
    if (r != ncclSuccess && r != ncclInProgress)
      throw sdk::Error(WEFT_ERR_UNAVAILABLE, "nccl: " + what + ": " + ncclGetErrorString(r));
  }

  void Init(weft_comm_init_args* a);
  static void Finalize(weft_comm c);
  static void Run(const weft_host_api* host, weft_collective_args* a, OpKind kind);
  static void Barrier(weft_collective_args* a);

  int32_t devices_ = 0;
  std::string reason_;
  weft_transport_api api_{};
};

void NcclPlugin::Init(weft_comm_init_args* a) {
  const CommSettings settings = ReadCommArgs(a, "nccl", "cuda", devices_, reason_);
  auto c = std::make_unique<Comm>();
  c->host = host();
  c->rank = settings.rank;
  c->size = settings.size;
  c->device = settings.device;
  const int64_t rdv_ms = settings.rendezvous_ms;
  c->op_timeout_ms = settings.op_timeout_ms;
  CheckCuda(cudaSetDevice(c->device), "cudaSetDevice");
  const std::string id = ExchangeId(
      host(), a->prefix ? a->prefix : "nccl", c->rank, sizeof(ncclUniqueId),
      [] {
        ncclUniqueId u;
        Check(ncclGetUniqueId(&u), "ncclGetUniqueId");
        return std::string(reinterpret_cast<const char*>(&u), sizeof(u));
      },
      rdv_ms);
  ncclUniqueId uid;
  std::memcpy(&uid, id.data(), sizeof(uid));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so that a missing peer is bounded by our deadline, not NCCL's
  Check(ncclCommInitRankConfig(&c->nccl, c->size, uid, c->rank, &config), "ncclCommInitRankConfig");
  c->WaitReady(Clock::now() + Ms(rdv_ms), "joining the communicator (ncclCommInitRankConfig)");
  CheckCuda(cudaStreamCreateWithFlags(&c->own_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  CheckCuda(cudaMalloc(reinterpret_cast<void**>(&c->one), sizeof(float)), "cudaMalloc");
  Comm* raw = c.get();
  c->watchdog = std::make_unique<DeadlineWatchdog>([raw] { return raw->AsyncError(); },
                                                   [raw](const std::string& why) { raw->Abort(why); });
  a->comm = reinterpret_cast<weft_comm>(c.release());
}

void NcclPlugin::Finalize(weft_comm cm) {
  std::unique_ptr<Comm> c(reinterpret_cast<Comm*>(cm));
  if (!c) return;
  if (c->Failure().empty() && !c->aborted.load()) {
    try {
      Check(ncclCommFinalize(c->nccl), "ncclCommFinalize");
      c->WaitReady(Clock::now() + Ms(c->op_timeout_ms), "finalize (ncclCommFinalize)");
    } catch (const sdk::Error& e) {
      sdk::Log(c->host, WEFT_LOG_WARNING, e.what());
      c->Abort("finalize failed");
    }
  } else if (!c->aborted.exchange(true)) {
    (void)ncclCommAbort(c->nccl);
  }
  c->watchdog.reset();  // no poll of a destroyed communicator
  if (!c->aborted.load()) (void)ncclCommDestroy(c->nccl);
  if (c->one != nullptr) (void)cudaFree(c->one);
  if (c->own_stream != nullptr) (void)cudaStreamDestroy(c->own_stream);
}

// The native object behind a host handle (stream or memory) of the communicator's device.
void* Native(const weft_host_api* host, int device, int32_t what, weft_stream stream, const weft_buffer* buf) {
  if (host->native_handle == nullptr) throw sdk::Error(WEFT_ERR_UNSUPPORTED, "nccl: the host offers no native_handle");
  weft_native_handle_args n{};
  n.struct_size = sizeof(n);
  n.what = what;
  n.device = device;
  n.stream = stream;
  if (buf != nullptr) {
    n.ptr = buf->data;
    n.offset = buf->offset;
  }
  sdk::ThrowIfError(host, host->native_handle(host->host_ctx, "cuda", &n));
  return n.handle;
}

// Tracks the work queued on `stream` so far with the watchdog (an event it polls).
void Watch(Comm& c, cudaStream_t stream, const std::string& what, int64_t timeout_ms) {
  cudaEvent_t ev = nullptr;
  CheckCuda(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
  std::shared_ptr<CUevent_st> owned(ev, [](cudaEvent_t e) { (void)cudaEventDestroy(e); });
  CheckCuda(cudaEventRecord(ev, stream), "cudaEventRecord");
  c.watchdog->Track(what, Ms(timeout_ms), [owned] { return cudaEventQuery(owned.get()) != cudaErrorNotReady; });
}

void NcclPlugin::Run(const weft_host_api* host, weft_collective_args* a, OpKind kind) {
  if (a == nullptr || a->comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl: args or comm is NULL");
  Comm& c = *reinterpret_cast<Comm*>(a->comm);
  if (a->struct_size >= WEFT_STRUCT_SIZE(weft_collective_args, failed_rank)) a->failed_rank = -1;
  if (const std::string f = c.Failure(); !f.empty()) throw sdk::Error(WEFT_ERR_UNAVAILABLE, f);
  if (a->stream == nullptr)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl: a device collective needs the stream to queue it on");
  const char* name = kind == OpKind::kAllreduce ? "allreduce" : "broadcast";
  const int64_t timeout = a->timeout_ms > 0 ? a->timeout_ms : c.op_timeout_ms;
  const ncclDataType_t type = NcclType(a->recv.dtype);
  auto stream = static_cast<cudaStream_t>(Native(host, c.device, WEFT_NATIVE_STREAM, a->stream, nullptr));
  void* recv = Native(host, c.device, WEFT_NATIVE_MEMORY, nullptr, &a->recv);
  const void* send = a->send.data != 0 ? Native(host, c.device, WEFT_NATIVE_MEMORY, nullptr, &a->send) : recv;
  const std::string what =
      std::string(name) + " of key " + (a->key ? a->key : "?") + " on rank " + std::to_string(c.rank);
  std::lock_guard<std::mutex> lock(c.issue_mu);
  CheckCuda(cudaSetDevice(c.device), "cudaSetDevice");
  if (kind == OpKind::kAllreduce)
    Check(ncclAllReduce(send, recv, a->recv.count, type, NcclOp(a->reduce_op), c.nccl, stream), what);
  else
    Check(ncclBroadcast(send, recv, a->recv.count, type, a->root, c.nccl, stream), what);
  c.WaitReady(Clock::now() + Ms(timeout), what);  // enqueueing itself is non-blocking
  Watch(c, stream, what, timeout);
}

void NcclPlugin::Barrier(weft_collective_args* a) {
  if (a == nullptr || a->comm == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "nccl: args or comm is NULL");
  Comm& c = *reinterpret_cast<Comm*>(a->comm);
  if (const std::string f = c.Failure(); !f.empty()) throw sdk::Error(WEFT_ERR_UNAVAILABLE, f);
  const int64_t timeout = a->timeout_ms > 0 ? a->timeout_ms : c.op_timeout_ms;
  const std::string what = "barrier on rank " + std::to_string(c.rank);
  {
    std::lock_guard<std::mutex> lock(c.issue_mu);
    CheckCuda(cudaSetDevice(c.device), "cudaSetDevice");
    Check(ncclAllReduce(c.one, c.one, 1, ncclFloat32, ncclSum, c.nccl, c.own_stream), what);
    c.WaitReady(Clock::now() + Ms(timeout), what);
    Watch(c, c.own_stream, what, timeout);
  }
  // Blocks like the other transports' barriers; the watchdog aborts (and so ends the wait) at the
  // deadline.
  while (cudaStreamQuery(c.own_stream) == cudaErrorNotReady) {
    if (!c.Failure().empty()) break;
    std::this_thread::sleep_for(Ms(1));
  }
  if (const std::string f = c.Failure(); !f.empty()) throw sdk::Error(WEFT_ERR_TIMEOUT, f);
}

}  // namespace
}  // namespace weft::nccl_transport

WEFT_SDK_PLUGIN(weft::nccl_transport::NcclPlugin, "nccl", "0.1.0",
                "KVStore transport: NCCL allreduce/broadcast on CUDA device buffers (nccl, dist_device_sync)",
                WEFT_PLUGIN_PROVIDES_TRANSPORT)

// weft GPU plugins — the device half shared by the CUDA and HIP plugins (one source, compiled once
// per runtime with WEFT_GPU_CUDA or WEFT_GPU_HIP; see gpu_port.h).
//
// How the SDK's concepts map (sdk/device.h table):
//   device              a GPU ordinal; gpuSetDevice before every runtime call on the thread
//   stream              GpuStream: a non-blocking gpuStream_t plus the SDK's sticky error
//   event               GpuEvent: a gpuEvent_t (timing disabled unless WEFT_EVENT_TIMING) plus the
//                       sticky error of the stream it captured
//   NULL stream         synchronous: work goes to the per-thread stream, then the host waits for it
//   memory              gpuMalloc (256-byte aligned; larger alignments over-allocate); core pools it
//   pinned host memory  gpuHostAlloc, portable (usable with every device of the plugin)
//   peer copies         gpuMemcpyPeerAsync; PEER_COPY only where gpuDeviceCanAccessPeer says so
//   native handles      WEFT_NATIVE_KIND_CUDA_* / HIP_* (stream, device address, event, ordinal)
//
// Zero devices (no driver, no GPU) is not an error: Count() is 0 and NoDeviceReason() says why and
// what to install. Every device pointer, offset and size handed in is checked against the live
// allocations (the memory is not host-addressable, so a bad range would otherwise fault on the GPU).
// Thread-safe as sdk/device.h requires.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu_port.h"
#include "weft/sdk/cpp/device.hpp"

namespace weft::WEFT_GPU_NS {

/// A weft_stream of this plugin. `blas` / `dnn`: math-library handles bound to this stream, made
/// on first use by the kernels (one per stream, since a library handle must not be used by two
/// threads at once and core gives each worker its own stream); released by `release_handles`.
struct GpuStream {
  gpuStream_t stream = nullptr;
  int32_t device = 0;
  std::mutex mu;            // guards the sticky error and the handles
  int32_t sticky_code = 0;  // WEFT_ERR_* of the first failure not yet reported, 0 = none
  std::string sticky_message;
  void* blas = nullptr;
  void* dnn = nullptr;
};

/// A weft_event of this plugin.
struct GpuEvent {
  gpuEvent_t event = nullptr;
  int32_t device = 0;
  bool timing = false;
  std::mutex mu;
  int32_t captured_code = 0;  // the sticky error of the stream when it was recorded
  std::string captured_message;
};

/// Throws sdk::Error "<what>: <gpuGetErrorName> (<code>): <gpuGetErrorString>" unless e is
/// gpuSuccess; out-of-memory errors become WEFT_ERR_OUT_OF_MEMORY, the rest WEFT_ERR_UNAVAILABLE
/// (a device failure) unless `code` says otherwise.
void Check(gpuError_t e, const std::string& what, int32_t code = WEFT_ERR_UNAVAILABLE);

/// The runtime's handle behind a weft_stream of this plugin; the NULL stream is the per-thread
/// stream (callers synchronise it themselves, since the NULL stream is synchronous).
inline gpuStream_t NativeStreamOf(weft_stream s) {
  return s == nullptr ? gpuStreamPerThread : reinterpret_cast<GpuStream*>(s)->stream;
}

class GpuDevice final : public sdk::Device {
 public:
  /// `device_type` ("cuda", "hip"); `host`: the plugin's host table (logging).
  GpuDevice(std::string device_type, const weft_host_api* host);
  ~GpuDevice() override;

  /// Called before a stream is destroyed, to release the math-library handles bound to it (set by
  /// the kernels half; may be left unset).
  void (*release_handles)(GpuStream& stream) = nullptr;

  int32_t Count() override { return count_; }
  const char* NoDeviceReason() override { return reason_.empty() ? nullptr : reason_.c_str(); }
  void Properties(int32_t device, weft_device_props& props) override;
  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override;
  void Free(int32_t device, weft_device_ptr ptr) override;
  void Copy(const weft_copy_args& args) override;
  void Memset(const weft_memset_args& args) override;
  weft_stream CreateStream(int32_t device, uint32_t flags, int32_t priority) override;
  void DestroyStream(weft_stream stream) override;
  void SynchronizeStream(weft_stream stream) override;
  weft_event CreateEvent(int32_t device, uint32_t flags) override;
  void DestroyEvent(weft_event event) override;
  void RecordEvent(weft_event event, weft_stream stream) override;
  void StreamWaitEvent(weft_stream stream, weft_event event) override;
  bool QueryEvent(weft_event event) override;
  void SynchronizeEvent(weft_event event) override;

  bool HasPinnedMemory() const override { return true; }
  void* PinnedAlloc(int32_t device, uint64_t bytes) override;
  void PinnedFree(void* ptr) override;
  bool HasTimestamps() const override { return true; }
  double EventElapsedMs(weft_event start, weft_event end) override;
  bool HasNativeHandles() const override { return true; }
  void NativeHandle(weft_native_handle_args& args) override;
  bool HasHostFunc() const override { return true; }
  void LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) override;

  /// Bytes from ptr + offset to the end of the live allocation containing ptr; throws
  /// WEFT_ERR_INVALID_ARGUMENT naming the pointer when [ptr + offset, + bytes) is not inside one
  /// allocation of `device`.
  uint64_t CheckRange(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes, const char* what) const;

 private:
  struct Allocation {
    void* raw;  // what gpuMalloc returned (differs from the key when over-aligned)
    uint64_t bytes;
    int32_t device;
  };
  struct DeviceInfo {
    gpuDeviceProp_t prop;
    std::string pci_bus_id;
    bool has_peer = false;
    std::vector<std::string> attr_storage;
    std::vector<weft_kv> attrs;
  };
  void Discover();
  void ReadDevice(int32_t device, DeviceInfo& info);
  // Sets `device` current on the calling thread.
  void Use(int32_t device) const;
  // Waits for `s` (NULL: the per-thread stream, i.e. synchronous work just queued).
  void FinishIfSynchronous(weft_stream s, const std::string& what) const;

  const weft_host_api* host_;
  int32_t count_ = 0;
  std::string reason_;
  std::vector<DeviceInfo> info_;
  mutable std::mutex mu_;
  std::map<uint64_t, Allocation> live_;  // device address -> allocation (ordered: interior pointers)
  std::set<void*> pinned_;
};

}  // namespace weft::WEFT_GPU_NS

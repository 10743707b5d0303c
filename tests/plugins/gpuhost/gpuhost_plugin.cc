// gpuhost — a test plugin (device type "gpuhost") whose kernels are the shared GPU kernel layer's
// classes (plugins/gpu_common, registered by gpu_register.h) launched by HostLaunch: the same functors the CUDA and
// HIP plugins run on a GPU, here a plain loop over host memory (and the tiled GEMM with its block
// barriers emulated phase by phase). The conformance suite (tests/conformance) runs every op the
// plugin claims against the cpu plugin, forward and backward, in every write-request mode.
//
// Devices: host memory (64-byte aligned, host-addressable), streams run by host threads
// (host_queue.hpp), kernels queued on them (queued_kernels.hpp).
// Configuration: WEFT_GPUHOST_DEVICES, 0..4, default 1.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gpu_launch_host.h"
#include "gpu_register.h"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"

namespace weft::host {
namespace {

class GpuHostDevice final : public sdk::HostQueueDevice {
 public:
  GpuHostDevice(const weft_host_api* host, int32_t count) : sdk::HostQueueDevice("gpuhost", host), count_(count) {}
  ~GpuHostDevice() override {
    DrainStreams();
    for (const auto& [ptr, bytes] : live_) std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)));
  }

  int32_t Count() override { return count_; }
  const char* NoDeviceReason() override { return "WEFT_GPUHOST_DEVICES is 0"; }
  void Properties(int32_t device, weft_device_props& p) override {
    const std::string name = "GPU kernel layer on the host " + std::to_string(device);
    std::strncpy(p.name, name.c_str(), sizeof(p.name) - 1);
    std::strncpy(p.vendor, "weft", sizeof(p.vendor) - 1);
    p.capabilities = WEFT_DEVICE_CAP_HOST_ADDRESSABLE | WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_PEER_COPY |
                     WEFT_DEVICE_CAP_UNIFIED_MEMORY | WEFT_DEVICE_CAP_TIMESTAMPS | WEFT_DEVICE_CAP_NATIVE_HANDLES |
                     WEFT_DEVICE_CAP_HOST_FUNC;
    p.kind = WEFT_DEVICE_KIND_SOFTWARE;
    p.min_alignment = kAlign;
    p.compute_units = 1;
  }
  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override {
    if (alignment < kAlign) alignment = kAlign;
    if (bytes > (1ull << 40)) throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Name(device) + ": allocation too large");
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (p == nullptr) throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Name(device) + ": host allocation failed");
    std::lock_guard<std::mutex> lock(mu_);
    live_.emplace(reinterpret_cast<uintptr_t>(p), bytes);
    return reinterpret_cast<uintptr_t>(p);
  }
  void Free(int32_t device, weft_device_ptr ptr) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (live_.erase(ptr) == 0)
        throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": free of a pointer this plugin did not allocate");
    }
    WaitForAllStreams();
    std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)));
  }
  void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t) override {
    if (ptr == 0) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": NULL device pointer");
    return reinterpret_cast<char*>(static_cast<uintptr_t>(ptr)) + offset;
  }

 private:
  static constexpr uint64_t kAlign = 64;
  const int32_t count_;
  std::mutex mu_;
  std::unordered_map<uint64_t, uint64_t> live_;
};

std::unique_ptr<sdk::KernelTable> MakeTable(const weft_host_api* host) {
  auto t = std::make_unique<sdk::KernelTable>("gpuhost", host);
  RegisterGpuLayer<HostLaunch>(*t);
  return t;
}

class GpuHostPlugin final : public sdk::Plugin {
 public:
  explicit GpuHostPlugin(const weft_host_api* host)
      : sdk::Plugin(host),
        device_(host, static_cast<int32_t>(ConfigInt("WEFT_GPUHOST_DEVICES", 1, 0, 4))),
        table_(MakeTable(host)),
        kernels_(table_->Api(), &device_, "gpuhost", host) {
    Provide(&device_);
    Provide(kernels_.api());
  }
  ~GpuHostPlugin() override { device_.DrainStreams(); }

 private:
  GpuHostDevice device_;
  std::unique_ptr<sdk::KernelTable> table_;
  sdk::QueuedKernels kernels_;
};

}  // namespace
}  // namespace weft::host

WEFT_SDK_PLUGIN(weft::host::GpuHostPlugin, "gpuhost", "0.1.0",
                "test device: the shared GPU kernel layer compiled as C++ and run on host memory",
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

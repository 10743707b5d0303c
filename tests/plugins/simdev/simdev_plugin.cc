// simdev — a simulated device plugin for tests (device type "simdev", test-only, not installed).
//
// It exists so that core is exercised against a device that is unlike the CPU in every way core
// must not rely on: its memory is not host-addressable (allocations are handles in a private
// address space, simdev_memory.h; data is reachable only through copy and memset), its streams
// complete asynchronously after a latency, its memory is small and bounded, and it checks every
// handle, offset and size it is given (WEFT_ERR_INVALID_ARGUMENT with a message naming them).
//
// Configuration (host config_get: environment, then runtime options):
//   WEFT_SIMDEV_DEVICES     number of devices, 0..16, default 2
//   WEFT_SIMDEV_MEMORY_MB   memory per device in MiB, 1..65536, default 256
//   WEFT_SIMDEV_LATENCY_US  delay before each queued operation runs on a stream, 0..1000000 µs,
//                           default 50 (the NULL stream stays synchronous and undelayed)
//   WEFT_SIMDEV_KERNEL_LATENCY_US / WEFT_SIMDEV_COPY_LATENCY_US
//                           the same for queued kernels / copies and memsets only (default:
//                           WEFT_SIMDEV_LATENCY_US)
//
// Kernels: every CPU kernel class, registered for "simdev" with SimdevPlugin::Resolve as the
// kernel.hpp PointerResolver and queued on simdev streams (simdev_kernels.h).
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "simdev_kernels.h"
#include "simdev_memory.h"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::simdev {
namespace {

/// Memory of every device must stay valid while streams still run: streams are drained first.
class SimdevDevice final : public sdk::HostQueueDevice {
 public:
  SimdevDevice(const weft_host_api* host, int32_t count, uint64_t memory_bytes,
               std::chrono::microseconds kernel_latency, std::chrono::microseconds copy_latency)
      : sdk::HostQueueDevice("simdev", host), kernel_latency_(kernel_latency), copy_latency_(copy_latency) {
    for (int32_t i = 0; i < count; ++i) memory_.push_back(std::make_unique<SimMemory>(Name(i), i, memory_bytes));
    attr_storage_ = {"kernel_latency_us", std::to_string(kernel_latency.count()),
                     "copy_latency_us",   std::to_string(copy_latency.count()),
                     "address_space",     "private handles from 0x5eed00000000 (not host-addressable)"};
    for (size_t i = 0; i + 1 < attr_storage_.size(); i += 2)
      attrs_.push_back(weft_kv{attr_storage_[i].c_str(), attr_storage_[i + 1].c_str()});
  }
  ~SimdevDevice() override { DrainStreams(); }

  int32_t Count() override { return static_cast<int32_t>(memory_.size()); }
  const char* NoDeviceReason() override { return "WEFT_SIMDEV_DEVICES is 0: set it to 1..16 to simulate devices"; }

  void Properties(int32_t device, weft_device_props& p) override {
    const std::string name = "weft simulated device " + std::to_string(device);
    std::strncpy(p.name, name.c_str(), sizeof(p.name) - 1);
    std::strncpy(p.vendor, "weft", sizeof(p.vendor) - 1);
    p.total_memory = memory_[static_cast<size_t>(device)]->limit();
    p.free_memory = p.total_memory - memory_[static_cast<size_t>(device)]->used();
    p.capabilities = WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_PEER_COPY | WEFT_DEVICE_CAP_TIMESTAMPS |
                     WEFT_DEVICE_CAP_NATIVE_HANDLES | WEFT_DEVICE_CAP_HOST_FUNC;
    p.kind = WEFT_DEVICE_KIND_SOFTWARE;
    p.min_alignment = kMinAlignment;
    p.compute_units = 1;
    p.num_attributes = static_cast<int32_t>(attrs_.size());
    p.attributes = attrs_.data();
  }

  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override {
    return memory_[static_cast<size_t>(device)]->Allocate(bytes, alignment < kMinAlignment ? kMinAlignment : alignment);
  }
  /// Like cudaFree: waits for the work already queued on streams, which may use the memory.
  void Free(int32_t device, weft_device_ptr ptr) override {
    memory_[static_cast<size_t>(device)]->CheckFree(ptr);  // misuse is reported without waiting
    WaitForAllStreams();
    memory_[static_cast<size_t>(device)]->Free(ptr);
  }

  void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) override {
    CheckDevice(device, "simdev memory access");
    return memory_[static_cast<size_t>(device)]->Resolve(ptr, offset, bytes);
  }
  uint64_t BytesFrom(int32_t device, weft_device_ptr ptr, uint64_t offset) override {
    CheckDevice(device, "simdev memory access");
    return memory_[static_cast<size_t>(device)]->BytesFrom(ptr, offset);
  }

 protected:
  std::chrono::microseconds TaskLatency(TaskKind kind) const override {
    switch (kind) {
      case TaskKind::kKernel:
        return kernel_latency_;
      case TaskKind::kCopy:
        return copy_latency_;
      default:
        return std::chrono::microseconds(0);
    }
  }

 private:
  // Larger than the CPU's 64 so that code assuming one alignment for every device shows up.
  static constexpr uint64_t kMinAlignment = 256;
  const std::chrono::microseconds kernel_latency_, copy_latency_;
  std::vector<std::unique_ptr<SimMemory>> memory_;
  std::vector<std::string> attr_storage_;
  std::vector<weft_kv> attrs_;
};

class SimdevPlugin final : public sdk::Plugin {
 public:
  explicit SimdevPlugin(const weft_host_api* host)
      : sdk::Plugin(host),
        device_(host, static_cast<int32_t>(ConfigInt("WEFT_SIMDEV_DEVICES", 2, 0, 16)),
                static_cast<uint64_t>(ConfigInt("WEFT_SIMDEV_MEMORY_MB", 256, 1, 65536)) << 20,
                Latency("WEFT_SIMDEV_KERNEL_LATENCY_US"), Latency("WEFT_SIMDEV_COPY_LATENCY_US")) {
    Provide(&device_);
    kernels_ = std::make_unique<SimdevKernels>(&SimdevPlugin::Resolve, this, &device_, host);
    Provide(kernels_->api());
  }
  // Queued kernels must finish before the kernel tables (destroyed first) go.
  ~SimdevPlugin() override { device_.DrainStreams(); }

  /// kernel.hpp PointerResolver for kernels run on simdev: the host memory behind a tensor's
  /// bytes, validated like every other access. `self` is this plugin.
  static void* Resolve(void* self, int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) {
    return static_cast<SimdevPlugin*>(self)->device_.HostAddress(device, ptr, offset, bytes);
  }

 private:
  // WEFT_SIMDEV_<KIND>_LATENCY_US, else WEFT_SIMDEV_LATENCY_US, else 50 µs.
  std::chrono::microseconds Latency(const char* key) const {
    const int64_t fallback = ConfigInt("WEFT_SIMDEV_LATENCY_US", 50, 0, 1000000);
    return std::chrono::microseconds(ConfigInt(key, fallback, 0, 1000000));
  }

  SimdevDevice device_;
  std::unique_ptr<SimdevKernels> kernels_;  // declared after device_: destroyed before it
};

}  // namespace

inline constexpr uint32_t kProvides = WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS;

}  // namespace weft::simdev

WEFT_SDK_PLUGIN(weft::simdev::SimdevPlugin, "simdev", "0.1.0",
                "simulated test device: private address space, asynchronous streams, bounded memory",
                weft::simdev::kProvides)

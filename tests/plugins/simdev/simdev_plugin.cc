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
//
// Kernels: every CPU kernel class, registered for "simdev" with SimdevPlugin::Resolve as the
// kernel.hpp PointerResolver and queued on simdev streams (simdev_kernels.h); present when the
// build has the CPU kernels (WEFT_SIMDEV_HAS_KERNELS).
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "simdev_memory.h"
#ifdef WEFT_SIMDEV_HAS_KERNELS
#include "simdev_kernels.h"
#endif
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::simdev {
namespace {

/// Memory of every device must stay valid while streams still run: streams are drained first.
class SimdevDevice final : public sdk::HostQueueDevice {
 public:
  SimdevDevice(int32_t count, uint64_t memory_bytes, std::chrono::microseconds latency)
      : sdk::HostQueueDevice("simdev"), latency_(latency) {
    for (int32_t i = 0; i < count; ++i) memory_.push_back(std::make_unique<SimMemory>(Name(i), i, memory_bytes));
    attr_storage_ = {"latency_us", std::to_string(latency.count()), "address_space",
                     "private handles from 0x5eed00000000 (not host-addressable)"};
    for (size_t i = 0; i + 1 < attr_storage_.size(); i += 2)
      attrs_.push_back(weft_kv{attr_storage_[i].c_str(), attr_storage_[i + 1].c_str()});
  }
  ~SimdevDevice() override { DrainStreams(); }

  int32_t Count() override { return static_cast<int32_t>(memory_.size()); }

  void Properties(int32_t device, weft_device_props& p) override {
    const std::string name = "weft simulated device " + std::to_string(device);
    std::strncpy(p.name, name.c_str(), sizeof(p.name) - 1);
    std::strncpy(p.vendor, "weft", sizeof(p.vendor) - 1);
    p.total_memory = memory_[static_cast<size_t>(device)]->limit();
    p.free_memory = p.total_memory - memory_[static_cast<size_t>(device)]->used();
    p.capabilities = WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_PEER_COPY;
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

 protected:
  std::chrono::microseconds TaskLatency() const override { return latency_; }

 private:
  // Larger than the CPU's 64 so that code assuming one alignment for every device shows up.
  static constexpr uint64_t kMinAlignment = 256;
  const std::chrono::microseconds latency_;
  std::vector<std::unique_ptr<SimMemory>> memory_;
  std::vector<std::string> attr_storage_;
  std::vector<weft_kv> attrs_;
};

class SimdevPlugin final : public sdk::Plugin {
 public:
  SimdevPlugin()
      : device_(static_cast<int32_t>(sdk::ConfigInt("WEFT_SIMDEV_DEVICES", 2, 0, 16)),
                static_cast<uint64_t>(sdk::ConfigInt("WEFT_SIMDEV_MEMORY_MB", 256, 1, 65536)) << 20,
                std::chrono::microseconds(sdk::ConfigInt("WEFT_SIMDEV_LATENCY_US", 50, 0, 1000000))) {
    Provide(&device_);
#ifdef WEFT_SIMDEV_HAS_KERNELS
    kernels_ = std::make_unique<SimdevKernels>(&SimdevPlugin::Resolve, &device_);
    Provide(kernels_->api());
#endif
  }
  // Queued kernels must finish before the kernel tables (destroyed first) go.
  ~SimdevPlugin() override { device_.DrainStreams(); }

  /// kernel.hpp PointerResolver for kernels run on simdev: the host memory behind a tensor's
  /// bytes, validated like every other access. `plugin_state` is this plugin.
  static void* Resolve(void* plugin_state, int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) {
    auto* self = static_cast<SimdevPlugin*>(static_cast<sdk::Plugin*>(plugin_state));
    return self->device_.HostAddress(device, ptr, offset, bytes);
  }

 private:
  SimdevDevice device_;
#ifdef WEFT_SIMDEV_HAS_KERNELS
  std::unique_ptr<SimdevKernels> kernels_;  // declared after device_: destroyed before it
#endif
};

}  // namespace

#ifdef WEFT_SIMDEV_HAS_KERNELS
inline constexpr uint32_t kProvides = WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS;
#else
inline constexpr uint32_t kProvides = WEFT_PLUGIN_PROVIDES_DEVICE;
#endif

}  // namespace weft::simdev

WEFT_SDK_PLUGIN(weft::simdev::SimdevPlugin, "simdev", "0.1.0",
                "simulated test device: private address space, asynchronous streams, bounded memory",
                weft::simdev::kProvides)

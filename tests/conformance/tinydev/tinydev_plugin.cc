// tinydev — the smallest complete device plugin: a device whose memory is host memory it hands
// out as opaque handles (checked on every access), streams and events from the SDK's host queues,
// and one kernel, elemwise_add for float32 and float64. Built out of tree against an installed
// weft (CMakeLists.txt here) to show that weft-conformance certifies a third-party plugin, and
// built broken on purpose to show that it catches kernels that are wrong:
//   TINYDEV_BREAK=1  the last element of every sum is one ulp too large (a corner off by one ulp)
//   TINYDEV_BREAK=2  every sum writes one element past the end of its output
// Plugin names: tinydev, tinydev-ulp, tinydev-oob (TINYDEV_NAME); device type "tinydev".
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"

#ifndef TINYDEV_BREAK
#define TINYDEV_BREAK 0
#endif
#ifndef TINYDEV_NAME
#define TINYDEV_NAME "tinydev"
#endif

namespace tinydev {
namespace {

constexpr uint64_t kMemory = 64ull << 20;  // per device: small, so out-of-memory is reachable
constexpr uint64_t kAlignment = 64;

std::string Where(int32_t device) { return "tinydev(" + std::to_string(device) + ")"; }

class TinyDevice final : public weft::sdk::HostQueueDevice {
 public:
  explicit TinyDevice(const weft_host_api* host) : HostQueueDevice("tinydev", host) {}
  ~TinyDevice() override {
    DrainStreams();
    for (auto& [p, bytes] : blocks_) std::free(reinterpret_cast<void*>(p));
  }

  int32_t Count() override { return 1; }

  void Properties(int32_t /*device*/, weft_device_props& p) override {
    std::strncpy(p.name, "tinydev host-memory device", sizeof(p.name) - 1);
    std::strncpy(p.vendor, "weft samples", sizeof(p.vendor) - 1);
    std::lock_guard<std::mutex> lock(mu_);
    p.total_memory = kMemory;
    p.free_memory = kMemory - used_;
    p.capabilities = WEFT_DEVICE_CAP_ASYNC_COPY;
    p.kind = WEFT_DEVICE_KIND_SOFTWARE;
    p.min_alignment = kAlignment;
    p.compute_units = 1;
  }

  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override {
    if (alignment != 0 && (alignment & (alignment - 1)) != 0)
      throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                             Where(device) + ": alignment " + std::to_string(alignment) + " is not a power of two");
    alignment = alignment < kAlignment ? kAlignment : alignment;
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > kMemory - used_)
      throw weft::sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Where(device) + ": out of memory allocating " +
                                                         std::to_string(bytes) + " bytes (" +
                                                         std::to_string(kMemory - used_) + " free)");
    // One spare alignment unit past the end: tinydev-oob's write past an output stays inside the
    // host block (the suite must catch it by its sentinels, not by a crash or a sanitizer).
    void* p = std::aligned_alloc(alignment, (bytes / alignment + 1) * alignment);
    if (p == nullptr) throw weft::sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Where(device) + ": host allocation failed");
    blocks_[reinterpret_cast<uintptr_t>(p)] = bytes;
    used_ += bytes;
    return reinterpret_cast<uintptr_t>(p);
  }

  // Like cudaFree: waits for queued work, which may still use the memory.
  void Free(int32_t device, weft_device_ptr ptr) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (blocks_.count(ptr) == 0)
        throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                               Where(device) + ": free of " + std::to_string(ptr) + ", which is not a live allocation");
    }
    WaitForAllStreams();
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= blocks_.at(ptr);
    blocks_.erase(ptr);
    std::free(reinterpret_cast<void*>(ptr));
  }

  void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || offset > it->second || bytes > it->second - offset)
      throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Where(device) + ": bytes [" + std::to_string(offset) + ", +" +
                                                            std::to_string(bytes) + ") of " + std::to_string(ptr) +
                                                            " are not inside a live allocation");
    return reinterpret_cast<void*>(ptr + offset);
  }

 private:
  std::mutex mu_;
  std::map<uintptr_t, uint64_t> blocks_;
  uint64_t used_ = 0;
};

// out = a + b, element-wise, same shapes.
class AddKernel {
 public:
  explicit AddKernel(const weft::sdk::KernelSetup& /*setup*/) {}
  void Compute(const weft::sdk::KernelCall& c) const {
    if (c.inputs[0].dtype() == WEFT_DTYPE_FLOAT64) {
      Run<double>(c);
    } else {
      Run<float>(c);
    }
  }

 private:
  template <typename T>
  static void Run(const weft::sdk::KernelCall& c) {
    const T* a = c.inputs[0].data<T>();
    const T* b = c.inputs[1].data<T>();
    T* out = c.outputs[0].data<T>();
    const int64_t n = c.outputs[0].size();
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      for (int64_t i = 0; i < n; ++i) assign(out[i], a[i] + b[i]);
    });
    if (c.req[0] == WEFT_REQ_NULL || n == 0) return;
#if TINYDEV_BREAK == 1
    out[n - 1] = std::nextafter(out[n - 1], static_cast<T>(INFINITY));
#elif TINYDEV_BREAK == 2
    out[n] = out[n - 1];
#endif
  }
};

class TinyPlugin final : public weft::sdk::Plugin {
 public:
  explicit TinyPlugin(const weft_host_api* host)
      : weft::sdk::Plugin(host),
        device_(host),
        table_("tinydev", host, &TinyPlugin::Resolve, this),
        queued_(Fill(table_), &device_, "tinydev", host) {
    Provide(&device_);
    Provide(queued_.api());
  }
  ~TinyPlugin() override { device_.DrainStreams(); }

 private:
  static const weft_operator_api* Fill(weft::sdk::KernelTable& t) {
    t.Add<AddKernel>("elemwise_add", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64));
    return t.Api();
  }
  static void* Resolve(void* self, int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) {
    return static_cast<TinyPlugin*>(self)->device_.HostAddress(device, ptr, offset, bytes);
  }

  TinyDevice device_;
  weft::sdk::KernelTable table_;
  weft::sdk::QueuedKernels queued_;
};

}  // namespace
}  // namespace tinydev

WEFT_SDK_PLUGIN(tinydev::TinyPlugin, TINYDEV_NAME, "0.1.0", "tiny host-memory test device with one kernel",
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

// CPU plugin — entry point: the "cpu" devices (cpu_device.h) and the CPU kernels
// (plugins/cpu/kernels, run on the devices' streams through sdk QueuedKernels).
//
// Configuration: WEFT_CPU_DEVICES — number of virtual cpu devices (1..1024, default 4).
#include <memory>

#include "cpu_device.h"
#include "weft/sdk/cpp/host_kernel.hpp"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"

#include "kernels/cpu_kernels.h"

namespace weft::cpu {
namespace {

// Owned by the plugin instance, so that shutting it down (and unloading the file) frees it.
std::unique_ptr<sdk::KernelTable> MakeCpuKernels(const weft_host_api* host) { return MakeKernelTable(host); }

class CpuPlugin final : public sdk::Plugin {
 public:
  explicit CpuPlugin(const weft_host_api* host)
      : sdk::Plugin(host),
        device_(static_cast<int32_t>(ConfigInt("WEFT_CPU_DEVICES", kDefaultDevices, 1, 1024)), host),
        table_(MakeCpuKernels(host)),
        kernels_(table_ ? table_->Api() : nullptr, &device_, "cpu", host) {
    Provide(&device_);
    Provide(kernels_.api());
  }
  // Queued kernels must finish before the kernel tables (destroyed first) go.
  ~CpuPlugin() override { device_.DrainStreams(); }

 private:
  CpuDevice device_;
  std::unique_ptr<sdk::KernelTable> table_;
  sdk::QueuedKernels kernels_;
};

}  // namespace
}  // namespace weft::cpu

#if WEFT_CPU_KERNELS_MNIST
#define WEFT_CPU_KERNEL_NOTE                                                                           \
  "the kernels of train_mnist's networks only (built with WEFT_CPU_KERNELS=mnist, as the main preset " \
  "does: configure with -DWEFT_CPU_KERNELS=all, or use the default preset, for every op's)"
#else
#define WEFT_CPU_KERNEL_NOTE "CPU kernels"
#endif

WEFT_SDK_PLUGIN(weft::cpu::CpuPlugin, "cpu", "0.1.0",
                "host CPU devices: shared host memory, threaded streams, " WEFT_CPU_KERNEL_NOTE,
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

// HIP plugin — entry point: the "hip" devices (plugins/gpu_common/gpu_device.h compiled for the
// HIP runtime) and the kernels of the shared GPU kernel layer (hip_kernels.h).
//
// Links libamdhip64 only. Without an AMD GPU (or /dev/kfd) the runtime reports hipErrorNoDevice
// (100) and the plugin loads with zero devices and that reason (weft-info shows it).
#include "gpu_device.h"
#include "hip_kernels.h"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::hip {
namespace {

class HipPlugin final : public sdk::Plugin {
 public:
  explicit HipPlugin(const weft_host_api* host) : sdk::Plugin(host), device_("hip", host), table_("hip", host) {
    RegisterHipKernels(table_);
    Provide(&device_);
    Provide(table_.Api());
  }

 private:
  GpuDevice device_;
  sdk::KernelTable table_;
};

}  // namespace
}  // namespace weft::hip

WEFT_SDK_PLUGIN(weft::hip::HipPlugin, "hip", "0.1.0",
                "AMD GPUs through the HIP runtime (ROCm); kernels from the shared GPU layer, own tiled GEMM",
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

// CUDA plugin — entry point: the "cuda" devices (plugins/gpu_common/gpu_device.h compiled for the
// CUDA runtime) and the kernels of the shared GPU kernel layer (cuda_kernels.h).
//
// Links the CUDA runtime, cuBLAS and cuDNN (shared), never libcuda: the driver library is loaded
// by the runtime when present, so the plugin loads on machines without a driver and reports zero
// devices with the reason (weft-info shows it).
#include <memory>

#include "cuda_kernels.h"
#include "gpu_device.h"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::cuda {
namespace {

class CudaPlugin final : public sdk::Plugin {
 public:
  explicit CudaPlugin(const weft_host_api* host) : sdk::Plugin(host), device_("cuda", host), table_("cuda", host) {
    device_.release_handles = &ReleaseStreamHandles;
    RegisterCudaKernels(table_);
    Log(WEFT_LOG_DEBUG, "cuda plugin: " + LibraryVersions());
    Provide(&device_);
    Provide(table_.Api());
  }

 private:
  GpuDevice device_;
  sdk::KernelTable table_;
};

}  // namespace
}  // namespace weft::cuda

WEFT_SDK_PLUGIN(weft::cuda::CudaPlugin, "cuda", "0.1.0",
                "NVIDIA GPUs through the CUDA runtime, cuBLAS and cuDNN; kernels from the shared GPU layer",
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

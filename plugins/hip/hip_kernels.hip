// HIP plugin — the kernels half (see hip_kernels.h). The same kernel classes and functors as the
// CUDA plugin's (gpu_register.h), compiled by hipcc; no vendor GEMM is installed, so
// DeviceLaunch::Gemm runs the tiled kernel.
#include "gpu_launch_device.h"
#include "gpu_register.h"
#include "hip_kernels.h"

namespace weft::hip {

void RegisterHipKernels(sdk::KernelTable& table) { RegisterGpuLayer<DeviceLaunch>(table); }

}  // namespace weft::hip

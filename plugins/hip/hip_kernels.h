// HIP plugin — the kernels half (hip_kernels.hip, compiled by hipcc): the shared GPU kernel layer
// (plugins/gpu_common, registered by gpu_register.h) launched on HIP streams. Debian's ROCm has neither rocBLAS /
// hipBLAS nor MIOpen, so GEMMs use the layer's tiled kernel (gpu_gemm.h).
#pragma once

#include "gpu_device.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::hip {

/// Registers every HIP kernel in `table`.
void RegisterHipKernels(sdk::KernelTable& table);

}  // namespace weft::hip

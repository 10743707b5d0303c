// CUDA plugin — the kernels half (cuda_kernels.cu, compiled by nvcc): the shared GPU kernel layer
// (plugins/gpu_common, registered by gpu_register.h) launched on CUDA streams, GEMMs through cuBLAS.
#pragma once

#include "gpu_device.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cuda {

/// Registers every CUDA kernel in `table` and installs cuBLAS as the layer's GEMM.
void RegisterCudaKernels(sdk::KernelTable& table);

/// Destroys the cuBLAS handle bound to `stream` (GpuDevice::release_handles).
void ReleaseStreamHandles(GpuStream& stream);

/// cuBLAS and cuDNN versions ("cuBLAS 13.0.0 (libcublas.so.13, loaded at the first GEMM), cuDNN
/// 9.13.0"), read without a device and without loading cuBLAS: its version is the headers' the
/// plugin was built with (cublas_api.h), cuDNN's the loaded library's.
std::string LibraryVersions();

}  // namespace weft::cuda

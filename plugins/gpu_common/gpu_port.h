// weft GPU kernel layer — the portability header shared by the CUDA and HIP plugins.
//
// One source, three compilers:
//   nvcc  (__CUDACC__)          device code for NVIDIA GPUs, runtime names from cuda_runtime.h
//   hipcc (__HIPCC__)           device code for AMD GPUs, runtime names from hip_runtime.h
//   g++   (neither)             plain C++: WEFT_HD functions become host functions, so the math of
//                               every kernel builds and runs in the CPU test suite
// and, for host code that talks to the runtime but launches nothing (the device half of a plugin,
// compiled by g++ for speed), WEFT_GPU_CUDA / WEFT_GPU_HIP select the runtime API header.
//
// The gpu* names below are the subset of the runtime the plugins use; the CUDA and HIP functions
// they map to have the same signatures and semantics (HIP's API mirrors CUDA's), so each plugin's
// code reads the same. Everything is a macro or an alias: nothing here has linkage, so the CUDA
// and HIP plugins share no symbols (llama.cpp#29048: a static CUDA+HIP build of ggml dropped one
// backend's identically named symbols).
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WEFT_HD __host__ __device__
#define WEFT_GPU_DEVICE_CODE 1
#else
#define WEFT_HD
#endif

#if defined(__HIPCC__) && !defined(WEFT_GPU_HIP)
#define WEFT_GPU_HIP 1
#elif defined(__CUDACC__) && !defined(WEFT_GPU_CUDA)
#define WEFT_GPU_CUDA 1
#endif

#if defined(WEFT_GPU_CUDA) && defined(WEFT_GPU_HIP)
#error "gpu_port.h: WEFT_GPU_CUDA and WEFT_GPU_HIP are both defined; a translation unit targets one runtime"
#endif

#if defined(WEFT_GPU_CUDA)
#include <cuda_runtime_api.h>
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif
// The namespace each plugin's GPU code lives in: distinct per runtime (symbols never collide).
#define WEFT_GPU_NS cuda
#define WEFT_GPU_NAME "CUDA"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp_t = cudaDeviceProp;
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc(ptr, bytes) cudaHostAlloc(ptr, bytes, cudaHostAllocPortable)
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuStreamCreateWithPriority cudaStreamCreateWithPriority
#define gpuDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamWaitEvent(s, e) cudaStreamWaitEvent(s, e, 0)
#define gpuStreamPerThread cudaStreamPerThread
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventDefault cudaEventDefault
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventQuery cudaEventQuery
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDriverGetVersion cudaDriverGetVersion
#elif defined(WEFT_GPU_HIP)
#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
#define __HIP_PLATFORM_AMD__ 1  // host-only translation units (g++) of the HIP plugin
#endif
#include <hip/hip_runtime_api.h>
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif
#define WEFT_GPU_NS hip
#define WEFT_GPU_NAME "HIP"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp_t = hipDeviceProp_t;
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc(ptr, bytes) hipHostMalloc(ptr, bytes, hipHostMallocPortable)
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuStreamCreateWithPriority hipStreamCreateWithPriority
#define gpuDeviceGetStreamPriorityRange hipDeviceGetStreamPriorityRange
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamWaitEvent(s, e) hipStreamWaitEvent(s, e, 0)
#define gpuStreamPerThread hipStreamPerThread
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventDefault hipEventDefault
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventQuery hipEventQuery
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuDriverGetVersion hipDriverGetVersion
#else
// Host-only build (the kernel layer's tests): no runtime names; kernels' code lives in this
// namespace so a test binary could hold it beside nothing else.
#define WEFT_GPU_NS host
#endif

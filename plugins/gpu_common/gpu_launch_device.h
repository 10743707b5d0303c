// weft GPU kernel layer — the device launcher (nvcc / hipcc only): runs the layer's functors as
// grid-stride kernels on the call's stream. Same interface as HostLaunch (gpu_launch_host.h).
//
// The stream: a kernel's DeviceCall carries a weft_stream of this very plugin, i.e. a GpuStream
// (gpu_device.h), so the native stream is read directly instead of through the host. The NULL
// stream is synchronous (sdk/device.h): work goes to the per-thread stream and the host waits.
// A launch failure is reported by the launching call (the SDK's "errors seen while queuing").
//
// GEMM: CUDA uses cuBLAS (gpu_blas hooks set by the plugin), HIP the tiled kernel of gpu_gemm.h.
#pragma once

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#error "gpu_launch_device.h is for nvcc / hipcc translation units"
#endif

#include <algorithm>
#include <string>

#include "gpu_broadcast.h"
#include "gpu_device.h"
#include "gpu_gemm.h"
#include "weft/sdk/cpp/kernel.hpp"

#if defined(WEFT_GPU_ROCPRIM)
#if !defined(__HIPCC__)
#error "WEFT_GPU_ROCPRIM is for hipcc translation units"
#endif
#include <iostream>  // rocPRIM 5.3's device_reduce.hpp uses std::cout without including it
#include <rocprim/device/device_reduce.hpp>
#endif

namespace weft::WEFT_GPU_NS {

template <class F>
__global__ void MapKernel(int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}

// Grid z walks the batch (strided: gridDim.z is capped at 65535); the loop bound is the same for
// every thread of a block, so the barriers inside stay uniform.
__global__ void __launch_bounds__(kGemmTile* kGemmTile) GemmTiledKernel(GemmArgs batched) {
  __shared__ float as[kGemmTile][kGemmTile];
  __shared__ float bs[kGemmTile][kGemmTile];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int64_t z = blockIdx.z; z < batched.batch; z += gridDim.z) {
    const GemmArgs g = batched.At(z);
    float acc = 0.0f;
    for (int64_t t = 0, steps = (g.k + kGemmTile - 1) / kGemmTile; t < steps; ++t) {
      GemmLoad(g, blockIdx.x, blockIdx.y, tx, ty, t, as, bs);
      __syncthreads();
      acc = GemmAccumulate(tx, ty, as, bs, acc);
      __syncthreads();
    }
    GemmStore(g, blockIdx.x, blockIdx.y, tx, ty, acc);
  }
}

#if defined(WEFT_GPU_ROCPRIM)
/// The layer's max fold (NaN wins) as a rocPRIM operator.
template <typename T>
struct RocprimMax {
  __host__ __device__ T operator()(const T& a, const T& b) const { return Fold(true, a, b); }
};

/// rocprim::reduce over in[0, n) into *out (sum, or max); with tmp == nullptr only sets `bytes`
/// (no device needed: the plugin asks at kernel setup).
template <typename T>
hipError_t RocprimReduce(void* tmp, size_t& bytes, const T* in, T* out, int64_t n, bool max, hipStream_t s) {
  const size_t size = static_cast<size_t>(n);
  if (max) return rocprim::reduce(tmp, bytes, in, out, FoldInit<T>(true), size, RocprimMax<T>{}, s);
  return rocprim::reduce(tmp, bytes, in, out, T(0), size, rocprim::plus<T>(), s);
}
#endif

/// A vendor GEMM the plugin may install (cuBLAS); returns false to fall back to the tiled kernel
/// (a shape or layout the library rejects).
using VendorGemm = bool (*)(const sdk::DeviceCall& call, gpuStream_t stream, const GemmArgs& g);

struct DeviceLaunch {
  static inline VendorGemm vendor_gemm = nullptr;  // set once at plugin init, before any kernel runs

  template <typename T>
  static T* Ptr(const sdk::DeviceTensor& t) {
    return t.data() == 0 ? nullptr : reinterpret_cast<T*>(static_cast<uintptr_t>(t.data() + t.offset()));
  }

  static gpuStream_t Begin(const sdk::DeviceCall& c) {
    Check(gpuSetDevice(c.device), "set device " + std::to_string(c.device));
    return NativeStreamOf(c.stream);
  }
  static void End(const sdk::DeviceCall& c, const char* what) {
    Check(gpuGetLastError(), std::string("launch ") + what, WEFT_ERR_INTERNAL);
    if (c.stream == nullptr) Check(gpuStreamSynchronize(gpuStreamPerThread), std::string(what) + " failed");
  }

  template <class F>
  static void Map(const sdk::DeviceCall& c, int64_t n, const F& f) {
    if (n <= 0) return;
    const gpuStream_t s = Begin(c);
    constexpr int64_t kThreads = 256, kMaxBlocks = 4096;  // grid-stride beyond 1M items
    const int64_t blocks = std::min((n + kThreads - 1) / kThreads, kMaxBlocks);
    MapKernel<F><<<static_cast<unsigned>(blocks), static_cast<unsigned>(kThreads), 0, s>>>(n, f);
    End(c, "element kernel");
  }

  /// Workspace bytes of FullReduce for n elements of T; 0 when no vendor reduction is built in
  /// (then the layer's two-pass kernels run). HIP with rocPRIM (WEFT_GPU_ROCPRIM): rocPRIM's
  /// scratch plus a slot for the result; CUDA: 0 (the layer's kernels).
  template <typename T>
  static uint64_t FullReduceBytes(int64_t n, bool max) {
#if defined(WEFT_GPU_ROCPRIM)
    size_t bytes = 0;
    if (RocprimReduce<T>(nullptr, bytes, nullptr, nullptr, n, max, nullptr) != hipSuccess) return 0;
    return kResultSlot + bytes;
#else
    (void)n, (void)max;
    return 0;
#endif
  }
  /// out[0] (=|+=) scale · (Σ or max of in[0, n)) through the vendor library, with `ws` of
  /// FullReduceBytes(n, max) bytes; false when there is none.
  template <typename T, class Assign>
  static bool FullReduce(const sdk::DeviceCall& c, const T* in, int64_t n, bool max, T scale, T* out, void* ws,
                         uint64_t bytes) {
#if defined(WEFT_GPU_ROCPRIM)
    const gpuStream_t s = Begin(c);
    T* result = static_cast<T*>(ws);
    size_t scratch = bytes - kResultSlot;
    Check(RocprimReduce<T>(static_cast<char*>(ws) + kResultSlot, scratch, in, result, n, max, s), "rocprim::reduce");
    Map(c, 1, ReducePartsMap<T, Assign>{max, scale, 1, result, out});  // scale and write request
    return true;
#else
    (void)c, (void)in, (void)n, (void)max, (void)scale, (void)out, (void)ws, (void)bytes;
    return false;
#endif
  }
  static constexpr uint64_t kResultSlot = 256;  // keeps rocPRIM's scratch 256-byte aligned

  static void Gemm(const sdk::DeviceCall& c, const GemmArgs& g) {
    if (g.m <= 0 || g.n <= 0 || g.batch <= 0) return;
    const gpuStream_t s = Begin(c);
    if (vendor_gemm != nullptr && vendor_gemm(c, s, g)) {
      End(c, "vendor GEMM");
      return;
    }
    const dim3 grid(static_cast<unsigned>(GemmBlocksX(g)), static_cast<unsigned>(GemmBlocksY(g)),
                    static_cast<unsigned>(std::min<int64_t>(g.batch, 65535)));
    GemmTiledKernel<<<grid, dim3(kGemmTile, kGemmTile), 0, s>>>(g);
    End(c, "tiled GEMM");
  }
};

}  // namespace weft::WEFT_GPU_NS

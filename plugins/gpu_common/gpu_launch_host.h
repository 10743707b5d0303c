// weft GPU kernel layer — the host launcher: runs the layer's kernels as plain C++ on host
// memory. Used by the kernel layer's tests (tests/plugins/gpuhost), which register the GPU kernel
// classes (gpu_kernel.h) with this launcher and compare them, op by op, with the cpu plugin.
//
// Launcher interface (the device launcher in gpu_launch_device.h has the same):
//   Map(call, n, f)   f(i) for every i in [0, n)
//   Gemm(call, args)  the tiled GEMM of gpu_gemm.h
//   FullReduceBytes / FullReduce   a vendor reduction over all elements (none here)
// Not thread-safe beyond what the functors are (they only touch their own work items).
#pragma once

#include "gpu_gemm.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::WEFT_GPU_NS {

struct HostLaunch {
  /// Device pointers are host addresses here.
  template <typename T>
  static T* Ptr(const sdk::DeviceTensor& t) {
    return t.data() == 0 ? nullptr : reinterpret_cast<T*>(static_cast<uintptr_t>(t.data() + t.offset()));
  }

  template <class F>
  static void Map(const sdk::DeviceCall& /*call*/, int64_t n, const F& f) {
    for (int64_t i = 0; i < n; ++i) f(i);
  }

  /// No vendor full reduction on the host: ReduceKernel runs the layer's kernels.
  template <typename T>
  static uint64_t FullReduceBytes(int64_t /*n*/, bool /*max*/) {
    return 0;
  }
  template <typename T, class Assign>
  static bool FullReduce(const sdk::DeviceCall&, const T*, int64_t, bool, T, T*, void*, uint64_t) {
    return false;
  }

  /// Every product of the batch, every block in turn; inside a block each phase runs for all threads before the next
  /// phase starts, as the device's __syncthreads() barriers order them (see gpu_gemm.h).
  static void Gemm(const sdk::DeviceCall& call, const GemmArgs& batched) {
    for (int64_t z = 0; z < batched.batch; ++z) GemmOne(call, batched.At(z));
  }
  static void GemmOne(const sdk::DeviceCall& /*call*/, const GemmArgs& g) {
    float as[kGemmTile][kGemmTile], bs[kGemmTile][kGemmTile], acc[kGemmTile][kGemmTile];
    for (int64_t by = 0; by < GemmBlocksY(g); ++by)
      for (int64_t bx = 0; bx < GemmBlocksX(g); ++bx) {
        for (auto& row : acc)
          for (float& v : row) v = 0.0f;
        for (int64_t t = 0; t < GemmSteps(g); ++t) {
          for (int ty = 0; ty < kGemmTile; ++ty)
            for (int tx = 0; tx < kGemmTile; ++tx) GemmLoad(g, bx, by, tx, ty, t, as, bs);
          for (int ty = 0; ty < kGemmTile; ++ty)
            for (int tx = 0; tx < kGemmTile; ++tx) acc[ty][tx] = GemmAccumulate(tx, ty, as, bs, acc[ty][tx]);
        }
        for (int ty = 0; ty < kGemmTile; ++ty)
          for (int tx = 0; tx < kGemmTile; ++tx) GemmStore(g, bx, by, tx, ty, acc[ty][tx]);
      }
  }
};

}  // namespace weft::WEFT_GPU_NS

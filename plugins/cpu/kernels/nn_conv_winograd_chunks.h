// What weft's Winograd convolutions (nn_conv_winograd.cc, nn_conv_winograd_1d.cc) share: their 8-channel vector and
// its unaligned moves (also the loops over blocked activations: nn_pooling_blocked.cc, norm_batch_norm_fused.cc), and
// the chunk loop (chunks of tiles split over the OpenMP team, each thread with its own
// scratch, V and M, and sgemm kept on that thread). Internal to weft_cpu_kernels (needs OpenMP: parallel.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "parallel.h"
#include "weft/sdk/cpp/error.hpp"

namespace weft::cpu {

/// Eight channels: one AVX2 register in the AVX2 and AVX-512 variants, two SSE ones in the baseline.
using V8 = float __attribute__((vector_size(32)));

/// Eight floats at any address (a blocked tensor's pixel, a row of V or M) as one 256-bit move:
/// through std::memcpy GCC's generic tuning made two 128-bit moves of each, and V8's own type would
/// promise a 32-byte alignment that a channel slice need not have. (Vectors pass by reference: by
/// value GCC warns that the ABI differs without AVX.)
using V8Unaligned = float __attribute__((vector_size(32), aligned(4), may_alias));
inline void LoadV8(const float* q, V8& v) { v = *reinterpret_cast<const V8Unaligned*>(q); }
inline void StoreV8(float* q, const V8& v) { *reinterpret_cast<V8Unaligned*>(q) = v; }

/// While it lives, sgemm (oneDNN's, which runs on the thread's OpenMP team) runs on the calling
/// thread only: a product split over the team would sum in an order that depends on the thread
/// count.
class SgemmOnCallingThread {
 public:
  SgemmOnCallingThread() : team_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SgemmOnCallingThread() { omp_set_num_threads(team_); }
  SgemmOnCallingThread(const SgemmOnCallingThread&) = delete;
  SgemmOnCallingThread& operator=(const SgemmOnCallingThread&) = delete;

 private:
  int team_;
};

/// Runs body(i0, i1, scratch) over chunks [0, chunks) split by ParallelChunks (`work`: elements
/// touched), `scratch` at least `floats` floats of the thread's own, kept between calls (OpenMP
/// keeps its threads), with SgemmOnCallingThread. A failed allocation cannot leave the OpenMP
/// region as an exception: it is thrown after it, naming `what`.
template <typename F>
void ForChunksWithScratch(int64_t chunks, int64_t work, size_t floats, const std::string& what, const F& body) {
  std::atomic<bool> no_memory{false};
  ParallelChunks(chunks, work, [&](int64_t i0, int64_t i1, int) {
    thread_local std::vector<float> scratch;
    try {
      if (scratch.size() < floats) scratch.resize(floats);
    } catch (const std::bad_alloc&) {
      no_memory = true;
      return;
    }
    const SgemmOnCallingThread one_thread;
    body(i0, i1, scratch.data());
  });
  if (no_memory)
    throw weft::sdk::Error(WEFT_ERR_OUT_OF_MEMORY, what + ": no memory for the Winograd tiles (" +
                                                       std::to_string(floats * sizeof(float)) + " bytes a thread)");
}

}  // namespace weft::cpu

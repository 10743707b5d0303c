// weft CPU kernels: splitting weft's own loops over the OpenMP team of the thread plan. Only for
// sources of the kernel library (compiled with -fopenmp); cpu_kernels.h stays free of OpenMP so
// the plugin, the simulated device and the tests include it without the flag.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu_kernels.h"

namespace weft::cpu {

/// Elements a loop must touch before ParallelChunks splits it: below this, waking the OpenMP team
/// (a few microseconds) costs more than the second core saves (bench/kernels, LeNet pooling).
inline constexpr int64_t kParallelWork = int64_t{1} << 16;

/// Chunks ParallelChunks(n, work, ...) uses: 1, or the team size when the loop is split.
inline int ParallelTeam(int64_t n, int64_t work) {
  // Inside a team already (a split loop calling Sgemm): the caller's thread does it all.
  const int threads = omp_in_parallel() ? 1 : CurrentThreadPlan().omp;
  return threads <= 1 || n < 2 || work < kParallelWork ? 1 : static_cast<int>(std::min<int64_t>(threads, n));
}

/// Runs body(begin, end, chunk) over [0, n): on the calling thread's OpenMP team (CurrentThreadPlan().omp
/// threads, the pool oneDNN also uses, so no second pool spins) in contiguous chunks when `work`
/// (elements the whole loop touches) is at least kParallelWork, else as one call body(0, n, 0).
/// `chunk` is in [0, ParallelTeam(n, work)), one per thread (for per-thread scratch).
/// Chunks are disjoint; body must not throw (an exception cannot leave an OpenMP region) and
/// must write only what its chunk owns.
template <typename F>
void ParallelChunks(int64_t n, int64_t work, const F& body) {
  const int team = ParallelTeam(n, work);
  if (team == 1) {
    body(int64_t{0}, n, 0);
    return;
  }
  PrepareMathThread();
#pragma omp parallel num_threads(team)
  {
    // The runtime may give fewer threads than asked; the chunks then follow the real count.
    const int k = omp_get_num_threads(), i = omp_get_thread_num();
    body(n * i / k, n * (i + 1) / k, i);
  }
}

}  // namespace weft::cpu

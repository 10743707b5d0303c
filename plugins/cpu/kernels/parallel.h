// weft CPU kernels: splitting weft's own loops over the OpenMP team of the thread plan. Only for
// sources of the kernel library (compiled with -fopenmp); cpu_kernels.h stays free of OpenMP so
// the plugin, the simulated device and the tests include it without the flag.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
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

/// Runs body(begin, end) over [0, n) like ParallelChunks, but in pieces of `piece` elements that
/// the team's threads take in turn until none is left, instead of one contiguous chunk per thread:
/// for loops whose cost per element varies along [0, n), where equal chunks leave one thread
/// working while the other waits (a lazy update's sorted rows: the low ones share cache lines, the
/// high ones each miss). Pieces are disjoint; the same rules as ParallelChunks apply to body.
template <typename F>
void ParallelPieces(int64_t n, int64_t work, int64_t piece, const F& body) {
  const int team = ParallelTeam(n, work);
  if (team == 1) {
    body(int64_t{0}, n);
    return;
  }
  piece = std::max<int64_t>(piece, 1);
  std::atomic<int64_t> next{0};
  PrepareMathThread();
#pragma omp parallel num_threads(team)
  for (int64_t b = next.fetch_add(piece, std::memory_order_relaxed); b < n;
       b = next.fetch_add(piece, std::memory_order_relaxed))
    body(b, std::min(n, b + piece));
}

}  // namespace weft::cpu

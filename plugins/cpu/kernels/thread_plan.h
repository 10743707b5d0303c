// weft CPU kernels — how many threads the math libraries get inside one kernel call.
//
// weft owns the split of the cores it is given between the engine's CPU workers, OpenBLAS
// (pthread build, one process-wide pool) and oneDNN (OpenMP, one team per calling thread). The
// user's variables are limits, never a recipe for oversubscription:
//
//   cores   = CPUs in the process's affinity mask (sched_getaffinity; taskset, cgroups' cpusets)
//   workers = WEFT_CPU_WORKER_NTHREADS (engine workers per cpu device running kernels at once; 1)
//   budget  = max(1, cores / workers)           threads one kernel call may keep busy
//   math    = min(budget, WEFT_CPU_MATH_THREADS) (unset: budget)
//   omp     = min(math, OMP_NUM_THREADS)         (its first entry when it is a nested list)
//   blas    = 1 when omp > 1, else min(math, OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS, else
//             OMP_NUM_THREADS)
//
// One pool at a time: both OpenMP's team and OpenBLAS's threads spin for a while after each
// parallel call, so two pools used alternately within a training step would keep more threads
// busy than there are cores. With an OpenMP team of several threads, the kernels' large matrix
// products are therefore split into blocks that the team's threads compute with single-threaded
// OpenBLAS calls (nn_common.cc, Sgemm), and weft's own large loops split the same way
// (parallel.h); small products and loops run on the calling thread.
//
// so OMP_NUM_THREADS=2 on a 2-core machine gives what no variable gives, OMP_NUM_THREADS=8 on the
// same machine gives 2, and OMP_NUM_THREADS=1 gives 1 thread for oneDNN and OpenBLAS alike (these
// variables are what OpenBLAS and OpenMP themselves read, so a user who sets them means both).
// A value that is not a positive integer is reported in `warnings` and ignored (a malformed
// WEFT_CPU_MATH_THREADS counts as 1, the safe choice).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace weft::cpu {

/// The settings PlanThreads reads, as the raw strings of the environment / host config
/// (std::nullopt: unset).
struct ThreadEnv {
  std::optional<std::string> math;       // WEFT_CPU_MATH_THREADS
  std::optional<std::string> workers;    // WEFT_CPU_WORKER_NTHREADS
  std::optional<std::string> omp;        // OMP_NUM_THREADS
  std::optional<std::string> openblas;   // OPENBLAS_NUM_THREADS
  std::optional<std::string> goto_blas;  // GOTO_NUM_THREADS (OpenBLAS reads it after OPENBLAS_...)
};

/// The split for one process. Every count is >= 1.
struct ThreadPlan {
  int cores = 1;                      // CPUs of the affinity mask
  int workers = 1;                    // engine CPU workers per device
  int math = 1;                       // threads one kernel call may use (budget after WEFT_CPU_MATH_THREADS)
  int blas = 1;                       // openblas_set_num_threads
  int omp = 1;                        // omp_set_num_threads on each thread that runs oneDNN / OpenMP kernels
  std::vector<std::string> warnings;  // malformed values, one sentence each naming the variable

  /// "cores 2, workers 1 -> math 2 (OpenBLAS 2, OpenMP 2)" for logs and weft-info.
  std::string Describe() const;
};

/// The rule at the top of this file; a pure function of its arguments (cores < 1 counts as 1).
/// Thread-safe, never throws except std::bad_alloc.
ThreadPlan PlanThreads(int cores, const ThreadEnv& env);

/// CPUs this process may run on: CPU_COUNT of sched_getaffinity, 1 when that fails.
int AffinityCores();

}  // namespace weft::cpu

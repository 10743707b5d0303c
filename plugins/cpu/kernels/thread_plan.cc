// The math-library thread split (see thread_plan.h).
#include "thread_plan.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace weft::cpu {
namespace {

// A positive thread count from `value` (OMP_NUM_THREADS may be a nested list "4,2": its first
// entry applies to the outermost team, the one our kernels open). Unset -> nullopt; malformed ->
// nullopt and a warning.
std::optional<int> Count(const char* name, const std::optional<std::string>& value, std::vector<std::string>& warnings,
                         bool list_ok) {
  if (!value) return std::nullopt;
  std::string text = *value;
  if (list_ok) text = text.substr(0, text.find(','));
  const auto b = text.find_first_not_of(" \t");
  const auto e = text.find_last_not_of(" \t");
  text = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 1) {
    warnings.push_back(std::string(name) + "='" + *value + "' is not a thread count >= 1; ignored");
    return std::nullopt;
  }
  return static_cast<int>(std::min<long>(v, 1 << 16));
}

}  // namespace

std::string ThreadPlan::Describe() const {
  return "cores " + std::to_string(cores) + ", workers " + std::to_string(workers) + " -> math " +
         std::to_string(math) + " (OpenBLAS " + std::to_string(blas) + ", OpenMP " + std::to_string(omp) + ")";
}

ThreadPlan PlanThreads(int cores, const ThreadEnv& env) {
  ThreadPlan p;
  p.cores = std::max(1, cores);
  p.workers = Count("WEFT_CPU_WORKER_NTHREADS", env.workers, p.warnings, false).value_or(1);
  const int budget = std::max(1, p.cores / p.workers);
  p.math = budget;
  if (env.math) {
    const std::optional<int> m = Count("WEFT_CPU_MATH_THREADS", env.math, p.warnings, false);
    p.math = std::min(budget, m.value_or(1));  // malformed: 1, never more than asked for
  }
  const std::optional<int> omp = Count("OMP_NUM_THREADS", env.omp, p.warnings, true);
  std::optional<int> blas = Count("OPENBLAS_NUM_THREADS", env.openblas, p.warnings, false);
  if (!blas) blas = Count("GOTO_NUM_THREADS", env.goto_blas, p.warnings, false);
  if (!blas) blas = omp;  // OpenBLAS's own fallback order
  p.omp = std::min(p.math, omp.value_or(p.math));
  p.blas = std::min(p.math, blas.value_or(p.math));
  // One pool at a time: OpenMP's team and OpenBLAS's threads both spin for a while after each
  // parallel call, so two pools alternating within a step keep more threads busy than cores.
  if (p.omp > 1) p.blas = 1;
  return p;
}

int AffinityCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace weft::cpu

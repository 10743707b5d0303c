// The CPU kernel table and the math-library thread caps (see cpu_kernels.h).
#include "cpu_kernels.h"

#include "isa_dispatch.h"  // MachineShortfall
#include "optimizer.h"     // RegisterSparseOptimizers

#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

extern "C" void openblas_set_num_threads(int num_threads);

namespace weft::cpu {

namespace {

// A setting through the host's config_get (environment, else runtime option), else the
// environment; nullopt when unset or unreadable.
std::optional<std::string> Setting(const weft_host_api* host, const char* key) {
  if (host != nullptr && host->config_get != nullptr) {
    char buf[64] = {0};
    const int64_t len = host->config_get(host->host_ctx, key, buf, sizeof(buf));
    if (len < 0) return std::nullopt;
    if (static_cast<size_t>(len) >= sizeof(buf)) return std::string("(too long)");
    return std::string(buf, static_cast<size_t>(len));
  }
  const char* env = std::getenv(key);
  return env ? std::optional<std::string>(env) : std::nullopt;
}

ThreadPlan ReadThreadPlan(const weft_host_api* host) {
  ThreadEnv env;
  env.math = Setting(host, "WEFT_CPU_MATH_THREADS");
  env.workers = Setting(host, "WEFT_CPU_WORKER_NTHREADS");
  // The libraries' own variables are read from the environment, where the libraries read them.
  env.omp = Setting(nullptr, "OMP_NUM_THREADS");
  env.openblas = Setting(nullptr, "OPENBLAS_NUM_THREADS");
  env.goto_blas = Setting(nullptr, "GOTO_NUM_THREADS");
  ThreadPlan plan = PlanThreads(AffinityCores(), env);
  for (const std::string& w : plan.warnings) weft::sdk::Log(host, WEFT_LOG_WARNING, w);
  weft::sdk::Log(host, WEFT_LOG_DEBUG, "cpu math threads: " + plan.Describe());
  return plan;
}

// The math libraries' thread counts are process-wide (OpenBLAS) or per thread but read from one
// setting (OpenMP), so the plan is process-wide too: made by the first table (or the first
// kernel run without a table) and never changed. It lives in static storage and is never
// destroyed, because kernels may run at exit; it holds no heap block (the warnings were logged
// when it was read), which LeakSanitizer would report once the plugin is unloaded.
const ThreadPlan& InstallPlan(const weft_host_api* host) {
  alignas(ThreadPlan) static unsigned char storage[sizeof(ThreadPlan)];
  static const ThreadPlan* const plan = [host] {
    ThreadPlan read = ReadThreadPlan(host);
    std::vector<std::string>().swap(read.warnings);
    auto* made = new (storage) ThreadPlan(std::move(read));
    openblas_set_num_threads(made->blas);
    return made;
  }();
  return *plan;
}

}  // namespace

const ThreadPlan& CurrentThreadPlan() { return InstallPlan(nullptr); }

int MathThreads() { return CurrentThreadPlan().math; }

void PrepareMathThread() {
  thread_local bool done = false;
  if (!done) {
    omp_set_num_threads(CurrentThreadPlan().omp);
    done = true;
  }
}

void RegisterAllKernels(weft::sdk::KernelTable& table) {
  RegisterNNKernels(table);
  RegisterTensorKernels(table);
}

std::unique_ptr<weft::sdk::KernelTable> MakeKernelTable(const weft_host_api* host) {
  // A build with fewer ISA copies (WEFT_CPU_ISA_COPIES=host) must not run on a CPU below them.
  if (std::string why = isa::MachineShortfall(); !why.empty()) throw weft::sdk::Error(WEFT_ERR_UNSUPPORTED, why);
  // Reads WEFT_CPU_ISA now, so that a bad or lowered value is reported when the plugin loads in
  // every build: a one-copy build's Dispatch never asks for the level.
  isa::Ceiling();
  InstallPlan(host);
  auto t = std::make_unique<weft::sdk::KernelTable>("cpu", host);
  RegisterAllKernels(*t);
  RegisterSparseKernels(*t);
  RegisterSparseRowOps(*t);
  RegisterSparseScatterOps(*t);
  RegisterSparseSquareSum(*t);
  RegisterSparseProducts(*t);
  RegisterSparseEmbedding(*t);
  RegisterSparseOptimizers(*t);
  t->Api();
  return t;
}

}  // namespace weft::cpu

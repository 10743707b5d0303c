// The CPU kernel table and the math-library thread caps (see cpu_kernels.h).
#include "cpu_kernels.h"

#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

extern "C" void openblas_set_num_threads(int num_threads);

namespace weft::cpu {

namespace {

int ReadMathThreads(const weft_host_api* host) {
  char buf[32] = {0};
  int64_t len = -1;
  if (host != nullptr && host->config_get != nullptr) {
    len = host->config_get(host->host_ctx, "WEFT_CPU_MATH_THREADS", buf, sizeof(buf));
  } else if (const char* env = std::getenv("WEFT_CPU_MATH_THREADS")) {
    std::snprintf(buf, sizeof(buf), "%s", env);
    len = static_cast<int64_t>(std::strlen(buf));
  }
  if (len <= 0) return 1;
  if (static_cast<size_t>(len) >= sizeof(buf)) {
    weft::sdk::Log(host, WEFT_LOG_WARNING, "WEFT_CPU_MATH_THREADS is too long; using 1");
    return 1;
  }
  char* end = nullptr;
  long v = std::strtol(buf, &end, 10);
  if (end == buf || *end != '\0' || v < 1 || v > 1024) {
    weft::sdk::Log(host, WEFT_LOG_WARNING,
                   std::string("WEFT_CPU_MATH_THREADS='") + buf + "' is not a thread count >= 1; using 1");
    return 1;
  }
  return static_cast<int>(v);
}

// The math libraries' thread counts are process-wide (OpenBLAS) or per thread but read from one
// setting (OpenMP), so the value is process-wide too: set by the first table made.
std::atomic<int>& MathThreadsSetting() {
  static std::atomic<int> n{0};
  return n;
}

}  // namespace

int MathThreads() {
  int n = MathThreadsSetting().load(std::memory_order_acquire);
  if (n == 0) {
    n = ReadMathThreads(nullptr);
    int expected = 0;
    if (!MathThreadsSetting().compare_exchange_strong(expected, n)) n = expected;
  }
  return n;
}

void PrepareMathThread() {
  thread_local bool done = false;
  if (!done) {
    omp_set_num_threads(MathThreads());
    done = true;
  }
}

void RegisterAllKernels(weft::sdk::KernelTable& table) {
  RegisterNNKernels(table);
  RegisterTensorKernels(table);
}

std::unique_ptr<weft::sdk::KernelTable> MakeKernelTable(const weft_host_api* host) {
  int expected = 0;
  MathThreadsSetting().compare_exchange_strong(expected, ReadMathThreads(host));
  openblas_set_num_threads(MathThreads());
  auto t = std::make_unique<weft::sdk::KernelTable>("cpu", host);
  RegisterAllKernels(*t);
  t->Api();
  return t;
}

}  // namespace weft::cpu

// The CPU kernel table and the math-library thread caps (see cpu_kernels.h).
#include "cpu_kernels.h"

#include <omp.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

extern "C" void openblas_set_num_threads(int num_threads);

namespace weft::cpu {

namespace {
int ReadMathThreads() {
  char buf[32] = {0};
  const weft_host_api* host = weft::sdk::Host();
  int64_t len = -1;
  if (host != nullptr && host->config_get != nullptr) {
    len = host->config_get(host->host_ctx, "WEFT_CPU_MATH_THREADS", buf, sizeof(buf));
  } else if (const char* env = std::getenv("WEFT_CPU_MATH_THREADS")) {
    std::snprintf(buf, sizeof(buf), "%s", env);
    len = static_cast<int64_t>(std::strlen(buf));
  }
  if (len <= 0) return 1;
  if (static_cast<size_t>(len) >= sizeof(buf)) {
    weft::sdk::Log(WEFT_LOG_WARNING, "WEFT_CPU_MATH_THREADS is too long; using 1");
    return 1;
  }
  char* end = nullptr;
  long v = std::strtol(buf, &end, 10);
  if (end == buf || *end != '\0' || v < 1 || v > 1024) {
    weft::sdk::Log(WEFT_LOG_WARNING,
                   std::string("WEFT_CPU_MATH_THREADS='") + buf + "' is not a thread count >= 1; using 1");
    return 1;
  }
  return static_cast<int>(v);
}
}  // namespace

int MathThreads() {
  static const int n = ReadMathThreads();
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

std::unique_ptr<weft::sdk::KernelTable> MakeKernelTable() {
  openblas_set_num_threads(MathThreads());
  auto t = std::make_unique<weft::sdk::KernelTable>("cpu");
  RegisterAllKernels(*t);
  t->Api();
  return t;
}

}  // namespace weft::cpu

const weft_operator_api* weft_cpu_operator_api() {
  static const std::unique_ptr<weft::sdk::KernelTable> table = weft::cpu::MakeKernelTable();
  return table->Api();
}

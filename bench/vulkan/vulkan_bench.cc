// GEMM GFLOP/s on vulkan(0) (FullyConnected, no bias: C = A Bᵀ, shaders/gemm.comp), measured
// between two timing events (Vulkan timestamp queries, so host overhead is excluded), next to
// OpenBLAS sgemm on the same shape. Prints a table; not a test.
//   vulkan_bench [sizes...]   (default 256 512 1024)
// Run on lavapipe: VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json vulkan_bench
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "weft/device.h"
#include "weft/runtime.h"

namespace {

using weft::Context;
using weft::Device;

void Check(weft_error* e, const char* what) {
  if (e == nullptr) return;
  std::fprintf(stderr, "%s: %s\n", what, std::string(weft::ErrorMessage(e)).c_str());
  weft::ReleaseError(e);
  std::exit(1);
}

// One FullyConnected (M x K) · (N x K)ᵀ on the device; returns the median of `reps` timings (ms).
double DeviceGemmMs(Device& d, int64_t m, int64_t n, int64_t k, int reps) {
  const weft::KernelInfo* ki = weft::Runtime::Get().FindKernel("FullyConnected", d.type(), weft::DType::kFloat32);
  if (ki == nullptr) {
    std::fprintf(stderr, "no FullyConnected kernel on %s\n", d.type().c_str());
    std::exit(1);
  }
  const weft_shape shapes[3] = {{2, {m, k}}, {2, {n, k}}, {2, {m, n}}};
  const int32_t dtypes[3] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT32};
  const std::string hidden = std::to_string(n);
  const weft_kv attrs[2] = {{"num_hidden", hidden.c_str()}, {"no_bias", "True"}};
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.kernel_data = ki->def->kernel_data;
  sa.op_name = "FullyConnected";
  sa.device = d.id();
  sa.num_attrs = 2;
  sa.attrs = attrs;
  sa.num_inputs = 2;
  sa.input_shapes = shapes;
  sa.input_dtypes = dtypes;
  sa.num_outputs = 1;
  sa.output_shapes = shapes + 2;
  sa.output_dtypes = dtypes + 2;
  Check(ki->def->create_state(ki->plugin_state, &sa), "create_state");
  std::vector<float> ha(static_cast<size_t>(m * k)), hb(static_cast<size_t>(n * k));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : ha) v = u(rng);
  for (float& v : hb) v = u(rng);
  const weft_device_ptr a = d.Allocate(ha.size() * 4), b = d.Allocate(hb.size() * 4),
                        c = d.Allocate(static_cast<uint64_t>(m * n) * 4);
  d.CopyFromHost(a, 0, ha.data(), ha.size() * 4);
  d.CopyFromHost(b, 0, hb.data(), hb.size() * 4);
  weft_stream s = d.CreateStream();
  weft_event e0 = d.CreateEvent(WEFT_EVENT_TIMING), e1 = d.CreateEvent(WEFT_EVENT_TIMING);
  const int64_t da[2] = {m, k}, db[2] = {n, k}, dc[2] = {m, n};
  const weft_tensor ins[2] = {{sizeof(weft_tensor), a, 0, WEFT_DTYPE_FLOAT32, d.id(), 2, da, nullptr},
                              {sizeof(weft_tensor), b, 0, WEFT_DTYPE_FLOAT32, d.id(), 2, db, nullptr}};
  const weft_tensor outs[1] = {{sizeof(weft_tensor), c, 0, WEFT_DTYPE_FLOAT32, d.id(), 2, dc, nullptr}};
  const int32_t req = WEFT_REQ_WRITE;
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.kernel_data = ki->def->kernel_data;
  ka.state = sa.state;
  ka.device = d.id();
  ka.num_inputs = 2;
  ka.inputs = ins;
  ka.num_outputs = 1;
  ka.outputs = outs;
  ka.req = &req;
  ka.stream = s;
  Check(ki->def->compute(ki->plugin_state, &ka), "compute");  // warm-up: pipeline creation
  d.SynchronizeStream(s);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    d.RecordEvent(e0, s);
    Check(ki->def->compute(ki->plugin_state, &ka), "compute");
    d.RecordEvent(e1, s);
    d.SynchronizeEvent(e1);
    ms.push_back(d.EventElapsedMs(e0, e1));
  }
  // Spot check against a host dot product, so a fast wrong kernel cannot pass unnoticed.
  std::vector<float> hc(static_cast<size_t>(m * n));
  d.CopyToHost(hc.data(), c, 0, hc.size() * 4);
  double ref = 0;
  for (int64_t q = 0; q < k; ++q) ref += static_cast<double>(ha[static_cast<size_t>(q)]) * hb[static_cast<size_t>(q)];
  if (std::abs(ref - hc[0]) > 1e-3 * (1 + std::abs(ref))) std::fprintf(stderr, "MISMATCH: %g vs %g\n", hc[0], ref);
  d.DestroyEvent(e0);
  d.DestroyEvent(e1);
  d.DestroyStream(s);
  d.Free(a);
  d.Free(b);
  d.Free(c);
  ki->def->destroy_state(ki->plugin_state, sa.state);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double BlasGemmMs(int64_t m, int64_t n, int64_t k, int reps) {
  std::vector<float> a(static_cast<size_t>(m * k), 0.5f), b(static_cast<size_t>(n * k), 0.25f),
      c(static_cast<size_t>(m * n));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, a.data(), static_cast<int>(k), b.data(), static_cast<int>(k), 0.0f, c.data(), static_cast<int>(n));
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                1.0f, a.data(), static_cast<int>(k), b.data(), static_cast<int>(k), 0.0f, c.data(),
                static_cast<int>(n));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {256, 512, 1024};
  weft::Runtime& rt = weft::Runtime::Get();
  if (rt.DeviceCount("vulkan") == 0) {
    const weft::Plugin* p = rt.FindPlugin("vulkan");
    std::fprintf(stderr, "no Vulkan device: %s\n", p != nullptr ? p->device_note().c_str() : "plugin not loaded");
    return 1;
  }
  Device& d = rt.GetDevice(Context("vulkan", 0));
  std::printf("device: %s (%s)\n", d.properties().name.c_str(), d.properties().vendor.c_str());
  std::printf("%8s %14s %14s %14s %14s\n", "M=N=K", "vulkan ms", "vulkan GF/s", "openblas ms", "openblas GF/s");
  for (int64_t s : sizes) {
    const int reps = s >= 1024 ? 3 : 5;
    const double flop = 2.0 * static_cast<double>(s) * s * s;
    const double vk = DeviceGemmMs(d, s, s, s, reps);
    const double blas = BlasGemmMs(s, s, s, reps);
    std::printf("%8lld %14.2f %14.2f %14.2f %14.2f\n", static_cast<long long>(s), vk, flop / vk / 1e6, blas,
                flop / blas / 1e6);
  }
  return 0;
}

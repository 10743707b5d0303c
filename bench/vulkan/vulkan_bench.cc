// GEMM GFLOP/s on vulkan(0) (FullyConnected, no bias: C = A Bᵀ, shaders/gemm4.comp / gemm.comp), measured
// between two timing events (Vulkan timestamp queries, so host overhead is excluded), next to
// OpenBLAS sgemm on the same shape, then LeNet's convolutions (im2col + GEMM) next to the cpu
// plugin's. Prints tables; not a test.
//   vulkan_bench [sizes...]   (default 256 512 1024)
//   WEFT_BENCH_GEMM_VARIANTS=scalar,1x1,2x1  time these WEFT_VULKAN_GEMM settings (GEMM and conv)
//   WEFT_BENCH_NO_CONV=1                     skip the convolutions
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

#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

namespace {

using weft::Context;
using weft::Device;

void Check(weft_error* e, const char* what) {
  if (e == nullptr) return;
  std::fprintf(stderr, "%s: %s\n", what, std::string(weft::ErrorMessage(e)).c_str());
  weft::ReleaseError(e);
  std::exit(1);
}

// One op on a device: its kernel, attributes, shapes and random inputs.
struct OpRun {
  std::string op;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<std::vector<int64_t>> in;
  std::vector<int64_t> out;
};

int64_t Elements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

weft_tensor Tensor(Device& d, weft_device_ptr p, const std::vector<int64_t>& s) {
  return {sizeof(weft_tensor), p, 0, WEFT_DTYPE_FLOAT32, d.id(), static_cast<int32_t>(s.size()), s.data(), nullptr};
}

// Runs `r` on `d` `reps` times after a warm-up (pipeline creation); returns the median time in ms:
// between two timing events (Vulkan timestamps) where the device has them, else host wall time
// around compute + stream synchronisation. `out0` receives the output's first element.
double DeviceOpMs(Device& d, const OpRun& r, int reps, float* out0 = nullptr) {
  const weft::KernelInfo* ki = weft::internal::FindKernel(weft::Runtime::Get(), r.op, d.type(), weft::DType::kFloat32);
  if (ki == nullptr) {
    std::fprintf(stderr, "no %s kernel on %s\n", r.op.c_str(), d.type().c_str());
    std::exit(1);
  }
  std::vector<weft_shape> shapes;
  for (const auto& s : r.in) shapes.push_back(weft_shape{static_cast<int32_t>(s.size()), {}});
  shapes.push_back(weft_shape{static_cast<int32_t>(r.out.size()), {}});
  for (size_t i = 0; i <= r.in.size(); ++i) {
    const auto& s = i < r.in.size() ? r.in[i] : r.out;
    std::copy(s.begin(), s.end(), shapes[i].dims);
  }
  const std::vector<int32_t> dtypes(shapes.size(), WEFT_DTYPE_FLOAT32);
  std::vector<weft_kv> attrs;
  for (const auto& [k, v] : r.attrs) attrs.push_back({k.c_str(), v.c_str()});
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.kernel_data = ki->def->kernel_data;
  sa.op_name = r.op.c_str();
  sa.device = d.id();
  sa.num_attrs = static_cast<int32_t>(attrs.size());
  sa.attrs = attrs.data();
  sa.num_inputs = static_cast<int32_t>(r.in.size());
  sa.input_shapes = shapes.data();
  sa.input_dtypes = dtypes.data();
  sa.num_outputs = 1;
  sa.output_shapes = shapes.data() + r.in.size();
  sa.output_dtypes = dtypes.data();
  Check(ki->def->create_state(ki->plugin_state, &sa), "create_state");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<weft_device_ptr> bufs;
  std::vector<weft_tensor> ins;
  for (const auto& s : r.in) {
    std::vector<float> h(static_cast<size_t>(Elements(s)));
    for (float& v : h) v = u(rng);
    bufs.push_back(d.Allocate(h.size() * 4));
    d.CopyFromHost(bufs.back(), 0, h.data(), h.size() * 4);
    ins.push_back(Tensor(d, bufs.back(), s));
  }
  const weft_device_ptr outp = d.Allocate(static_cast<uint64_t>(Elements(r.out)) * 4);
  const weft_tensor outs[1] = {Tensor(d, outp, r.out)};
  const int64_t ws_dims[1] = {static_cast<int64_t>(sa.workspace_bytes)};
  const weft_device_ptr ws = sa.workspace_bytes > 0 ? d.Allocate(sa.workspace_bytes) : 0;
  weft_stream s = d.CreateStream();
  const bool timing = d.type() != "cpu";
  weft_event e0 = timing ? d.CreateEvent(WEFT_EVENT_TIMING) : nullptr;
  weft_event e1 = timing ? d.CreateEvent(WEFT_EVENT_TIMING) : nullptr;
  const int32_t req = WEFT_REQ_WRITE;
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.kernel_data = ki->def->kernel_data;
  ka.state = sa.state;
  ka.device = d.id();
  ka.num_inputs = static_cast<int32_t>(ins.size());
  ka.inputs = ins.data();
  ka.num_outputs = 1;
  ka.outputs = outs;
  ka.req = &req;
  ka.workspace = {sizeof(weft_tensor), ws, 0, WEFT_DTYPE_UINT8, d.id(), 1, ws_dims, nullptr};
  ka.stream = s;
  Check(ki->def->compute(ki->plugin_state, &ka), "compute");  // warm-up: pipeline creation
  d.SynchronizeStream(s);
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (timing) d.RecordEvent(e0, s);
    Check(ki->def->compute(ki->plugin_state, &ka), "compute");
    if (timing) {
      d.RecordEvent(e1, s);
      d.SynchronizeEvent(e1);
      ms.push_back(d.EventElapsedMs(e0, e1));
    } else {
      d.SynchronizeStream(s);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  if (out0 != nullptr) d.CopyToHost(out0, outp, 0, 4);
  if (timing) {
    d.DestroyEvent(e0);
    d.DestroyEvent(e1);
  }
  d.DestroyStream(s);
  for (weft_device_ptr b : bufs) d.Free(b);
  d.Free(outp);
  if (ws != 0) d.Free(ws);
  ki->def->destroy_state(ki->plugin_state, sa.state);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// FullyConnected (M x K) · (N x K)ᵀ without bias; spot-checks C[0][0] against the host.
double DeviceGemmMs(Device& d, int64_t m, int64_t n, int64_t k, int reps) {
  OpRun r{"FullyConnected", {{"num_hidden", std::to_string(n)}, {"no_bias", "True"}}, {{m, k}, {n, k}}, {m, n}};
  float c00 = 0;
  const double ms = DeviceOpMs(d, r, reps, &c00);
  // The inputs DeviceOpMs draws: the first K values of A and of B.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k));
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  double ref = 0;
  for (int64_t q = 0; q < k; ++q) ref += static_cast<double>(a[static_cast<size_t>(q)]) * b[static_cast<size_t>(q)];
  if (std::abs(ref - c00) > 1e-3 * (1 + std::abs(ref))) std::fprintf(stderr, "MISMATCH: %g vs %g\n", c00, ref);
  return ms;
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

// LeNet's convolutions (batch 100, train_mnist --network lenet): conv1 1->20 5x5 on 28x28,
// conv2 20->50 5x5 on 12x12; forward, on the Vulkan device and on the cpu plugin.
void ConvTable(Device& vk, const std::vector<std::string>& variants) {
  struct Conv {
    const char* name;
    int64_t n, c, h, w, f, k;
  };
  const Conv convs[] = {{"conv1", 100, 1, 28, 28, 20, 5}, {"conv2", 100, 20, 12, 12, 50, 5}};
  Device& cpu = weft::internal::GetDevice(weft::Runtime::Get(), Context::cpu(0));
  std::printf("\n%-8s %28s %10s %12s %12s %12s %12s\n", "conv", "shape", "gemm", "vulkan ms", "vulkan GF/s", "cpu ms",
              "cpu GF/s");
  for (const Conv& c : convs) {
    const int64_t oh = c.h - c.k + 1, ow = c.w - c.k + 1;
    const OpRun r{"Convolution",
                  {{"kernel", "(" + std::to_string(c.k) + ", " + std::to_string(c.k) + ")"},
                   {"num_filter", std::to_string(c.f)},
                   {"no_bias", "False"}},
                  {{c.n, c.c, c.h, c.w}, {c.f, c.c, c.k, c.k}, {c.f}},
                  {c.n, c.f, oh, ow}};
    const double flop = 2.0 * c.n * c.f * oh * ow * c.c * c.k * c.k;
    const double h = DeviceOpMs(cpu, r, 3);
    const std::string shape = std::to_string(c.n) + "x" + std::to_string(c.c) + "x" + std::to_string(c.h) + "x" +
                              std::to_string(c.w) + " * " + std::to_string(c.f) + "x" + std::to_string(c.k) + "x" +
                              std::to_string(c.k);
    for (const std::string& var : variants) {
      if (!var.empty()) setenv("WEFT_VULKAN_GEMM", var.c_str(), 1);
      const double v = DeviceOpMs(vk, r, 3);
      std::printf("%-8s %28s %10s %12.2f %12.2f %12.2f %12.2f\n", c.name, shape.c_str(),
                  var.empty() ? "default" : var.c_str(), v, flop / v / 1e6, h, flop / h / 1e6);
      unsetenv("WEFT_VULKAN_GEMM");
    }
  }
}

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {256, 512, 1024};
  weft::Runtime& rt = weft::Runtime::Get();
  if (rt.DeviceCount("vulkan") == 0) {
    const weft::Plugin* p = weft::internal::FindPlugin(rt, "vulkan");
    std::fprintf(stderr, "no Vulkan device: %s\n", p != nullptr ? p->device_note().c_str() : "plugin not loaded");
    return 1;
  }
  Device& d = weft::internal::GetDevice(rt, Context("vulkan", 0));
  std::printf("device: %s (%s)\n", d.properties().name.c_str(), d.properties().vendor.c_str());
  // Kernel variants, compared within one run (WEFT_VULKAN_GEMM, read at every dispatch):
  // gemm.comp, then gemm4.comp tiles of (4 R) x (4 C) per invocation.
  std::vector<std::string> variants = {""};
  if (const char* v = std::getenv("WEFT_BENCH_GEMM_VARIANTS")) {
    variants.clear();
    for (std::string list = v; !list.empty();) {
      const size_t comma = list.find(',');
      variants.push_back(list.substr(0, comma));
      list = comma == std::string::npos ? "" : list.substr(comma + 1);
    }
  }
  std::printf("%8s %10s %14s %14s %14s %14s\n", "M=N=K", "gemm", "vulkan ms", "vulkan GF/s", "openblas ms",
              "openblas GF/s");
  for (int64_t s : sizes) {
    const int reps = s >= 1024 ? 3 : 5;
    const double flop = 2.0 * static_cast<double>(s) * s * s;
    const double blas = BlasGemmMs(s, s, s, reps);
    for (const std::string& v : variants) {
      if (!v.empty()) setenv("WEFT_VULKAN_GEMM", v.c_str(), 1);
      const double vk = DeviceGemmMs(d, s, s, s, reps);
      std::printf("%8lld %10s %14.2f %14.2f %14.2f %14.2f\n", static_cast<long long>(s),
                  v.empty() ? "default" : v.c_str(), vk, flop / vk / 1e6, blas, flop / blas / 1e6);
    }
  }
  unsetenv("WEFT_VULKAN_GEMM");
  if (std::getenv("WEFT_BENCH_NO_CONV") == nullptr) ConvTable(d, variants);
  return 0;
}

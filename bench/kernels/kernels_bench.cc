// FullyConnected and Convolution (forward, backward) through the kernel C ABI, next to the raw
// library calls they wrap on the same shapes: OpenBLAS sgemm for FullyConnected, oneDNN
// primitives (same plain layouts) for Convolution, plus the im2col algorithm. Shapes: the MLP
// 784-128-64-10 and LeNet's two convolutions, batch 64 and 128. Threads: WEFT_CPU_MATH_THREADS
// (default 1) for both sides. Prints Google Benchmark's table, then GFLOP/s and kernel/raw.
// kinfer/ rows: FullyConnected's forward as an inference pass calls it (is_train 0, constant
// weight stamps: oneDNN's inner product on weights reordered once). softmax/: SoftmaxOutput's
// forward on the MNIST networks' 100x10 head and a 32x1000 ImageNet head.
// Also Activation (tanh, sigmoid) against plain libm loops, as elements/s in the table.
//   kernels_bench [--benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true]
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu_kernels.h"
#include "weft/sdk/cpp/standalone_host.hpp"
#include "weft/sdk/host.h"

namespace {

const weft_operator_api* Api() {
  static weft::sdk::StandaloneHost host;
  static const std::unique_ptr<weft::sdk::KernelTable> table = weft::cpu::MakeKernelTable(host.api());
  return table->Api();
}

void Check(weft_error* e, const char* what) {
  if (e) {
    std::fprintf(stderr, "%s: %s\n", what, weft::sdk::StandaloneHost::Take(e).c_str());
    std::exit(1);
  }
}

using Shape = std::vector<int64_t>;
int64_t Prod(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// One kernel state plus buffers for its operands; Run() calls compute once (req write).
class KernelRun {
 public:
  KernelRun(const std::string& op, const std::map<std::string, std::string>& attrs, const std::vector<Shape>& in,
            const std::vector<Shape>& out)
      : in_shapes_(in), out_shapes_(out) {
    for (int32_t i = 0; i < Api()->num_kernels; ++i)
      if (op == Api()->kernels[i]->op_name) def_ = Api()->kernels[i];
    if (!def_) std::exit(1);
    std::vector<weft_kv> kv;
    for (const auto& [k, v] : attrs) kv.push_back({k.c_str(), v.c_str()});
    std::vector<weft_shape> is = Shapes(in), os = Shapes(out);
    std::vector<int32_t> it(in.size(), WEFT_DTYPE_FLOAT32), ot(out.size(), WEFT_DTYPE_FLOAT32);
    weft_kernel_state_args a{};
    a.struct_size = sizeof(a);
    a.kernel_data = def_->kernel_data;
    a.op_name = def_->op_name;
    a.num_attrs = static_cast<int32_t>(kv.size());
    a.attrs = kv.data();
    a.num_inputs = static_cast<int32_t>(is.size());
    a.input_shapes = is.data();
    a.input_dtypes = it.data();
    a.num_outputs = static_cast<int32_t>(os.size());
    a.output_shapes = os.data();
    a.output_dtypes = ot.data();
    Check(def_->create_state(nullptr, &a), op.c_str());
    state_ = a.state;
    ws_.resize(a.workspace_bytes / 4 + 16);
    for (const Shape& s : in) bufs_.emplace_back(static_cast<size_t>(Prod(s)), 0.01f);
    for (const Shape& s : out) bufs_.emplace_back(static_cast<size_t>(Prod(s)), 0.0f);
    for (size_t i = 0; i < bufs_.size(); ++i) {
      const Shape& s = i < in.size() ? in_shapes_[i] : out_shapes_[i - in.size()];
      weft_tensor t{};
      t.struct_size = sizeof(t);
      t.data = reinterpret_cast<uintptr_t>(bufs_[i].data());
      t.ndim = static_cast<int32_t>(s.size());
      t.shape = s.data();
      tensors_.push_back(t);
    }
    req_.assign(out.size(), WEFT_REQ_WRITE);
    args_.struct_size = sizeof(args_);
    args_.kernel_data = def_->kernel_data;
    args_.state = state_;
    args_.num_inputs = static_cast<int32_t>(in.size());
    args_.inputs = tensors_.data();
    args_.num_outputs = static_cast<int32_t>(out.size());
    args_.outputs = tensors_.data() + in.size();
    args_.req = req_.data();
    args_.workspace.data = reinterpret_cast<uintptr_t>(ws_.data());
    args_.is_train = 1;
  }
  ~KernelRun() { def_->destroy_state(nullptr, state_); }
  void Run() { Check(def_->compute(nullptr, &args_), def_->op_name); }
  /// Calls as an inference pass makes them: is_train 0, and inputs whose content stamps stay
  /// constant (what lets the cpu FullyConnected keep its weights reordered for oneDNN).
  void SetInference() {
    args_.is_train = 0;
    stamps_.assign(in_shapes_.size(), 1);
    args_.input_stamps = stamps_.data();
  }
  /// Operand i's buffer (inputs first, then outputs).
  std::vector<float>& buffer(size_t i) { return bufs_[i]; }

 private:
  static std::vector<weft_shape> Shapes(const std::vector<Shape>& v) {
    std::vector<weft_shape> out;
    for (const Shape& s : v) {
      weft_shape w{};
      w.ndim = static_cast<int32_t>(s.size());
      for (size_t i = 0; i < s.size(); ++i) w.dims[i] = s[i];
      out.push_back(w);
    }
    return out;
  }
  const weft_kernel_def* def_ = nullptr;
  void* state_ = nullptr;
  std::vector<Shape> in_shapes_, out_shapes_;
  std::vector<std::vector<float>> bufs_;
  std::vector<weft_tensor> tensors_;
  std::vector<int32_t> req_;
  std::vector<uint64_t> stamps_;
  std::vector<float> ws_;
  weft_kernel_args args_{};
};

void SetFlops(benchmark::State& st, double flops) {
  st.counters["GFLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// ------------------------------------------------------------------ FullyConnected
struct Fc {
  int64_t n, k, h;
};

// The call a FullyConnected row times: the training forward (OpenBLAS), the backward, or the
// inference forward (oneDNN's inner product on weights reordered once, as predict_mnist runs it).
enum class FcPass { kTrain, kBackward, kInfer };

void BM_FcKernel(benchmark::State& st, Fc f, FcPass pass) {
  std::map<std::string, std::string> a = {{"num_hidden", std::to_string(f.h)}};
  std::unique_ptr<KernelRun> r;
  if (pass != FcPass::kBackward)
    r = std::make_unique<KernelRun>("FullyConnected", a, std::vector<Shape>{{f.n, f.k}, {f.h, f.k}, {f.h}},
                                    std::vector<Shape>{{f.n, f.h}});
  else
    r = std::make_unique<KernelRun>("_backward_FullyConnected", a,
                                    std::vector<Shape>{{f.n, f.h}, {f.n, f.k}, {f.h, f.k}, {f.h}},
                                    std::vector<Shape>{{f.n, f.k}, {f.h, f.k}, {f.h}});
  if (pass == FcPass::kInfer) r->SetInference();
  for (auto _ : st) r->Run();
  SetFlops(st, 2.0 * f.n * f.k * f.h * (pass == FcPass::kBackward ? 2 : 1));
}

void BM_FcRaw(benchmark::State& st, Fc f, bool backward) {
  std::vector<float> x(f.n * f.k, 0.01f), w(f.h * f.k, 0.01f), y(f.n * f.h, 0.01f), gx(f.n * f.k), gw(f.h * f.k);
  const int n = static_cast<int>(f.n), k = static_cast<int>(f.k), h = static_cast<int>(f.h);
  for (auto _ : st) {
    if (!backward) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, h, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), h);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k, h, 1.0f, y.data(), h, w.data(), k, 0.0f, gx.data(),
                  k);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, k, n, 1.0f, y.data(), h, x.data(), k, 0.0f, gw.data(), k);
    }
  }
  SetFlops(st, 2.0 * f.n * f.k * f.h * (backward ? 2 : 1));
}

// Fixed cost of one kernel call through the C ABI: a 1x1x1 FullyConnected without bias.
void BM_CallOverhead(benchmark::State& st) {
  KernelRun r("FullyConnected", {{"num_hidden", "1"}, {"no_bias", "True"}}, {{1, 1}, {1, 1}}, {{1, 1}});
  for (auto _ : st) r.Run();
}

// ------------------------------------------------------------------ Activation
// LeNet's first activation at batch 100 (100x20x24x24 floats, values spread over [-4, 4]): the
// kernel through the C ABI against a plain loop over libm's tanhf / expf.
const Shape kActShape = {100, 20, 24, 24};

void FillSpread(std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = -4.0f + 8.0f * static_cast<float>(i % 1000) / 1000.0f;
}

void BM_ActKernel(benchmark::State& st, std::string act) {
  KernelRun r("Activation", {{"act_type", act}}, {kActShape}, {kActShape});
  FillSpread(r.buffer(0));
  for (auto _ : st) r.Run();
  st.SetItemsProcessed(st.iterations() * Prod(kActShape));
}

void BM_ActLibm(benchmark::State& st, std::string act) {
  std::vector<float> x(static_cast<size_t>(Prod(kActShape))), y(x.size());
  FillSpread(x);
  const bool tanh = act == "tanh";
  for (auto _ : st) {
    if (tanh)
      for (size_t i = 0; i < x.size(); ++i) y[i] = std::tanh(x[i]);
    else
      for (size_t i = 0; i < x.size(); ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
    benchmark::DoNotOptimize(y.data());
  }
  st.SetItemsProcessed(st.iterations() * Prod(kActShape));
}

// Max pooling, forward and backward: LeNet's first (2x2, stride 2, on conv1's output) and ResNet's
// stem (3x3, stride 2, pad 1, at batch 8).
struct Pool {
  std::map<std::string, std::string> attrs;
  Shape x, y;
};

void BM_PoolKernel(benchmark::State& st, Pool p, bool backward) {
  std::unique_ptr<KernelRun> r;
  if (!backward)
    r = std::make_unique<KernelRun>("Pooling", p.attrs, std::vector<Shape>{p.x}, std::vector<Shape>{p.y});
  else
    r = std::make_unique<KernelRun>("_backward_Pooling", p.attrs, std::vector<Shape>{p.y, p.x, p.y},
                                    std::vector<Shape>{p.x});
  FillSpread(r->buffer(backward ? 1 : 0));
  for (auto _ : st) r->Run();
  st.SetItemsProcessed(st.iterations() * Prod(p.x));
}

// ------------------------------------------------------------------ SoftmaxOutput
// The MNIST networks' head at batch 100 (100 rows of 10 classes): per-row overhead, not
// arithmetic, is what this measures; and an ImageNet classifier's at batch 32 (32 x 1000), where
// the row is long. Forward only; labels are 0.
void BM_SoftmaxOutputKernel(benchmark::State& st, int64_t rows, int64_t classes) {
  KernelRun r("SoftmaxOutput", {}, {{rows, classes}, {rows}}, {{rows, classes}});
  FillSpread(r.buffer(0));
  std::fill(r.buffer(1).begin(), r.buffer(1).end(), 0.0f);
  for (auto _ : st) r.Run();
  st.SetItemsProcessed(st.iterations() * rows);
}

// ------------------------------------------------------------------ Convolution
struct Conv {
  int64_t n, c, hw, f, k;
  int64_t o() const { return hw - k + 1; }
  double Flops() const { return 2.0 * n * f * o() * o() * c * k * k; }
};

// algo "" = the kernel's own choice per pass; "im2col" / "dnnl" force one.
void BM_ConvKernel(benchmark::State& st, Conv cv, bool backward, const char* algo) {
  if (*algo) setenv("WEFT_CPU_CONV_ALGO", algo, 1);
  std::map<std::string, std::string> a = {{"kernel", "(" + std::to_string(cv.k) + ", " + std::to_string(cv.k) + ")"},
                                          {"num_filter", std::to_string(cv.f)}};
  Shape x = {cv.n, cv.c, cv.hw, cv.hw}, w = {cv.f, cv.c, cv.k, cv.k}, b = {cv.f}, y = {cv.n, cv.f, cv.o(), cv.o()};
  std::unique_ptr<KernelRun> r;
  if (!backward)
    r = std::make_unique<KernelRun>("Convolution", a, std::vector<Shape>{x, w, b}, std::vector<Shape>{y});
  else
    r = std::make_unique<KernelRun>("_backward_Convolution", a, std::vector<Shape>{y, x, w, b},
                                    std::vector<Shape>{x, w, b});
  unsetenv("WEFT_CPU_CONV_ALGO");
  for (auto _ : st) r->Run();
  SetFlops(st, cv.Flops() * (backward ? 2 : 1));
}

void BM_ConvRawDnnl(benchmark::State& st, Conv cv, bool backward) {
  using namespace dnnl;
  using tag = memory::format_tag;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc xm({cv.n, cv.c, cv.hw, cv.hw}, memory::data_type::f32, tag::nchw);
  memory::desc wm({cv.f, cv.c, cv.k, cv.k}, memory::data_type::f32, tag::oihw);
  memory::desc bm({cv.f}, memory::data_type::f32, tag::x);
  memory::desc ym({cv.n, cv.f, cv.o(), cv.o()}, memory::data_type::f32, tag::nchw);
  memory x(xm, eng), w(wm, eng), b(bm, eng), y(ym, eng), gx(xm, eng), gw(wm, eng), gb(bm, eng);
  convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct, xm, wm, bm, ym, {1, 1},
                               {0, 0}, {0, 0});
  convolution_forward::primitive_desc fpd(fd, eng);
  convolution_forward fwd(fpd);
  convolution_backward_data bwd_d(convolution_backward_data::primitive_desc(
      convolution_backward_data::desc(algorithm::convolution_direct, xm, wm, ym, {1, 1}, {0, 0}, {0, 0}), eng, fpd));
  convolution_backward_weights bwd_w(convolution_backward_weights::primitive_desc(
      convolution_backward_weights::desc(algorithm::convolution_direct, xm, wm, bm, ym, {1, 1}, {0, 0}, {0, 0}), eng,
      fpd));
  for (auto _ : st) {
    if (!backward) {
      fwd.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}});
    } else {
      bwd_d.execute(s, {{DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, gx}});
      bwd_w.execute(s,
                    {{DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_WEIGHTS, gw}, {DNNL_ARG_DIFF_BIAS, gb}});
    }
    s.wait();
  }
  SetFlops(st, cv.Flops() * (backward ? 2 : 1));
}

// Collects real time per benchmark name to print kernel/raw ratios after the normal table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      auto it = r.counters.find("GFLOP/s");
      if (it != r.counters.end()) gflops_[r.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintRatios() const {
    std::printf("\n%-30s %8s %8s %8s %10s %10s\n", "case", "kernel", "raw", "ratio", "k(oneDNN)", "k(im2col)");
    for (const auto& [name, g] : gflops_) {
      if (name.rfind("kernel/", 0) != 0) continue;
      std::string rest = name.substr(7);
      auto raw = gflops_.find("raw/" + rest);
      auto im = gflops_.find("im2col/" + rest);
      auto kd = gflops_.find("kdnnl/" + rest);
      double rg = raw == gflops_.end() ? 0 : raw->second;
      char ims[32] = "-", kds[32] = "-";
      if (im != gflops_.end()) std::snprintf(ims, sizeof(ims), "%.2f", im->second / 1e9);
      if (kd != gflops_.end()) std::snprintf(kds, sizeof(kds), "%.2f", kd->second / 1e9);
      std::printf("%-30s %8.2f %8.2f %7.0f%% %10s %10s\n", rest.c_str(), g / 1e9, rg / 1e9,
                  rg > 0 ? 100.0 * g / rg : 0.0, kds, ims);
    }
    std::printf(
        "(GFLOP/s from the calling thread's CPU time; kernel = the op's default algorithm through the C ABI;\n"
        " raw = OpenBLAS sgemm (FullyConnected, without the bias work) or oneDNN primitives (Convolution) on\n"
        " the same shape; ratio = kernel / raw; k(oneDNN), k(im2col) = the kernel forced to one algorithm;\n"
        " %d math thread(s))\n",
        weft::cpu::MathThreads());
  }

 private:
  std::map<std::string, double> gflops_;
};

}  // namespace

int main(int argc, char** argv) {
  Api();
  omp_set_num_threads(weft::cpu::MathThreads());  // the raw oneDNN side gets the kernels' cap
  for (int64_t n : {64, 128}) {
    const std::string b = "/N" + std::to_string(n);
    for (Fc f : {Fc{n, 784, 128}, Fc{n, 128, 64}, Fc{n, 64, 10}})
      for (bool bw : {false, true}) {
        std::string name =
            std::string(bw ? "fc_bwd" : "fc_fwd") + "_" + std::to_string(f.k) + "x" + std::to_string(f.h) + b;
        benchmark::RegisterBenchmark(("kernel/" + name).c_str(), BM_FcKernel, f,
                                     bw ? FcPass::kBackward : FcPass::kTrain);
        benchmark::RegisterBenchmark(("raw/" + name).c_str(), BM_FcRaw, f, bw);
        if (!bw) benchmark::RegisterBenchmark(("kinfer/" + name).c_str(), BM_FcKernel, f, FcPass::kInfer);
      }
    for (Conv c : {Conv{n, 1, 28, 20, 5}, Conv{n, 20, 12, 50, 5}})
      for (bool bw : {false, true}) {
        std::string name =
            std::string(bw ? "conv_bwd" : "conv_fwd") + "_c" + std::to_string(c.c) + "f" + std::to_string(c.f) + b;
        benchmark::RegisterBenchmark(("kernel/" + name).c_str(), BM_ConvKernel, c, bw, "");
        benchmark::RegisterBenchmark(("kdnnl/" + name).c_str(), BM_ConvKernel, c, bw, "dnnl");
        benchmark::RegisterBenchmark(("im2col/" + name).c_str(), BM_ConvKernel, c, bw, "im2col");
        benchmark::RegisterBenchmark(("raw/" + name).c_str(), BM_ConvRawDnnl, c, bw);
      }
  }
  for (const char* act : {"tanh", "sigmoid"}) {
    benchmark::RegisterBenchmark((std::string("act/kernel_") + act + "/100x20x24x24").c_str(), BM_ActKernel, act);
    benchmark::RegisterBenchmark((std::string("act/libm_") + act + "/100x20x24x24").c_str(), BM_ActLibm, act);
  }
  const Pool lenet{{{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}},
                   kActShape,
                   {kActShape[0], kActShape[1], kActShape[2] / 2, kActShape[3] / 2}};
  const Pool resnet{{{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"pool_type", "max"}},
                    {8, 64, 112, 112},
                    {8, 64, 56, 56}};
  benchmark::RegisterBenchmark("softmax/SoftmaxOutput_fwd/100x10", BM_SoftmaxOutputKernel, 100, 10);
  benchmark::RegisterBenchmark("softmax/SoftmaxOutput_fwd/32x1000", BM_SoftmaxOutputKernel, 32, 1000);
  benchmark::RegisterBenchmark("pool/max2x2_fwd/100x20x24x24", BM_PoolKernel, lenet, false);
  benchmark::RegisterBenchmark("pool/max2x2_bwd/100x20x24x24", BM_PoolKernel, lenet, true);
  benchmark::RegisterBenchmark("pool/max3x3s2p1_fwd/8x64x112x112", BM_PoolKernel, resnet, false);
  benchmark::RegisterBenchmark("pool/max3x3s2p1_bwd/8x64x112x112", BM_PoolKernel, resnet, true);
  benchmark::RegisterBenchmark("overhead/fc_1x1x1_call", BM_CallOverhead);
  benchmark::Initialize(&argc, argv);
  RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  rep.PrintRatios();
  benchmark::Shutdown();
  return 0;
}

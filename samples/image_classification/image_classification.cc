// image_classification — classifies an image with any MXNet checkpoint or Gluon zoo export
// (<prefix>-symbol.json + <prefix>-%04d.params, written by MXNet's save_checkpoint or a hybridized
// block's export, or by weft), and measures inference speed as MXNet's benchmark_score.py does.
//
//   image_classification --model resnet18_v1 --image cat.jpg [--synset synset.txt] [--top-k 5]
//   image_classification --model resnet18_v1 --benchmark --batch-sizes 1,2,32 --device vulkan
//
// Preprocessing (what Gluon's model zoo expects): decode to RGB, resize the shorter edge to
// input_size * 256 / 224, centre-crop input_size x input_size, then per channel
// (pixel - mean) / std with ImageNet's mean (123.675, 116.28, 103.53) and std (58.395, 57.12,
// 57.375) on the 0..255 scale (--mean / --std change them; --std 1,1,1 for MXNet's older
// mean-subtracted models). The data input is the symbol's argument the params file does not hold
// ("data" in zoo exports). The output is read as class scores: a softmax is applied unless they
// already are probabilities (non-negative, summing to 1: the graph ends in a softmax);
// --no-softmax prints the raw output.
//
// --benchmark binds one executor per batch size on random input, runs --warmup forward passes,
// then times --runs passes (waiting for the output each time) and prints, per batch size,
// "batch size B: X ms per batch, Y images/s (median of N runs; fastest Z ms; cpu C ms)": the
// fastest pass and the median CPU time of the process per pass help comparisons on a busy
// machine, where other processes slow the median (C also counts threads that spin while waiting).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/executor.h"
#include "weft/image.h"
#include "weft/model.h"

namespace {

using namespace weft;

struct Options {
  std::string model, image, synset, device = "cpu";
  int epoch = 0, device_id = 0, input_size = 224, top_k = 5, runs = 20, warmup = 3;
  std::vector<float> mean{123.675f, 116.28f, 103.53f}, std_dev{58.395f, 57.12f, 57.375f};
  std::vector<int> batch_sizes{1, 2, 32};
  bool benchmark = false, no_softmax = false;
};

// The argument the params file does not hold (the image input).
std::string DataName(const Checkpoint& ck) {
  std::vector<std::string> free_args;
  for (const std::string& a : ck.symbol.ListArguments())
    if (!ck.arg_params.count(a)) free_args.push_back(a);
  if (free_args.size() != 1) {
    std::string names;
    for (const std::string& a : free_args) names += (names.empty() ? "" : ", ") + a;
    throw std::runtime_error("the model has " + std::to_string(free_args.size()) + " inputs without parameters (" +
                             names + "); image_classification needs exactly one");
  }
  return free_args[0];
}

std::unique_ptr<Executor> Bind(const Checkpoint& ck, const std::string& data, const Context& ctx, int batch, int size) {
  std::unique_ptr<Executor> ex =
      Executor::SimpleBind(ck.symbol, ctx, {{data, Shape(batch, 3, size, size)}}, /*grad_req=*/"null");
  ex->CopyParamsFrom(ck.arg_params, ck.aux_params, /*allow_extra_params=*/true);
  return ex;
}

// (3, size, size) float32 planes from an image file, preprocessed as described at the top.
std::vector<float> Preprocess(const Options& o) {
  std::ifstream f(o.image, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open the image '" + o.image + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const Image img = DecodeImage(bytes, 3);
  const int shorter = o.input_size * 256 / 224;
  const double scale = static_cast<double>(shorter) / std::min(img.width, img.height);
  const int w = std::max(o.input_size, static_cast<int>(std::lround(img.width * scale)));
  const int h = std::max(o.input_size, static_cast<int>(std::lround(img.height * scale)));
  const Image r = ResizeImage(img, w, h);
  const int x0 = (w - o.input_size) / 2, y0 = (h - o.input_size) / 2;
  const size_t plane = static_cast<size_t>(o.input_size) * o.input_size;
  std::vector<float> out(3 * plane);
  for (int y = 0; y < o.input_size; ++y)
    for (int x = 0; x < o.input_size; ++x)
      for (int c = 0; c < 3; ++c)
        out[c * plane + static_cast<size_t>(y) * o.input_size + x] =
            (static_cast<float>(r.row(y0 + y)[(x0 + x) * 3 + c]) - o.mean[c]) / o.std_dev[c];
  return out;
}

// Whether the scores already are probabilities (the graph ends in a softmax): non-negative, sum 1.
bool IsDistribution(const std::vector<float>& p) {
  double sum = 0;
  for (float v : p) {
    if (!(v >= 0)) return false;
    sum += v;
  }
  return std::fabs(sum - 1.0) < 1e-3;
}

void Classify(const Options& o, const Checkpoint& ck, const Context& ctx) {
  const std::string data = DataName(ck);
  std::unique_ptr<Executor> ex = Bind(ck, data, ctx, 1, o.input_size);
  ex->arg_dict().at(data).SyncCopyFromCPU(Preprocess(o));
  ex->Forward(false);
  std::vector<float> p;
  ex->outputs.at(0).SyncCopyToCPU(&p);
  if (!o.no_softmax && !IsDistribution(p)) {
    const float top = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (float& v : p) sum += v = std::exp(v - top);
    for (float& v : p) v = static_cast<float>(v / sum);
  }
  std::vector<std::string> names;
  if (!o.synset.empty()) {
    std::ifstream s(o.synset);
    if (!s) throw std::runtime_error("cannot open the synset file '" + o.synset + "'");
    for (std::string line; std::getline(s, line);) names.push_back(line);
  }
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min(order.size(), static_cast<size_t>(o.top_k));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](size_t a, size_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  for (size_t i = 0; i < k; ++i) {
    const size_t c = order[i];
    std::printf("probability=%.6f, class=%zu%s%s\n", p[c], c, c < names.size() ? " " : "",
                c < names.size() ? names[c].c_str() : "");
  }
}

// CPU time of every thread of the process, ms: with one math thread, the work a pass did, which
// other processes on the machine do not inflate as they do the wall time.
double ProcessCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

void Benchmark(const Options& o, const Checkpoint& ck, const Context& ctx) {
  const std::string data = DataName(ck);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::printf("model %s on %s, input 3x%dx%d\n", o.model.c_str(), ctx.ToString().c_str(), o.input_size, o.input_size);
  for (int batch : o.batch_sizes) {
    std::unique_ptr<Executor> ex = Bind(ck, data, ctx, batch, o.input_size);
    std::vector<float> x(static_cast<size_t>(batch) * 3 * o.input_size * o.input_size);
    for (float& v : x) v = u(rng);
    ex->arg_dict().at(data).SyncCopyFromCPU(x);
    std::vector<double> ms, cpu_ms;
    for (int i = 0; i < o.warmup + o.runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = ProcessCpuMs();
      ex->Forward(false);
      ex->outputs.at(0).WaitToRead();
      if (i < o.warmup) continue;
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      cpu_ms.push_back(ProcessCpuMs() - c0);
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    const double med = ms[ms.size() / 2];
    std::printf("batch size %d: %.3f ms per batch, %.1f images/s (median of %d runs; fastest %.3f ms; cpu %.3f ms)\n",
                batch, med, 1000.0 * batch / med, o.runs, ms.front(), cpu_ms[cpu_ms.size() / 2]);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Classify an image with an MXNet checkpoint or zoo export, or benchmark its inference"};
  Options o;
  app.add_option("--model", o.model, "checkpoint prefix: <model>-symbol.json, <model>-%04d.params")->required();
  app.add_option("--epoch", o.epoch, "checkpoint epoch (the %04d in the params file name)");
  app.add_option("--image", o.image, "JPEG or PNG file to classify");
  app.add_option("--synset", o.synset, "class names, one per line, in output order");
  app.add_option("--top-k", o.top_k, "classes to print")->check(CLI::PositiveNumber);
  app.add_option("--input-size", o.input_size, "height and width of the network input")->check(CLI::PositiveNumber);
  app.add_option("--mean", o.mean, "per-channel mean (R,G,B) on the 0..255 scale")->delimiter(',')->expected(3);
  app.add_option("--std", o.std_dev, "per-channel standard deviation (R,G,B) on the 0..255 scale")
      ->delimiter(',')
      ->expected(3);
  app.add_flag("--no-softmax", o.no_softmax, "print the raw outputs instead of softmax probabilities");
  app.add_option("--device", o.device, "device type of a loaded plugin (cpu, vulkan, cuda, ...)");
  app.add_option("--device-id", o.device_id, "device index")->check(CLI::NonNegativeNumber);
  app.add_flag("--benchmark", o.benchmark, "time forward passes on random input instead of classifying");
  app.add_option("--batch-sizes", o.batch_sizes, "batch sizes to benchmark")->delimiter(',');
  app.add_option("--runs", o.runs, "timed forward passes per batch size")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed forward passes first")->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    if (!o.benchmark && o.image.empty()) throw std::runtime_error("give --image FILE to classify, or --benchmark");
    for (float s : o.std_dev)
      if (!(s > 0)) throw std::runtime_error("--std values must be positive, got " + std::to_string(s));
    const Context ctx(o.device, o.device_id);
    const Checkpoint ck = LoadCheckpoint(o.model, o.epoch);
    if (o.benchmark)
      Benchmark(o, ck, ctx);
    else
      Classify(o, ck, ctx);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "image_classification: %s\n", e.what());
    return 1;
  }
}

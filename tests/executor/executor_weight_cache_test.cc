// Kernels may cache a transformed copy of a constant input, keyed on the input's content stamp
// (SDK weft_kernel_args.input_stamps; the cpu plugin keeps FullyConnected weights reordered for
// oneDNN from the second call with unchanged weights on). Every way of changing the weights
// between forwards must show in the next output.
#include <cmath>
#include <random>

#include "test_util.h"
#include "weft/imperative.h"

namespace weft {
namespace {

using test::Values;

const Context kCpu = Context::cpu();

std::vector<float> RandomValues(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// y = x · Wᵀ + b in double.
std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                             int64_t n, int64_t k, int64_t h) {
  std::vector<float> y(static_cast<size_t>(n * h));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double acc = b[static_cast<size_t>(j)];
      for (int64_t q = 0; q < k; ++q)
        acc += static_cast<double>(x[static_cast<size_t>(i * k + q)]) * w[static_cast<size_t>(j * k + q)];
      y[static_cast<size_t>(i * h + j)] = static_cast<float>(acc);
    }
  return y;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    norm += static_cast<double>(want[i]) * want[i];
  }
  EXPECT_LE(err / norm, 1e-10) << what;
}

TEST(ExecutorWeightCache, ChangedWeightsShowInTheNextForward) {
  const int64_t n = 100, k = 784, h = 128;  // the MLP's first layer: large enough for oneDNN
  std::mt19937 rng(7);
  Symbol fc = Operator("FullyConnected")
                  .SetParam("num_hidden", h)
                  .SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  std::vector<float> xv = RandomValues(rng, n * k), wv = RandomValues(rng, h * k), bv = RandomValues(rng, h);
  NDArray x(xv, Shape(n, k), kCpu), w(wv, Shape(h, k), kCpu), b(bv, Shape(h), kCpu);
  std::unique_ptr<Executor> e(
      fc.Bind(kCpu, {x, w, b}, {NDArray(), NDArray(), NDArray()}, {kNullOp, kNullOp, kNullOp}, {}));
  for (int call = 0; call < 3; ++call) {  // first call: remember; second: reorder; third: cached
    e->Forward(false);
    ExpectClose(Values(e->outputs[0]), Reference(xv, wv, bv, n, k, h), "constant weights");
  }
  // New data with the same weights: the cached weights serve it.
  xv = RandomValues(rng, n * k);
  x.SyncCopyFromCPU(xv);
  e->Forward(false);
  ExpectClose(Values(e->outputs[0]), Reference(xv, wv, bv, n, k, h), "new data");
  // Weights rewritten from the host (SetParams, a loaded checkpoint).
  wv = RandomValues(rng, h * k);
  w.SyncCopyFromCPU(wv);
  for (int call = 0; call < 3; ++call) {
    e->Forward(false);
    ExpectClose(Values(e->outputs[0]), Reference(xv, wv, bv, n, k, h), "weights copied in");
  }
  // Weights changed by an operation on the engine (an optimizer update) and by a copy from
  // another array.
  w *= 0.5f;
  for (float& v : wv) v *= 0.5f;
  e->Forward(false);
  ExpectClose(Values(e->outputs[0]), Reference(xv, wv, bv, n, k, h), "weights scaled");
  e->Forward(false);
  wv = RandomValues(rng, h * k);
  NDArray(wv, Shape(h, k), kCpu).CopyTo(&w);
  e->Forward(false);
  ExpectClose(Values(e->outputs[0]), Reference(xv, wv, bv, n, k, h), "weights copied from an array");
}

TEST(ExecutorWeightCache, StampsChangeWithEveryCompletedWrite) {
  NDArray a(Shape(4), kCpu), b(Shape(4), kCpu);
  const uint64_t a0 = a.var()->stamp(), b0 = b.var()->stamp();
  EXPECT_NE(a0, 0u);
  EXPECT_NE(a0, b0);
  a = 1.0f;
  a.WaitToRead();
  const uint64_t a1 = a.var()->stamp();
  EXPECT_NE(a1, a0);
  EXPECT_NE(a1, b0);
  (void)Values(a);  // reads leave the stamp alone
  EXPECT_EQ(a.var()->stamp(), a1);
}

}  // namespace
}  // namespace weft

// Kernels that split their loops over the thread plan's OpenMP team (parallel.h) once a loop
// touches kParallelWork elements, checked against serial references at such sizes: the other
// kernel tests use small shapes, which stay on one thread. On a one-core machine the same loops
// run serially and the checks still apply.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "nn_test_util.h"

namespace wtest {
namespace {

// LeNet's conv1 output at batch 8: 92 160 elements, above kParallelWork (65 536).
const std::vector<int64_t> kBig = {8, 20, 24, 24};
const std::vector<int64_t> kPooled = {8, 20, 12, 12};

TEST(ParallelKernels, TanhForwardAndBackward) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const Attrs a = {{"act_type", "tanh"}};
  Buf x = Buf::F(kBig, Random(rng, Prod(kBig), -3.0f, 3.0f));
  Buf gy = Buf::F(kBig, Random(rng, Prod(kBig)));
  auto y = RunOp("Activation", a, {x}, {kBig});
  std::vector<float> ref(static_cast<size_t>(Prod(kBig))), gref(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] = static_cast<float>(std::tanh(static_cast<double>(x.as<float>()[i])));
    gref[i] = gy.as<float>()[i] * (1.0f - y[0].as<float>()[i] * y[0].as<float>()[i]);
  }
  EXPECT_LE(Nmse(ref, y[0].floats()), 1e-7);
  auto gx = RunOp("_backward_Activation", a, {gy, y[0]}, {kBig});
  EXPECT_LE(Nmse(gref, gx[0].floats()), 1e-10);
  CheckReqModes("Activation", a, {x}, {kBig}, {}, true, 1, 0);
  CheckReqModes("_backward_Activation", a, {gy, y[0]}, {kBig});
}

TEST(ParallelKernels, MaxPool2x2ForwardAndBackward) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const Attrs a = {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}};
  // Distinct values: the maximum of each window is unique, so the gradient's target is too.
  std::vector<float> v(static_cast<size_t>(Prod(kBig)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1e-3f * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), rng);
  Buf x = Buf::F(kBig, v), gy = Buf::F(kPooled, Random(rng, Prod(kPooled)));
  auto y = RunOp("Pooling", a, {x}, {kPooled});
  std::vector<float> yref(static_cast<size_t>(Prod(kPooled))), gref(v.size(), 0.0f);
  const int64_t planes = kBig[0] * kBig[1], h = kBig[2], w = kBig[3], oh = kPooled[2], ow = kPooled[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t best = (p * h + 2 * oy) * w + 2 * ox;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const int64_t at = (p * h + 2 * oy + i) * w + 2 * ox + j;
            if (v[static_cast<size_t>(at)] > v[static_cast<size_t>(best)]) best = at;
          }
        const int64_t o = (p * oh + oy) * ow + ox;
        yref[static_cast<size_t>(o)] = v[static_cast<size_t>(best)];
        gref[static_cast<size_t>(best)] = gy.as<float>()[o];
      }
  EXPECT_EQ(yref, y[0].floats());
  auto gx = RunOp("_backward_Pooling", a, {gy, x, y[0]}, {kBig});
  EXPECT_EQ(gref, gx[0].floats());
  CheckReqModes("Pooling", a, {x}, {kPooled});
  CheckReqModes("_backward_Pooling", a, {gy, x, y[0]}, {kBig});
}

// LeNet conv1's backward runs im2col by default (few input channels); its samples are split over
// the team with per-thread partial weight gradients. oneDNN's backward is the reference.
TEST(ParallelKernels, Im2colConvolutionBackwardMatchesOneDnn) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const std::vector<int64_t> data = {8, 1, 28, 28}, wshape = {20, 1, 5, 5}, oshape = kBig;
  const Attrs a = {{"kernel", "(5, 5)"}, {"num_filter", "20"}};
  std::vector<Buf> in = {Buf::F(oshape, Random(rng, Prod(oshape))), Buf::F(data, Random(rng, Prod(data))),
                         Buf::F(wshape, Random(rng, Prod(wshape))), Buf::F({20})};
  const std::vector<std::vector<int64_t>> grads = {data, wshape, {20}};
  std::vector<std::vector<Buf>> res;
  for (const char* algo : {"im2col", "dnnl"}) {
    setenv("WEFT_CPU_CONV_ALGO", algo, 1);
    res.push_back(RunOp("_backward_Convolution", a, in, grads));
    if (std::string(algo) == "im2col") CheckReqModes("_backward_Convolution", a, in, grads);
  }
  unsetenv("WEFT_CPU_CONV_ALGO");
  for (size_t i = 0; i < grads.size(); ++i) EXPECT_LE(Nmse(res[1][i].floats(), res[0][i].floats()), 1e-10) << i;
}

// Products of at least 2^24 multiply-adds are split over the team in blocks of C's rows or
// columns (nn_common.cc Sgemm): a 784-64 layer at batch 400 (20 M each) takes both ways (the
// forward splits rows, the weight and data gradients columns).
TEST(ParallelKernels, FullyConnectedSplitProductsMatchReference) {
  std::mt19937 rng(static_cast<unsigned>(TestSeed()));
  const int64_t n = 400, k = 784, h = 64;
  const Attrs a = {{"num_hidden", std::to_string(h)}};
  Buf x = Buf::F({n, k}, Random(rng, n * k)), w = Buf::F({h, k}, Random(rng, h * k));
  Buf b = Buf::F({h}, Random(rng, h)), gy = Buf::F({n, h}, Random(rng, n * h));
  std::vector<float> y(static_cast<size_t>(n * h)), gx(static_cast<size_t>(n * k)), gw(static_cast<size_t>(h * k));
  const float *xv = x.as<float>(), *wv = w.as<float>(), *gv = gy.as<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double acc = b.as<float>()[j];
      for (int64_t q = 0; q < k; ++q) acc += static_cast<double>(xv[i * k + q]) * wv[j * k + q];
      y[static_cast<size_t>(i * h + j)] = static_cast<float>(acc);
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t q = 0; q < k; ++q) {
      double acc = 0;
      for (int64_t j = 0; j < h; ++j) acc += static_cast<double>(gv[i * h + j]) * wv[j * k + q];
      gx[static_cast<size_t>(i * k + q)] = static_cast<float>(acc);
    }
  for (int64_t j = 0; j < h; ++j)
    for (int64_t q = 0; q < k; ++q) {
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(gv[i * h + j]) * xv[i * k + q];
      gw[static_cast<size_t>(j * k + q)] = static_cast<float>(acc);
    }
  auto out = RunOp("FullyConnected", a, {x, w, b}, {{n, h}});
  EXPECT_LE(Nmse(y, out[0].floats()), 1e-10);
  auto grads = RunOp("_backward_FullyConnected", a, {gy, x, w, b}, {{n, k}, {h, k}, {h}});
  EXPECT_LE(Nmse(gx, grads[0].floats()), 1e-10);
  EXPECT_LE(Nmse(gw, grads[1].floats()), 1e-10);
  CheckReqModes("FullyConnected", a, {x, w, b}, {{n, h}});
}

}  // namespace
}  // namespace wtest

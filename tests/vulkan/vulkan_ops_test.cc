// Vulkan kernels at shapes the conformance suite's small odd-offset cases do not reach: the vec4
// GEMM (shaders/gemm4.comp, taken for 16-byte aligned operands with extents that are multiples
// of 4), Convolution through im2col + GEMM (LeNet's shapes, forward and backward), Deconvolution
// and full reductions, each against the cpu plugin. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ndarray_read.h"
#include "require.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/runtime.h"

namespace weft {
namespace {

using weft::test::RandomValues;
using weft::test::Read;

// Σ(a−b)² / Σa².
double Nmse(const std::vector<float>& ref, const std::vector<float>& got) {
  if (ref.size() != got.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (static_cast<double>(ref[i]) - got[i]) * (static_cast<double>(ref[i]) - got[i]);
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return den > 0 ? num / den : num;
}

// Runs `op` on cpu and on vulkan with the same random inputs; returns the worst NMSE over the
// outputs. Backward ops (no definition) need their output shapes in `outs`.
double CompareWithCpu(const std::string& op, const std::vector<std::pair<std::string, std::string>>& params,
                      const std::vector<Shape>& shapes, const std::vector<Shape>& outs = {}) {
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < shapes.size(); ++i)
    values.push_back(RandomValues(static_cast<size_t>(shapes[i].Size()), 7 + i));
  std::vector<std::vector<float>> results[2];
  const Context ctxs[2] = {Context::cpu(0), Context("vulkan", 0)};
  for (int d = 0; d < 2; ++d) {
    ImperativeCall call;
    call.op = op;
    for (const auto& [k, v] : params) call.params[k] = v;
    for (size_t i = 0; i < shapes.size(); ++i) call.inputs.emplace_back(values[i], shapes[i], ctxs[d]);
    std::vector<NDArray> out;
    for (const Shape& o : outs) out.emplace_back(std::vector<float>(static_cast<size_t>(o.Size()), 0.0f), o, ctxs[d]);
    Invoke(call, &out);
    for (const NDArray& o : out) results[d].push_back(Read(o));
  }
  double worst = 0;
  EXPECT_EQ(results[0].size(), results[1].size());
  for (size_t o = 0; o < results[0].size() && o < results[1].size(); ++o)
    worst = std::max(worst, Nmse(results[0][o], results[1][o]));
  return worst;
}

class VulkanOps : public testing::Test {
 protected:
  void SetUp() override {
    if (Runtime::Get().DeviceCount("vulkan") == 0)
      WEFT_SKIP_UNLESS_REQUIRED() << "no Vulkan device (install mesa-vulkan-drivers)";
  }
};

TEST_F(VulkanOps, Gemm4TilesMatchCpu) {
  // FullyConnected (tb): M, N not multiples of the 32 x 32 workgroup tile; K a multiple of 4.
  EXPECT_LE(CompareWithCpu("FullyConnected", {{"num_hidden", "44"}}, {Shape{37, 64}, Shape{44, 64}, Shape{44}}), 1e-7);
  // dot without transposes (vec4 along N) and with transpose_a (vec4 along M, K tail of 3).
  EXPECT_LE(CompareWithCpu("dot", {}, {Shape{20, 36}, Shape{36, 40}}), 1e-7);
  EXPECT_LE(CompareWithCpu("dot", {{"transpose_a", "True"}}, {Shape{7, 24}, Shape{7, 16}}), 1e-7);
  EXPECT_LE(CompareWithCpu("batch_dot", {{"transpose_b", "True"}}, {Shape{3, 8, 12}, Shape{3, 20, 12}}), 1e-7);
}

// Dropout's gradient applies the mask only in training (MXNet's executor.backward(is_train=...)):
// on both devices, with is_train = 0 the out-gradient passes unchanged, with 1 it is multiplied
// by the mask (the last input).
TEST_F(VulkanOps, DropoutBackwardFollowsIsTrain) {
  const Shape s{300};
  EXPECT_LE(CompareWithCpu("_backward_Dropout", {{"p", "0.5"}}, {s, s}, {s}), 1e-12);
  const std::vector<float> gy = RandomValues(300, 1), mask = RandomValues(300, 2);
  for (bool train : {false, true}) {
    ImperativeCall call;
    call.op = "_backward_Dropout";
    call.is_train = train;
    call.params["p"] = "0.5";
    call.inputs = {NDArray(gy, s, Context("vulkan", 0)), NDArray(mask, s, Context("vulkan", 0))};
    std::vector<NDArray> out{NDArray(std::vector<float>(300, 0.0f), s, Context("vulkan", 0))};
    Invoke(call, &out);
    const std::vector<float> got = Read(out[0]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], train ? gy[i] * mask[i] : gy[i]) << i;
  }
}

// M, N >= 128 take the 16 x 16 tile with K steps of 8 (gemm4's default there): edge tiles in M
// and N, K not a multiple of 8 (a zeroed block past K), and a K tail of 3 with transpose_a. Then
// other tile settings (WEFT_VULKAN_GEMM, read at every dispatch) on the transposed cases.
TEST_F(VulkanOps, Gemm4LargeTilesMatchCpu) {
  auto cases = [] {
    EXPECT_LE(CompareWithCpu("FullyConnected", {{"num_hidden", "132"}}, {Shape{130, 12}, Shape{132, 12}, Shape{132}}),
              1e-7);
    EXPECT_LE(CompareWithCpu("dot", {{"transpose_a", "True"}}, {Shape{7, 132}, Shape{7, 136}}), 1e-7);
    EXPECT_LE(
        CompareWithCpu("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}}, {Shape{20, 140}, Shape{132, 20}}),
        1e-7);
  };
  cases();
  for (const char* tiles : {"1x1", "3x2k3", "2x4k4"}) {
    SCOPED_TRACE(tiles);
    setenv("WEFT_VULKAN_GEMM", tiles, 1);
    cases();
  }
  unsetenv("WEFT_VULKAN_GEMM");
}

TEST_F(VulkanOps, LeNetConvolutionsMatchCpu) {
  // conv1 (K = 25, padded to 28) and conv2 (K = 500) of LeNet, batch 4.
  EXPECT_LE(CompareWithCpu("Convolution", {{"kernel", "(5, 5)"}, {"num_filter", "20"}},
                           {Shape{4, 1, 28, 28}, Shape{20, 1, 5, 5}, Shape{20}}),
            1e-7);
  EXPECT_LE(CompareWithCpu("Convolution", {{"kernel", "(5, 5)"}, {"num_filter", "50"}},
                           {Shape{4, 20, 12, 12}, Shape{50, 20, 5, 5}, Shape{50}}),
            1e-7);
  // Its backward: out_grad, data, weight, bias -> data, weight and bias gradients.
  EXPECT_LE(CompareWithCpu("_backward_Convolution", {{"kernel", "(5, 5)"}, {"num_filter", "50"}},
                           {Shape{4, 50, 8, 8}, Shape{4, 20, 12, 12}, Shape{50, 20, 5, 5}, Shape{50}},
                           {Shape{4, 20, 12, 12}, Shape{50, 20, 5, 5}, Shape{50}}),
            1e-7);
}

// Deconvolution runs the convolution's passes with roles swapped; at these extents (multiples of
// 4) its GEMMs take gemm4. Forward with bias, then every gradient.
TEST_F(VulkanOps, DeconvolutionMatchesCpu) {
  const std::vector<std::pair<std::string, std::string>> attrs = {
      {"kernel", "(4, 4)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}, {"no_bias", "False"}};
  EXPECT_LE(CompareWithCpu("Deconvolution", attrs, {Shape{2, 16, 6, 6}, Shape{16, 8, 4, 4}, Shape{8}}), 1e-7);
  EXPECT_LE(CompareWithCpu("_backward_Deconvolution", attrs,
                           {Shape{2, 8, 12, 12}, Shape{2, 16, 6, 6}, Shape{16, 8, 4, 4}, Shape{8}},
                           {Shape{2, 16, 6, 6}, Shape{16, 8, 4, 4}, Shape{8}}),
            1e-7);
}

TEST_F(VulkanOps, ReductionsOverEveryAxis) {
  for (const char* op : {"sum", "mean", "max"}) {
    SCOPED_TRACE(op);
    EXPECT_LE(CompareWithCpu(op, {}, {Shape{3, 5}}), 1e-7);
    EXPECT_LE(CompareWithCpu(op, {}, {Shape{300, 70}}), 1e-7);
  }
}

// Element-wise kernels split tensors larger than the device's storage-buffer range (128 MiB on
// lavapipe) into one dispatch per chunk; WEFT_VULKAN_MAX_BINDING_BYTES lowers the range so small
// tensors take that path (4096 bytes: chunks of 1008 elements, the last one partial). A kernel
// without the split refuses such a tensor, naming the limit.
TEST_F(VulkanOps, ElementwiseOpsSplitTensorsBeyondTheBufferRange) {
  setenv("WEFT_VULKAN_MAX_BINDING_BYTES", "4096", 1);
  const Shape big{50, 61};
  EXPECT_LE(CompareWithCpu("elemwise_mul", {}, {big, big}), 1e-14);
  EXPECT_LE(CompareWithCpu("Activation", {{"act_type", "sigmoid"}}, {big}), 1e-14);
  EXPECT_LE(CompareWithCpu("_backward_Activation", {{"act_type", "tanh"}}, {big, big}, {big}), 1e-14);
  EXPECT_LE(CompareWithCpu("_mul_scalar", {{"scalar", "3"}}, {big}), 1e-14);
  EXPECT_LE(CompareWithCpu("sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}}, {big, big, big}), 1e-14);
  std::string error;
  try {
    const Context vk("vulkan", 0);
    ImperativeCall call;
    call.op = "softmax";
    call.inputs.emplace_back(std::vector<float>(static_cast<size_t>(big.Size()), 1.0f), big, vk);
    std::vector<NDArray> out;
    Invoke(call, &out);
    for (const NDArray& o : out) Read(o);
    NDArray::WaitAll();
  } catch (const Error& e) {
    error = e.what();
  }
  unsetenv("WEFT_VULKAN_MAX_BINDING_BYTES");
  EXPECT_NE(error.find("exceeds maxStorageBufferRange 4096"), std::string::npos) << error;
  EXPECT_LE(CompareWithCpu("sum", {}, {Shape{3, 5}}), 1e-7);  // the device keeps working
}

// A label outside [0, classes) fails the backward on vulkan as on cpu (a device-side report
// turned into the stream's error), not a silent zero gradient.
TEST_F(VulkanOps, SoftmaxOutputBadLabelIsAnError) {
  for (const Context& ctx : {Context::cpu(0), Context("vulkan", 0)}) {
    SCOPED_TRACE(ctx.ToString());
    ImperativeCall call;
    call.op = "_backward_SoftmaxOutput";
    call.inputs = {
        NDArray(std::vector<float>(6, 0.0f), Shape{2, 3}, ctx), NDArray(std::vector<float>(6, 0.0f), Shape{2, 3}, ctx),
        NDArray(std::vector<float>{1, 5}, Shape{2}, ctx), NDArray(std::vector<float>(6, 1.0f / 3), Shape{2, 3}, ctx)};
    std::vector<NDArray> out = {NDArray(std::vector<float>(6, 0.0f), Shape{2, 3}, ctx),
                                NDArray(std::vector<float>(2, 0.0f), Shape{2}, ctx)};
    std::string error;
    // The vulkan report arrives as the stream's sticky error once the batch has run: the read
    // or the engine's next wait rethrows it.
    try {
      Invoke(call, &out);
      Read(out[0]);
      NDArray::WaitAll();
    } catch (const Error& e) {
      error = e.what();
    }
    EXPECT_NE(error.find("outside [0, 3)"), std::string::npos) << error;
    // The error was reported once; the device keeps working.
    EXPECT_LE(CompareWithCpu("sum", {}, {Shape{3, 5}}), 1e-7);
  }
}

}  // namespace
}  // namespace weft

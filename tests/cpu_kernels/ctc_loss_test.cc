// CTCLoss and _backward_ctc_loss (plugins/cpu/kernels/nn_ctc_loss.cc) against MXNet 1.9.1's
// results (data/mxnet_ctc_loss.json, written by gen_ctc_fixtures.py), in float32 and float64 and
// under every req mode, and the cases MXNet's fixtures cannot hold (bad labels and lengths,
// sequences too short for their label).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tensor_test_util.h"

namespace ttest {
namespace {

Buf FromJson(const nlohmann::json& j, int32_t dtype) {
  return Make(dtype, j.at("shape").get<Shape>(), j.at("values").get<std::vector<double>>());
}

nlohmann::json LoadCases() {
  const std::string path = std::string(WEFT_CPU_KERNELS_DATA) + "/mxnet_ctc_loss.json";
  std::ifstream f(path);
  if (!f) {
    ADD_FAILURE() << "cannot read " << path;
    return nlohmann::json::array();
  }
  return nlohmann::json::parse(f).at("cases");
}

// The forward's hidden output is d loss / d data; MXNet's fixture holds d(Σ head·loss)/d data.
Buf Unscaled(const Buf& grad, const Buf& head) {
  Buf g = grad;
  const int64_t batch = head.size(), classes = grad.shape[2];
  for (int64_t i = 0; i < g.size(); ++i) Set(g, i, Get(grad, i) / Get(head, (i / classes) % batch));
  return g;
}

TEST(CTCLoss, MatchesMXNetForwardAndBackward) {
  const nlohmann::json cases = LoadCases();
  ASSERT_GE(cases.size(), 7u);
  for (int32_t dtype : {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64}) {
    for (const nlohmann::json& c : cases) {
      SCOPED_TRACE(c.at("name").get<std::string>() + (dtype == WEFT_DTYPE_FLOAT64 ? " float64" : " float32"));
      const Attrs attrs = c.at("attrs").get<Attrs>();
      std::vector<Buf> in;
      for (const nlohmann::json& j : c.at("inputs")) in.push_back(FromJson(j, dtype));
      const Buf head = FromJson(c.at("head"), dtype), loss = FromJson(c.at("loss"), dtype);
      const Buf grad = FromJson(c.at("grad"), dtype);
      // MXNet computes in float32, weft in double: 1e-6 relative apart at most.
      ExpectOp("CTCLoss", attrs, in, {loss, Unscaled(grad, head)}, 1e-10);

      std::vector<Buf> fwd{Buf::Of(dtype, loss.shape), Buf::Of(dtype, grad.shape)};
      ASSERT_EQ(RunKernel("CTCLoss", attrs, in, fwd), "");
      std::vector<Buf> zeros_in;  // the gradients of label and the lengths
      for (size_t i = 1; i < in.size(); ++i) zeros_in.push_back(Buf::Of(dtype, in[i].shape));
      std::vector<Buf> want{grad};
      want.insert(want.end(), zeros_in.begin(), zeros_in.end());
      ExpectOp("_backward_ctc_loss", attrs, {head, Buf::Of(dtype, grad.shape), fwd[0], fwd[1]}, want, 1e-10);
    }
  }
}

std::string ForwardError(const Attrs& attrs, const std::vector<Buf>& in, int64_t frames, int64_t classes) {
  const int64_t batch = in[1].shape[0];
  std::vector<Buf> out{Buf::F({batch}), Buf::F({frames, batch, classes})};
  return RunKernel("CTCLoss", attrs, in, out);
}

TEST(CTCLoss, RefusesBadLabelsAndLengthsNamingThePosition) {
  const Buf data = Make(WEFT_DTYPE_FLOAT32, {4, 2, 3});
  EXPECT_NE(ForwardError({}, {data, Make(WEFT_DTYPE_FLOAT32, {2, 2}, {1, 2, 2, 3})}, 4, 3).find("label[1, 1] is 3"),
            std::string::npos);
  EXPECT_NE(ForwardError({}, {data, Make(WEFT_DTYPE_FLOAT32, {2, 2}, {1, 1.5, 2, 0})}, 4, 3).find("label[0, 1] is 1.5"),
            std::string::npos);
  EXPECT_NE(ForwardError({{"blank_label", "last"}}, {data, Make(WEFT_DTYPE_FLOAT32, {2, 2}, {-2, 0, 1, 0})}, 4, 3)
                .find("label[0, 0] is -2"),
            std::string::npos);
  const Buf label = Make(WEFT_DTYPE_FLOAT32, {2, 2}, {1, 2, 2, 0});
  EXPECT_NE(ForwardError({{"use_data_lengths", "True"}}, {data, label, Make(WEFT_DTYPE_FLOAT32, {2}, {4, 5})}, 4, 3)
                .find("data_lengths[1] is 5"),
            std::string::npos);
  EXPECT_NE(ForwardError({{"use_label_lengths", "True"}}, {data, label, Make(WEFT_DTYPE_FLOAT32, {2}, {3, 1})}, 4, 3)
                .find("label_lengths[0] is 3"),
            std::string::npos);
  // Shapes are refused when the kernel is made.
  EXPECT_NE(ForwardError({}, {Make(WEFT_DTYPE_FLOAT32, {4, 6}), label}, 4, 3).find("data must be"), std::string::npos);
}

// A sequence shorter than its label needs (3 labels with a repeat need 4 frames) has loss 0, as
// in MXNet, and a zero gradient; frames past data_lengths get zeros too.
TEST(CTCLoss, SequenceTooShortForItsLabelHasLossZero) {
  std::mt19937 rng(3);
  const Buf data = Make(WEFT_DTYPE_FLOAT32, {5, 2, 3}, UniformF(rng, 30));
  const Buf label = Make(WEFT_DTYPE_FLOAT32, {2, 3}, {1, 1, 2, 1, 1, 2});
  std::vector<Buf> out{Buf::F({2}), Buf::F({5, 2, 3})};
  ASSERT_EQ(
      RunKernel("CTCLoss", {{"use_data_lengths", "True"}}, {data, label, Make(WEFT_DTYPE_FLOAT32, {2}, {3, 4})}, out),
      "");
  EXPECT_EQ(Get(out[0], 0), 0.0);
  EXPECT_GT(Get(out[0], 1), 0.0);
  for (int64_t t = 0; t < 5; ++t) {
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(Get(out[1], (t * 2 + 0) * 3 + k), 0.0) << "sequence 0, frame " << t;
      if (t >= 4) {
        EXPECT_EQ(Get(out[1], (t * 2 + 1) * 3 + k), 0.0) << "sequence 1, frame " << t;
      }
    }
  }
}

}  // namespace
}  // namespace ttest

// Module with two data inputs and two labels (issue 32): MXNet's forward with lists of data and
// labels, and update_metric pairing label i with output i. Each head has its own task, so both
// accuracies rise only if both inputs and both labels reach the right places.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "weft/module.h"
#include "weft/operator.h"

namespace weft {
namespace {

constexpr int kMultiBatch = 32;

// "colour" (batch, 6) -> which of 3 pairs of features is largest (head "shape_cls", label "l1");
// "size" (batch, 4) -> whether its sum is positive (head "size_cls", label "l2"). Both inputs go
// through one shared hidden layer, so each head must learn to use its own input.
Symbol TwoHeads() {
  Symbol both = Operator("Concat")
                    .SetParam("num_args", 2)
                    .SetParam("dim", 1)
                    .SetInput("arg0", Symbol::Variable("colour"))
                    .SetInput("arg1", Symbol::Variable("size"))
                    .CreateSymbol("both");
  Symbol h = Operator("FullyConnected").SetParam("num_hidden", 32).SetInput("data", both).CreateSymbol("fc");
  h = Operator("Activation").SetParam("act_type", "relu").SetInput("data", h).CreateSymbol("relu");
  auto head = [&](const std::string& name, int classes, const std::string& label) {
    Symbol logits =
        Operator("FullyConnected").SetParam("num_hidden", classes).SetInput("data", h).CreateSymbol(name + "_fc");
    return Operator("SoftmaxOutput")
        .SetInput("data", logits)
        .SetInput("label", Symbol::Variable(label))
        .CreateSymbol(name);
  };
  return Symbol::Group({head("shape_cls", 3, "l1"), head("size_cls", 2, "l2")});
}

struct MultiBatch {
  std::vector<NDArray> data, labels;
};

MultiBatch MakeMultiBatch(std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> colour(kMultiBatch * 6), size(kMultiBatch * 4), l1(kMultiBatch), l2(kMultiBatch);
  for (int b = 0; b < kMultiBatch; ++b) {
    float best = -1e9f;
    for (int p = 0; p < 3; ++p) {
      const float a = n(rng), c = n(rng);
      colour[b * 6 + 2 * p] = a;
      colour[b * 6 + 2 * p + 1] = c;
      if (a + c > best) best = a + c, l1[b] = static_cast<float>(p);
    }
    float sum = 0;
    for (int i = 0; i < 4; ++i) sum += size[b * 4 + i] = n(rng);
    l2[b] = sum > 0 ? 1.0f : 0.0f;
  }
  Context cpu = Context::cpu(0);
  return {{NDArray(colour, Shape(kMultiBatch, 6), cpu), NDArray(size, Shape(kMultiBatch, 4), cpu)},
          {NDArray(l1, Shape(kMultiBatch), cpu), NDArray(l2, Shape(kMultiBatch), cpu)}};
}

TEST(ModuleMultiInput, TwoInputsAndTwoLabelsTrain) {
  Module m(TwoHeads(), {"colour", "size"}, {"l1", "l2"});
  m.Bind({{"colour", Shape(kMultiBatch, 6)}, {"size", Shape(kMultiBatch, 4)}},
         {{"l1", Shape(kMultiBatch)}, {"l2", Shape(kMultiBatch)}});
  Xavier init;
  m.InitParams(init);
  auto opt = OptimizerRegistry::Create("sgd");
  opt->SetParam("lr", 0.2)->SetParam("momentum", 0.9)->SetParam("rescale_grad", 1.0 / kMultiBatch);
  m.InitOptimizer("local", std::move(opt));
  std::mt19937 rng(7);
  for (int step = 0; step < 400; ++step) {
    MultiBatch b = MakeMultiBatch(rng);
    m.Forward(b.data, b.labels, true);
    m.Backward();
    m.Update();
  }
  // Each head scored on its own label, and both together through the vector UpdateMetric (chance:
  // 1/3 and 1/2; both reach about 0.86 here).
  Accuracy head1, head2, both;
  std::mt19937 val(8);
  for (int i = 0; i < 20; ++i) {
    MultiBatch b = MakeMultiBatch(val);
    m.Forward(b.data, {}, false);
    const std::vector<NDArray> out = m.GetOutputs();
    ASSERT_EQ(out.size(), 2u);
    head1.Update(b.labels[0], out[0]);
    head2.Update(b.labels[1], out[1]);
    m.UpdateMetric(both, b.labels);
  }
  std::printf("validation accuracy: head 1 %.4f, head 2 %.4f, both through UpdateMetric %.4f\n", head1.Get(),
              head2.Get(), both.Get());
  EXPECT_GT(head1.Get(), 0.75f) << "the head on the first input and label";
  EXPECT_GT(head2.Get(), 0.75f) << "the head on the second input and label";
  EXPECT_NEAR(both.Get(), (head1.Get() + head2.Get()) / 2, 1e-6) << "label i is scored against output i";
}

TEST(ModuleMultiInput, RefusesWrongCountsAndTheOneInputForms) {
  Module m(TwoHeads(), {"colour", "size"}, {"l1", "l2"});
  m.Bind({{"colour", Shape(kMultiBatch, 6)}, {"size", Shape(kMultiBatch, 4)}},
         {{"l1", Shape(kMultiBatch)}, {"l2", Shape(kMultiBatch)}});
  Xavier init;
  m.InitParams(init);
  std::mt19937 rng(1);
  MultiBatch b = MakeMultiBatch(rng);
  EXPECT_THROW(m.Forward({b.data[0]}, b.labels, false), Error);
  EXPECT_THROW(m.Forward(b.data, {b.labels[0]}, false), Error);
  DataBatch one;
  one.data = b.data[0];
  try {
    m.Forward(one, false);
    FAIL() << "a DataBatch fed a two-input module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use Forward(data, labels, is_train)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Module(TwoHeads(), {}, {"l1", "l2"}), Error);
}

}  // namespace
}  // namespace weft

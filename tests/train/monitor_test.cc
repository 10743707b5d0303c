// Monitor (issue 32): MXNet's mx.monitor.Monitor semantics on a small network: which Tic calls
// record, what names (re.match patterns, sorting), the default statistic against a host
// computation, and the printed lines.
#include <gtest/gtest.h>

#include <cmath>

#include "weft/imperative.h"
#include "weft/module.h"
#include "weft/monitor.h"
#include "weft/operator.h"

namespace weft {
namespace {

// fc1 (8 hidden) -> relu -> fc2 (3) -> SoftmaxOutput, bound for a batch of 4 rows of 5.
Module MakeModule() {
  Symbol data = Symbol::Variable("data");
  Symbol h = Operator("FullyConnected").SetParam("num_hidden", 8).SetInput("data", data).CreateSymbol("fc1");
  h = Operator("Activation").SetParam("act_type", "relu").SetInput("data", h).CreateSymbol("relu1");
  h = Operator("FullyConnected").SetParam("num_hidden", 3).SetInput("data", h).CreateSymbol("fc2");
  Symbol out = Operator("SoftmaxOutput")
                   .SetInput("data", h)
                   .SetInput("label", Symbol::Variable("softmax_label"))
                   .CreateSymbol("softmax");
  Module m(out);
  m.Bind({{"data", Shape(4, 5)}}, {{"softmax_label", Shape(4)}});
  Xavier init;
  m.InitParams(init);
  return m;
}

DataBatch Batch() {
  std::vector<float> x(20), y{0, 1, 2, 1};
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
  DataBatch b;
  b.data = NDArray(x, Shape(4, 5), Context::cpu(0));
  b.label = NDArray(y, Shape(4), Context::cpu(0));
  return b;
}

double HostNormStat(const NDArray& a) {
  std::vector<float> v;
  a.SyncCopyToCPU(&v);
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return std::sqrt(sum) / std::sqrt(static_cast<double>(v.size()));
}

TEST(Monitor, RecordsEveryIntervalthBatchWithMXNetsSteps) {
  Module m = MakeModule();
  Monitor mon(2);
  m.InstallMonitor(mon);
  std::vector<size_t> counts;
  std::vector<int> steps;
  for (int i = 0; i < 4; ++i) {
    mon.Tic();
    m.Forward(Batch(), false);
    std::vector<MonitorStat> r = mon.Toc();
    counts.push_back(r.size());
    steps.push_back(r.empty() ? 0 : r.front().step);
  }
  // Tic 1 and 3 arm (step 0 and 2 are multiples of 2); records carry the step after the Tic.
  EXPECT_EQ(counts[1], 0u);
  EXPECT_EQ(counts[3], 0u);
  EXPECT_GT(counts[0], 0u);
  EXPECT_EQ(counts[0], counts[2]);
  EXPECT_EQ(steps[0], 1);
  EXPECT_EQ(steps[2], 3);
}

TEST(Monitor, DefaultStatIsTheNormOverSqrtSizeOfEachValue) {
  Module m = MakeModule();
  Monitor mon(1);
  m.InstallMonitor(mon);
  mon.Tic();
  m.Forward(Batch(), false);
  const std::vector<MonitorStat> r = mon.Toc();
  std::map<std::string, std::string> by_name;
  for (const MonitorStat& s : r) by_name[s.name] = s.value;
  // Forward outputs, then the arguments (ListArguments order) added by Toc.
  ASSERT_TRUE(by_name.count("fc1_output")) << "recorded: " << r.size();
  ASSERT_TRUE(by_name.count("softmax_output"));
  const auto args = m.exec_group().executor(0).arg_dict();
  for (const std::string name : {"data", "fc1_weight", "fc1_bias", "fc2_weight"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_NEAR(std::stod(by_name[name]), HostNormStat(args.at(name)), 1e-5) << name;
    EXPECT_EQ(by_name[name].back(), '\t') << "MXNet ends each value with a tab";
  }
  const NDArray out = m.exec_group().executor(0).outputs[0];
  EXPECT_NEAR(std::stod(by_name["softmax_output"]), HostNormStat(out), 1e-5);
  EXPECT_EQ(r.back().name, "softmax_label") << "the arguments come last, in ListArguments order";
}

TEST(Monitor, PatternMatchesFromTheStartAndSortOrdersByName) {
  Module m = MakeModule();
  Monitor weights(1, nullptr, ".*weight", /*sort=*/true);
  m.InstallMonitor(weights);
  weights.Tic();
  m.Forward(Batch(), false);
  std::vector<MonitorStat> r = weights.Toc();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "fc1_weight");
  EXPECT_EQ(r[1].name, "fc2_weight");

  // Python's re.match anchors at the start only: "weight" matches no name, "fc2" matches fc2_*.
  Monitor none(1, nullptr, "weight");
  m.InstallMonitor(none);
  none.Tic();
  m.Forward(Batch(), false);
  EXPECT_TRUE(none.Toc().empty());
  Monitor fc2(1, nullptr, "fc2", true);
  m.InstallMonitor(fc2);
  fc2.Tic();
  m.Forward(Batch(), false);
  std::vector<std::string> names;
  for (const MonitorStat& s : fc2.Toc()) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc2_bias", "fc2_output", "fc2_weight"}));
  EXPECT_THROW(Monitor(0), Error);
  EXPECT_THROW(Monitor(1, nullptr, "fc[2"), Error);
}

TEST(Monitor, TocPrintWritesMXNetsLines) {
  Module m = MakeModule();
  Monitor mon(
      1, [](const NDArray& a) { return InvokeOne("sum", {a}); }, "fc1_bias");
  m.InstallMonitor(mon);
  mon.Tic();
  m.Forward(Batch(), false);
  testing::internal::CaptureStderr();
  mon.TocPrint();
  const std::string printed = testing::internal::GetCapturedStderr();
  // 'Batch: {:7d} {:30s} {:s}' of (1, "fc1_bias", "<sum>\t"); Xavier leaves biases at 0, which
  // MXNet prints as numpy does, "0.0" (the line is MXNet 1.9.1's for this network).
  EXPECT_EQ(printed, "Batch:       1 fc1_bias                       0.0\t\n");
}

}  // namespace
}  // namespace weft

// Data parallelism: slices by work load; per-device gradients add up to the full-batch gradient.
#include "weft/executor_group.h"
#include "mlp_util.h"

namespace weft {
namespace {

TEST(ExecutorGroup, SplitInputSliceFollowsMxnet) {
  auto s = SplitInputSlice(10, {1, 1, 1});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (std::pair<size_t, size_t>{0, 3}));
  EXPECT_EQ(s[1], (std::pair<size_t, size_t>{3, 6}));
  EXPECT_EQ(s[2], (std::pair<size_t, size_t>{6, 10}));
  // round(0.5) is 0 for both, the last takes the row: device 0 is empty (MXNet raises too).
  std::string m = test::ErrorOf([] { SplitInputSlice(1, {1, 1}); });
  EXPECT_NE(m.find("device 0"), std::string::npos) << m;
  // Python 3's round() halves to even: 10 rows over 4 equal loads are 2.5 each -> 2, 2, 2, 2 + 2.
  auto h = SplitInputSlice(10, {1, 1, 1, 1});
  EXPECT_EQ(h[0], (std::pair<size_t, size_t>{0, 2}));
  EXPECT_EQ(h[3], (std::pair<size_t, size_t>{6, 10}));
}

TEST(ExecutorGroup, DeviceGradientsSumToFullBatchGradient) {
  const Context cpu = Context::cpu();
  Symbol net = test::Mlp();
  std::map<std::string, Shape> shapes = {{"data", Shape{8, 10}}, {"softmax_label", Shape{8}}};
  DataParallelExecutorGroup m(net, {cpu, cpu}, shapes, {}, {1, 3});
  ASSERT_EQ(m.slices()[0], (std::pair<size_t, size_t>{0, 2}));
  auto full =
      Executor::SimpleBind(net, cpu, {{"data", Shape{8, 10}}}, "write", {{"data", "null"}, {"softmax_label", "null"}});
  std::map<std::string, NDArray> params;
  uint32_t seed = 3;
  for (const std::string& p : m.param_names()) {
    NDArray a = full->arg_dict().at(p);
    a.SyncCopyFromCPU(test::Pseudo(a.Size(), seed++));
    params[p] = a;
  }
  m.SetParams(params, {});
  NDArray data(test::Pseudo(80, 99), Shape{8, 10}, cpu);
  NDArray label({0, 1, 2, 3, 3, 2, 1, 0}, Shape{8}, cpu);
  m.LoadDataBatch({{"data", data}, {"softmax_label", label}});
  m.Forward(true);
  m.Backward();
  full->CopyParamsFrom({{"data", data}, {"softmax_label", label}});
  full->Forward(true);
  full->Backward();
  for (size_t p = 0; p < m.param_names().size(); ++p) {
    std::vector<float> a = test::Values(m.grad_arrays()[p][0]), b = test::Values(m.grad_arrays()[p][1]);
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    test::ExpectNear(a, test::Values(full->grad_dict().at(m.param_names()[p])), 1e-5f);
  }
  std::vector<float> out0 = test::Values(m.outputs(0)[0]), all = test::Values(full->outputs[0]);
  test::ExpectNear(out0, std::vector<float>(all.begin(), all.begin() + 8));
}

}  // namespace
}  // namespace weft

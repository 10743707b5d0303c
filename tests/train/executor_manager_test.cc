// DataParallelExecutorManager (issue 32; the seed mxnet.executor_manager-1.1.0.txt): a batch
// split over two devices gives the gradients of the whole batch on one device (summed over the
// devices), the names are checked against the symbol, and set/copy of parameters round-trips.
#include <gtest/gtest.h>

#include "ndarray_read.h"
#include "weft/executor_manager.h"
#include "weft/ndarray_iter.h"
#include "weft/operator.h"

namespace weft {
namespace {

Symbol Mlp() {
  Symbol h = Operator("FullyConnected")
                 .SetParam("num_hidden", 6)
                 .SetInput("data", Symbol::Variable("data"))
                 .CreateSymbol("fc1");
  h = Operator("Activation").SetParam("act_type", "tanh").SetInput("data", h).CreateSymbol("act1");
  h = Operator("FullyConnected").SetParam("num_hidden", 3).SetInput("data", h).CreateSymbol("fc2");
  return Operator("SoftmaxOutput")
      .SetInput("data", h)
      .SetInput("label", Symbol::Variable("softmax_label"))
      .CreateSymbol("softmax");
}

using test::RandomValues;

TEST(DataParallelExecutorManager, TwoDevicesGiveTheWholeBatchsGradients) {
  const Symbol net = Mlp();
  std::vector<float> y(8);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 3);
  NDArrayIter it(NDArray(RandomValues(8 * 5, 1), Shape(8, 5), Context::cpu(0)), NDArray(y, Shape(8), Context::cpu(0)),
                 {.batch_size = 8});
  const std::vector<std::string> params{"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"};
  DataParallelExecutorManager m(net, {Context::cpu(0), Context::cpu(1)}, it, net.ListArguments(), params,
                                net.ListAuxiliaryStates());
  std::map<std::string, NDArray> args, none;
  const std::vector<Shape> shapes{Shape(6, 5), Shape(6), Shape(3, 6), Shape(3)};
  for (size_t p = 0; p < params.size(); ++p)
    args[params[p]] = NDArray(RandomValues(static_cast<size_t>(shapes[p].Size()), 10 + p), shapes[p], Context::cpu(0));
  m.SetParams(args, none);
  ASSERT_TRUE(it.Next());
  const DataBatch batch = it.GetDataBatch();
  m.LoadDataBatch(batch);
  m.Forward(true);
  m.Backward();

  // The same batch whole on one device.
  std::unique_ptr<Executor> one =
      Executor::SimpleBind(net, Context::cpu(0), {{"data", Shape(8, 5)}, {"softmax_label", Shape(8)}}, "write",
                           {{"data", "null"}, {"softmax_label", "null"}});
  one->CopyParamsFrom(args);
  one->Forward(true, {{"data", batch.data}, {"softmax_label", batch.label}});
  one->Backward();
  for (size_t p = 0; p < params.size(); ++p) {
    ASSERT_EQ(m.grad_arrays()[p].size(), 2u);
    const std::vector<float> a = test::Read(m.grad_arrays()[p][0]), b = test::Read(m.grad_arrays()[p][1]);
    const std::vector<float> whole = test::Read(one->grad_dict().at(params[p]));
    for (size_t i = 0; i < whole.size(); ++i) EXPECT_NEAR(a[i] + b[i], whole[i], 1e-5) << params[p] << "[" << i << "]";
  }
  Accuracy acc;
  m.UpdateMetric(acc, {batch.label});
  EXPECT_EQ(acc.num_inst(), 8);

  std::map<std::string, NDArray> back;
  for (size_t p = 0; p < params.size(); ++p) back[params[p]] = NDArray(shapes[p], Context::cpu(0));
  m.CopyTo(&back, &none);
  for (const std::string& p : params) EXPECT_EQ(test::Read(back.at(p)), test::Read(args.at(p))) << p;
}

TEST(DataParallelExecutorManager, RefusesNamesThatAreNotTheSymbols) {
  const Symbol net = Mlp();
  NDArrayIter it(NDArray(RandomValues(8 * 5, 1), Shape(8, 5), Context::cpu(0)), NDArray(), {.batch_size = 8});
  EXPECT_THROW(DataParallelExecutorManager(net, {Context::cpu(0)}, it, {"data", "fc1_weight"}, {"fc1_weight"}, {}),
               Error);
}

}  // namespace
}  // namespace weft

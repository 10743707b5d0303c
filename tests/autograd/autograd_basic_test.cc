// Recording, Backward, grad_req, retain_graph, head gradients, autograd.grad, detach and the grad
// state flags, with MXNet 1.9.1's results (tests/python/unittest/test_autograd.py's cases).
#include "autograd_util.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using test::Array;
using test::ExpectNear;
using test::Read;

TEST(AutogradBasic, PolynomialGradient) {
  NDArray x = Array({1, 2, 3}, Shape{3});
  autograd::AttachGrad(&x);
  {
    auto rec = autograd::Record();
    NDArray y = x * x + 2.0f * x - 1.0f;
    autograd::Backward({y});
  }
  ExpectNear(Read(autograd::GetGrad(x)), {4, 6, 8});
  EXPECT_TRUE(autograd::GetGradState(x));
}

TEST(AutogradBasic, SwitchesAndScopes) {
  EXPECT_FALSE(autograd::IsRecording());
  EXPECT_FALSE(autograd::IsTraining());
  {
    auto rec = autograd::Record();
    EXPECT_TRUE(autograd::IsRecording());
    EXPECT_TRUE(autograd::IsTraining());
    {
      auto p = autograd::PredictMode();
      EXPECT_TRUE(autograd::IsRecording());
      EXPECT_FALSE(autograd::IsTraining());
    }
    {
      auto p = autograd::Pause();
      EXPECT_FALSE(autograd::IsRecording());
      EXPECT_FALSE(autograd::IsTraining());
    }
    EXPECT_TRUE(autograd::IsTraining());
  }
  EXPECT_FALSE(autograd::IsRecording());
  EXPECT_FALSE(autograd::SetIsRecording(true));
  EXPECT_TRUE(autograd::SetIsRecording(false));
}

TEST(AutogradBasic, OutGradsOfSplit) {
  // test_out_grads: split rows, head gradients none / [1..5] / [5..1].
  NDArray x(Shape{3, 5}, Context::cpu(0), false);
  x = 1.0f;
  NDArray dx(Shape{3, 5}, Context::cpu(0), false);
  dx = 0.0f;
  autograd::MarkVariables({&x}, {kWriteTo}, {dx});
  {
    auto rec = autograd::Record();
    ImperativeCall call;
    call.op = "SliceChannel";
    call.params = {{"axis", "0"}, {"num_outputs", "3"}, {"squeeze_axis", "True"}};
    call.inputs = {x};
    std::vector<NDArray> abc = Invoke(call);
    autograd::Backward(abc, {NDArray(), Array({1, 2, 3, 4, 5}, Shape{5}), Array({5, 4, 3, 2, 1}, Shape{5})});
  }
  ExpectNear(Read(dx), {1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1});
}

TEST(AutogradBasic, AddAccumulatesAndRetainGraph) {
  // test_retain_grad.
  NDArray x(Shape{2, 2}, Context::cpu(0), false);
  x = 1.0f;
  NDArray dx(Shape{2, 2}, Context::cpu(0), false);
  dx = 0.0f;
  autograd::MarkVariables({&x}, {kAddTo}, {dx});
  {
    auto rec = autograd::Record();
    NDArray y = x + 1.0f;
    autograd::Backward({y});
  }
  ExpectNear(Read(dx), {1, 1, 1, 1});
  dx = 0.0f;
  {
    auto rec = autograd::Record();
    NDArray y = x + 1.0f;
    autograd::Backward({y}, {}, /*retain_graph=*/true);
    autograd::Backward({y});
  }
  ExpectNear(Read(dx), {2, 2, 2, 2});
  auto rec = autograd::Record();
  NDArray y = x + 1.0f;
  autograd::Backward({y});
  const std::string err = test::ErrorOf([&] { autograd::Backward({y}); });
  EXPECT_NE(err.find("retain_graph"), std::string::npos) << err;
}

TEST(AutogradBasic, GradReturnsNewArraysAndLeavesBuffers) {
  NDArray x = Array({1, 2}, Shape{2});
  autograd::AttachGrad(&x);
  NDArray y = test::Recorded([&] { return x * x; });
  std::vector<NDArray> g = autograd::Grad({y}, {x});
  ExpectNear(Read(g[0]), {2, 4});
  ExpectNear(Read(autograd::GetGrad(x)), {0, 0});
  EXPECT_FALSE(autograd::GetGradState(x));
}

TEST(AutogradBasic, DetachStopsGradients) {
  // test_detach_updated_grad.
  NDArray x(Shape{2, 2}, Context::cpu(0), false), y(Shape{2, 2}, Context::cpu(0), false);
  x = 1.0f;
  y = 1.0f;
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&y);
  {
    auto rec = autograd::Record();
    NDArray x2 = (x + 2.0f).Detach();
    NDArray y2 = x2 + y;
    autograd::Backward({y2});
  }
  ExpectNear(Read(autograd::GetGrad(x)), {0, 0, 0, 0});
  EXPECT_FALSE(autograd::GetGradState(x));
  EXPECT_TRUE(autograd::GetGradState(y));
  autograd::SetGradState(y, false);
  EXPECT_FALSE(autograd::GetGradState(y));
}

TEST(AutogradBasic, DropoutFollowsTrainMode) {
  // test_is_train: in predict mode Dropout is the identity and so is its backward.
  NDArray x(Shape{10, 10}, Context::cpu(0), false);
  x = 1.0f;
  autograd::AttachGrad(&x);
  {
    auto rec = autograd::Record();
    NDArray y = InvokeOne("Dropout", {x}, {{"p", "0.5"}});
    autograd::Backward({y});
    std::vector<float> yv = Read(y), gv = Read(autograd::GetGrad(x));
    EXPECT_EQ(yv, gv);
    EXPECT_EQ(*std::max_element(yv.begin(), yv.end()), 2.0f);
    EXPECT_EQ(*std::min_element(yv.begin(), yv.end()), 0.0f);
  }
  {
    auto rec = autograd::Record(/*train_mode=*/false);
    NDArray y = InvokeOne("Dropout", {x}, {{"p", "0.5"}});
    autograd::BackwardEx({y}, {}, {}, false, false, /*is_train=*/false);
    EXPECT_EQ(Read(y), Read(x));
    EXPECT_EQ(Read(autograd::GetGrad(x)), Read(x));
  }
}

TEST(AutogradBasic, SecondOrderOfExp) {
  // test_gradient: z = exp(x) + x; dz/dx = e + 1 at 1; d2z/dx2 = e.
  NDArray x = Array({1}, Shape{1});
  autograd::AttachGrad(&x);
  NDArray z = test::Recorded([&] { return InvokeOne("elemwise_add", {InvokeOne("exp", {x}), x}); });
  std::vector<NDArray> dx = autograd::Grad({z}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_NEAR(Read(dx[0])[0], 3.71828175f, 1e-6f);
  autograd::Backward({dx[0]});
  EXPECT_NEAR(Read(autograd::GetGrad(x))[0], 2.71828175f, 1e-6f);
}

TEST(AutogradBasic, GetSymbolListsVariables) {
  NDArray x = Array({1}, Shape{1}), z = Array({1}, Shape{1});
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&z);
  NDArray y1, y2;
  {
    auto rec = autograd::Record();
    y1 = x * x + 2.0f * x - 1.0f;
    y2 = x * x + 2.0f * z - 1.0f;
  }
  EXPECT_EQ(autograd::GetSymbol(y1).ListArguments().size(), 1u);
  EXPECT_EQ(autograd::GetSymbol(y2).ListArguments().size(), 2u);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(AutogradBasic, ViewsRecordedAsOps) {
  // MXNet's ReshapeWithRecord / SliceWithRecord: a view that shares memory and passes gradients.
  NDArray x = test::Array({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto rec = autograd::Record();
    NDArray rows = x.Slice(1, 3);
    autograd::RecordView(x, &rows, "slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "3"}});
    NDArray flat = rows.Reshape(Shape{4});
    autograd::RecordView(rows, &flat, "Reshape", {{"shape", "(4,)"}});
    EXPECT_TRUE(flat.SharesChunkWith(x));
    y = flat * flat;
  }
  autograd::Backward({y});
  EXPECT_EQ(test::Read(autograd::GetGrad(x)), (std::vector<float>{0, 0, 6, 8, 10, 12}));
  NDArray v = x.Reshape(Shape{6});
  EXPECT_NE(test::ErrorOf([&] {
              auto rec = autograd::Record();
              autograd::RecordView(x, &v, "Reshape", {{"shape", "(2, 3)"}});
            }).find("makes (2, 3)"),
            std::string::npos);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// A row_sparse gradient buffer (Gluon's grad_stype='row_sparse', MXNet's attach_grad(stype=...))
// receives the dense gradient converted: the rows with a non-zero gradient are stored, with one
// term (copied) and with several (summed first), and a variable whose gradient is blocked gets
// zeros.
TEST(AutogradBasic, RowSparseGradientBuffer) {
  NDArray x = test::Array({1, 2, 0, 0, 3, 4}, Shape{3, 2});
  NDArray blocked = test::Array({1, 1, 1, 1, 1, 1}, Shape{3, 2});
  NDArray gx = NDArray::CreateSparse(StorageType::kRowSparse, Shape{3, 2}, Context::cpu(0));
  NDArray gb = CastStorage(test::Array({5, 5, 5, 5, 5, 5}, Shape{3, 2}), StorageType::kRowSparse);
  autograd::MarkVariables({&x, &blocked}, {kWriteTo, kWriteTo}, {gx, gb});
  {
    auto rec = autograd::Record();
    NDArray y = x * x + InvokeOne("BlockGrad", {blocked});
    autograd::Backward({y});
  }
  NDArray g = autograd::GetGrad(x);
  EXPECT_EQ(g.storage_type(), StorageType::kRowSparse);
  test::ExpectNear(test::Read(CastStorage(g, StorageType::kDefault)), {2, 4, 0, 0, 6, 8});
  EXPECT_EQ(g.storage_shape()[0], 2);  // the zero row is not stored
  {
    auto rec = autograd::Record();
    NDArray y = x * 3.0f + x;
    autograd::Backward({y});
  }
  test::ExpectNear(test::Read(CastStorage(autograd::GetGrad(x), StorageType::kDefault)), {4, 4, 4, 4, 4, 4});
  test::ExpectNear(test::Read(CastStorage(autograd::GetGrad(blocked), StorageType::kDefault)), {0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace weft

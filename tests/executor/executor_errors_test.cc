// Every refused call names what is wrong.
#include <algorithm>

#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::kCpu;

#define EXPECT_ERROR_HAS(stmt, text)                                  \
  do {                                                                \
    std::string _m = ErrorOf([&] { stmt; });                          \
    EXPECT_NE(_m.find(text), std::string::npos) << "message: " << _m; \
  } while (0)

Symbol TwoAPlusB() { return 2 * Symbol::Variable("a") + Symbol::Variable("b"); }

TEST(ExecutorErrors, UnknownArgumentName) {
  Symbol c = TwoAPlusB();
  EXPECT_ERROR_HAS(delete c.SimpleBind(kCpu, {{"a", NDArray(Shape{2}, kCpu)}, {"zz", NDArray(Shape{2}, kCpu)}}),
                   "'zz'");
  EXPECT_ERROR_HAS(Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}, {"qq", Shape{2}}}), "'qq'");
  EXPECT_ERROR_HAS(Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}}, "write", {{"nope", "add"}}), "'nope'");
}

TEST(ExecutorErrors, WrongShape) {
  Symbol data = Symbol::Variable("data");
  Symbol fc = Operator("FullyConnected").SetParam("num_hidden", 6)(data).CreateSymbol("fc");
  NDArray d(Shape{1, 4}, kCpu), w(Shape{5, 4}, kCpu), b(Shape{6}, kCpu);
  std::string m = ErrorOf([&] { delete fc.Bind(kCpu, {d, w, b}, {}, {}, {}); });
  EXPECT_NE(m.find("fc_weight=(5, 4)"), std::string::npos) << m;
  EXPECT_NE(m.find("fc"), std::string::npos) << m;
  // A gradient array of the wrong shape.
  Symbol c = TwoAPlusB();
  NDArray a2(Shape{2}, kCpu), b2(Shape{2}, kCpu), g3(Shape{3}, kCpu);
  EXPECT_ERROR_HAS(delete c.Bind(kCpu, {a2, b2}, {g3, NDArray()}, {kWriteTo, kNullOp}, {}), "gradient array of 'a'");
}

TEST(ExecutorErrors, DuplicatedArgumentNamesInDicts) {
  Symbol x1 = Symbol::Variable("x"), x2 = Symbol::Variable("x");
  Symbol y = x1 + x2;
  NDArray a(std::vector<float>{1, 2}, Shape{2}, kCpu), b(std::vector<float>{3, 4}, Shape{2}, kCpu);
  std::unique_ptr<Executor> e(y.Bind(kCpu, {a, b}, {}, {}, {}));
  e->Forward(false);
  EXPECT_EQ(test::Values(e->outputs[0]), (std::vector<float>{4, 6}));  // the list works
  EXPECT_ERROR_HAS(e->arg_dict(), "'x'");
}

TEST(ExecutorErrors, ExtraParamsInCopyParamsFrom) {
  Symbol c = TwoAPlusB();
  auto e = Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}});
  NDArray v(std::vector<float>{1, 2}, Shape{2}, kCpu);
  EXPECT_ERROR_HAS(e->CopyParamsFrom({{"a", v}, {"extra_w", v}}), "'extra_w'");
  EXPECT_ERROR_HAS(e->CopyParamsFrom({{"a", NDArray(Shape{3}, kCpu)}}), "'a'");
  EXPECT_NO_THROW(e->CopyParamsFrom({{"a", v}, {"extra_w", v}}, {}, true));
}

TEST(ExecutorErrors, WrongLengthArgsList) {
  Symbol c = TwoAPlusB();
  std::string m = ErrorOf([&] { delete c.Bind(kCpu, {NDArray(Shape{2}, kCpu)}, {}, {}, {}); });
  EXPECT_NE(m.find("expects 2 argument arrays (a, b), got 1"), std::string::npos) << m;
}

TEST(ExecutorErrors, BadGradReq) {
  Symbol c = TwoAPlusB();
  EXPECT_ERROR_HAS(Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}}, "write", {{"b", "sometimes"}}), "'b'");
  EXPECT_ERROR_HAS(Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}}, "always"), "always");
  NDArray a(Shape{2}, kCpu), b(Shape{2}, kCpu), g(Shape{2}, kCpu);
  EXPECT_ERROR_HAS(delete c.Bind(kCpu, {a, b}, {g, g}, {kWriteTo, static_cast<OpReqType>(7)}, {}), "'b'");
  EXPECT_ERROR_HAS(delete c.Bind(kCpu, {a, b}, {g, NDArray()}, {kWriteTo, kWriteTo}, {}), "'b'");
}

TEST(ExecutorErrors, HeadGradientRequired) {
  Symbol c = TwoAPlusB();
  auto e = Executor::SimpleBind(c, kCpu, {{"a", Shape{2}}});
  e->Forward(true);
  std::string m = ErrorOf([&] { e->Backward(); });
  EXPECT_NE(m.find("head gradient is required for output"), std::string::npos) << m;
  EXPECT_NE(m.find(c.ListOutputs()[0]), std::string::npos) << m;
  EXPECT_ERROR_HAS(e->Backward({NDArray(Shape{3}, kCpu)}), "shape");
}

// batch_take has no gradient (MXNet registers none): binding it so that a gradient reaches it
// while an input wants one is refused, naming the op; behind BlockGrad it binds, Backward needs no
// head gradient, and no backward node (nor its memory) is made for what the BlockGrad stops
// (MXNet's test_zero_prop / test_zero_prop2).
TEST(ExecutorErrors, NonDifferentiableOpRefusedUnlessItsGradientIsStopped) {
  const Symbol y =
      Operator("batch_take")(std::vector<Symbol>{Symbol::Variable("x"), Symbol::Variable("idx")}).CreateSymbol("take");
  const std::map<std::string, Shape> shapes = {{"x", Shape{10, 10}}, {"idx", Shape{10}}};
  const std::map<std::string, DType> types = {{"idx", DType::kInt32}};
  EXPECT_ERROR_HAS(Executor::SimpleBind(y, kCpu, shapes, "write", {}, types),
                   "operator 'batch_take' is not differentiable");
  const Symbol z = Operator("BlockGrad")(y).CreateSymbol("stop");
  auto e = Executor::SimpleBind(z, kCpu, shapes, "write", {}, types);
  e->Forward(true);
  e->Backward();
  std::vector<float> g;
  e->grad_dict().at("x").SyncCopyToCPU(&g);
  EXPECT_TRUE(std::all_of(g.begin(), g.end(), [](float v) { return v == 0; }));

  Symbol chain = Symbol::Variable("data");
  for (int i = 0; i < 4; ++i) chain = chain * chain;
  const std::map<std::string, Shape> big = {{"data", Shape{64, 1024}}};
  auto planned = [](const std::unique_ptr<Executor>& ex) {
    const std::string s = ex->DebugStr();
    const size_t at = s.find("Total ");
    return std::stol(s.substr(at + 6));
  };
  const long with_grad = planned(Executor::SimpleBind(chain, kCpu, big));
  const long without = planned(Executor::SimpleBind(chain, kCpu, big, "null"));
  const long stopped = planned(Executor::SimpleBind(Operator("BlockGrad")(chain).CreateSymbol("s"), kCpu, big));
  EXPECT_GT(with_grad, stopped);
  EXPECT_EQ(without, stopped);
}

}  // namespace
}  // namespace weft

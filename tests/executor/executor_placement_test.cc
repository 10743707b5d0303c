// Model parallelism: __ctx_group__ + group2ctx place nodes on devices with copies in between.
#include "require.h"
#include "test_util.h"
#include "weft/runtime.h"

namespace weft {
namespace {

TEST(ExecutorPlacement, CtxGroupsRunOnTheirDevicesAndGradientsFlowBack) {
  Context other("simdev", 0);
  if (Runtime::Get().DeviceCount("cpu") >= 2) other = Context::cpu(1);
  if (!Runtime::Get().HasDevice(other)) WEFT_SKIP_UNLESS_REQUIRED() << "needs a second device (cpu(1) or simdev(0))";
  const Context cpu = Context::cpu();
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol h = a * 2.f;
  h.SetAttr("ctx_group", "stage1");
  Symbol y = Operator("sin")(h).CreateSymbol("s");
  y.SetAttr("ctx_group", "stage2");
  Symbol z = y + b;
  z.SetAttr("ctx_group", "stage2");
  NDArray av({0.1f, 0.2f}, Shape{2}, cpu), bv({1, 2}, Shape{2}, cpu);
  NDArray ga(Shape{2}, cpu, false), gb(Shape{2}, cpu, false);
  std::unique_ptr<Executor> e(
      z.Bind(cpu, {av, bv}, {ga, gb}, {kWriteTo, kWriteTo}, {}, {{"stage1", cpu}, {"stage2", other}}));
  EXPECT_EQ(e->outputs[0].GetContext(), other);
  e->Forward(true);
  test::ExpectNear(test::Values(e->outputs[0]), {std::sin(0.2f) + 1, std::sin(0.4f) + 2});
  e->Backward({NDArray({1, 1}, Shape{2}, other)});
  test::ExpectNear(test::Values(ga), {2 * std::cos(0.2f), 2 * std::cos(0.4f)});
  test::ExpectNear(test::Values(gb), {1, 1});
  const std::string dbg = e->DebugStr();
  EXPECT_NE(dbg.find("Op:_CrossDeviceCopy"), std::string::npos) << dbg;
}

}  // namespace
}  // namespace weft

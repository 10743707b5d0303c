// The temp space kernel runners share per device (core/operator/workspace_pool.h): runners of a
// device compute in one slot holding the largest workspace any of them asked for, a slot that
// grows frees its old block only after the runs pushed before, and WEFT_<DEV>_TEMP_COPY sets the
// slots per device type.
#include "operator/workspace_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <vector>

#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "sparse_values.h"
#include "test_util.h"
#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/runtime.h"
#include "weft/sdk/operator.h"
#include "weft/storage.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;
using test::Values;

// A prepared training Convolution (its cpu kernel asks for a workspace) of `channels` channels.
std::shared_ptr<KernelRunner> Conv(int64_t channels, NDArray* data, NDArray* weight, NDArray* bias, NDArray* out) {
  const Context cpu = Context::cpu(0);
  const OpDef& def = OpRegistry::Get().Lookup("Convolution");
  const AttrMap attrs =
      def.Normalize(AttrMap({{"kernel", "(3, 3)"}, {"num_filter", std::to_string(channels)}, {"pad", "(1, 1)"}}));
  const Shape ds{2, channels, 12, 12}, ws{channels, channels, 3, 3}, bs{channels};
  *data = InvokeOne("_random_uniform", {}, {{"shape", ds.ToString()}});
  *weight = InvokeOne("_random_uniform", {}, {{"shape", ws.ToString()}});
  *bias = InvokeOne("_random_uniform", {}, {{"shape", bs.ToString()}});
  *out = NDArray(ds, cpu);
  NodeSignature sig;
  sig.in_shapes = {ds, ws, bs};
  sig.in_dtypes.assign(3, DType::kFloat32);
  sig.out_shapes = {ds};
  sig.out_dtypes = {DType::kFloat32};
  return std::make_shared<KernelRunner>("Convolution", attrs, cpu, sig);
}

TEST(WorkspacePool, RunnersOfADeviceComputeInOneSlot) {
  NDArray d1, w1, b1, o1, d2, w2, b2, o2;
  const auto small = Conv(8, &d1, &w1, &b1, &o1), large = Conv(32, &d2, &w2, &b2, &o2);
  ASSERT_GT(small->workspace_bytes(), 0u) << "the cpu Convolution asked for no workspace: the test needs one";
  ASSERT_GT(large->workspace_bytes(), small->workspace_bytes());
  ASSERT_NE(small->workspace_var(), nullptr);
  EXPECT_EQ(small->workspace_var(), large->workspace_var()) << "one slot per device by default";
  // Interleaved runs of both give what each gives alone (the imperative call's own runner).
  const NDArray want1 =
      InvokeOne("Convolution", {d1, w1, b1}, {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"}});
  const NDArray want2 =
      InvokeOne("Convolution", {d2, w2, b2}, {{"kernel", "(3, 3)"}, {"num_filter", "32"}, {"pad", "(1, 1)"}});
  for (int i = 0; i < 3; ++i) {
    small->Run({d1, w1, b1}, {o1}, {WEFT_REQ_WRITE}, {}, true);
    large->Run({d2, w2, b2}, {o2}, {WEFT_REQ_WRITE}, {}, true);
  }
  EXPECT_EQ(Values(o1), Values(want1));
  EXPECT_EQ(Values(o2), Values(want2));
}

TEST(WorkspacePool, GrowingFreesTheOldBlockAfterTheRunsPushedBefore) {
  const Context cpu = Context::cpu(0);
  Engine::Get()->WaitForAll();  // no frees of earlier tests' arrays may land between the readings
  auto slot = std::make_shared<WorkspaceSlot>(cpu);
  const uint64_t mib = uint64_t{1} << 20;
  slot->Grow(mib);
  const uint64_t base = Storage::Get()->Stats(cpu).bytes_in_use;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  // A run computing in the old block: it holds the slot's variable until released.
  Engine::Get()->PushSync([released](RunContext) { released.wait(); }, cpu, {}, {slot->var()}, FnProperty::kNormal, 0,
                          "busy");
  slot->Grow(4 * mib);
  EXPECT_EQ(slot->size(), 4 * mib);
  EXPECT_EQ(Storage::Get()->Stats(cpu).bytes_in_use, base + 4 * mib) << "the old block was freed under a pending run";
  release.set_value();
  Engine::Get()->WaitForVar(slot->var());
  EXPECT_EQ(Storage::Get()->Stats(cpu).bytes_in_use, base + 3 * mib) << "the old block was never freed";
  slot->Grow(2 * mib);  // smaller: nothing changes
  EXPECT_EQ(slot->size(), 4 * mib);
  EXPECT_GE(slot->Current().size, 4 * mib);
}

TEST(WorkspacePool, SlotsPerDeviceTypeComeFromTheEnvironment) {
  const Context dev("simdev", 1);
  if (Runtime::Get().DeviceCount("simdev") < 2) GTEST_SKIP() << "needs the simdev test plugin with 2 devices";
  setenv("WEFT_SIMDEV_TEMP_COPY", "0", 1);
  ExpectContains(ErrorOf([&] { ReserveWorkspace(dev, 16); }), {"WEFT_SIMDEV_TEMP_COPY=0", "from 1 to 64"});
  setenv("WEFT_SIMDEV_TEMP_COPY", "2", 1);
  const auto a = ReserveWorkspace(dev, 16), b = ReserveWorkspace(dev, 64), c = ReserveWorkspace(dev, 32);
  unsetenv("WEFT_SIMDEV_TEMP_COPY");
  EXPECT_NE(a->var(), b->var());
  EXPECT_EQ(a, c) << "round robin over two slots";
  EXPECT_EQ(a->size(), 32u);
  EXPECT_EQ(b->size(), 64u);
}

}  // namespace
}  // namespace weft

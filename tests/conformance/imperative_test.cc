// KernelRunner and imperative invoke: shape inference and allocation, NDArray arithmetic,
// in-place compound assignment, errors, synchronous runs inside an engine op, random seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ndarray_read.h"
#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "require.h"
#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/operator.h"
#include "weft/runtime.h"
#include "weft/sdk/operator.h"

namespace {

using weft::Context;
using weft::NDArray;
using weft::Shape;

using weft::test::Read;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const weft::Error& e) {
    return e.what();
  }
  return "";
}

std::vector<Context> Devices() {
  std::vector<Context> d{Context::cpu(0)};
  if (weft::Runtime::Get().DeviceCount("simdev") > 0 &&
      weft::HasKernel("elemwise_add", "simdev", weft::DType::kFloat32))
    d.emplace_back("simdev", 0);
  return d;
}

TEST(Imperative, FullyConnectedInfersAndAllocatesOutputs) {
  for (const Context& ctx : Devices()) {
    SCOPED_TRACE(ctx.ToString());
    const NDArray x(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}, ctx);
    const NDArray w(std::vector<float>{1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 2}, Shape{4, 3}, ctx);
    const NDArray b(std::vector<float>{0.5f, 0, 0, -1}, Shape{4}, ctx);
    weft::ImperativeCall call;
    call.op = "FullyConnected";
    call.params = {{"num_hidden", "4"}};
    call.inputs = {x, w};
    call.named_inputs = {{"bias", b}};
    std::vector<NDArray> out = weft::Invoke(call);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].GetShape(), (Shape{2, 4}));
    EXPECT_EQ(out[0].GetContext(), ctx);
    EXPECT_EQ(Read(out[0]), (std::vector<float>{1.5f, 2, 6, 5, 4.5f, 5, 15, 11}));
  }
}

TEST(Imperative, ArithmeticMatchesHostMath) {
  for (const Context& ctx : Devices()) {
    SCOPED_TRACE(ctx.ToString());
    const NDArray a(std::vector<float>{1, -2, 3, 4.5f}, Shape{2, 2}, ctx);
    const NDArray b(std::vector<float>{2, 4, -1, 0.5f}, Shape{2, 2}, ctx);
    EXPECT_EQ(Read(a + b), (std::vector<float>{3, 2, 2, 5}));
    EXPECT_EQ(Read(a - b), (std::vector<float>{-1, -6, 4, 4}));
    EXPECT_EQ(Read(a * b), (std::vector<float>{2, -8, -3, 2.25f}));
    EXPECT_EQ(Read(a / b), (std::vector<float>{0.5f, -0.5f, -3, 9}));
    EXPECT_EQ(Read(a * 2.0f), (std::vector<float>{2, -4, 6, 9}));
    EXPECT_EQ(Read(1.0f - a), (std::vector<float>{0, 3, -2, -3.5f}));
    EXPECT_EQ(Read(2.0f / b), (std::vector<float>{1, 0.5f, -2, 4}));
    EXPECT_EQ(Read(-a), (std::vector<float>{-1, 2, -3, -4.5f}));
    EXPECT_EQ(Read(a + 0.5f), (std::vector<float>{1.5f, -1.5f, 3.5f, 5}));
  }
}

TEST(Imperative, CompoundAssignmentWritesTheLeftOperandInPlace) {
  for (const Context& ctx : Devices()) {
    SCOPED_TRACE(ctx.ToString());
    NDArray a(std::vector<float>{1, 2, 3, 4}, Shape{4}, ctx);
    const NDArray alias = a;  // same chunk: sees the in-place update
    const NDArray b(std::vector<float>{1, 1, 2, 2}, Shape{4}, ctx);
    a += b;
    a *= 2.0f;
    a -= 1.0f;
    a /= b;
    EXPECT_EQ(Read(alias), (std::vector<float>{3, 5, 4.5f, 5.5f}));
    EXPECT_TRUE(a.SharesChunkWith(alias));
  }
}

TEST(Imperative, SliceViewsComputeInPlaceWithoutTouchingNeighbours) {
  NDArray big(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{3, 2}, Context::cpu(0));
  NDArray mid = big.Slice(1, 2);
  mid *= 10.0f;
  EXPECT_EQ(Read(big), (std::vector<float>{1, 2, 30, 40, 5, 6}));
}

TEST(Imperative, ErrorsNameTheProblem) {
  const NDArray a(std::vector<float>{1, 2, 3}, Shape{3}, Context::cpu(0));
  const NDArray b(std::vector<float>{1, 2}, Shape{2}, Context::cpu(0));
  std::string e = ErrorOf([&] { (void)(a + b); });
  EXPECT_NE(e.find("elemwise_add"), std::string::npos) << e;
  EXPECT_NE(e.find("(3,)"), std::string::npos) << e;
  EXPECT_NE(e.find("(2,)"), std::string::npos) << e;

  e = ErrorOf([&] { weft::InvokeOne("FullyConnected", {a}, {{"num_hidden", "2"}}); });
  EXPECT_NE(e.find("weight"), std::string::npos) << e;

  e = ErrorOf([&] { weft::InvokeOne("NoSuchOp", {a}); });
  EXPECT_NE(e.find("NoSuchOp"), std::string::npos) << e;

  weft::ImperativeCall call;
  call.op = "sin";
  call.inputs = {a};
  call.named_inputs = {{"data", a}};
  e = ErrorOf([&] { weft::Invoke(call); });
  EXPECT_NE(e.find("twice"), std::string::npos) << e;
}

TEST(KernelRunner, MissingKernelListsWhereItExists) {
  weft::NodeSignature sig;
  sig.in_shapes = {Shape{3}};
  sig.in_dtypes = {weft::DType::kInt8};
  sig.out_shapes = {Shape{3}};
  sig.out_dtypes = {weft::DType::kInt8};
  const std::string e = ErrorOf([&] { weft::KernelRunner r("sin", {}, Context::cpu(0), sig); });
  EXPECT_NE(e.find("'sin'"), std::string::npos) << e;
  EXPECT_NE(e.find("int8"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu (float32"), std::string::npos) << e;
}

TEST(KernelRunner, MissingKernelNamesTheDevicesPlugin) {
  // The gpuhost test plugin has no cbrt: the error names the plugin behind the device type and
  // quotes its description (where a plugin built with part of its kernels says so).
  if (weft::Runtime::Get().DeviceCount("gpuhost") == 0)
    WEFT_SKIP_UNLESS_REQUIRED() << "the gpuhost test plugin is not loaded";
  ASSERT_FALSE(weft::HasKernel("cbrt", "gpuhost", weft::DType::kFloat32));
  weft::NodeSignature sig;
  sig.in_shapes = {Shape{2, 3}};
  sig.in_dtypes = {weft::DType::kFloat32};
  sig.out_shapes = {Shape{2, 3}};
  sig.out_dtypes = {weft::DType::kFloat32};
  const std::string e = ErrorOf([&] { weft::KernelRunner r("cbrt", {}, Context("gpuhost", 0), sig); });
  EXPECT_NE(e.find("no kernel for operator 'cbrt' on device type 'gpuhost'"), std::string::npos) << e;
  EXPECT_NE(e.find("device type 'gpuhost' is plugin 'gpuhost' ("), std::string::npos) << e;
  EXPECT_NE(e.find("libweft-gpuhost.so): test device: the shared GPU kernel layer"), std::string::npos) << e;
}

TEST(KernelRunner, KernelRefusalNamesOpAndDevice) {
  // Shapes inference would refuse, handed straight to the kernel: create_state must say no.
  weft::NodeSignature sig;
  sig.in_shapes = {Shape{2, 3}, Shape{4, 5}, Shape{4}};
  sig.in_dtypes.assign(3, weft::DType::kFloat32);
  sig.out_shapes = {Shape{2, 4}};
  sig.out_dtypes = {weft::DType::kFloat32};
  for (const Context& ctx : Devices()) {
    const std::string e = ErrorOf([&] {
      weft::KernelRunner r("FullyConnected",
                           weft::AttrMap({{"num_hidden", "4"}, {"no_bias", "False"}, {"flatten", "True"}}), ctx, sig);
    });
    EXPECT_NE(e.find("FullyConnected on " + ctx.ToString() + ":"), std::string::npos) << e;
  }
}

TEST(KernelRunner, RunRefusesArraysThatDoNotMatchThePreparedNode) {
  const Context cpu = Context::cpu(0);
  weft::NodeSignature sig{{Shape{4}}, {Shape{4}}, {}, {weft::DType::kFloat32}, {weft::DType::kFloat32}, {}, {}, {}};
  weft::KernelRunner r("exp", {}, cpu, sig);
  const NDArray good(Shape{4}, cpu), wrong(Shape{2, 2}, cpu);
  std::string e = ErrorOf([&] { r.Run({wrong}, {good}, {WEFT_REQ_WRITE}, {}, false); });
  EXPECT_NE(e.find("(2, 2)"), std::string::npos) << e;
  EXPECT_NE(e.find("(4,)"), std::string::npos) << e;
  e = ErrorOf([&] { r.Run({good}, {good}, {}, {}, false); });
  EXPECT_NE(e.find("write requests"), std::string::npos) << e;
}

TEST(KernelRunner, RunInlineInsideAnEngineOperation) {
  const Context cpu = Context::cpu(0);
  weft::NodeSignature sig;
  sig.in_shapes = {Shape{4}, Shape{4}};
  sig.in_dtypes = {weft::DType::kFloat32, weft::DType::kFloat32};
  sig.out_shapes = {Shape{4}};
  sig.out_dtypes = {weft::DType::kFloat32};
  weft::KernelRunner add("elemwise_add", {}, cpu, sig);
  weft::KernelRunner mul("elemwise_mul", {}, cpu, sig);
  const NDArray a(std::vector<float>{1, 2, 3, 4}, Shape{4}, cpu);
  const NDArray b(std::vector<float>{4, 3, 2, 1}, Shape{4}, cpu);
  NDArray t(Shape{4}, cpu), out(Shape{4}, cpu);
  t.CheckAndAlloc();
  out.CheckAndAlloc();
  // One engine op running two kernels back to back (an executor's bulked segment).
  weft::Engine::Get()->PushSync(
      [&](weft::RunContext rctx) {
        add.RunInline(rctx, {a, b}, {t}, {WEFT_REQ_WRITE}, {}, false, 0);
        mul.RunInline(rctx, {t, a}, {out}, {WEFT_REQ_WRITE}, {}, false, 0);
      },
      cpu, {a.var(), b.var()}, {t.var(), out.var()});
  EXPECT_EQ(Read(out), (std::vector<float>{5, 10, 15, 20}));
}

TEST(KernelRunner, RunsOutliveTheRunner) {
  const Context cpu = Context::cpu(0);
  const NDArray a(std::vector<float>(1000, 1.0f), Shape{1000}, cpu);
  NDArray out(Shape{1000}, cpu);
  {
    weft::NodeSignature sig{
        {Shape{1000}}, {Shape{1000}}, {}, {weft::DType::kFloat32}, {weft::DType::kFloat32}, {}, {}, {}};
    weft::KernelRunner r("exp", {}, cpu, sig);
    for (int i = 0; i < 20; ++i) r.Run({a}, {out}, {i == 0 ? WEFT_REQ_WRITE : WEFT_REQ_ADD}, {}, false);
  }  // destroyed with runs still pending
  const std::vector<float> v = Read(out);
  EXPECT_NEAR(v[0], 20 * std::exp(1.0f), 1e-3);
  EXPECT_NEAR(v[999], 20 * std::exp(1.0f), 1e-3);
}

TEST(KernelRunner, RandomOpsGetReproducibleSeeds) {
  const NDArray x(std::vector<float>(256, 1.0f), Shape{256}, Context::cpu(0));
  auto dropout = [&] {
    weft::ImperativeCall call;
    call.op = "Dropout";
    call.params = {{"p", "0.5"}};
    call.inputs = {x};
    call.is_train = true;
    return Read(weft::Invoke(call).at(0));
  };
  weft::RandomSeed(42);
  const std::vector<float> first = dropout(), second = dropout();
  weft::RandomSeed(42);
  const std::vector<float> again = dropout();
  EXPECT_EQ(first, again);
  EXPECT_NE(first, second);
  int zeros = 0;
  for (float v : first) zeros += v == 0.0f;
  EXPECT_GT(zeros, 64);
  EXPECT_LT(zeros, 192);
}

// mxnet-cpp's imperative form: Operator(...).SetParam(...).PushInput/SetInput(nd).Invoke().
TEST(Imperative, OperatorInvokeFollowsMxnetCpp) {
  NDArray data(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape(2, 3), Context::cpu());
  NDArray weight(std::vector<float>{1, 0, 1, 0, 1, 0}, Shape(2, 3), Context::cpu());
  NDArray bias(std::vector<float>{10, 20}, Shape(2), Context::cpu());
  std::vector<NDArray> out = weft::Operator("FullyConnected")
                                 .SetParam("num_hidden", 2)
                                 .SetInput("weight", weight)
                                 .SetInput("bias", bias)(data)
                                 .Invoke();
  ASSERT_EQ(out.size(), 1u);
  // Rows of data dotted with weight rows (1,0,1) and (0,1,0), plus bias.
  EXPECT_EQ(Read(out[0]), (std::vector<float>{14, 22, 20, 25}));

  NDArray target(Shape(2, 3), Context::cpu());
  weft::Operator("_mul_scalar").SetParam("scalar", 2)(data).Invoke(target);
  EXPECT_EQ(Read(target), (std::vector<float>{2, 4, 6, 8, 10, 12}));

  EXPECT_NE(ErrorOf([&] { weft::Operator("NoSuchOp")(data).Invoke(); }).find("NoSuchOp"), std::string::npos);
}

}  // namespace

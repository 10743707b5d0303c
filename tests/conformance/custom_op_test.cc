// The sample operator plugin (samples/custom_op: "Swish", SDK only) loaded at run time: its
// definition joins the registry, its kernels run through imperative invoke — on cpu, and on the
// simulated asynchronous device, where the plugin's kernel asks the host for the native handles
// of the stream and tensors it was given and queues its work on that stream — and a second
// plugin defining the same op name is refused with a message naming both plugins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "operator/plugin_ops.h"
#include "require.h"
#include "weft/imperative.h"
#include "weft/internal/runtime.h"
#include "weft/ndarray.h"

namespace {

const std::string kDir = std::string(WEFT_TEST_FIXTURE_DIR) + "/custom_op/";

weft::PluginRecord Load(const std::string& file) {
  weft::OpRegistry::Get();  // connect the registry first: definitions register as plugins load
  return weft::Runtime::Get().LoadPlugin(kDir + file);
}

TEST(CustomOp, PluginDefinitionAndKernelsWork) {
  const weft::PluginRecord rec = Load("libswish_op.so");
  ASSERT_TRUE(rec.accepted) << rec.reason;
  const weft::OpDef* def = weft::OpRegistry::Get().Find("Swish");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->source, "swish");
  EXPECT_EQ(def->backward_op, "_backward_Swish");

  const std::vector<float> xs = {-2.0f, -0.5f, 0.0f, 0.25f, 1.5f, 3.0f};
  const weft::NDArray x(xs, weft::Shape{2, 3}, weft::Context::cpu(0));
  weft::ImperativeCall call;
  call.op = "Swish";
  call.params = {{"beta", "2"}};
  call.inputs = {x};
  const weft::NDArray y = weft::Invoke(call).at(0);
  EXPECT_EQ(y.GetShape(), (weft::Shape{2, 3}));
  std::vector<float> got;
  y.SyncCopyToCPU(&got);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], xs[i] / (1.0f + std::exp(-2.0f * xs[i])), 1e-6f) << i;

  call.params = {{"gamma", "2"}};
  try {
    weft::Invoke(call);
    ADD_FAILURE() << "an unknown attribute was accepted";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gamma"), std::string::npos) << e.what();
  }
}

// An operator plugin's kernel for another plugin's device: it runs on the stream the engine gave
// it (through the stream's native handle), so its result is there only when the engine says so.
TEST(CustomOp, KernelOnAnotherPluginsDeviceUsesTheNativeStreamHandle) {
  ASSERT_TRUE(Load("libswish_op.so").accepted);
  const std::vector<std::string> types = weft::Runtime::Get().DeviceTypes();
  if (std::find(types.begin(), types.end(), "simdev") == types.end())
    WEFT_SKIP_UNLESS_REQUIRED() << "simdev plugin not loaded";
  const weft::Context sim("simdev", 0);
  const std::vector<float> xs = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f, 4.0f, 7.0f};
  const weft::NDArray x_cpu(xs, weft::Shape{2, 4}, weft::Context::cpu(0));
  const weft::NDArray x_sim = x_cpu.Copy(sim);
  weft::ImperativeCall call;
  call.op = "Swish";
  call.params = {{"beta", "1.5"}};
  call.inputs = {x_cpu};
  const weft::NDArray want = weft::Invoke(call).at(0);
  call.inputs = {x_sim};
  const weft::NDArray got = weft::Invoke(call).at(0);
  EXPECT_EQ(got.GetContext(), sim);
  std::vector<float> a, b;
  want.SyncCopyToCPU(&a);
  got.SyncCopyToCPU(&b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(a[i], b[i]) << i;

  // The backward kernel too (out_grad, data -> d data), prepared as the executor prepares a node.
  const std::vector<float> gs = {1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 0.25f, 2.0f, -0.5f};
  const weft::NDArray g_cpu(gs, weft::Shape{2, 4}, weft::Context::cpu(0));
  weft::NodeSignature sig;
  sig.in_shapes = {weft::Shape{2, 4}, weft::Shape{2, 4}};
  sig.in_dtypes = {weft::DType::kFloat32, weft::DType::kFloat32};
  sig.out_shapes = {weft::Shape{2, 4}};
  sig.out_dtypes = {weft::DType::kFloat32};
  weft::AttrMap attrs;
  attrs.Set("beta", "1.5");
  auto backward = [&](const weft::Context& ctx, const weft::NDArray& g, const weft::NDArray& x) {
    weft::NDArray dx(weft::Shape{2, 4}, ctx);
    weft::KernelRunner("_backward_Swish", attrs, ctx, sig).Run({g, x}, {dx}, {WEFT_REQ_WRITE}, {}, true);
    std::vector<float> out;
    dx.SyncCopyToCPU(&out);
    return out;
  };
  a = backward(weft::Context::cpu(0), g_cpu, x_cpu);
  b = backward(sim, g_cpu.Copy(sim), x_sim);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(a[i], b[i]) << i;
}

TEST(CustomOp, DuplicateOpNameIsRefusedNamingBothPlugins) {
  ASSERT_TRUE(Load("libswish_op.so").accepted);
  const weft::PluginRecord dup = Load("libswish_dup.so");
  ASSERT_TRUE(dup.accepted) << dup.reason;  // the plugin stays usable; only its definition is refused
  EXPECT_EQ(weft::OpRegistry::Get().Find("Swish")->source, "swish");

  const weft::PluginOpDef* from_dup = nullptr;
  std::vector<weft::PluginOpDef> defs = weft::internal::OpDefs(weft::Runtime::Get());
  for (const weft::PluginOpDef& d : defs)
    if (d.plugin->name() == "swish_dup") from_dup = &d;
  ASSERT_NE(from_dup, nullptr);
  try {
    weft::OpRegistry::Get().Register(
        weft::opdef::AdaptPluginOpDef(*from_dup->def, from_dup->plugin_state, "swish_dup"));
    ADD_FAILURE() << "a second definition of Swish was registered";
  } catch (const weft::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Swish"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'swish'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("swish_dup"), std::string::npos) << msg;
  }
}

}  // namespace

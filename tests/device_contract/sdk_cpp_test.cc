// The SDK's C++ layer (sdk/include/weft/sdk/cpp: device.hpp, host_queue.hpp, queued_kernels.hpp)
// exercised in-process through the C tables it generates, with core's error objects as the
// host's: exceptions become error codes, queued kernels run in stream order, and a queued
// kernel's error object comes back unchanged from stream_synchronize.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <vector>

#include "contract_support.h"
#include "weft/runtime.h"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"

namespace weft::contract {
namespace {

// Host memory device whose Allocate throws what the test asks for.
class TestDevice final : public sdk::HostQueueDevice {
 public:
  TestDevice() : sdk::HostQueueDevice("testdev") {}
  ~TestDevice() override { DrainStreams(); }
  int32_t Count() override { return 1; }
  void Properties(int32_t, weft_device_props& p) override { std::strcpy(p.name, "test"); }
  weft_device_ptr Allocate(int32_t, uint64_t bytes, uint64_t) override {
    if (bytes == 1) throw std::bad_alloc();
    if (bytes == 2) throw std::runtime_error("plugin bug");
    if (bytes == 3) throw 42;
    if (bytes == 4) throw sdk::Error(WEFT_ERR_UNAVAILABLE, "device lost");
    blocks_.emplace_back(bytes);
    return static_cast<weft_device_ptr>(reinterpret_cast<uintptr_t>(blocks_.back().data()));
  }
  void Free(int32_t, weft_device_ptr) override {}
  void* HostAddress(int32_t, weft_device_ptr ptr, uint64_t offset, uint64_t) override {
    return reinterpret_cast<char*>(static_cast<uintptr_t>(ptr)) + offset;
  }

 private:
  std::deque<std::vector<char>> blocks_;
};

// Kernel "scale2": out = 2 * in (float32); "fail": returns an error object naming itself.
weft_error* Scale2(void*, const weft_kernel_args* a) {
  const auto* in = reinterpret_cast<const float*>(static_cast<uintptr_t>(a->inputs[0].data + a->inputs[0].offset));
  auto* out = reinterpret_cast<float*>(static_cast<uintptr_t>(a->outputs[0].data + a->outputs[0].offset));
  for (int64_t i = 0; i < a->inputs[0].shape[0]; ++i) out[i] = 2 * in[i];
  return nullptr;
}
weft_error* Fail(void*, const weft_kernel_args*) { return CreateError(WEFT_ERR_UNSUPPORTED, "fail kernel ran"); }

std::atomic<int> g_states{0};
weft_error* CountingCreate(void*, weft_kernel_state_args* a) {
  ++g_states;
  a->state = &g_states;
  a->workspace_bytes = 16;
  return nullptr;
}
void CountingDestroy(void*, void* state) {
  EXPECT_EQ(state, &g_states);
  --g_states;
}

class TestPlugin final : public sdk::Plugin {
 public:
  TestPlugin() : kernels_(Table(), &device_, "testdev") {
    Provide(&device_);
    Provide(kernels_.api());
  }
  static const weft_operator_api* Table() {
    static weft_kernel_def scale{sizeof(weft_kernel_def), "scale2",         "cpu",  WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32),
                                 &CountingCreate,         &CountingDestroy, &Scale2};
    static weft_kernel_def fail{
        sizeof(weft_kernel_def), "fail", "cpu", WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32), nullptr, nullptr, &Fail};
    static const weft_kernel_def* defs[] = {&scale, &fail};
    static weft_operator_api api{sizeof(weft_operator_api), 0, nullptr, 2, defs};
    return &api;
  }
  TestDevice device_;
  sdk::QueuedKernels kernels_;
};

class SdkCpp : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.struct_size = sizeof(host_);
    host_.error_create = [](void*, int32_t code, const char* msg, size_t len) {
      return CreateError(code, std::string_view(msg, len));
    };
    sdk::SetHost(&host_);
    plugin_ = std::make_unique<TestPlugin>();
    st_ = static_cast<sdk::Plugin*>(plugin_.get());
    dev_ = plugin_->device()->api();
    ops_ = plugin_->operators();
  }
  void TearDown() override {
    plugin_.reset();
    sdk::SetHost(nullptr);
  }
  const weft_kernel_def* Kernel(const char* name) {
    for (int32_t i = 0; i < ops_->num_kernels; ++i)
      if (std::strcmp(ops_->kernels[i]->op_name, name) == 0) return ops_->kernels[i];
    return nullptr;
  }
  weft_host_api host_{};
  std::unique_ptr<TestPlugin> plugin_;
  void* st_ = nullptr;
  const weft_device_api* dev_ = nullptr;
  const weft_operator_api* ops_ = nullptr;
};

TEST_F(SdkCpp, ExceptionsBecomeErrorCodes) {
  weft_alloc_args a{};
  a.struct_size = sizeof(a);
  const std::pair<uint64_t, int32_t> cases[] = {
      {1, WEFT_ERR_OUT_OF_MEMORY}, {2, WEFT_ERR_INTERNAL}, {3, WEFT_ERR_UNKNOWN}, {4, WEFT_ERR_UNAVAILABLE}};
  for (auto [bytes, code] : cases) {
    a.bytes = bytes;
    const Outcome o = Take(dev_->allocate(st_, &a));
    EXPECT_EQ(o.code, code) << bytes;
    EXPECT_FALSE(o.message.empty());
  }
  EXPECT_EQ(dev_->device_count(st_), 1);
  EXPECT_EQ(std::string(dev_->device_type), "testdev");
  EXPECT_EQ(dev_->pinned_alloc, nullptr) << "optional entries stay NULL unless the device has them";
}

TEST_F(SdkCpp, WrappedKernelsClaimTheDeviceTypeAndKeepTheirStates) {
  const weft_kernel_def* k = Kernel("scale2");
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->device_type, "testdev");
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  weft_shape shape{1, {4}};
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.op_name = "scale2";
  sa.num_inputs = 1;
  sa.input_shapes = &shape;
  sa.input_dtypes = &dtype;
  ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0);
  EXPECT_EQ(g_states.load(), 1);
  EXPECT_EQ(sa.workspace_bytes, 16u) << "the original kernel's workspace request passes through";
  k->destroy_state(st_, sa.state);
  EXPECT_EQ(g_states.load(), 0);
  dtype = WEFT_DTYPE_INT8;
  EXPECT_EQ(Take(k->create_state(st_, &sa)).code, WEFT_ERR_UNSUPPORTED) << "no kernel for int8";
}

TEST_F(SdkCpp, QueuedKernelRunsAfterEarlierStreamWork) {
  const weft_kernel_def* k = Kernel("scale2");
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  weft_shape shape{1, {1000}};
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.op_name = "scale2";
  sa.num_inputs = 1;
  sa.input_shapes = &shape;
  sa.input_dtypes = &dtype;
  ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0);

  weft_alloc_args in{}, out{};
  in.struct_size = out.struct_size = sizeof(in);
  in.bytes = out.bytes = 1000 * sizeof(float);
  ASSERT_EQ(Take(dev_->allocate(st_, &in)).code, 0);
  ASSERT_EQ(Take(dev_->allocate(st_, &out)).code, 0);
  weft_stream s = nullptr;
  ASSERT_EQ(Take(dev_->stream_create(st_, 0, &s)).code, 0);
  std::vector<float> src(1000), dst(1000, -1);
  for (int i = 0; i < 1000; ++i) src[static_cast<size_t>(i)] = static_cast<float>(i);

  weft_copy_args cp{};
  cp.struct_size = sizeof(cp);
  cp.kind = WEFT_COPY_HOST_TO_DEVICE;
  cp.src_host = src.data();
  cp.dst = in.ptr;
  cp.bytes = in.bytes;
  cp.stream = s;
  ASSERT_EQ(Take(dev_->copy(st_, &cp)).code, 0);
  {
    // Everything the call points to dies before the queued kernel runs: it must have been copied.
    int64_t dims[1] = {1000};
    weft_tensor tin{sizeof(weft_tensor), in.ptr, 0, WEFT_DTYPE_FLOAT32, 0, 1, dims};
    weft_tensor tout{sizeof(weft_tensor), out.ptr, 0, WEFT_DTYPE_FLOAT32, 0, 1, dims};
    int32_t req = WEFT_REQ_WRITE;
    weft_kernel_args ka{};
    ka.struct_size = sizeof(ka);
    ka.state = sa.state;
    ka.num_inputs = 1;
    ka.inputs = &tin;
    ka.num_outputs = 1;
    ka.outputs = &tout;
    ka.req = &req;
    ka.stream = s;
    ASSERT_EQ(Take(k->compute(st_, &ka)).code, 0);
    dims[0] = -7;
    tin.data = 0;
  }
  cp = weft_copy_args{};
  cp.struct_size = sizeof(cp);
  cp.kind = WEFT_COPY_DEVICE_TO_HOST;
  cp.src = out.ptr;
  cp.dst_host = dst.data();
  cp.bytes = out.bytes;
  cp.stream = s;
  ASSERT_EQ(Take(dev_->copy(st_, &cp)).code, 0);
  ASSERT_EQ(Take(dev_->stream_synchronize(st_, s)).code, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(dst[static_cast<size_t>(i)], 2.0f * static_cast<float>(i)) << i;
  EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
  k->destroy_state(st_, sa.state);
}

TEST_F(SdkCpp, StreamSynchronizeReturnsTheFirstAsyncErrorOnce) {
  const weft_kernel_def* k = Kernel("fail");
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.op_name = "fail";
  ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0) << "a single kernel for the op is found without dtypes";
  weft_stream s = nullptr;
  ASSERT_EQ(Take(dev_->stream_create(st_, 0, &s)).code, 0);
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.state = sa.state;
  ka.stream = s;
  ASSERT_EQ(Take(k->compute(st_, &ka)).code, 0) << "queued: the error comes later";
  const Outcome o = Take(dev_->stream_synchronize(st_, s));
  EXPECT_EQ(o.code, WEFT_ERR_UNSUPPORTED);
  EXPECT_EQ(o.message, "fail kernel ran") << "the kernel's own error object, unchanged";
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, s)).code, 0) << "reported once, then cleared";
  ka.stream = nullptr;
  EXPECT_EQ(Take(k->compute(st_, &ka)).code, WEFT_ERR_UNSUPPORTED) << "NULL stream: synchronous error";
  EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, s)).code, WEFT_ERR_INVALID_ARGUMENT) << "destroyed stream";
  k->destroy_state(st_, sa.state);
}

TEST(SdkNegotiate, PicksTheHighestCommonVersion) {
  weft_plugin_entry_args a{};
  a.struct_size = sizeof(a);
  a.host_min = WEFT_SDK_MAKE_VERSION(1, 0);
  a.host_max = WEFT_SDK_MAKE_VERSION(1, 9);
  EXPECT_EQ(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(1, 2), WEFT_SDK_MAKE_VERSION(1, 5)), 0);
  EXPECT_EQ(a.chosen, WEFT_SDK_MAKE_VERSION(1, 5));
  a.host_max = WEFT_SDK_MAKE_VERSION(1, 3);
  EXPECT_EQ(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(1, 2), WEFT_SDK_MAKE_VERSION(1, 5)), 0);
  EXPECT_EQ(a.chosen, WEFT_SDK_MAKE_VERSION(1, 3)) << "an older host: its max minor";
  a.host_max = WEFT_SDK_MAKE_VERSION(1, 1);
  EXPECT_NE(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(1, 2), WEFT_SDK_MAKE_VERSION(1, 5)), 0);
  EXPECT_NE(std::string(a.message).find("1.2..1.5"), std::string::npos) << a.message;
  EXPECT_NE(std::string(a.message).find("newer weft"), std::string::npos) << a.message;
  a.host_min = WEFT_SDK_MAKE_VERSION(2, 0);
  a.host_max = WEFT_SDK_MAKE_VERSION(2, 1);
  EXPECT_NE(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(1, 0), WEFT_SDK_MAKE_VERSION(1, 5)), 0);
  EXPECT_NE(std::string(a.message).find("rebuild the plugin"), std::string::npos) << a.message;
}

}  // namespace
}  // namespace weft::contract

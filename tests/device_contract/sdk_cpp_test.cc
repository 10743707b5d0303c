// The SDK's C++ layer (sdk/include/weft/sdk/cpp: device.hpp, host_queue.hpp, queued_kernels.hpp)
// exercised in-process through the C tables it generates, with core's host services as the
// host: exceptions become error codes, queued kernels run in stream order, a queued kernel's
// failure comes back (same code and message) from stream_synchronize and from events recorded
// after it, follows stream waits, native handles reach the queues and memory, and two plugin
// objects in one library do not share state (no per-library globals). Also process.hpp's
// ProcessGone, which the transports use to name a local peer that died.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "contract_support.h"
#include "weft/internal/host_services.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/cpp/host_queue.hpp"
#include "weft/sdk/cpp/plugin.hpp"
#include "weft/sdk/cpp/process.hpp"
#include "weft/sdk/cpp/queued_kernels.hpp"

namespace weft::contract {
namespace {

// Host memory device whose Allocate throws what the test asks for.
class TestDevice final : public sdk::HostQueueDevice {
 public:
  explicit TestDevice(const weft_host_api* host) : sdk::HostQueueDevice("testdev", host) {}
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

weft_kernel_def KernelDef(const char* name, weft_error* (*create)(void*, weft_kernel_state_args*),
                          void (*destroy)(void*, void*), weft_error* (*compute)(void*, const weft_kernel_args*)) {
  weft_kernel_def d{};
  d.struct_size = sizeof(d);
  d.op_name = name;
  d.device_type = "cpu";
  d.dtypes = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  d.create_state = create;
  d.destroy_state = destroy;
  d.compute = compute;
  return d;
}

class TestPlugin final : public sdk::Plugin {
 public:
  explicit TestPlugin(const weft_host_api* host)
      : sdk::Plugin(host), device_(host), kernels_(Table(), &device_, "testdev", host) {
    Provide(&device_);
    Provide(kernels_.api());
  }
  static const weft_operator_api* Table() {
    static weft_kernel_def scale = KernelDef("scale2", &CountingCreate, &CountingDestroy, &Scale2);
    static weft_kernel_def fail = KernelDef("fail", nullptr, nullptr, &Fail);
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
    host_ = CreateHostApi("sdk_cpp_test", WEFT_SDK_VERSION);
    plugin_ = std::make_unique<TestPlugin>(host_);
    st_ = static_cast<sdk::Plugin*>(plugin_.get());
    dev_ = plugin_->device()->api();
    ops_ = plugin_->operators();
  }
  void TearDown() override {
    plugin_.reset();
    ReleaseHostApi(host_);
  }
  const weft_kernel_def* Kernel(const char* name) {
    for (int32_t i = 0; i < ops_->num_kernels; ++i)
      if (std::strcmp(ops_->kernels[i]->op_name, name) == 0) return ops_->kernels[i];
    return nullptr;
  }
  // create_state args for one float32-or-other input of `shape` (the pointers must outlive the call).
  static weft_kernel_state_args StateArgs(const weft_kernel_def* k, const char* op, const weft_shape* shape,
                                          const int32_t* dtype) {
    weft_kernel_state_args sa{};
    sa.struct_size = sizeof(sa);
    sa.kernel_data = k->kernel_data;
    sa.op_name = op;
    sa.num_inputs = 1;
    sa.input_shapes = shape;
    sa.input_dtypes = dtype;
    return sa;
  }
  weft_stream NewStream() {
    weft_stream_create_args a{};
    a.struct_size = sizeof(a);
    EXPECT_EQ(Take(dev_->stream_create(st_, &a)).code, 0);
    return a.stream;
  }
  weft_event NewEvent() {
    weft_event_create_args a{};
    a.struct_size = sizeof(a);
    EXPECT_EQ(Take(dev_->event_create(st_, &a)).code, 0);
    return a.event;
  }
  // Queues the "fail" kernel on `s` (its state is made and destroyed here: a stateless kernel).
  void QueueFailure(weft_stream s) {
    const weft_kernel_def* k = Kernel("fail");
    weft_kernel_state_args sa{};
    sa.struct_size = sizeof(sa);
    sa.kernel_data = k->kernel_data;
    sa.op_name = "fail";
    ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0);
    weft_kernel_args ka{};
    ka.struct_size = sizeof(ka);
    ka.kernel_data = k->kernel_data;
    ka.state = sa.state;
    ka.stream = s;
    ASSERT_EQ(Take(k->compute(st_, &ka)).code, 0) << "queued: the error comes later";
    k->destroy_state(st_, sa.state);  // the queued run holds what it needs
  }
  const weft_host_api* host_ = nullptr;
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
  const char* reason = "untouched";
  EXPECT_EQ(dev_->device_count(st_, &reason), 1);
  EXPECT_STREQ(reason, "untouched") << "the reason is only set when there are no devices";
  EXPECT_EQ(std::string(dev_->device_type), "testdev");
  EXPECT_EQ(dev_->pinned_alloc, nullptr) << "optional entries stay NULL unless the device has them";
}

TEST_F(SdkCpp, WrappedKernelsClaimTheDeviceTypeAndKeepTheirStates) {
  const weft_kernel_def* k = Kernel("scale2");
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->device_type, "testdev");
  int32_t dtype = WEFT_DTYPE_FLOAT32;
  weft_shape shape{1, {4}};
  weft_kernel_state_args sa = StateArgs(k, "scale2", &shape, &dtype);
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
  weft_kernel_state_args sa = StateArgs(k, "scale2", &shape, &dtype);
  ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0);

  weft_alloc_args in{}, out{};
  in.struct_size = out.struct_size = sizeof(in);
  in.bytes = out.bytes = 1000 * sizeof(float);
  ASSERT_EQ(Take(dev_->allocate(st_, &in)).code, 0);
  ASSERT_EQ(Take(dev_->allocate(st_, &out)).code, 0);
  weft_stream s = NewStream();
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
    weft_tensor tin{sizeof(weft_tensor), in.ptr, 0, WEFT_DTYPE_FLOAT32, 0, 1, dims, nullptr};
    weft_tensor tout{sizeof(weft_tensor), out.ptr, 0, WEFT_DTYPE_FLOAT32, 0, 1, dims, nullptr};
    int32_t req = WEFT_REQ_WRITE;
    weft_kernel_args ka{};
    ka.struct_size = sizeof(ka);
    ka.kernel_data = k->kernel_data;
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
  weft_stream s = NewStream();
  QueueFailure(s);
  const Outcome o = Take(dev_->stream_synchronize(st_, s));
  EXPECT_EQ(o.code, WEFT_ERR_UNSUPPORTED);
  EXPECT_EQ(o.message, "fail kernel ran") << "the kernel's own code and message";
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, s)).code, 0) << "reported once, then cleared";
  const weft_kernel_def* k = Kernel("fail");
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.kernel_data = k->kernel_data;
  EXPECT_EQ(Take(k->compute(st_, &ka)).code, WEFT_ERR_INVALID_ARGUMENT) << "no state: refused at once";
  EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, s)).code, WEFT_ERR_INVALID_ARGUMENT) << "destroyed stream";
}

TEST_F(SdkCpp, OnTheNullStreamAQueuedKernelFailsAtOnce) {
  const weft_kernel_def* k = Kernel("fail");
  weft_kernel_state_args sa{};
  sa.struct_size = sizeof(sa);
  sa.kernel_data = k->kernel_data;
  sa.op_name = "fail";
  ASSERT_EQ(Take(k->create_state(st_, &sa)).code, 0) << "a single kernel for the op is found without dtypes";
  weft_kernel_args ka{};
  ka.struct_size = sizeof(ka);
  ka.kernel_data = k->kernel_data;
  ka.state = sa.state;
  EXPECT_EQ(Take(k->compute(st_, &ka)).code, WEFT_ERR_UNSUPPORTED) << "NULL stream: synchronous error";
  k->destroy_state(st_, sa.state);
}

TEST_F(SdkCpp, EventsRecordedAfterAFailureReportItUntilTheStreamIsSynchronized) {
  weft_stream s = NewStream();
  weft_event before = NewEvent(), after = NewEvent();
  ASSERT_EQ(Take(dev_->event_record(st_, before, s)).code, 0);
  QueueFailure(s);
  ASSERT_EQ(Take(dev_->event_record(st_, after, s)).code, 0);
  EXPECT_EQ(Take(dev_->event_synchronize(st_, before)).code, 0) << "work before the failure completed cleanly";
  const Outcome o = Take(dev_->event_synchronize(st_, after));
  EXPECT_EQ(o.code, WEFT_ERR_UNSUPPORTED);
  EXPECT_EQ(o.message, "fail kernel ran");
  int32_t done = 0;
  EXPECT_EQ(Take(dev_->event_query(st_, after, &done)).code, WEFT_ERR_UNSUPPORTED) << "every report, a new object";
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, s)).code, WEFT_ERR_UNSUPPORTED) << "sticky until synchronised";
  ASSERT_EQ(Take(dev_->event_record(st_, after, s)).code, 0);
  EXPECT_EQ(Take(dev_->event_synchronize(st_, after)).code, 0) << "a record after the clearing sync is clean";
  EXPECT_EQ(Take(dev_->event_query(st_, after, &done)).code, 0);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(Take(dev_->event_destroy(st_, before)).code, 0);
  EXPECT_EQ(Take(dev_->event_destroy(st_, after)).code, 0);
  EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
}

TEST_F(SdkCpp, AFailureFollowsAStreamWait) {
  weft_stream a = NewStream(), b = NewStream();
  weft_event ea = NewEvent(), eb = NewEvent();
  QueueFailure(a);
  ASSERT_EQ(Take(dev_->event_record(st_, ea, a)).code, 0);
  ASSERT_EQ(Take(dev_->stream_wait_event(st_, b, ea)).code, 0) << "stream_wait_event itself never reports it";
  ASSERT_EQ(Take(dev_->event_record(st_, eb, b)).code, 0);
  EXPECT_EQ(Take(dev_->event_synchronize(st_, eb)).code, WEFT_ERR_UNSUPPORTED)
      << "work on b that waited for failed work on a reports the failure";
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, b)).code, WEFT_ERR_UNSUPPORTED);
  EXPECT_EQ(Take(dev_->stream_synchronize(st_, a)).code, WEFT_ERR_UNSUPPORTED);
  for (weft_event e : {ea, eb}) EXPECT_EQ(Take(dev_->event_destroy(st_, e)).code, 0);
  for (weft_stream s : {a, b}) EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
}

TEST_F(SdkCpp, NativeHandlesReachTheQueueAndTheMemory) {
  ASSERT_NE(dev_->native_handle, nullptr);
  weft_stream s = NewStream();
  weft_alloc_args buf{};
  buf.struct_size = sizeof(buf);
  buf.bytes = 64;
  ASSERT_EQ(Take(dev_->allocate(st_, &buf)).code, 0);

  weft_native_handle_args m{};
  m.struct_size = sizeof(m);
  m.what = WEFT_NATIVE_MEMORY;
  m.ptr = buf.ptr;
  m.offset = 8;
  ASSERT_EQ(Take(dev_->native_handle(st_, &m)).code, 0);
  EXPECT_EQ(m.kind, WEFT_NATIVE_KIND_HOST_POINTER);
  EXPECT_EQ(m.handle, reinterpret_cast<char*>(static_cast<uintptr_t>(buf.ptr)) + 8);

  weft_native_handle_args q{};
  q.struct_size = sizeof(q);
  q.what = WEFT_NATIVE_STREAM;
  q.stream = s;
  ASSERT_EQ(Take(dev_->native_handle(st_, &q)).code, 0);
  ASSERT_EQ(q.kind, WEFT_NATIVE_KIND_HOST_QUEUE);
  auto* queue = static_cast<weft_host_queue*>(q.handle);
  ASSERT_NE(queue, nullptr);
  struct Job {
    float* dst;
    static weft_error* Run(void* self) {
      *static_cast<Job*>(self)->dst = 42.0f;
      return nullptr;
    }
  } job{static_cast<float*>(m.handle)};
  ASSERT_EQ(Take(queue->enqueue(queue->queue, &Job::Run, &job)).code, 0);
  ASSERT_EQ(Take(dev_->stream_synchronize(st_, s)).code, 0);
  EXPECT_EQ(*static_cast<float*>(m.handle), 42.0f) << "foreign work ran on the stream";

  struct Bad {
    static weft_error* Run(void* host) {
      const auto* h = static_cast<const weft_host_api*>(host);
      return h->error_create(h->host_ctx, WEFT_ERR_INTERNAL, "foreign failure", 15);
    }
  };
  ASSERT_EQ(Take(queue->enqueue(queue->queue, &Bad::Run, const_cast<weft_host_api*>(host_))).code, 0);
  const Outcome o = Take(dev_->stream_synchronize(st_, s));
  EXPECT_EQ(o.code, WEFT_ERR_INTERNAL) << "a foreign task's error becomes the stream's";
  EXPECT_EQ(o.message, "foreign failure");
  EXPECT_EQ(Take(dev_->stream_destroy(st_, s)).code, 0);
  EXPECT_EQ(Take(dev_->free(st_, 0, buf.ptr)).code, 0);
}

TEST_F(SdkCpp, TwoPluginObjectsInOneLibraryKeepTheirOwnHostAndKernels) {
  // A second host and plugin object beside the fixture's: with per-library globals the second
  // would have replaced the first's host and kernel table.
  const weft_host_api* other_host = CreateHostApi("sdk_cpp_test_2", WEFT_SDK_VERSION);
  auto other = std::make_unique<TestPlugin>(other_host);
  const weft_kernel_def* mine = Kernel("scale2");
  const weft_kernel_def* theirs = nullptr;
  for (int32_t i = 0; i < other->operators()->num_kernels; ++i)
    if (std::strcmp(other->operators()->kernels[i]->op_name, "scale2") == 0) theirs = other->operators()->kernels[i];
  ASSERT_NE(theirs, nullptr);
  EXPECT_NE(mine->kernel_data, theirs->kernel_data);
  other.reset();
  ReleaseHostApi(other_host);
  // The fixture's plugin still works after the other one is gone.
  int32_t dtype = WEFT_DTYPE_INT8;
  weft_shape shape{1, {4}};
  weft_kernel_state_args sa = StateArgs(mine, "scale2", &shape, &dtype);
  const Outcome o = Take(mine->create_state(st_, &sa));
  EXPECT_EQ(o.code, WEFT_ERR_UNSUPPORTED) << "errors still come through the fixture's host";
  EXPECT_NE(o.message.find("testdev"), std::string::npos) << o.message;
}

TEST(SdkNegotiate, PicksTheHighestCommonVersion) {
  weft_plugin_entry_args a{};
  a.struct_size = sizeof(a);
  a.host_min = WEFT_SDK_MAKE_VERSION(2, 0);
  a.host_max = WEFT_SDK_MAKE_VERSION(2, 9);
  EXPECT_EQ(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(2, 2), WEFT_SDK_MAKE_VERSION(2, 5)), 0);
  EXPECT_EQ(a.chosen, WEFT_SDK_MAKE_VERSION(2, 5));
  a.host_max = WEFT_SDK_MAKE_VERSION(2, 3);
  EXPECT_EQ(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(2, 2), WEFT_SDK_MAKE_VERSION(2, 5)), 0);
  EXPECT_EQ(a.chosen, WEFT_SDK_MAKE_VERSION(2, 3)) << "an older host: its max minor";
  a.host_max = WEFT_SDK_MAKE_VERSION(2, 1);
  EXPECT_NE(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(2, 2), WEFT_SDK_MAKE_VERSION(2, 5)), 0);
  EXPECT_NE(std::string(a.message).find("2.2..2.5"), std::string::npos) << a.message;
  EXPECT_NE(std::string(a.message).find("newer weft"), std::string::npos) << a.message;
  a.host_min = WEFT_SDK_MAKE_VERSION(3, 0);
  a.host_max = WEFT_SDK_MAKE_VERSION(3, 1);
  EXPECT_NE(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(2, 0), WEFT_SDK_MAKE_VERSION(2, 5)), 0);
  EXPECT_NE(std::string(a.message).find("rebuild the plugin"), std::string::npos) << a.message;
  a.host_min = WEFT_SDK_MAKE_VERSION(2, 0);
  a.host_max = WEFT_SDK_MAKE_VERSION(2, 0);
  EXPECT_NE(sdk::Negotiate(&a, "p", WEFT_SDK_MAKE_VERSION(1, 0), WEFT_SDK_MAKE_VERSION(1, 5)), 0)
      << "an SDK 1.x plugin is refused by a 2.x host";
}

// A child named with a space and a ')' (what a whitespace split of /proc/<pid>/stat misreads):
// running, then killed and not reaped (a zombie), then reaped (gone).
TEST(SdkProcess, ProcessGoneSeesRunningZombieAndReapedPeers) {
  EXPECT_FALSE(sdk::ProcessGone(0));
  EXPECT_FALSE(sdk::ProcessGone(-1));
  EXPECT_FALSE(sdk::ProcessGone(static_cast<int>(getpid())));
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "a b) Z c", 0, 0, 0);
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    for (;;) pause();
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  close(ready[1]);
  EXPECT_FALSE(sdk::ProcessGone(static_cast<int>(child))) << "a running peer named 'a b) Z c'";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  bool zombie = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!zombie && std::chrono::steady_clock::now() < deadline) {
    zombie = sdk::ProcessGone(static_cast<int>(child));
    if (!zombie) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(zombie) << "the killed, unreaped child is a zombie within 10 s";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(sdk::ProcessGone(static_cast<int>(child))) << "reaped: /proc/<pid> is gone";
}

}  // namespace
}  // namespace weft::contract

// The engine on device contexts other than cpu (the simdev plugin when it is loaded): streams,
// ordering by events across streams and pools, no host waits inside device chains, failures of
// queued work reported to the waiter, copies staged through host buffers.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_util.h"
#include "plugin/error_object.h"
#include "require.h"
#include "weft/engine.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

namespace weft {
namespace {

// The non-cpu device to test on, or null with the reason in `why`.
Device* TestDevice(std::string* why) {
  Runtime& rt = Runtime::Get();
  if (rt.DeviceCount("simdev") > 0) return &internal::GetDevice(rt, Context("simdev", 0));
  std::string types;
  for (const auto& t : rt.DeviceTypes()) types += (types.empty() ? "" : ", ") + t;
  *why = "no simdev device is loaded (device types: " + (types.empty() ? std::string("none") : types) +
         "; WEFT_PLUGIN_PATH=" + (std::getenv("WEFT_PLUGIN_PATH") ? std::getenv("WEFT_PLUGIN_PATH") : "") + ")";
  return nullptr;
}

class EngineDevice : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    std::string why;
    device_ = TestDevice(&why);
    if (!device_) WEFT_SKIP_UNLESS_REQUIRED() << why;
    engine_ = test::MakeEngine(GetParam());
    ctx_ = device_->context();
  }
  Device* device_ = nullptr;
  std::unique_ptr<Engine> engine_;
  Context ctx_;
};

// The tests about work queued on streams, which only the threaded engine queues (the naive engine
// runs device work synchronously).
class EngineDeviceQueued : public EngineDevice {};

TEST_P(EngineDevice, StreamWorkIsVisibleToDependants) {
  constexpr uint64_t kBytes = 1 << 20;
  weft_device_ptr buf = device_->Allocate(kBytes);
  VarHandle v = engine_->NewVariable();
  // Host buffers the readbacks fill asynchronously (on their stream) until WaitForAll.
  std::vector<std::vector<uint8_t>> seen(8, std::vector<uint8_t>(kBytes));
  for (int round = 0; round < 8; ++round) {
    const uint8_t value = static_cast<uint8_t>(0x10 + round);
    // Queued on the worker's stream (asynchronous on a device with streams) ...
    engine_->PushSync([&, value](RunContext r) { device_->Memset(buf, 0, kBytes, value, r.stream); }, ctx_, {}, {v},
                      FnProperty::kNormal, 0, "memset");
    // ... and read back by the next op, on the copy pool's own stream: ordered by an event.
    engine_->PushSync([&, round](RunContext r) { device_->CopyToHost(seen[round].data(), buf, 0, kBytes, r.stream); },
                      ctx_, {v}, {}, FnProperty::kCopyFromDevice, 0, "readback");
  }
  engine_->WaitForAll();
  ASSERT_EQ(seen.size(), 8u);
  for (size_t round = 0; round < seen.size(); ++round) {
    const uint8_t value = static_cast<uint8_t>(0x10 + round);
    size_t bad = 0;
    for (uint8_t b : seen[round]) bad += b != value;
    EXPECT_EQ(bad, 0u) << "round " << round << ": the readback saw the memset unfinished";
  }
  engine_->DeleteVariable([&](RunContext) { device_->Free(buf); }, ctx_, v);
  engine_->WaitForAll();
}

TEST_P(EngineDevice, AsyncOpsCompletedLaterStillSynchroniseTheirStream) {
  constexpr uint64_t kBytes = 1 << 16;
  weft_device_ptr buf = device_->Allocate(kBytes);
  VarHandle v = engine_->NewVariable();
  std::vector<std::thread> helpers;
  std::mutex helpers_mu;
  std::vector<uint8_t> host(kBytes);
  for (int round = 0; round < 4; ++round) {
    const uint8_t value = static_cast<uint8_t>(0x40 + round);
    // The function returns before its completion is reported (from another thread), so the
    // engine must order the stream work some other way than synchronising at return.
    engine_->PushAsync(
        [&, value](RunContext r, CallbackOnComplete done) {
          device_->Memset(buf, 0, kBytes, value, r.stream);
          std::lock_guard<std::mutex> lock(helpers_mu);
          helpers.emplace_back([done] { done(); });
        },
        ctx_, {}, {v}, FnProperty::kNormal, 0, "async-memset");
    engine_->PushSync([&](RunContext r) { device_->CopyToHost(host.data(), buf, 0, kBytes, r.stream); }, ctx_, {v}, {});
    engine_->WaitForAll();
    size_t bad = 0;
    for (uint8_t b : host) bad += b != value;
    EXPECT_EQ(bad, 0u) << "round " << round;
  }
  for (auto& t : helpers) t.join();
  engine_->DeleteVariable([&](RunContext) { device_->Free(buf); }, ctx_, v);
  engine_->WaitForAll();
}

TEST_P(EngineDevice, RunContextCarriesAStreamOnlyWhereNeeded) {
  VarHandle v = engine_->NewVariable();
  weft_stream stream = nullptr;
  Context got;
  engine_->PushSync(
      [&](RunContext r) {
        stream = r.stream;
        got = r.ctx;
      },
      ctx_, {}, {v});
  engine_->WaitForVar(v);
  EXPECT_EQ(got, ctx_);
  if (GetParam() == EngineType::kNaive || device_->host_addressable()) {
    EXPECT_EQ(stream, nullptr);
  } else {
    EXPECT_NE(stream, nullptr) << "workers of a non-host-addressable device need a stream";
  }
  engine_->DeleteVariable({}, ctx_, v);
  engine_->WaitForAll();
}

// The engine's promise for device chains: dependent device ops are ordered by their stream (or by
// stream_wait_event across streams and pools), and the host blocks once, when it reads the result.
// The host waits are counted inside the last op of the chain, when the engine has run (queued)
// every op before it, and again after the result was read.
TEST_P(EngineDeviceQueued, DeviceChainsNeedNoHostWaitUntilTheResultIsRead) {
  constexpr uint64_t kBytes = 4096;
  constexpr int kOps = 60;
  weft_device_ptr a = device_->Allocate(kBytes), b = device_->Allocate(kBytes);
  VarHandle va = engine_->NewVariable(), vb = engine_->NewVariable();
  std::vector<uint8_t> host(kBytes);
  std::atomic<int> ran{0};
  const uint64_t waits0 = device_->host_waits();
  for (int i = 0; i < kOps; ++i) {
    const auto value = static_cast<uint8_t>(i + 1);
    // a := value on a compute stream; b := a on a copy stream (another stream: ordered by an event).
    engine_->PushSync(
        [&, value](RunContext r) {
          device_->Memset(a, 0, kBytes, value, r.stream);
          ++ran;
        },
        ctx_, {}, {va}, FnProperty::kNormal, 0, "fill");
    engine_->PushSync(
        [&](RunContext r) {
          device_->CopyFromDevice(b, 0, *device_, a, 0, kBytes, r.stream);
          ++ran;
        },
        ctx_, {va}, {vb}, i % 2 ? FnProperty::kCopyToDevice : FnProperty::kNormal, 0, "copy");
  }
  uint64_t inside = 0;
  int ran_before_readback = 0;
  engine_->PushSync(
      [&](RunContext r) {
        ran_before_readback = ran.load();
        inside = device_->host_waits() - waits0;
        device_->CopyToHost(host.data(), b, 0, kBytes, r.stream);
      },
      ctx_, {vb}, {va}, FnProperty::kCopyFromDevice, 0, "readback");
  engine_->WaitForVar(va);
  const uint64_t total = device_->host_waits() - waits0;
  EXPECT_EQ(ran_before_readback, 2 * kOps) << "the readback ran before the chain it depends on";
  EXPECT_EQ(inside, 0u) << "the engine blocked the host inside a device chain";
  // At most one: when the device finished before WaitForVar (a slow host, e.g. under TSan), the
  // event is already complete and reading the result needs no wait at all.
  EXPECT_LE(total, 1u) << "reading the result should be the only host wait";
  size_t bad = 0;
  for (uint8_t x : host) bad += x != kOps;
  EXPECT_EQ(bad, 0u) << "the last copy did not see the last fill";
  engine_->DeleteVariable([&](RunContext) { device_->Free(a); }, ctx_, va);
  engine_->DeleteVariable([&](RunContext) { device_->Free(b); }, ctx_, vb);
  engine_->WaitForAll();
}

// Work on two devices of one plugin: the second device's stream waits for the first's event.
TEST_P(EngineDevice, PeerDevicesAreOrderedByEvents) {
  if (Runtime::Get().DeviceCount(ctx_.GetDeviceType()) < 2)
    WEFT_SKIP_UNLESS_REQUIRED() << "needs two devices of one plugin";
  Device& other = internal::GetDevice(Runtime::Get(), Context(ctx_.GetDeviceType(), 1));
  constexpr uint64_t kBytes = 1 << 16;
  weft_device_ptr a = device_->Allocate(kBytes), b = other.Allocate(kBytes);
  VarHandle va = engine_->NewVariable(), vb = engine_->NewVariable();
  std::vector<uint8_t> host(kBytes);
  for (int round = 1; round <= 5; ++round) {
    const auto value = static_cast<uint8_t>(0x20 + round);
    engine_->PushSync([&, value](RunContext r) { device_->Memset(a, 0, kBytes, value, r.stream); }, ctx_, {}, {va});
    engine_->PushSync([&](RunContext r) { other.CopyFromDevice(b, 0, *device_, a, 0, kBytes, r.stream); },
                      other.context(), {va}, {vb}, FnProperty::kCopyToDevice);
    engine_->PushSync([&](RunContext r) { other.CopyToHost(host.data(), b, 0, kBytes, r.stream); }, other.context(),
                      {vb}, {}, FnProperty::kCopyFromDevice);
    engine_->WaitForAll();
    size_t bad = 0;
    for (uint8_t x : host) bad += x != value;
    EXPECT_EQ(bad, 0u) << "round " << round << ": the peer copy ran before the fill it depends on";
  }
  engine_->DeleteVariable([&](RunContext) { device_->Free(a); }, ctx_, va);
  engine_->DeleteVariable([&](RunContext) { other.Free(b); }, other.context(), vb);
  engine_->WaitForAll();
}

// A failure of queued work (the stream's sticky error) reaches the waiter of the data it wrote,
// the outputs of host work that read that data, and is reported once; the device then works on.
TEST_P(EngineDeviceQueued, FailuresOfQueuedWorkReachTheWaiter) {
  constexpr uint64_t kBytes = 256;
  weft_device_ptr buf = device_->Allocate(kBytes);
  VarHandle v = engine_->NewVariable(), host_out = engine_->NewVariable();
  engine_->PushSync(
      [&](RunContext r) {
        weft_native_handle_args a{};
        a.what = WEFT_NATIVE_STREAM;
        a.stream = r.stream;
        device_->NativeHandle(a);
        ASSERT_EQ(a.kind, WEFT_NATIVE_KIND_HOST_QUEUE);
        auto* q = static_cast<weft_host_queue*>(a.handle);
        // Fails when it runs on the stream, after the op has returned.
        weft_error* queued = q->enqueue(
            q->queue,
            [](void*) -> weft_error* {
              return new weft_error{WEFT_ERR_INTERNAL, "simulated kernel fault"};
            },
            nullptr);
        ASSERT_EQ(queued, nullptr);
      },
      ctx_, {}, {v}, FnProperty::kNormal, 0, "faulty-kernel");
  engine_->PushSync([&](RunContext r) { device_->Memset(buf, 0, kBytes, 1, r.stream); }, ctx_, {}, {v});
  bool host_ran = false;
  engine_->PushSync([&](RunContext) { host_ran = true; }, Context::cpu(0), {v}, {host_out}, FnProperty::kNormal, 0,
                    "host-reader");
  // The host reader first: WaitForVar(v) does not wait for pending reads, and once it has
  // reported the failure a reader that runs later no longer sees it.
  EXPECT_THROW(engine_->WaitForVar(host_out), std::exception) << "host work reading failed data fails too";
  EXPECT_FALSE(host_ran);
  try {
    engine_->WaitForVar(v);
    ADD_FAILURE() << "WaitForVar did not report the failure of the queued work";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("simulated kernel fault"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(engine_->WaitForVar(v)) << "the failure is reported once";
  EXPECT_NO_THROW(engine_->WaitForAll()) << "already reported";
  // The stream works again.
  std::vector<uint8_t> host(kBytes);
  engine_->PushSync([&](RunContext r) { device_->Memset(buf, 0, kBytes, 7, r.stream); }, ctx_, {}, {v});
  engine_->PushSync([&](RunContext r) { device_->CopyToHost(host.data(), buf, 0, kBytes, r.stream); }, ctx_, {v},
                    {host_out});
  EXPECT_NO_THROW(engine_->WaitForVar(host_out));
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[kBytes - 1], 7);
  engine_->DeleteVariable({}, Context::cpu(0), host_out);
  engine_->DeleteVariable([&](RunContext) { device_->Free(buf); }, ctx_, v);
  engine_->WaitForAll();
}

// DeleteVariable's function runs only after the device work queued on the variable completed.
TEST_P(EngineDevice, DeletionWaitsForQueuedDeviceWork) {
  constexpr uint64_t kBytes = 1 << 16;
  weft_device_ptr buf = device_->Allocate(kBytes);
  VarHandle v = engine_->NewVariable();
  std::vector<uint8_t> host(kBytes, 0);
  std::atomic<bool> deleted{false};
  engine_->PushSync([&](RunContext r) { device_->Memset(buf, 0, kBytes, 9, r.stream); }, ctx_, {}, {v});
  engine_->PushSync([&](RunContext r) { device_->CopyToHost(host.data(), buf, 0, kBytes, r.stream); }, ctx_, {v}, {});
  engine_->DeleteVariable(
      [&](RunContext) {
        // The readback must be over: it filled `host` completely.
        size_t bad = 0;
        for (uint8_t x : host) bad += x != 9;
        EXPECT_EQ(bad, 0u) << "the deletion ran before the device work it follows";
        deleted = true;
      },
      ctx_, v);
  engine_->WaitForAll();
  EXPECT_TRUE(deleted.load());
  device_->Free(buf);
}

INSTANTIATE_TEST_SUITE_P(Types, EngineDevice, ::testing::Values(EngineType::kNaive, EngineType::kThreaded),
                         [](const auto& info) { return std::string(test::TypeName(info.param)); });
INSTANTIATE_TEST_SUITE_P(Types, EngineDeviceQueued, ::testing::Values(EngineType::kThreaded),
                         [](const auto& info) { return std::string(test::TypeName(info.param)); });

}  // namespace
}  // namespace weft

// The engine on device contexts other than cpu (the simdev plugin when it is loaded): worker
// streams, stream synchronisation before dependants run, copy pools.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_util.h"
#include "weft/device.h"
#include "weft/engine.h"
#include "weft/runtime.h"

namespace weft {
namespace {

// The non-cpu device to test on, or null with the reason in `why`.
Device* TestDevice(std::string* why) {
  Runtime& rt = Runtime::Get();
  if (rt.DeviceCount("simdev") > 0) return &rt.GetDevice(Context("simdev", 0));
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
    if (!device_) {
      std::printf("skipping: %s\n", why.c_str());
      GTEST_SKIP() << why;
    }
    engine_ = test::MakeEngine(GetParam());
    ctx_ = device_->context();
  }
  Device* device_ = nullptr;
  std::unique_ptr<Engine> engine_;
  Context ctx_;
};

TEST_P(EngineDevice, StreamWorkIsVisibleToDependants) {
  constexpr uint64_t kBytes = 1 << 20;
  weft_device_ptr buf = device_->Allocate(kBytes);
  VarHandle v = engine_->NewVariable();
  std::vector<std::vector<uint8_t>> seen;
  for (int round = 0; round < 8; ++round) {
    const uint8_t value = static_cast<uint8_t>(0x10 + round);
    // Queued on the worker's stream (asynchronous on a device with streams) ...
    engine_->PushSync([&, value](RunContext r) { device_->Memset(buf, 0, kBytes, value, r.stream); }, ctx_, {}, {v},
                      FnProperty::kNormal, 0, "memset");
    // ... and read synchronously by the next op, possibly on another worker.
    engine_->PushSync(
        [&](RunContext) {
          std::vector<uint8_t> host(kBytes);
          device_->CopyToHost(host.data(), buf, 0, kBytes, nullptr);
          seen.push_back(std::move(host));
        },
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
    engine_->PushSync([&](RunContext) { device_->CopyToHost(host.data(), buf, 0, kBytes, nullptr); }, ctx_, {v}, {});
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

INSTANTIATE_TEST_SUITE_P(Types, EngineDevice, ::testing::Values(EngineType::kNaive, EngineType::kThreaded),
                         [](const auto& info) { return std::string(test::TypeName(info.param)); });

}  // namespace
}  // namespace weft

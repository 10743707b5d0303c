// The nccl transport plugin (plugins/nccl): it cannot run collectives here (no GPU), so this tests
// what can run without one: the plugin loads and says why it has no devices, KVStore "nccl" names
// that reason, and its host-side logic (plugins/nccl/nccl_support.h): the unique-id bootstrap
// through the host's rendezvous store (a file store) with its deadline, and the deadline watchdog
// with fake ops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "nccl_support.h"
#include "weft/internal/host_services.h"
#include "weft/internal/plugin.h"
#include "weft/internal/rendezvous.h"
#include "weft/internal/runtime.h"
#include "weft/kvstore.h"

namespace {

using weft::nccl_transport::DeadlineWatchdog;
using weft::nccl_transport::ExchangeId;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;
namespace fs = std::filesystem;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class NcclBootstrap : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weft-nccl-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    weft::SetRendezvousStore(std::make_shared<weft::FileStore>(dir_.string()));
    host_ = weft::CreateHostApi("nccl_support_test", WEFT_SDK_VERSION);
  }
  void TearDown() override {
    weft::ReleaseHostApi(host_);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  const weft_host_api* host_ = nullptr;
};

TEST_F(NcclBootstrap, RankZerosIdReachesTheOthers) {
  const std::string id(128, 'x');
  std::string got1, got2;
  std::thread r1([&] {
    got1 = ExchangeId(
        host_, "job", 1, id.size(), [] { return std::string(); }, 10000);
  });
  std::thread r2([&] {
    got2 = ExchangeId(
        host_, "job", 2, id.size(), [] { return std::string(); }, 10000);
  });
  std::this_thread::sleep_for(Ms(100));  // the others wait for rank 0
  EXPECT_EQ(ExchangeId(
                host_, "job", 0, id.size(), [&] { return id; }, 10000),
            id);
  r1.join();
  r2.join();
  EXPECT_EQ(got1, id);
  EXPECT_EQ(got2, id);
}

TEST_F(NcclBootstrap, MissingRankZeroFailsAtTheDeadlineNamingIt) {
  const auto t0 = Clock::now();
  try {
    ExchangeId(
        host_, "lonely", 1, 128, [] { return std::string(); }, 300);
    FAIL() << "no error";
  } catch (const weft::sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_TIMEOUT) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0 did not publish"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("300 ms"), std::string::npos) << e.what();
  }
  EXPECT_GE(Since(t0), 0.29);  // not before its deadline
  std::printf("failed %.3f s after the call (deadline 0.3 s)\n", Since(t0));
}

TEST_F(NcclBootstrap, AnIdOfTheWrongSizeIsRefused) {
  ExchangeId(
      host_, "odd", 0, 128, [] { return std::string("short"); }, 1000);
  try {
    ExchangeId(
        host_, "odd", 1, 128, [] { return std::string(); }, 1000);
    FAIL() << "no error";
  } catch (const weft::sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("holds 5 bytes"), std::string::npos) << e.what();
  }
}

TEST(NcclWatchdog, OpsDoneInTimeAreNotAborted) {
  std::atomic<int> aborts{0};
  std::atomic<bool> done{false};
  DeadlineWatchdog w([] { return std::string(); }, [&](const std::string&) { ++aborts; });
  // A deadline far beyond the 50 ms the op takes: a stalled test thread must not look like an overdue op.
  w.Track("allreduce of key 3", Ms(60000), [&] { return done.load(); });
  std::this_thread::sleep_for(Ms(50));
  done = true;
  const auto t0 = Clock::now();
  while (w.pending() != 0 && Since(t0) < 60) std::this_thread::sleep_for(Ms(5));
  EXPECT_EQ(w.pending(), 0u);
  EXPECT_EQ(aborts.load(), 0);
  EXPECT_EQ(w.aborted(), "");
}

TEST(NcclWatchdog, AnOverdueOpAbortsOnceAtItsDeadline) {
  std::atomic<int> aborts{0};
  std::atomic<double> at{-1};
  std::string why;
  const auto t0 = Clock::now();
  DeadlineWatchdog w([] { return std::string(); },
                     [&](const std::string& r) {
                       why = r;
                       at = Since(t0);
                       ++aborts;
                     });
  w.Track("allreduce of key 7", Ms(200), [] { return false; });  // a peer never comes
  w.Track("broadcast of key 8", Ms(250), [] { return false; });
  while (aborts.load() == 0 && Since(t0) < 60) std::this_thread::sleep_for(Ms(5));
  std::this_thread::sleep_for(Ms(200));  // the second overdue op must not abort again
  EXPECT_EQ(aborts.load(), 1);
  EXPECT_GE(at.load(), 0.2);  // not before the first deadline
  std::printf("aborted %.3f s after tracking (deadline 0.2 s)\n", at.load());
  EXPECT_NE(why.find("allreduce of key 7"), std::string::npos) << why;
  EXPECT_NE(why.find("200 ms"), std::string::npos) << why;
  EXPECT_EQ(w.aborted(), why);
}

TEST(NcclWatchdog, AnAsynchronousErrorAbortsAtOnce) {
  std::atomic<bool> broken{false};
  std::atomic<int> aborts{0};
  std::string why;
  DeadlineWatchdog w([&] { return broken ? std::string("NCCL reports remote process exited") : std::string(); },
                     [&](const std::string& r) {
                       why = r;
                       ++aborts;
                     });
  w.Track("allreduce of key 1", Ms(60000), [] { return false; });
  std::this_thread::sleep_for(Ms(30));
  const auto t0 = Clock::now();
  broken = true;
  while (aborts.load() == 0 && Since(t0) < 30) std::this_thread::sleep_for(Ms(2));
  EXPECT_EQ(aborts.load(), 1);
  // At once: long before the op's own deadline (60 s).
  EXPECT_LT(Since(t0), 30.0);
  std::printf("aborted %.3f s after the error (deadline 60 s)\n", Since(t0));
  EXPECT_NE(why.find("remote process exited"), std::string::npos) << why;
}

// The plugin itself: built with the CUDA plugin when the toolkit has NCCL (not in sanitizer builds).
// comm_init's argument checks (shared by the nccl plugin and the simcoll test transport).
TEST(NcclCommArgs, SettingsAndRefusals) {
  using weft::nccl_transport::ReadCommArgs;
  weft_kv attr{"op_timeout_ms", "1500"};
  weft_comm_init_args a{};
  a.struct_size = sizeof(a);
  a.rank = 2;
  a.world_size = 3;
  a.timeout_ms = 9000;
  a.device_type = "cuda";
  a.device = 1;
  a.num_attrs = 1;
  a.attrs = &attr;
  const auto c = ReadCommArgs(&a, "nccl", "cuda", 2, "");
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.size, 3);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.rendezvous_ms, 9000);
  EXPECT_EQ(c.op_timeout_ms, 1500);
  auto refusal = [&](weft_comm_init_args args, int devices) -> std::pair<int32_t, std::string> {
    try {
      ReadCommArgs(&args, "nccl", "cuda", devices, "no GPU here");
    } catch (const weft::sdk::Error& e) {
      return {e.code(), e.what()};
    }
    return {0, ""};
  };
  auto host = a;
  host.device_type = nullptr;
  EXPECT_EQ(refusal(host, 2).first, WEFT_ERR_UNSUPPORTED);
  EXPECT_NE(refusal(host, 2).second.find("host buffers go through the gloo transport"), std::string::npos);
  EXPECT_EQ(refusal(a, 0).first, WEFT_ERR_UNAVAILABLE);
  EXPECT_NE(refusal(a, 0).second.find("0 usable devices: no GPU here"), std::string::npos);
  auto dev = a;
  dev.device = 2;
  EXPECT_NE(refusal(dev, 2).second.find("cuda(2) does not exist (2 devices)"), std::string::npos);
  auto rank = a;
  rank.rank = 3;
  EXPECT_NE(refusal(rank, 2).second.find("rank outside world_size"), std::string::npos);
  weft_kv bad{"op_timeout_ms", "soon"}, unknown{"iface", "lo"};
  auto b = a;
  b.attrs = &bad;
  EXPECT_NE(refusal(b, 2).second.find("op_timeout_ms 'soon' is not a number"), std::string::npos);
  b.attrs = &unknown;
  EXPECT_NE(refusal(b, 2).second.find("unknown attribute 'iface'"), std::string::npos);
}

TEST(NcclPlugin, LoadsAndSaysWhyItHasNoDevices) {
#ifndef WEFT_NCCL_PLUGIN_BUILT
  GTEST_SKIP() << "the nccl transport plugin is not built here (no CUDA toolkit with NCCL, or a sanitizer build)";
#else
  const weft::Plugin* nccl = nullptr;
  for (const weft::Plugin* p : weft::internal::Plugins(weft::Runtime::Get()))
    if (p->name() == "nccl") nccl = p;
  ASSERT_NE(nccl, nullptr) << "libweft-nccl.so was built but not loaded; see weft-info";
  const weft_transport_api* t = nccl->transport_api();
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->kvstore_types, "nccl,dist_device_sync");
  ASSERT_NE(t->device_count, nullptr);
  const char* reason = nullptr;
  const int32_t n = t->device_count(nccl->state(), &reason);
  if (n > 0) GTEST_SKIP() << n << " CUDA device(s) present: this test is about machines without one";
  ASSERT_NE(reason, nullptr);
  EXPECT_NE(std::string(reason).find("no usable GPU"), std::string::npos) << reason;
  // comm_init refuses with the reason (and an error, not a crash).
  weft_comm_init_args a{};
  a.struct_size = sizeof(a);
  a.world_size = 1;
  a.role = WEFT_ROLE_WORKER;
  a.prefix = "nccl-test";
  a.timeout_ms = 1000;
  a.device_type = "cuda";
  weft_error* e = t->comm_init(nccl->state(), &a);
  ASSERT_NE(e, nullptr);
  const weft_host_api* host = nccl->host();
  EXPECT_EQ(host->error_code(host->host_ctx, e), WEFT_ERR_UNAVAILABLE);
  size_t len = 0;
  const char* text = host->error_message(host->host_ctx, e, &len);
  const std::string msg(text, len);
  host->error_release(host->host_ctx, e);
  EXPECT_NE(msg.find("0 usable devices"), std::string::npos) << msg;
  // KVStore "nccl" names the reason.
  try {
    weft::KVStore::Create("nccl");
    FAIL() << "KVStore nccl created without a device";
  } catch (const std::exception& ex) {
    EXPECT_NE(std::string(ex.what()).find("reports 0 usable devices"), std::string::npos) << ex.what();
    EXPECT_NE(std::string(ex.what()).find(reason), std::string::npos) << ex.what();
  }
#endif
}

}  // namespace

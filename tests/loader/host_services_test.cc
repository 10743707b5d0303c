// The services plugins receive (weft_host_api), called through the table as a plugin would.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "loader_test_util.h"
#include "weft/internal/host_services.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft {
namespace {

class HostServices : public ::testing::Test {
 protected:
  void SetUp() override { host_ = CreateHostApi("myplugin", Runtime::HostSdkMax()); }
  void TearDown() override { ReleaseHostApi(host_); }
  const weft_host_api* host_ = nullptr;
};

TEST_F(HostServices, TableIsComplete) {
  EXPECT_EQ(host_->struct_size, sizeof(weft_host_api));
  EXPECT_EQ(host_->sdk_version, Runtime::HostSdkMax());
  EXPECT_NE(host_->log, nullptr);
  EXPECT_NE(host_->kv_get, nullptr);
}

TEST_F(HostServices, LogLinesNameThePlugin) {
  testing::internal::CaptureStderr();
  host_->log(host_->host_ctx, WEFT_LOG_ERROR, "disk on fire, ignore the rest", 12);
  host_->log(host_->host_ctx, WEFT_LOG_DEBUG, "hidden", 6);  // below the default threshold
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "[weft error] myplugin: disk on fire\n");
}

TEST_F(HostServices, ErrorsRoundTripThroughThrowIfError) {
  weft_error* e = host_->error_create(host_->host_ctx, WEFT_ERR_INVALID_ARGUMENT, "bad axis 7xyz", 10);
  EXPECT_EQ(ErrorCode(e), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ErrorMessage(e), "bad axis 7");
  try {
    ThrowIfError(e, "sum");
    FAIL();
  } catch (const OutOfMemoryError&) {
    FAIL() << "wrong class";
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), "sum: bad axis 7");
  }
  EXPECT_THROW(ThrowIfError(host_->error_create(host_->host_ctx, WEFT_ERR_OUT_OF_MEMORY, "full", 4), "alloc"),
               OutOfMemoryError);
  EXPECT_NO_THROW(ThrowIfError(nullptr, "nothing"));
}

TEST_F(HostServices, ConfigReadsEnvironmentThenOptions) {
  char buf[8];
  EXPECT_EQ(host_->config_get(host_->host_ctx, "WEFT_TEST_NO_SUCH_KEY", buf, sizeof(buf)), -1);
  SetConfig("WEFT_TEST_OPTION", "from-options");
  EXPECT_EQ(host_->config_get(host_->host_ctx, "WEFT_TEST_OPTION", buf, sizeof(buf)), 12);
  EXPECT_EQ(std::string(buf, 8), "from-opt");  // truncated to the buffer, full length returned
  setenv("WEFT_TEST_OPTION", "env", 1);
  EXPECT_EQ(host_->config_get(host_->host_ctx, "WEFT_TEST_OPTION", buf, sizeof(buf)), 3);
  EXPECT_STREQ(buf, "env");
  unsetenv("WEFT_TEST_OPTION");
  EXPECT_EQ(host_->config_get(host_->host_ctx, "WEFT_TEST_OPTION", nullptr, 0), 12);
}

TEST_F(HostServices, HostAllocHonoursAlignment) {
  for (size_t align : {1u, 8u, 64u, 4096u}) {
    void* p = host_->host_alloc(host_->host_ctx, 100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    std::memset(p, 1, 100);
    host_->host_free(host_->host_ctx, p);
  }
  EXPECT_EQ(host_->host_alloc(host_->host_ctx, 100, 48), nullptr) << "not a power of two";
  host_->host_free(host_->host_ctx, nullptr);
}

TEST_F(HostServices, TraceGoesToTheInstalledSink) {
  EXPECT_EQ(host_->trace_enabled(host_->host_ctx), 0);
  std::vector<std::string> got;
  SetTraceSink([&](const weft_trace_event& e, const std::string& plugin) {
    got.push_back(plugin + ":" + e.name + ":" + std::to_string(e.end_ns - e.begin_ns) + ":" +
                  std::to_string(e.stream_id));
  });
  EXPECT_EQ(host_->trace_enabled(host_->host_ctx), 1);
  // An event from an older plugin that ends before stream_id: stream_id reads as -1.
  weft_trace_event e{WEFT_STRUCT_SIZE(weft_trace_event, device_id), "gemm", "kernel", 100, 350, 0, 5};
  host_->trace(host_->host_ctx, &e);
  SetTraceSink(nullptr);
  EXPECT_EQ(host_->trace_enabled(host_->host_ctx), 0);
  host_->trace(host_->host_ctx, &e);
  EXPECT_EQ(got, std::vector<std::string>{"myplugin:gemm:250:-1"});
}

TEST_F(HostServices, KeyValueStoreBlocksUntilTheKeyAppears) {
  char buf[16] = {};
  size_t len = 0;
  weft_error* e = host_->kv_get(host_->host_ctx, "weft-test-absent", buf, sizeof(buf), &len, 20);
  EXPECT_EQ(ErrorCode(e), WEFT_ERR_TIMEOUT);
  ReleaseError(e);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ReleaseError(host_->kv_set(host_->host_ctx, "weft-test-rank0", "tcp://a:1", 9));
  });
  e = host_->kv_get(host_->host_ctx, "weft-test-rank0", buf, sizeof(buf), &len, 10000);
  writer.join();
  ASSERT_EQ(e, nullptr) << ErrorMessage(e);
  EXPECT_EQ(len, 9u);
  EXPECT_EQ(std::string(buf, len), "tcp://a:1");
  // A smaller buffer gets a prefix and the full length.
  char small[3];
  ASSERT_EQ(host_->kv_get(host_->host_ctx, "weft-test-rank0", small, sizeof(small), &len, 0), nullptr);
  EXPECT_EQ(len, 9u);
  EXPECT_EQ(std::string(small, 3), "tcp");
}

TEST(HostServicesInPlugins, EachPluginGetsItsOwnNamedServices) {
  Runtime& rt = loader_test::FreshRuntime();
  ASSERT_TRUE(rt.LoadPlugin(loader_test::Fixture("fixture_good")).accepted);
  const Plugin* p = internal::FindPlugin(rt, "fixture_good");
  testing::internal::CaptureStderr();
  p->host()->log(p->host()->host_ctx, WEFT_LOG_ERROR, "hello", 5);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "[weft error] fixture_good: hello\n");
}

}  // namespace
}  // namespace weft

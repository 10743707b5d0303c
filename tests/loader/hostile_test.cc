// Broken plugins and careless plugin paths (issue 19): files that are not plugins are refused
// before dlopen (a library whose constructor aborts must not take the process down), and device
// counts outside 0..4096 are clamped with one warning naming the plugin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "loader_test_util.h"
#include "require.h"
#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"

namespace weft {
namespace {

using loader_test::FindRecord;
using loader_test::FreshRuntime;
using ::testing::HasSubstr;

std::string Hostile(const std::string& name) { return std::string(LOADER_HOSTILE_DIR) + "/lib" + name + ".so"; }

size_t CountLines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

TEST(LoaderHostile, LibraryThatAbortsWhenLoadedIsRefusedWithoutLoadingIt) {
  Runtime& rt = FreshRuntime();
  testing::internal::CaptureStderr();
  PluginRecord rec = rt.LoadPlugin(Hostile("fixture_ctor_abort"));
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(rec.accepted);
  EXPECT_THAT(rec.reason, HasSubstr("does not export weft_plugin_entry"));
  EXPECT_THAT(rec.reason, HasSubstr("without loading it"));
}

TEST(LoaderHostile, DiscoveryInADirectoryOfSuchLibrariesSurvives) {
  testing::internal::CaptureStderr();
  Runtime& rt = FreshRuntime(LOADER_HOSTILE_DIR);
  testing::internal::GetCapturedStderr();
  const std::vector<PluginRecord> records = rt.PluginRecords();  // a copy: keep it alive
  const PluginRecord* rec = FindRecord(records, Hostile("fixture_ctor_abort"));
  ASSERT_NE(rec, nullptr);
  EXPECT_FALSE(rec->accepted);
}

TEST(LoaderHostile, SystemLibraryDirectoryAsPluginPathIsScannedSafely) {
  // WEFT_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu used to abort in dlopen(libasan.so).
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  if (!std::filesystem::is_directory(dir)) WEFT_SKIP_UNLESS_REQUIRED() << dir << " does not exist on this machine";
  const auto t0 = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  Runtime& rt = FreshRuntime(dir.c_str());
  testing::internal::GetCapturedStderr();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t from_dir = 0;
  for (const PluginRecord& r : rt.PluginRecords()) {
    if (r.path.rfind(dir, 0) != 0) continue;
    ++from_dir;
    EXPECT_FALSE(r.accepted) << r.path;
  }
  EXPECT_GT(from_dir, 0u);
  // The time is reported, not asserted (it depends on the machine and its load).
  std::printf("scanned %zu candidates in %.2f s\n", from_dir, s);
  FreshRuntime();
}

struct CountCase {
  const char* fixture;
  const char* device_type;
  int expected_devices;
  const char* note;
};

class DeviceCountTest : public testing::TestWithParam<CountCase> {};

TEST_P(DeviceCountTest, IsClampedWithOneWarningNamingThePlugin) {
  const CountCase& c = GetParam();
  Runtime& rt = FreshRuntime();
  const auto t0 = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  PluginRecord rec = rt.LoadPlugin(Hostile(c.fixture));
  const std::string err = testing::internal::GetCapturedStderr();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(rec.accepted) << rec.reason;
  EXPECT_EQ(rt.DeviceCount(c.device_type), c.expected_devices);
  EXPECT_EQ(CountLines(err, "[weft warning]"), 1u) << err;
  EXPECT_THAT(err, HasSubstr(std::string("plugin ") + c.fixture));
  EXPECT_THAT(err, HasSubstr(c.note));
  EXPECT_THAT(rec.plugin->device_note(), HasSubstr(c.note));
  std::printf("loaded in %.3f s\n", s);  // reported, not asserted: the clamp above bounds the work
}

INSTANTIATE_TEST_SUITE_P(
    LoaderHostile, DeviceCountTest,
    testing::Values(CountCase{"fixture_many_devices", "fixmany", 4096, "device_count returned 1000000000"},
                    CountCase{"fixture_negative_devices", "fixneg", 0, "device_count returned -5"}),
    [](const testing::TestParamInfo<CountCase>& info) { return std::string(info.param.device_type); });

}  // namespace
}  // namespace weft

// weft-info run as a program on the fixture plugins: its report names every file, the outcome,
// the devices and the ops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

using ::testing::HasSubstr;

// Runs weft-info with `args` and the fixture directory as WEFT_PLUGIN_PATH; returns stdout (and
// stderr when `with_stderr`).
std::string RunInfo(const std::string& args, bool with_stderr = false, int* status = nullptr) {
  std::string cmd = std::string("env -u WEFT_PLUGINS_DISABLE WEFT_LOG_LEVEL=debug WEFT_PLUGIN_PATH=") +
                    LOADER_FIXTURE_DIR + " " + WEFT_INFO_PATH + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  return wtest::RunCommand(cmd, status);
}

TEST(WeftInfo, ReportsPluginsDevicesAndKernels) {
  int status = -1;
  std::string out = RunInfo("", false, &status);
  EXPECT_EQ(status, 0);
  EXPECT_THAT(out, HasSubstr("weft core 0.1.0"));
  EXPECT_THAT(out, HasSubstr("accepted  fixture_good 3.1.4: SDK 2.1 (plugin speaks 2.0–"));
  EXPECT_THAT(out, HasSubstr("accepted  fixture_newer 2.7.0: SDK 2.1 (plugin speaks 2.0–2.7)"));
  EXPECT_THAT(out, HasSubstr("rejected  fixture_init_error: init failed: fixture: the frobnicator is not connected"));
  EXPECT_THAT(out, HasSubstr("rejected  libfixture_needs_dep.so: needs libweft_fixture_dep.so, which was not found"));
  EXPECT_THAT(out, HasSubstr(std::string(LOADER_FIXTURE_DIR) + "/libfixture_no_entry.so (from WEFT_PLUGIN_PATH)"));
  EXPECT_THAT(out, HasSubstr("fixdev(1): fixture device 1 (weft tests), plugin fixture_good"));
  EXPECT_THAT(out, HasSubstr("memory 1024 MiB total, 512 MiB free"));
  EXPECT_THAT(out, HasSubstr("capabilities: host_addressable, peer_copy"));
  EXPECT_THAT(out, HasSubstr("seen_sdk=2.0, host_api_size="));
  EXPECT_THAT(out, HasSubstr("  fixdev (1 ops):\n    fixture_scale\n"));
  EXPECT_THAT(out, HasSubstr("  fixold (1 ops):\n    fixture_old_op\n"));
  EXPECT_EQ(out.find("trying"), std::string::npos) << "the trace only with --verbose";
}

TEST(WeftInfo, VerbosePrintsTheDiscoveryTrace) {
  std::string out = RunInfo("--verbose");
  EXPECT_THAT(out, HasSubstr("Discovery trace:"));
  EXPECT_THAT(out, HasSubstr(std::string("WEFT_PLUGIN_PATH=") + LOADER_FIXTURE_DIR));
  EXPECT_THAT(out, HasSubstr(std::string("searching ") + LOADER_FIXTURE_DIR + " (WEFT_PLUGIN_PATH)"));
  EXPECT_THAT(out, HasSubstr(std::string("trying ") + LOADER_FIXTURE_DIR + "/libfixture_good.so"));
  EXPECT_THAT(out, HasSubstr("install directory"));
}

TEST(WeftInfo, JsonAndExplicitPlugins) {
  std::string extra = std::string(LOADER_FIXTURE_DIR) + "/../plugins-extra/libfixture_dup_name.so";
  std::string out = RunInfo("--json --plugin " + extra);
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["sdk"]["min"], "2.0");
  bool dup = false, good = false;
  for (const auto& p : j["plugins"]) {
    if (p["origin"] == "explicit") {
      dup = true;
      EXPECT_EQ(p["duplicate"], true);
      EXPECT_EQ(p["accepted"], false);
    }
    if (p["name"] == "fixture_good" && p["accepted"] == true) good = true;
  }
  EXPECT_TRUE(dup);
  EXPECT_TRUE(good);
  bool dev = false;
  for (const auto& d : j["devices"]) {
    if (d["context"] == "fixnew(0)") {
      dev = true;
      EXPECT_EQ(d["total_memory_mib"], 1024);
      EXPECT_EQ(d["attributes"]["seen_sdk"], "2.1");  // min(host 2.1, fixture 2.7)
    }
  }
  EXPECT_TRUE(dev);
  EXPECT_EQ(j["kernels"]["fixdev"], nlohmann::json::array({"fixture_scale"}));
  // The fixture's kernel defs end at compute (struct_size of the SDK before source_file): no files.
  EXPECT_EQ(j["kernel_files"]["fixdev"]["fixture_scale"], nlohmann::json::array());
}

TEST(WeftInfo, ShutsPluginsDownAtExitInReverseLoadOrder) {
  std::string out = RunInfo("", true);
  size_t good = out.find("fixture_good: shutdown"), newer = out.find("fixture_newer: shutdown"),
         older = out.find("fixture_older: shutdown");
  ASSERT_NE(good, std::string::npos) << out;
  ASSERT_NE(newer, std::string::npos);
  ASSERT_NE(older, std::string::npos);
  // Loaded in file-name order good, newer, older; shut down the other way round.
  EXPECT_LT(older, newer);
  EXPECT_LT(newer, good);
}

}  // namespace

// Device contract suite (shared/design/testing.md §1): every device of every device plugin the
// Runtime finds must pass the checks of core/tools/conformance/contract_checks.h (the ones
// weft-conformance runs). Parametrised over Runtime::ListDevices() × checks; the Inventory test
// prints the devices tested. WEFT_CONTRACT_EXPECT (comma-separated device types, set by CMake to
// "cpu,simdev") names types that must be present, so a plugin that silently fails to load fails
// the suite instead of shrinking it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "contract_checks.h"
#include "contract_support.h"
#include "weft/base.h"
#include "weft/plugin.h"
#include "weft/runtime.h"

namespace weft {
// Readable test parameters in GoogleTest output ("simdev(1)" instead of raw bytes).
void PrintTo(const Context& c, std::ostream* os) { *os << c.ToString(); }
}  // namespace weft

namespace weft::contract {
namespace {

// Before anything asks the Runtime (test registration included), point discovery at the build
// tree's plugins when the caller did not (running the binary by hand, or test listing).
const bool kPluginPathSet = [] {
  setenv("WEFT_PLUGIN_PATH", WEFT_TEST_PLUGIN_DIR ":" WEFT_CONTRACT_TEST_PLUGIN_DIR, /*overwrite=*/0);
  return true;
}();

std::string Caps(uint64_t caps) {
  std::string out;
  for (const std::string& n : CapabilityNames(caps)) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "-" : out;
}

TEST(DeviceContractInventory, ListsExpectedDeviceTypesAndPrintsThem) {
  Runtime& rt = Runtime::Get();
  const std::vector<Context> devices = rt.ListDevices();
  std::printf("%-10s %-48s %-8s %14s %6s  %s\n", "device", "name", "vendor", "memory (MiB)", "align", "capabilities");
  for (const Context& c : devices) {
    const DeviceProperties& p = rt.GetDevice(c).properties();
    std::printf("%-10s %-48.48s %-8.8s %14llu %6llu  %s\n", c.ToString().c_str(), p.name.c_str(), p.vendor.c_str(),
                static_cast<unsigned long long>(p.total_memory >> 20), static_cast<unsigned long long>(p.min_alignment),
                Caps(p.capabilities).c_str());
  }
  std::printf("%zu devices of %zu types; kernels:", devices.size(), rt.DeviceTypes().size());
  for (const std::string& t : rt.DeviceTypes()) std::printf(" %s %zu", t.c_str(), rt.Kernels(t).size());
  std::printf("\n");
  const char* expect = std::getenv("WEFT_CONTRACT_EXPECT");
  std::stringstream types(expect != nullptr ? expect : "cpu");
  for (std::string t; std::getline(types, t, ',');) {
    if (t.empty()) continue;
    EXPECT_GT(rt.DeviceCount(t), 0) << "no '" << t << "' devices: is its plugin built and on WEFT_PLUGIN_PATH?";
  }
}

// A device plugin without devices (a GPU plugin on a machine without the GPU or its driver) has no
// instance in the suite below; it must say why, and the contract skips it with that reason.
TEST(DeviceContractInventory, PluginsWithoutDevicesSayWhyAndAreSkipped) {
  std::string skipped;
  for (const Plugin* p : Runtime::Get().Plugins()) {
    if (p->device_type().empty() || Runtime::Get().DeviceCount(p->device_type()) > 0) continue;
    EXPECT_FALSE(p->device_note().empty()) << p->name() << " reports 0 devices without a reason";
    skipped += "\n  " + p->device_type() + ": " + p->device_note();
  }
  if (!skipped.empty()) GTEST_SKIP() << "device types with no device, not tested:" << skipped;
}

// Every check of the contract (core/tools/conformance/contract_checks.cc, also run by
// weft-conformance) on every device.
class DeviceContract : public ::testing::TestWithParam<std::tuple<Context, size_t>> {};

TEST_P(DeviceContract, Check) {
  const auto& [ctx, index] = GetParam();
  const ContractCheck& check = ContractChecks()[index];
  const ContractOutcome o = RunContractCheck(check, Runtime::Get().GetDevice(ctx));
  for (const std::string& f : o.failures) ADD_FAILURE() << ctx.ToString() << " " << check.name << ": " << f;
  if (o.status == ContractOutcome::Status::kSkip) GTEST_SKIP() << o.skip_reason;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, DeviceContract,
                         ::testing::Combine(::testing::ValuesIn(Runtime::Get().ListDevices()),
                                            ::testing::Range<size_t>(0, ContractChecks().size())),
                         [](const ::testing::TestParamInfo<std::tuple<Context, size_t>>& info) {
                           return std::string(ContractChecks()[std::get<1>(info.param)].name) + "_" +
                                  TestName(std::get<0>(info.param));
                         });

}  // namespace
}  // namespace weft::contract

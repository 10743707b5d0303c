// Device contract suite: every device of every device plugin the
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
#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"

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
    const DeviceProperties& p = internal::GetDevice(rt, c).properties();
    std::printf("%-10s %-48.48s %-8.8s %14llu %6llu  %s\n", c.ToString().c_str(), p.name.c_str(), p.vendor.c_str(),
                static_cast<unsigned long long>(p.total_memory >> 20), static_cast<unsigned long long>(p.min_alignment),
                Caps(p.capabilities).c_str());
  }
  std::printf("%zu devices of %zu types; kernels:", devices.size(), rt.DeviceTypes().size());
  for (const std::string& t : rt.DeviceTypes()) std::printf(" %s %zu", t.c_str(), internal::Kernels(rt, t).size());
  std::printf("\n");
  const char* expect = std::getenv("WEFT_CONTRACT_EXPECT");
  std::stringstream types(expect != nullptr ? expect : "cpu");
  for (std::string t; std::getline(types, t, ',');) {
    if (t.empty()) continue;
    EXPECT_GT(rt.DeviceCount(t), 0) << "no '" << t << "' devices: is its plugin built and on WEFT_PLUGIN_PATH?";
  }
}

// A device plugin without devices (a GPU plugin on a machine without the GPU or its driver) has no
// instance in the suite below; it must say why (printed with the list).
TEST(DeviceContractInventory, PluginsWithoutDevicesSayWhy) {
  std::string absent;
  for (const Plugin* p : internal::Plugins(Runtime::Get())) {
    if (p->device_type().empty() || Runtime::Get().DeviceCount(p->device_type()) > 0) continue;
    EXPECT_FALSE(p->device_note().empty()) << p->name() << " reports 0 devices without a reason";
    absent += "\n  " + p->device_type() + ": " + p->device_note();
  }
  std::printf("device types with no device, not tested:%s\n", absent.empty() ? " none" : absent.c_str());
}

// (device, check) pairs where the check applies (ContractCheck::not_applicable): the others (peer
// copies with one device, bounds checks on host memory, ...) have no instance below, so that a
// skip in this suite can only mean a missing device.
std::vector<std::tuple<Context, size_t>> ApplicablePairs() {
  std::vector<std::tuple<Context, size_t>> pairs;
  for (const Context& c : Runtime::Get().ListDevices())
    for (size_t i = 0; i < ContractChecks().size(); ++i)
      if (NotApplicable(ContractChecks()[i], internal::GetDevice(Runtime::Get(), c)).empty()) pairs.emplace_back(c, i);
  return pairs;
}

TEST(DeviceContractInventory, ChecksThatDoNotApplyAreListedWithTheReason) {
  size_t left_out = 0;
  for (const Context& c : Runtime::Get().ListDevices())
    for (const ContractCheck& check : ContractChecks()) {
      const std::string why = NotApplicable(check, internal::GetDevice(Runtime::Get(), c));
      if (why.empty()) continue;
      std::printf("  %-10s %-48s does not apply: %s\n", c.ToString().c_str(), check.name, why.c_str());
      ++left_out;
    }
  EXPECT_EQ(ApplicablePairs().size() + left_out, Runtime::Get().ListDevices().size() * ContractChecks().size());
}

// Every check of the contract (core/tools/conformance/contract_checks.cc, also run by
// weft-conformance) on every device it applies to.
class DeviceContract : public ::testing::TestWithParam<std::tuple<Context, size_t>> {};

TEST_P(DeviceContract, Check) {
  const auto& [ctx, index] = GetParam();
  const ContractCheck& check = ContractChecks()[index];
  const ContractOutcome o = RunContractCheck(check, internal::GetDevice(Runtime::Get(), ctx));
  for (const std::string& f : o.failures) ADD_FAILURE() << ctx.ToString() << " " << check.name << ": " << f;
  EXPECT_NE(o.status, ContractOutcome::Status::kSkip) << "a check that applies was skipped: " << o.skip_reason;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, DeviceContract, ::testing::ValuesIn(ApplicablePairs()),
                         [](const ::testing::TestParamInfo<std::tuple<Context, size_t>>& info) {
                           return std::string(ContractChecks()[std::get<1>(info.param)].name) + "_" +
                                  TestName(std::get<0>(info.param));
                         });

}  // namespace
}  // namespace weft::contract

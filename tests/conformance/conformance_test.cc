// Conformance suite in the build tree: the operator checks of
// core/tools/conformance (op_checks.h, the ones weft-conformance certifies plugins with) on device
// 0 of every device type loaded here — every op its kernels claim, forward and gradient, every
// claimed dtype, against the cpu plugin; on the cpu its gradients against finite differences;
// the write requests add-to / null / in-place; sentinel-padded arrays. Each failure names the
// device, op, dtype, case and seed; WEFT_CONFORMANCE_SEED=<n> changes the base seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "op_checks.h"
#include "require.h"
#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"

namespace wconf {
namespace {

uint64_t BaseSeed() {
  const char* s = std::getenv("WEFT_CONFORMANCE_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : 20261121ull;
}

TEST(Conformance, EveryClaimedOpHasCases) {
  weft::Runtime& rt = weft::Runtime::Get();
  ASSERT_FALSE(weft::internal::Kernels(rt, "cpu").empty()) << "the CPU plugin registered no kernels";
  for (const std::string& d : rt.DeviceTypes()) {
    const weft::Plugin* own = weft::internal::FindPlugin(rt, d);  // weft's device plugins are named after their type
    if (own == nullptr) continue;
    for (const std::string& op : OpsWithoutCases(d, own))
      ADD_FAILURE() << d << " claims '" << op << "' but the conformance suite has no case for it (op_cases.cc)";
  }
}

// Device types whose plugin found no device (GPU plugins without a GPU) claim kernels that cannot
// run here: each plugin must give the reason, which is printed with the list.
TEST(Conformance, DeviceTypesWithoutDevicesSayWhy) {
  std::string absent;
  for (const weft::Plugin* p : weft::internal::Plugins(weft::Runtime::Get())) {
    if (p->device_type().empty() || weft::Runtime::Get().DeviceCount(p->device_type()) > 0) continue;
    EXPECT_FALSE(p->device_note().empty()) << p->name() << " reports 0 devices without a reason";
    absent += "\n  " + p->device_type() + " (" +
              std::to_string(weft::internal::Kernels(weft::Runtime::Get(), p->device_type()).size()) +
              " kernels): " + p->device_note();
  }
  std::printf("device types with no device, their kernels not run:%s\n", absent.empty() ? " none" : absent.c_str());
}

// The cpu plugin's results are checked against the double-precision reference (reference.h):
// every op it claims needs one, or its "pass" would only mean it agrees with itself.
TEST(Conformance, EveryCpuOpHasAReference) {
  const weft::Plugin* cpu = weft::internal::FindPlugin(weft::Runtime::Get(), "cpu");
  ASSERT_NE(cpu, nullptr) << "the cpu plugin is not loaded";
  for (const std::string& op : OpsWithoutReference("cpu", cpu))
    ADD_FAILURE() << "the cpu plugin claims '" << op
                  << "' but the conformance library has no reference for it (core/tools/conformance/reference_*.cc)";
}

// Dropout in training on every device with the kernel (cpu included): the mask holds only 0 and
// 1/(1 - p), keeps a fraction 1 - p of the elements (within 5 standard deviations) and the output
// is data * mask. EveryClaimedOpMatchesCpu compares the masks themselves with cpu's.
TEST(Conformance, DropoutMaskStatistics) {
  weft::Runtime& rt = weft::Runtime::Get();
  const double p = 0.3, n = 20000;
  const weft::OpDef& def = weft::OpRegistry::Get().Lookup("Dropout");
  std::mt19937_64 rng(BaseSeed());
  RunSpec spec;
  spec.op = def.name;
  spec.attrs = def.Normalize(AttrMap(std::map<std::string, std::string>{{"p", "0.3"}}));
  spec.in = {Random(rng, Shape{100, 200}, Domain{0.5, 1.5})};
  spec.sig = InferSignature(def, spec.attrs, spec.in, {});
  spec.is_train = true;
  spec.seed = BaseSeed() + 300000;
  int checked = 0;
  for (const std::string& d : rt.DeviceTypes()) {
    if (rt.DeviceCount(d) == 0 || !weft::HasKernel(spec.op, d, DType::kFloat32)) continue;
    const RunResult r = RunNode(weft::Context(d, 0), spec);
    ASSERT_TRUE(r.error.empty()) << d << ": " << r.error;
    ASSERT_EQ(r.out.size(), 2u) << d;
    const double scale = static_cast<double>(1.0f / static_cast<float>(1 - p));
    size_t kept = 0, bad_mask = 0, bad_out = 0;
    for (size_t i = 0; i < r.out[1].v.size(); ++i) {
      const double m = r.out[1].v[i];
      kept += m != 0;
      bad_mask += m != 0 && std::fabs(m - scale) > 1e-6;
      bad_out += std::fabs(r.out[0].v[i] - static_cast<float>(spec.in[0].v[i]) * static_cast<float>(m)) > 1e-6;
    }
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(kept), n * (1 - p), 5 * sd) << d << ": kept fraction";
    EXPECT_EQ(bad_mask, 0u) << d << ": mask values other than 0 and 1/(1-p)";
    EXPECT_EQ(bad_out, 0u) << d << ": output != data * mask";
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no device (not even cpu) has a Dropout kernel";
}

class DeviceConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceConformance, EveryClaimedOpMatchesCpu) {
  const std::string& type = GetParam();
  if (weft::Runtime::Get().DeviceCount(type) == 0) {
    const weft::Plugin* p = weft::internal::FindPlugin(weft::Runtime::Get(), type);
    WEFT_SKIP_UNLESS_REQUIRED() << "no " << type << " device loaded"
                                << (p != nullptr ? ": " + p->device_note() : std::string(": the plugin is not loaded"));
  }
  OpOptions o;
  o.devices = {weft::Context(type, 0)};
  o.seed = BaseSeed();
  const OpResults r = RunOpConformance(o);
  for (const Failure& f : r.failures)
    ADD_FAILURE() << f.device << " " << f.op << " " << f.dtype << (f.backward ? " backward" : " forward") << " ["
                  << f.check << "] " << f.case_label << " (seed " << f.seed << "): " << f.error;
  for (const std::string& n : r.notes) std::cout << "  note: " << n << "\n";
  EXPECT_GT(r.case_runs, 0) << type << " claims no op the suite could run";
  if (type == "cpu") {
    EXPECT_GT(r.case_runs, 150) << "too few cpu case runs: cases lost?";
  }
}

// The device types this build has (the Vulkan plugin is left out of sanitizer builds).
INSTANTIATE_TEST_SUITE_P(DeviceTypes, DeviceConformance,
                         ::testing::Values("cpu", "simdev", "gpuhost"
#ifdef WEFT_TEST_WITH_VULKAN
                                           ,
                                           "vulkan"
#endif
                                           ),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace wconf

// Without a Vulkan driver (VK_ICD_FILENAMES names none) the plugin loads, reports zero devices
// with the reason and the package to install, and weft keeps working on cpu.
#include <gtest/gtest.h>

#include <string>

#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"

namespace weft {
namespace {

TEST(VulkanNoDriver, LoadsWithZeroDevicesAndSaysWhy) {
  Runtime& rt = Runtime::Get();
  const Plugin* p = internal::FindPlugin(rt, "vulkan");
  ASSERT_NE(p, nullptr) << "the vulkan plugin must load even without a driver";
  EXPECT_EQ(rt.DeviceCount("vulkan"), 0);
  EXPECT_NE(p->device_note().find("mesa-vulkan-drivers"), std::string::npos) << p->device_note();
  EXPECT_GT(rt.DeviceCount("cpu"), 0) << "weft keeps working on cpu";
}

}  // namespace
}  // namespace weft

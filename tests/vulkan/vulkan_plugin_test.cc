// The Vulkan device's properties: kind, attributes weft-info shows, and the kernels it claims.
// Skipped when no Vulkan device is present (no driver installed).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "require.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

namespace weft {
namespace {

TEST(VulkanPlugin, PropertiesNameDriverLimitsAndKind) {
  Runtime& rt = Runtime::Get();
  if (rt.DeviceCount("vulkan") == 0) WEFT_SKIP_UNLESS_REQUIRED() << "no Vulkan device (install mesa-vulkan-drivers)";
  const DeviceProperties& p = internal::GetDevice(rt, Context("vulkan", 0)).properties();
  std::map<std::string, std::string> attrs(p.attributes.begin(), p.attributes.end());
  for (const char* key : {"api_version", "driver", "driver_version", "subgroup_size", "max_storage_buffer_range",
                          "max_compute_shared_memory", "device_heap_bytes"})
    EXPECT_TRUE(attrs.count(key)) << key;
  EXPECT_GT(p.total_memory, 0u);
  const bool lavapipe = p.name.find("llvmpipe") != std::string::npos;
  if (lavapipe) {
    EXPECT_EQ(p.kind, WEFT_DEVICE_KIND_SOFTWARE) << "a CPU implementation is marked as such";
    EXPECT_NE(attrs["device_type"].find("cpu implementation"), std::string::npos);
  }
  for (int i = 1; i < rt.DeviceCount("vulkan"); ++i) {
    // Discrete GPUs first, CPU implementations last.
    const DeviceProperties& q = internal::GetDevice(rt, Context("vulkan", i)).properties();
    if (p.kind == WEFT_DEVICE_KIND_SOFTWARE) {
      EXPECT_EQ(q.kind, WEFT_DEVICE_KIND_SOFTWARE);
    }
  }
}

TEST(VulkanPlugin, ClaimsTheMlpKernels) {
  Runtime& rt = Runtime::Get();
  if (rt.DeviceCount("vulkan") == 0) WEFT_SKIP_UNLESS_REQUIRED() << "no Vulkan device (install mesa-vulkan-drivers)";
  for (const char* op : {"FullyConnected", "_backward_FullyConnected", "Activation", "_backward_Activation",
                         "SoftmaxOutput", "_backward_SoftmaxOutput", "add_n", "sgd_mom_update"})
    EXPECT_NE(internal::FindKernel(rt, op, "vulkan", DType::kFloat32), nullptr) << op;
  EXPECT_EQ(internal::FindKernel(rt, "FullyConnected", "vulkan", DType::kFloat64), nullptr) << "float32 only";
}

}  // namespace
}  // namespace weft

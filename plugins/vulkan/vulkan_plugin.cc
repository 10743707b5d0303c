// vulkan — the Vulkan device plugin (device type "vulkan"): every physical device with a compute
// queue, discrete GPUs first, CPU implementations (Mesa's lavapipe) listed and marked as
// WEFT_DEVICE_KIND_SOFTWARE. Kernels are GLSL compute shaders compiled by glslc at build time
// and embedded (vk_kernels.h). Without a Vulkan loader or driver the plugin loads and reports
// zero devices with the reason (weft-info shows it).
//
// Configuration (host config_get: environment, then runtime options):
//   WEFT_VULKAN_PIPELINE_CACHE_DIR  where the VkPipelineCache is kept (default
//                                   $XDG_CACHE_HOME/weft/vulkan or ~/.cache/weft/vulkan)
//   WEFT_VULKAN_VALIDATION          0 (default), 1 = enable VK_LAYER_KHRONOS_validation and print
//                                   its warnings and errors, fatal = abort on the first (tests)
// Standard Vulkan variables apply: VK_ICD_FILENAMES picks drivers
// (/usr/share/vulkan/icd.d/lvp_icd.x86_64.json = lavapipe), VK_INSTANCE_LAYERS adds layers
// (VK_LAYER_KHRONOS_validation).
#include <memory>

#include "vk_device.h"
#include "vk_kernels.h"
#include "weft/sdk/cpp/plugin.hpp"

namespace weft::vk {
namespace {

class VulkanPlugin final : public sdk::Plugin {
 public:
  explicit VulkanPlugin(const weft_host_api* host) : sdk::Plugin(host), device_(host), table_(host, device_) {
    Provide(&device_);
    if (device_.Count() > 0) {
      RegisterKernels(table_);
      Provide(table_.Api());
    }
  }

 private:
  VulkanDevice device_;
  VkKernelTable table_;  // after device_: destroyed first
};

}  // namespace
}  // namespace weft::vk

WEFT_SDK_PLUGIN(weft::vk::VulkanPlugin, "vulkan", "0.1.0",
                "Vulkan compute devices (GPUs; Mesa lavapipe on CPUs): GLSL kernels compiled to SPIR-V",
                WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS)

// vulkan plugin — the Vulkan functions it calls, loaded from libvulkan.so.1 at run time.
//
// The loader is opened with dlopen rather than linked, so the plugin loads (and reports zero
// devices with the reason and the package to install) on machines without a Vulkan loader or
// driver; weft keeps working on its other devices. Headers come from libvulkan-dev; every
// function pointer is resolved through vkGetInstanceProcAddr once the instance exists.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace weft::vk {

// X(name) for every function used after the instance exists.
#define WEFT_VK_INSTANCE_FUNCS(X)             \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkDestroyDevice)                          \
  X(vkGetDeviceQueue)                         \
  X(vkDeviceWaitIdle)                         \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X(vkMapMemory)                              \
  X(vkUnmapMemory)                            \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkCreateBufferView)                       \
  X(vkDestroyBufferView)                      \
  X(vkGetBufferMemoryRequirements)            \
  X(vkBindBufferMemory)                       \
  X(vkCreateCommandPool)                      \
  X(vkDestroyCommandPool)                     \
  X(vkAllocateCommandBuffers)                 \
  X(vkFreeCommandBuffers)                     \
  X(vkResetCommandBuffer)                     \
  X(vkBeginCommandBuffer)                     \
  X(vkEndCommandBuffer)                       \
  X(vkQueueSubmit)                            \
  X(vkCreateSemaphore)                        \
  X(vkDestroySemaphore)                       \
  X(vkWaitSemaphores)                         \
  X(vkSignalSemaphore)                        \
  X(vkGetSemaphoreCounterValue)               \
  X(vkCmdCopyBuffer)                          \
  X(vkCmdFillBuffer)                          \
  X(vkCmdPipelineBarrier)                     \
  X(vkCmdBindPipeline)                        \
  X(vkCmdPushConstants)                       \
  X(vkCmdDispatch)                            \
  X(vkCmdWriteTimestamp)                      \
  X(vkCreateQueryPool)                        \
  X(vkDestroyQueryPool)                       \
  X(vkGetQueryPoolResults)                    \
  X(vkCmdResetQueryPool)                      \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreateDescriptorSetLayout)              \
  X(vkDestroyDescriptorSetLayout)             \
  X(vkCreatePipelineLayout)                   \
  X(vkDestroyPipelineLayout)                  \
  X(vkCreateComputePipelines)                 \
  X(vkDestroyPipeline)                        \
  X(vkCreatePipelineCache)                    \
  X(vkDestroyPipelineCache)                   \
  X(vkGetPipelineCacheData)                   \
  X(vkCmdPushDescriptorSetKHR)

/// The loader library and the functions above. Load() never throws: on failure ok() is false
/// and reason() says what is missing and which Debian package provides it.
class Api {
 public:
  Api() = default;
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  /// How validation-layer messages are treated (WEFT_VULKAN_VALIDATION).
  enum class Validation { kOff, kReport, kFatal };

  /// Opens libvulkan.so.1 and creates the instance (Vulkan 1.2 or newer is required: timeline
  /// semaphores). With `validation` other than kOff it enables VK_LAYER_KHRONOS_validation and a
  /// debug messenger that prints every warning and error to stderr (kFatal then aborts, so a test
  /// fails on any message). Layers named in VK_INSTANCE_LAYERS load as usual.
  void Load(Validation validation);
  bool ok() const { return instance_ != VK_NULL_HANDLE; }
  const std::string& reason() const { return reason_; }
  VkInstance instance() const { return instance_; }

#define WEFT_VK_DECLARE(name) PFN_##name name = nullptr;
  WEFT_VK_INSTANCE_FUNCS(WEFT_VK_DECLARE)
#undef WEFT_VK_DECLARE

 private:
  void* lib_ = nullptr;
  VkInstance instance_ = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr_ = nullptr;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  Validation validation_ = Validation::kOff;
  std::string reason_;
};

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for a VkResult.
const char* ResultName(VkResult r);

/// Throws weft::sdk::Error naming `what` and the VkResult unless r is VK_SUCCESS; out-of-memory
/// results become WEFT_ERR_OUT_OF_MEMORY, VK_ERROR_DEVICE_LOST WEFT_ERR_UNAVAILABLE.
void Check(VkResult r, const std::string& what);

}  // namespace weft::vk

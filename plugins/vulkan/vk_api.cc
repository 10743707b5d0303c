#include "vk_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "weft/sdk/cpp/error.hpp"

namespace weft::vk {

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL OnValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  const bool fatal = *static_cast<const Api::Validation*>(user) == Api::Validation::kFatal;
  std::fprintf(stderr, "weft vulkan validation %s: %s\n",
               severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
               data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no message)");
  if (fatal) {
    std::fprintf(stderr, "weft vulkan: aborting on a validation message (WEFT_VULKAN_VALIDATION=fatal)\n");
    std::abort();
  }
  return VK_FALSE;
}

}  // namespace

Api::~Api() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr_(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE && vkDestroyInstance != nullptr) vkDestroyInstance(instance_, nullptr);
  // The loader stays mapped: drivers (lavapipe's LLVM) register atexit handlers and thread-local
  // destructors that would run after an unmap.
}

void Api::Load(Validation validation) {
  validation_ = validation;
  lib_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    const char* e = dlerror();
    reason_ = std::string("Vulkan loader libvulkan.so.1 not found (") + (e ? e : "dlopen failed") +
              "): install libvulkan1 (Debian) and a driver, e.g. mesa-vulkan-drivers";
    return;
  }
  auto get_instance_proc = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib_, "vkGetInstanceProcAddr"));
  if (get_instance_proc == nullptr) {
    reason_ = "libvulkan.so.1 has no vkGetInstanceProcAddr: reinstall libvulkan1";
    return;
  }
  auto create = reinterpret_cast<PFN_vkCreateInstance>(get_instance_proc(VK_NULL_HANDLE, "vkCreateInstance"));
  auto version =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(get_instance_proc(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  uint32_t api = VK_API_VERSION_1_0;
  if (version != nullptr) version(&api);
  if (create == nullptr || api < VK_API_VERSION_1_2) {
    reason_ = "the Vulkan loader speaks Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api)) + "." +
              std::to_string(VK_API_VERSION_MINOR(api)) + "; weft needs 1.2 (timeline semaphores): update libvulkan1";
    return;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "weft";
  app.pEngineName = "weft";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mi.pfnUserCallback = &OnValidationMessage;
  mi.pUserData = &validation_;
  if (validation != Validation::kOff) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = layers;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = extensions;
    ci.pNext = &mi;  // also covers vkCreateInstance / vkDestroyInstance themselves
  }
  VkInstance inst = VK_NULL_HANDLE;
  const VkResult r = create(&ci, nullptr, &inst);
  if (r != VK_SUCCESS) {
    reason_ = std::string("vkCreateInstance failed (") + ResultName(r) + ")" +
              (validation != Validation::kOff && r == VK_ERROR_LAYER_NOT_PRESENT
                   ? ": WEFT_VULKAN_VALIDATION needs the validation layer: install vulkan-validationlayers"
                   : ": no usable Vulkan driver; install mesa-vulkan-drivers (lavapipe) or your GPU's driver");
    return;
  }
#define WEFT_VK_LOAD(name) name = reinterpret_cast<PFN_##name>(get_instance_proc(inst, #name));
  WEFT_VK_INSTANCE_FUNCS(WEFT_VK_LOAD)
#undef WEFT_VK_LOAD
  instance_ = inst;
  vkGetInstanceProcAddr_ = get_instance_proc;
  if (validation != Validation::kOff) {
    auto create_messenger =
        reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(get_instance_proc(inst, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger != nullptr) create_messenger(inst, &mi, nullptr, &messenger_);
  }
  if (vkEnumeratePhysicalDevices == nullptr || vkCreateDevice == nullptr || vkWaitSemaphores == nullptr) {
    reason_ = "the Vulkan loader lacks core 1.2 functions: update libvulkan1";
    vkDestroyInstance(inst, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

const char* ResultName(VkResult r) {
  switch (r) {
#define WEFT_VK_CASE(x) \
  case x:               \
    return #x;
    WEFT_VK_CASE(VK_SUCCESS)
    WEFT_VK_CASE(VK_NOT_READY)
    WEFT_VK_CASE(VK_TIMEOUT)
    WEFT_VK_CASE(VK_INCOMPLETE)
    WEFT_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    WEFT_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    WEFT_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    WEFT_VK_CASE(VK_ERROR_DEVICE_LOST)
    WEFT_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    WEFT_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    WEFT_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    WEFT_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    WEFT_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    WEFT_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    WEFT_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    WEFT_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    WEFT_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    WEFT_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef WEFT_VK_CASE
    default:
      return "VkResult(unknown)";
  }
}

void Check(VkResult r, const std::string& what) {
  if (r == VK_SUCCESS) return;
  int32_t code = WEFT_ERR_UNKNOWN;
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) code = WEFT_ERR_OUT_OF_MEMORY;
  if (r == VK_ERROR_DEVICE_LOST) code = WEFT_ERR_UNAVAILABLE;
  throw sdk::Error(code, what + " failed: " + ResultName(r) + " (" + std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace weft::vk

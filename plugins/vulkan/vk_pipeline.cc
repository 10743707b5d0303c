// vulkan plugin — pipelines created lazily from the embedded SPIR-V, a VkPipelineCache kept on
// disk (checked against vendor, device, driver version and pipelineCacheUUID), and dispatches
// with push descriptors.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "vk_device.h"

namespace weft::vk {
namespace {

// Push constants: the element offset of every binding first, then the kernel's parameters.
constexpr uint32_t kPushBytes = 128;

// VkPipelineCacheHeaderVersionOne as laid out at the start of the cache data.
struct CacheHeader {
  uint32_t length, version, vendor, device;
  uint8_t uuid[VK_UUID_SIZE];
};

}  // namespace

std::string Gpu::PipelineCachePath() const {
  if (cache_dir_.empty()) return "";
  char id[64];
  std::snprintf(id, sizeof(id), "%04x-%04x-%08x", props_.vendorID, props_.deviceID, props_.driverVersion);
  return cache_dir_ + "/pipelines-" + id + ".bin";
}

void Gpu::LoadPipelineCache() {
  std::vector<char> data;
  const std::string path = PipelineCachePath();
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
  }
  CacheHeader h{};
  if (data.size() >= sizeof(h)) std::memcpy(&h, data.data(), sizeof(h));
  // A cache of another driver build is dropped here rather than trusted to the driver.
  if (data.size() < sizeof(h) || h.version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || h.vendor != props_.vendorID ||
      h.device != props_.deviceID || std::memcmp(h.uuid, props_.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    data.clear();
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  if (api_.vkCreatePipelineCache(device_, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    if (api_.vkCreatePipelineCache(device_, &ci, nullptr, &cache_) != VK_SUCCESS) cache_ = VK_NULL_HANDLE;
  }
}

void Gpu::SavePipelineCache() {
  const std::string path = PipelineCachePath();
  if (path.empty() || cache_ == VK_NULL_HANDLE || pipelines_.empty()) return;
  size_t n = 0;
  if (api_.vkGetPipelineCacheData(device_, cache_, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<char> data(n);
  if (api_.vkGetPipelineCacheData(device_, cache_, &n, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(cache_dir_, ec);
  // Write a temporary file and rename it, so concurrent processes never read half a cache.
  const std::string tmp = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(data.data(), static_cast<std::streamsize>(n));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

VkDescriptorSetLayout Gpu::SetLayout(uint32_t bindings) {
  auto it = set_layouts_.find(bindings);
  if (it != set_layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  ci.bindingCount = bindings;
  ci.pBindings = b.data();
  VkDescriptorSetLayout l;
  Check(api_.vkCreateDescriptorSetLayout(device_, &ci, nullptr, &l), name_ + ": vkCreateDescriptorSetLayout");
  set_layouts_[bindings] = l;
  return l;
}

const Pipeline& Gpu::GetPipeline(const std::string& name, std::span<const uint32_t> spirv, uint32_t bindings,
                                 std::span<const int32_t> spec) {
  std::string key = name;
  for (int32_t v : spec) key += "," + std::to_string(v);
  VkDevice dev = device();
  std::lock_guard<std::mutex> lock(pipe_mu_);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return *found->second;
  auto p = std::make_unique<Pipeline>();
  p->bindings = bindings;
  auto lit = pipe_layouts_.find(bindings);
  if (lit == pipe_layouts_.end()) {
    VkDescriptorSetLayout sl = SetLayout(bindings);
    VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &sl;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &pr;
    VkPipelineLayout pl;
    Check(api_.vkCreatePipelineLayout(dev, &li, nullptr, &pl), name_ + ": vkCreatePipelineLayout");
    lit = pipe_layouts_.emplace(bindings, pl).first;
  }
  p->layout = lit->second;
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size() * sizeof(uint32_t);
  mi.pCode = spirv.data();
  VkShaderModule mod;
  Check(api_.vkCreateShaderModule(dev, &mi, nullptr, &mod), name_ + ": shader '" + name + "': vkCreateShaderModule");
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = mod;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  ci.layout = p->layout;
  const VkResult r = api_.vkCreateComputePipelines(dev, cache_, 1, &ci, nullptr, &p->pipeline);
  api_.vkDestroyShaderModule(dev, mod, nullptr);
  Check(r, name_ + ": shader '" + name + "': vkCreateComputePipelines");
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

void Gpu::Dispatch(StreamState& s, const Pipeline& p, std::span<const Binding> bindings, const void* push,
                   uint32_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (bindings.size() != p.bindings)
    throw sdk::Error(WEFT_ERR_INTERNAL, name_ + ": dispatch with " + std::to_string(bindings.size()) +
                                            " buffers for a pipeline of " + std::to_string(p.bindings));
  const uint32_t offsets_bytes = static_cast<uint32_t>(bindings.size() * 4);
  if (offsets_bytes + push_bytes > kPushBytes)
    throw sdk::Error(WEFT_ERR_INTERNAL, name_ + ": push constants exceed " + std::to_string(kPushBytes) + " bytes");
  const uint64_t align = props_.limits.minStorageBufferOffsetAlignment;
  const uint64_t max_range = props_.limits.maxStorageBufferRange;
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  std::vector<VkBuffer> reads, wrote;
  uint8_t pc[kPushBytes] = {};
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Binding& bd = bindings[i];
    auto [buf, at] = Locate(bd.ptr, bd.offset, bd.bytes, "kernel argument");
    // Bind at an aligned offset; the rest travels as an element offset (4-byte elements).
    const uint64_t base = at / align * align;
    const uint64_t rest = at - base;
    if (rest % 4 != 0)
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       name_ + ": tensor at byte offset " + std::to_string(at) + " is not 4-byte aligned");
    if (rest + bd.bytes > max_range)
      throw sdk::Error(WEFT_ERR_UNSUPPORTED, name_ + ": a tensor of " + std::to_string(bd.bytes) +
                                                 " bytes exceeds maxStorageBufferRange " + std::to_string(max_range));
    infos[i] = {buf->buffer, base, std::min<uint64_t>(buf->bytes - base, max_range)};
    writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    const uint32_t elem = static_cast<uint32_t>(rest / 4);
    std::memcpy(pc + i * 4, &elem, 4);
    (bd.write ? wrote : reads).push_back(buf->buffer);
  }
  if (push_bytes > 0) std::memcpy(pc + offsets_bytes, push, push_bytes);
  Record(s, reads, wrote, [&](VkCommandBuffer cb) {
    api_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    api_.vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0,
                                   static_cast<uint32_t>(writes.size()), writes.data());
    api_.vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes, pc);
    api_.vkCmdDispatch(cb, gx, gy, gz);
  });
}

}  // namespace weft::vk

// vulkan plugin — pipelines created lazily from the embedded SPIR-V, a VkPipelineCache kept on
// disk (checked against vendor, device, driver version and pipelineCacheUUID), and dispatches
// with push descriptors.
#include <cstdlib>
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

VkDescriptorSetLayout Gpu::SetLayout(uint32_t bindings, uint32_t texel_mask) {
  const uint64_t key = static_cast<uint64_t>(texel_mask) << 32 | bindings;
  auto it = set_layouts_.find(key);
  if (it != set_layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType =
        (texel_mask >> i & 1) != 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  ci.bindingCount = bindings;
  ci.pBindings = b.data();
  VkDescriptorSetLayout l;
  Check(api_.vkCreateDescriptorSetLayout(device_, &ci, nullptr, &l), name_ + ": vkCreateDescriptorSetLayout");
  set_layouts_[key] = l;
  return l;
}

const Pipeline& Gpu::GetPipeline(const std::string& name, std::span<const uint32_t> spirv, uint32_t bindings,
                                 std::span<const int32_t> spec, uint32_t texel_mask) {
  std::string key = name + "/" + std::to_string(texel_mask);
  for (int32_t v : spec) key += "," + std::to_string(v);
  VkDevice dev = device();
  std::lock_guard<std::mutex> lock(pipe_mu_);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return *found->second;
  auto p = std::make_unique<Pipeline>();
  p->bindings = bindings;
  p->texel_mask = texel_mask;
  const uint64_t layout_key = static_cast<uint64_t>(texel_mask) << 32 | bindings;
  auto lit = pipe_layouts_.find(layout_key);
  if (lit == pipe_layouts_.end()) {
    VkDescriptorSetLayout sl = SetLayout(bindings, texel_mask);
    VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &sl;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &pr;
    VkPipelineLayout pl;
    Check(api_.vkCreatePipelineLayout(dev, &li, nullptr, &pl), name_ + ": vkCreatePipelineLayout");
    lit = pipe_layouts_.emplace(layout_key, pl).first;
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
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkBufferView> views(bindings.size(), VK_NULL_HANDLE);
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  std::vector<VkBuffer> reads, wrote;
  uint8_t pc[kPushBytes] = {};
  try {
    for (size_t i = 0; i < bindings.size(); ++i) {
      const Binding& bd = bindings[i];
      const bool texel = (p.texel_mask >> i & 1) != 0;
      if (texel != bd.texel || (texel && bd.write))
        throw sdk::Error(WEFT_ERR_INTERNAL, name_ + ": binding " + std::to_string(i) +
                                                " does not match the pipeline's descriptor type (texel buffer or not)");
      auto [buf, at] = Locate(bd.ptr, bd.offset, bd.bytes, "kernel argument");
      writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstBinding = static_cast<uint32_t>(i);
      writes[i].descriptorCount = 1;
      const uint32_t elem = texel ? TexelView(*buf, at, bd.bytes, bd.scalar_texel ? 4 : 16, views[i])
                                  : StorageRange(*buf, at, bd.bytes, infos[i]);
      if (texel) {
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
        writes[i].pTexelBufferView = &views[i];
      } else {
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      std::memcpy(pc + i * 4, &elem, 4);
      (bd.write ? wrote : reads).push_back(buf->buffer);
    }
  } catch (...) {
    for (VkBufferView v : views)
      if (v != VK_NULL_HANDLE) api_.vkDestroyBufferView(device_, v, nullptr);
    throw;
  }
  if (push_bytes > 0) std::memcpy(pc + offsets_bytes, push, push_bytes);
  // The views live until the batch has run (destroyed in Retire).
  for (VkBufferView v : views)
    if (v != VK_NULL_HANDLE) s.open.views.push_back(v);
  Record(s, reads, wrote, [&](VkCommandBuffer cb) {
    api_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    api_.vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0,
                                   static_cast<uint32_t>(writes.size()), writes.data());
    api_.vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes, pc);
    api_.vkCmdDispatch(cb, gx, gy, gz);
  });
}

uint64_t Gpu::max_binding_bytes() const {
  const uint64_t range = props_.limits.maxStorageBufferRange;
  const char* e = std::getenv("WEFT_VULKAN_MAX_BINDING_BYTES");
  if (e == nullptr || *e == 0) return range;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(e, &end, 10);
  if (*end != 0 || v < 256)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, std::string("WEFT_VULKAN_MAX_BINDING_BYTES='") + e +
                                                    "': expected a byte count >= 256 (it can only lower "
                                                    "maxStorageBufferRange)");
  return std::min<uint64_t>(v, range);
}

uint32_t Gpu::StorageRange(const RawBuffer& buf, uint64_t at, uint64_t bytes, VkDescriptorBufferInfo& info) const {
  const uint64_t align = props_.limits.minStorageBufferOffsetAlignment;
  const uint64_t max_range = max_binding_bytes();
  // Bind at an aligned offset; the rest travels as an element offset (4-byte elements).
  const uint64_t base = at / align * align;
  const uint64_t rest = at - base;
  if (rest % 4 != 0)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                     name_ + ": tensor at byte offset " + std::to_string(at) + " is not 4-byte aligned");
  if (rest + bytes > max_range)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, name_ + ": a tensor of " + std::to_string(bytes) +
                                               " bytes exceeds maxStorageBufferRange " + std::to_string(max_range) +
                                               " (this op's kernel does not split it; the element-wise ones do)");
  info = {buf.buffer, base, std::min<uint64_t>(buf.bytes - base, max_range)};
  return static_cast<uint32_t>(rest / 4);
}

uint32_t Gpu::TexelView(const RawBuffer& buf, uint64_t at, uint64_t bytes, uint32_t texel_bytes, VkBufferView& view) {
  const uint64_t align = std::max<uint64_t>(props_.limits.minTexelBufferOffsetAlignment, 16);
  const uint64_t max_range = static_cast<uint64_t>(props_.limits.maxTexelBufferElements) * texel_bytes;
  const uint64_t base = at / align * align;
  const uint64_t rest = at - base;
  if (rest % texel_bytes != 0)
    throw sdk::Error(WEFT_ERR_INTERNAL, name_ + ": texel-buffer operand at byte offset " + std::to_string(at) +
                                            " is not " + std::to_string(texel_bytes) + "-byte aligned");
  // Whole texels only, inside the buffer (vec4 texels: the kernels choose them only for operands
  // whose extents are multiples of 4).
  const uint64_t range = std::min((rest + bytes + texel_bytes - 1) / texel_bytes * texel_bytes,
                                  (buf.bytes - base) / texel_bytes * texel_bytes);
  if (range > max_range)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, name_ + ": a tensor of " + std::to_string(bytes) +
                                               " bytes exceeds maxTexelBufferElements x " +
                                               std::to_string(texel_bytes) + " = " + std::to_string(max_range));
  VkBufferViewCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  ci.buffer = buf.buffer;
  ci.format = texel_bytes == 16 ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R32_SFLOAT;
  ci.offset = base;
  ci.range = range;
  Check(api_.vkCreateBufferView(device_, &ci, nullptr, &view), name_ + ": vkCreateBufferView");
  return static_cast<uint32_t>(rest / texel_bytes);
}

}  // namespace weft::vk

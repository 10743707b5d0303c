// vulkan plugin — one physical device: logical device, memory, streams, completion thread.
#include <algorithm>
#include <cstring>

#include "vk_device.h"

namespace weft::vk {
namespace {

// A batch is submitted once it holds this many commands, so a long graph keeps the device busy
// and never trips a driver timeout.
constexpr uint32_t kMaxCommandsPerBatch = 64;
// Host waits wake up this often to notice a lost device instead of hanging (ns).
constexpr uint64_t kWaitSliceNs = 1000000000ull;
// Private address range of device i's allocations (never a host pointer, never 0).
constexpr uint64_t kAddressBase = 0x7a1c00000000ull;
constexpr uint64_t kAddressSpan = 1ull << 40;

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void FullBarrier(Api& api, VkCommandBuffer cb, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = dst_access;
  api.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

}  // namespace

Gpu::Gpu(Api& api, VkPhysicalDevice phys, uint32_t family, std::string name)
    : api_(api), phys_(phys), family_(family), name_(std::move(name)), next_addr_(kAddressBase) {
  api_.vkGetPhysicalDeviceProperties(phys_, &props_);
  api_.vkGetPhysicalDeviceMemoryProperties(phys_, &mem_props_);
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  sub.pNext = &drv;
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &sub;
  api_.vkGetPhysicalDeviceProperties2(phys_, &p2);
  subgroup_size_ = sub.subgroupSize;
  driver_ = std::string(drv.driverName) + ": " + drv.driverInfo;
  for (uint32_t i = 0; i < mem_props_.memoryHeapCount; ++i)
    if (mem_props_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      heap_bytes_ = std::max<uint64_t>(heap_bytes_, mem_props_.memoryHeaps[i].size);
  uint32_t n = 0;
  api_.vkEnumerateDeviceExtensionProperties(phys_, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  api_.vkEnumerateDeviceExtensionProperties(phys_, nullptr, &n, ext.data());
  for (const auto& e : ext)
    if (std::strcmp(e.extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0) push_descriptor_ = true;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  api_.vkGetPhysicalDeviceFeatures2(phys_, &f2);
  float64_ = f2.features.shaderFloat64 == VK_TRUE;
}

Gpu::~Gpu() {
  if (device_ == VK_NULL_HANDLE) return;
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    stop_ = true;
  }
  done_cv_.notify_all();
  if (completion_.joinable()) completion_.join();
  api_.vkDeviceWaitIdle(device_);
  sync_streams_.clear();
  SavePipelineCache();
  for (auto& [k, p] : pipelines_) api_.vkDestroyPipeline(device_, p->pipeline, nullptr);
  for (auto& [k, l] : pipe_layouts_) api_.vkDestroyPipelineLayout(device_, l, nullptr);
  for (auto& [k, l] : set_layouts_) api_.vkDestroyDescriptorSetLayout(device_, l, nullptr);
  if (cache_ != VK_NULL_HANDLE) api_.vkDestroyPipelineCache(device_, cache_, nullptr);
  for (auto& [size, b] : staging_free_) DestroyBuffer(b);
  for (auto& [addr, b] : allocs_) DestroyBuffer(b);
  api_.vkDestroyDevice(device_, nullptr);
}

VkDevice Gpu::device() {
  std::call_once(init_once_, [this] {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = family_;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.timelineSemaphore = VK_TRUE;
    // shaderFloat64 when offered: Cast to and from float64 (shaders/Cast.comp) needs it.
    VkPhysicalDeviceFeatures features{};
    features.shaderFloat64 = float64_ ? VK_TRUE : VK_FALSE;
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.pNext = &f12;
    ci.pEnabledFeatures = &features;
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    const char* ext[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = ext;
    const VkResult r = api_.vkCreateDevice(phys_, &ci, nullptr, &device_);
    if (r != VK_SUCCESS) {
      device_ = VK_NULL_HANDLE;
      init_error_ = name_ + ": vkCreateDevice failed (" + ResultName(r) + ")";
      return;
    }
    api_.vkGetDeviceQueue(device_, family_, 0, &queue_);
    LoadPipelineCache();
    completion_ = std::thread([this] { CompletionLoop(); });
  });
  if (device_ == VK_NULL_HANDLE) throw sdk::Error(WEFT_ERR_UNAVAILABLE, init_error_);
  return device_;
}

// ---- memory ------------------------------------------------------------------------------------

uint32_t Gpu::MemoryType(uint32_t type_bits, bool host_visible) const {
  // Ordered preferences: device-local and mappable (UMA, ReBAR), then device-local, then any.
  const VkMemoryPropertyFlags kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const std::vector<VkMemoryPropertyFlags> wants =
      host_visible ? std::vector<VkMemoryPropertyFlags>{kHost | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, kHost}
                   : std::vector<VkMemoryPropertyFlags>{kHost | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                                        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
  for (VkMemoryPropertyFlags want : wants)
    for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (mem_props_.memoryTypes[i].propertyFlags & want) == want) return i;
  throw sdk::Error(WEFT_ERR_UNSUPPORTED, name_ + ": no suitable memory type");
}

RawBuffer Gpu::MakeBuffer(uint64_t bytes, bool host_visible) {
  VkDevice dev = device();
  RawBuffer b;
  b.bytes = bytes;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
             VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Check(api_.vkCreateBuffer(dev, &bi, nullptr, &b.buffer),
        name_ + ": vkCreateBuffer of " + std::to_string(bytes) + " bytes");
  VkMemoryRequirements req;
  api_.vkGetBufferMemoryRequirements(dev, b.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  try {
    ai.memoryTypeIndex = MemoryType(req.memoryTypeBits, host_visible);
    Check(api_.vkAllocateMemory(dev, &ai, nullptr, &b.memory),
          name_ + ": allocate " + std::to_string(bytes) + " bytes (vkAllocateMemory)");
    Check(api_.vkBindBufferMemory(dev, b.buffer, b.memory, 0), name_ + ": vkBindBufferMemory");
    if (mem_props_.memoryTypes[ai.memoryTypeIndex].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      Check(api_.vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), name_ + ": vkMapMemory");
  } catch (...) {
    DestroyBuffer(b);
    throw;
  }
  return b;
}

void Gpu::DestroyBuffer(const RawBuffer& b) {
  if (b.buffer != VK_NULL_HANDLE) api_.vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) api_.vkFreeMemory(device_, b.memory, nullptr);  // unmaps too
}

weft_device_ptr Gpu::Allocate(uint64_t bytes, uint64_t alignment) {
  const uint64_t limit = props_.limits.maxStorageBufferRange;
  if (bytes > heap_bytes_ - std::min(heap_bytes_, used_.load())) {
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, name_ + ": allocate " + std::to_string(bytes) +
                                                 " bytes: " + std::to_string(used_.load()) + " of " +
                                                 std::to_string(heap_bytes_) + " bytes of the device heap in use");
  }
  (void)limit;  // larger buffers are allowed; a single binding is limited (Dispatch checks)
  RawBuffer b = MakeBuffer(bytes, false);
  std::lock_guard<std::mutex> lock(alloc_mu_);
  const uint64_t base = kAddressBase;
  uint64_t start = (next_addr_ + alignment - 1) & ~(alignment - 1);
  if (start - base > kAddressSpan - bytes) {
    DestroyBuffer(b);
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, name_ + ": the private address range is exhausted");
  }
  allocs_.emplace(start, b);
  next_addr_ = start + bytes + 1;  // +1: no two allocations share an address, even adjacent
  used_ += bytes;
  return start;
}

std::pair<const RawBuffer*, uint64_t> Gpu::Locate(weft_device_ptr ptr, uint64_t offset, uint64_t bytes,
                                                  const char* what) const {
  std::lock_guard<std::mutex> lock(alloc_mu_);
  auto after = allocs_.upper_bound(ptr);
  if (after == allocs_.begin() || ptr >= std::prev(after)->first + std::prev(after)->second.bytes) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                     name_ + ": " + what + ": device pointer " + Hex(ptr) +
                         " is not inside a live allocation of this device (freed, never allocated, or another "
                         "device's)");
  }
  const auto& [base, b] = *std::prev(after);
  const uint64_t start = ptr - base;
  if (offset > b.bytes - start || bytes > b.bytes - start - offset) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, name_ + ": " + what + ": bytes [" + std::to_string(offset) + ", " +
                                                    std::to_string(offset) + " + " + std::to_string(bytes) + ") from " +
                                                    Hex(ptr) + " run past the end of its " + std::to_string(b.bytes) +
                                                    "-byte allocation");
  }
  return {&b, start + offset};
}

void Gpu::Free(weft_device_ptr ptr) {
  RawBuffer b;
  {
    std::lock_guard<std::mutex> lock(alloc_mu_);
    auto it = allocs_.find(ptr);
    if (it == allocs_.end()) {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       name_ + ": free " + Hex(ptr) +
                           ": no live allocation starts there (freed twice, an interior or foreign pointer)");
    }
    b = it->second;
    allocs_.erase(it);
    used_ -= b.bytes;
  }
  // Work already queued may still use the buffer (the SDK allows a free then, like cudaFree):
  // submit every stream's open work and destroy the buffer after the last batch in flight.
  std::vector<std::shared_ptr<StreamState>> live;
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    for (auto& w : streams_)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) Flush(*s);
  std::lock_guard<std::mutex> lock(done_mu_);
  if (pending_.empty()) {
    DestroyBuffer(b);
  } else {
    pending_.back().release.push_back(b);
  }
}

RawBuffer Gpu::TakeStaging(uint64_t bytes) {
  uint64_t size = 4096;
  while (size < bytes) size <<= 1;
  {
    std::lock_guard<std::mutex> lock(staging_mu_);
    auto it = staging_free_.find(size);
    if (it != staging_free_.end()) {
      RawBuffer b = it->second;
      staging_free_.erase(it);
      return b;
    }
  }
  return MakeBuffer(size, true);
}

void Gpu::ReturnStaging(RawBuffer b) {
  std::lock_guard<std::mutex> lock(staging_mu_);
  // Keep a bounded set: large one-off buffers go back to the driver.
  if (b.bytes > (64ull << 20) || staging_free_.count(b.bytes) >= 8) {
    DestroyBuffer(b);
    return;
  }
  staging_free_.emplace(b.bytes, b);
}

// ---- streams -----------------------------------------------------------------------------------

std::shared_ptr<StreamState> Gpu::CreateStream() {
  VkDevice dev = device();
  auto s = std::shared_ptr<StreamState>(new StreamState, [this](StreamState* p) {
    if (p->pool != VK_NULL_HANDLE) api_.vkDestroyCommandPool(device_, p->pool, nullptr);
    if (p->sem != VK_NULL_HANDLE) api_.vkDestroySemaphore(device_, p->sem, nullptr);
    delete p;
  });
  s->gpu = this;
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = family_;
  Check(api_.vkCreateCommandPool(dev, &pi, nullptr, &s->pool), name_ + ": vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  ti.initialValue = 0;
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  si.pNext = &ti;
  Check(api_.vkCreateSemaphore(dev, &si, nullptr, &s->sem), name_ + ": vkCreateSemaphore (timeline)");
  std::lock_guard<std::mutex> lock(done_mu_);
  std::erase_if(streams_, [](const std::weak_ptr<StreamState>& w) { return w.expired(); });
  streams_.push_back(s);
  return s;
}

void Gpu::DestroyStream(const std::shared_ptr<StreamState>& s) {
  // Pending work finishes first; the state lives on while events or batches refer to it.
  Flush(*s);
  std::unique_lock<std::mutex> lock(done_mu_);
  const uint64_t target = s->last_value;
  done_cv_.wait(lock, [&] { return s->retired.load() >= target || stop_; });
}

VkCommandBuffer Gpu::NewCommandBuffer(StreamState& s) {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  {
    std::lock_guard<std::mutex> lock(s.free_mu);
    if (!s.free_cbs.empty()) {
      cb = s.free_cbs.back();
      s.free_cbs.pop_back();
    }
  }
  if (cb == VK_NULL_HANDLE) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = s.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    Check(api_.vkAllocateCommandBuffers(device_, &ai, &cb), name_ + ": vkAllocateCommandBuffers");
  } else {
    api_.vkResetCommandBuffer(cb, 0);
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  Check(api_.vkBeginCommandBuffer(cb, &bi), name_ + ": vkBeginCommandBuffer");
  // Orders this batch after everything submitted earlier to the queue (submission order).
  FullBarrier(api_, cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
  return cb;
}

void Gpu::Record(StreamState& s, std::span<const VkBuffer> reads, std::span<const VkBuffer> writes,
                 const std::function<void(VkCommandBuffer)>& body) {
  if (s.cb == VK_NULL_HANDLE) {
    s.cb = NewCommandBuffer(s);
    s.written.clear();
    s.read.clear();
  }
  auto in = [](const std::vector<VkBuffer>& set, VkBuffer b) {
    return std::find(set.begin(), set.end(), b) != set.end();
  };
  bool hazard = false;
  for (VkBuffer b : reads) hazard = hazard || in(s.written, b);
  for (VkBuffer b : writes) hazard = hazard || in(s.written, b) || in(s.read, b);
  if (hazard) {
    FullBarrier(api_, s.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    s.written.clear();
    s.read.clear();
  }
  body(s.cb);
  s.read.insert(s.read.end(), reads.begin(), reads.end());
  s.written.insert(s.written.end(), writes.begin(), writes.end());
  if (++s.commands >= kMaxCommandsPerBatch) FlushLocked(s);
}

void Gpu::After(StreamState& s, std::function<void()> fn, bool gpu_waits_for_it) {
  s.open.after.push_back(std::move(fn));
  if (gpu_waits_for_it) {
    s.open_host_signal = true;
    FlushLocked(s);
  }
}

void Gpu::KeepStaging(StreamState& s, RawBuffer b) { s.open.staging.push_back(b); }

void Gpu::FlushLocked(StreamState& s) {
  if (!s.HasOpenWork()) return;
  Batch b = std::move(s.open);
  s.open = Batch{};
  b.cb = s.cb;
  s.cb = VK_NULL_HANDLE;
  s.commands = 0;
  if (b.cb != VK_NULL_HANDLE) {
    // Host reads of staging memory after the semaphore need the writes made visible to the host.
    FullBarrier(api_, b.cb, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    Check(api_.vkEndCommandBuffer(b.cb), name_ + ": vkEndCommandBuffer");
  }
  b.value = ++s.last_value;
  if (s.open_host_signal) b.host_value = ++s.last_value;
  s.open_host_signal = false;
  std::vector<VkSemaphore> wait_sems = std::move(s.wait_sems);
  std::vector<uint64_t> wait_values = std::move(s.wait_values);
  s.wait_sems.clear();
  s.wait_values.clear();
  if (s.own_wait != 0) {
    wait_sems.push_back(s.sem);
    wait_values.push_back(s.own_wait);
    s.own_wait = 0;
  }
  if (b.host_value != 0) s.own_wait = b.host_value;
  std::vector<VkPipelineStageFlags> stages(wait_sems.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  ti.pWaitSemaphoreValues = wait_values.data();
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &b.value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
  si.pWaitSemaphores = wait_sems.data();
  si.pWaitDstStageMask = stages.data();
  si.commandBufferCount = b.cb != VK_NULL_HANDLE ? 1 : 0;
  si.pCommandBuffers = &b.cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &s.sem;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    r = api_.vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) {
    // Nothing will signal: record the failure and let the completion thread release the batch.
    s.error = name_ + ": vkQueueSubmit failed (" + ResultName(r) + ")";
    const uint64_t top = s.last_value;
    VkSemaphoreSignalInfo sig{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    sig.semaphore = s.sem;
    sig.value = top;
    api_.vkSignalSemaphore(device_, &sig);
  }
  b.stream = nullptr;
  std::lock_guard<std::mutex> lock(done_mu_);
  for (auto& w : streams_) {
    auto p = w.lock();
    if (p.get() == &s) {
      b.stream = std::move(p);
      break;
    }
  }
  pending_.push_back(std::move(b));
  done_cv_.notify_all();
}

void Gpu::Flush(StreamState& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  FlushLocked(s);
}

void Gpu::WaitRetired(StreamState& s, uint64_t value) {
  std::unique_lock<std::mutex> lock(done_mu_);
  done_cv_.wait(lock, [&] { return s.retired.load() >= value || stop_; });
}

void Gpu::Synchronize(StreamState& s) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    FlushLocked(s);
    target = s.last_value;
  }
  WaitRetired(s, target);
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.error.empty()) {
    std::string e = std::move(s.error);
    s.error.clear();
    throw sdk::Error(WEFT_ERR_UNKNOWN, e);
  }
}

std::shared_ptr<StreamState> Gpu::SyncStream() {
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    if (!sync_streams_.empty()) {
      auto s = std::move(sync_streams_.back());
      sync_streams_.pop_back();
      return s;
    }
  }
  return CreateStream();
}

void Gpu::ReleaseSyncStream(std::shared_ptr<StreamState> s) {
  std::lock_guard<std::mutex> lock(done_mu_);
  if (sync_streams_.size() < 4) sync_streams_.push_back(std::move(s));
}

// ---- completion --------------------------------------------------------------------------------

void Gpu::CompletionLoop() {
  for (;;) {
    Batch b;
    {
      std::unique_lock<std::mutex> lock(done_mu_);
      done_cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stop_ and nothing left
      b.stream = pending_.front().stream;
      b.value = pending_.front().value;
    }
    // Batches complete in submission order (one queue, a barrier at the start of each batch),
    // so waiting for the oldest one never waits behind a later one.
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &b.stream->sem;
    wi.pValues = &b.value;
    VkResult r = VK_TIMEOUT;
    while (r == VK_TIMEOUT) r = api_.vkWaitSemaphores(device_, &wi, kWaitSliceNs);
    Batch done;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      done = std::move(pending_.front());
      pending_.pop_front();
    }
    if (r != VK_SUCCESS) {
      std::lock_guard<std::mutex> lock(done.stream->mu);
      done.stream->error = name_ + ": waiting for queued work failed (" + ResultName(r) + ")";
    }
    Retire(done);
  }
}

void Gpu::Retire(Batch& b) {
  StreamState& s = *b.stream;
  for (auto& fn : b.after) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.error.empty()) s.error = e.what();
    }
  }
  if (b.host_value != 0) {
    VkSemaphoreSignalInfo sig{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    sig.semaphore = s.sem;
    sig.value = b.host_value;
    api_.vkSignalSemaphore(device_, &sig);
  }
  for (VkBufferView v : b.views) api_.vkDestroyBufferView(device_, v, nullptr);
  for (RawBuffer& st : b.staging) ReturnStaging(st);
  for (RawBuffer& rb : b.release) DestroyBuffer(rb);
  if (b.cb != VK_NULL_HANDLE) {
    std::lock_guard<std::mutex> lock(s.free_mu);
    s.free_cbs.push_back(b.cb);
  }
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    s.retired.store(b.host_value != 0 ? b.host_value : b.value);
  }
  done_cv_.notify_all();
  b.stream.reset();
}

}  // namespace weft::vk

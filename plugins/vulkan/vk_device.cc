// vulkan plugin — the SDK device over every Gpu: enumeration, properties, copies, streams, events.
#include "vk_device.h"

#include <algorithm>
#include <cstring>

namespace weft::vk {
namespace {

int Rank(VkPhysicalDeviceType t) {  // discrete GPUs first, CPU implementations last
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 4;
    default:
      return 3;
  }
}

int32_t Kind(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return WEFT_DEVICE_KIND_GPU_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return WEFT_DEVICE_KIND_GPU_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return WEFT_DEVICE_KIND_GPU_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return WEFT_DEVICE_KIND_SOFTWARE;
    default:
      return WEFT_DEVICE_KIND_OTHER;
  }
}

std::string Version(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

}  // namespace

VulkanDevice::VulkanDevice(const weft_host_api* host) : sdk::Device("vulkan") {
  Api::Validation validation = Api::Validation::kOff;
  if (auto v = sdk::Config(host, "WEFT_VULKAN_VALIDATION")) {
    if (*v == "1" || *v == "report")
      validation = Api::Validation::kReport;
    else if (*v == "fatal")
      validation = Api::Validation::kFatal;
    else if (!v->empty() && *v != "0")
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "WEFT_VULKAN_VALIDATION='" + *v + "': use 0, 1 (report) or fatal");
  }
  api_.Load(validation);
  if (!api_.ok()) {
    reason_ = api_.reason();
    return;
  }
  Enumerate();
  std::string dir;
  if (auto d = sdk::Config(host, "WEFT_VULKAN_PIPELINE_CACHE_DIR")) {
    dir = *d;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = std::string(xdg) + "/weft/vulkan";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::string(home) + "/.cache/weft/vulkan";
  }
  for (auto& g : gpus_) g->set_cache_dir(dir);
}

VulkanDevice::~VulkanDevice() {
  {
    std::lock_guard<std::mutex> lock(handles_mu_);
    for (auto& [p, box] : streams_) box->state->gpu->DestroyStream(box->state);
    streams_.clear();
    for (auto& [p, box] : events_)
      if (box->state.timestamp != VK_NULL_HANDLE)
        box->state.gpu->api().vkDestroyQueryPool(box->state.gpu->device(), box->state.timestamp, nullptr);
    events_.clear();
  }
  gpus_.clear();  // before api_ destroys the instance
}

void VulkanDevice::Enumerate() {
  uint32_t n = 0;
  api_.vkEnumeratePhysicalDevices(api_.instance(), &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (n > 0) api_.vkEnumeratePhysicalDevices(api_.instance(), &n, phys.data());
  struct Candidate {
    VkPhysicalDevice p;
    uint32_t family;
    int rank;
  };
  std::vector<Candidate> found;
  std::string skipped;
  for (VkPhysicalDevice p : phys) {
    VkPhysicalDeviceProperties props;
    api_.vkGetPhysicalDeviceProperties(p, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) {
      skipped += std::string(props.deviceName) + " speaks only Vulkan " + Version(props.apiVersion) + "; ";
      continue;
    }
    uint32_t qn = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(p, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qs(qn);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(p, &qn, qs.data());
    // Prefer a compute family without graphics (a dedicated compute queue), else any compute.
    int64_t family = -1;
    for (uint32_t i = 0; i < qn; ++i)
      if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && (family < 0 || !(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
        family = i;
    if (family < 0) {
      skipped += std::string(props.deviceName) + " has no compute queue; ";
      continue;
    }
    found.push_back({p, static_cast<uint32_t>(family), Rank(props.deviceType)});
  }
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  for (const Candidate& c : found) {
    auto g = std::make_unique<Gpu>(api_, c.p, c.family, Name(static_cast<int32_t>(gpus_.size())));
    if (!g->has_push_descriptor()) {
      skipped += std::string(g->props().deviceName) + " lacks VK_KHR_push_descriptor; ";
      continue;
    }
    gpus_.push_back(std::move(g));
    FillAttributes(gpus_.size() - 1);
  }
  if (gpus_.empty()) {
    reason_ = phys.empty() ? "the Vulkan loader found no physical device: install a Vulkan driver "
                             "(mesa-vulkan-drivers provides lavapipe on any CPU), or check VK_ICD_FILENAMES"
                           : "no usable Vulkan device: " + skipped;
  }
}

void VulkanDevice::FillAttributes(size_t i) {
  const Gpu& g = *gpus_[i];
  const VkPhysicalDeviceProperties& p = g.props();
  const VkPhysicalDeviceLimits& l = p.limits;
  const bool software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  std::vector<std::string> t = {
      "api_version",
      Version(p.apiVersion),
      "driver",
      g.driver(),
      "driver_version",
      std::to_string(p.driverVersion),
      "device_type",
      software ? "cpu implementation (software rasterizer; correct but slow)" : "gpu",
      "vendor_id",
      std::to_string(p.vendorID),
      "device_id",
      std::to_string(p.deviceID),
      "queue_family",
      std::to_string(g.family()),
      "subgroup_size",
      std::to_string(g.subgroup_size()),
      "device_heap_bytes",
      std::to_string(g.heap_bytes()),
      "max_storage_buffer_range",
      std::to_string(l.maxStorageBufferRange),
      "max_compute_shared_memory",
      std::to_string(l.maxComputeSharedMemorySize),
      "max_workgroup_invocations",
      std::to_string(l.maxComputeWorkGroupInvocations),
      "max_workgroup_count",
      std::to_string(l.maxComputeWorkGroupCount[0]) + "x" + std::to_string(l.maxComputeWorkGroupCount[1]) + "x" +
          std::to_string(l.maxComputeWorkGroupCount[2]),
      "min_storage_buffer_offset_alignment",
      std::to_string(l.minStorageBufferOffsetAlignment),
      "timestamp_period_ns",
      std::to_string(l.timestampPeriod),
  };
  attr_text_.push_back(std::move(t));
  std::vector<weft_kv> kv;
  const auto& s = attr_text_.back();
  for (size_t k = 0; k + 1 < s.size(); k += 2) kv.push_back({s[k].c_str(), s[k + 1].c_str()});
  attrs_.push_back(std::move(kv));
}

void VulkanDevice::Properties(int32_t device, weft_device_props& out) {
  Gpu& g = gpu(device);
  const VkPhysicalDeviceProperties& p = g.props();
  // deviceName holds up to 256 bytes; props.name 128: keep what fits.
  const size_t len = std::min(std::strlen(p.deviceName), sizeof(out.name) - 1);
  std::memcpy(out.name, p.deviceName, len);
  out.name[len] = '\0';
  const char* vendor = p.vendorID == 0x10DE    ? "NVIDIA"
                       : p.vendorID == 0x1002  ? "AMD"
                       : p.vendorID == 0x8086  ? "Intel"
                       : p.vendorID == 0x10005 ? "Mesa"
                                               : "unknown vendor";
  std::snprintf(out.vendor, sizeof(out.vendor), "%s (0x%x)", vendor, p.vendorID);
  out.total_memory = g.heap_bytes();
  out.free_memory = g.heap_bytes() - std::min(g.heap_bytes(), g.used_bytes());
  out.capabilities = WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_NATIVE_HANDLES | WEFT_DEVICE_CAP_HOST_FUNC |
                     WEFT_DEVICE_CAP_TIMESTAMPS;
  out.min_alignment = std::max<uint64_t>(256, p.limits.minStorageBufferOffsetAlignment);
  out.compute_units = 0;
  out.kind = Kind(p.deviceType);
  out.max_allocation = 0;
  out.num_attributes = static_cast<int32_t>(attrs_[static_cast<size_t>(device)].size());
  out.attributes = attrs_[static_cast<size_t>(device)].data();
}

weft_device_ptr VulkanDevice::Allocate(int32_t device, uint64_t bytes, uint64_t alignment) {
  Gpu& g = gpu(device);
  const uint64_t min = std::max<uint64_t>(256, g.props().limits.minStorageBufferOffsetAlignment);
  return g.Allocate(bytes, std::max(alignment, min));
}

void VulkanDevice::Free(int32_t device, weft_device_ptr ptr) { gpu(device).Free(ptr); }

// ---- streams and handles -----------------------------------------------------------------------

std::shared_ptr<StreamState> VulkanDevice::StreamOf(weft_stream stream) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  auto it = streams_.find(reinterpret_cast<StreamBox*>(stream));
  if (it == streams_.end()) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: unknown stream handle");
  return it->second->state;
}

VulkanDevice::EventBox& VulkanDevice::EventOf(weft_event e) {
  std::lock_guard<std::mutex> lock(handles_mu_);
  auto it = events_.find(reinterpret_cast<EventBox*>(e));
  if (it == events_.end()) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: unknown event handle");
  return *it->second;
}

void VulkanDevice::OnStream(int32_t device, weft_stream stream, const std::function<void(Gpu&, StreamState&)>& fn) {
  Gpu& g = gpu(device);
  if (stream != nullptr) {
    std::shared_ptr<StreamState> s = StreamOf(stream);
    if (s->gpu != &g)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, g.name() + ": the stream belongs to " + s->gpu->name());
    std::lock_guard<std::mutex> lock(s->mu);
    fn(g, *s);
    return;
  }
  std::shared_ptr<StreamState> s = g.SyncStream();
  try {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      fn(g, *s);
    }
    g.Synchronize(*s);
  } catch (...) {
    g.Synchronize(*s);
    throw;
  }
  g.ReleaseSyncStream(std::move(s));
}

weft_stream VulkanDevice::CreateStream(int32_t device, uint32_t, int32_t) {
  auto box = std::make_unique<StreamBox>(StreamBox{device, gpu(device).CreateStream()});
  StreamBox* raw = box.get();
  std::lock_guard<std::mutex> lock(handles_mu_);
  streams_.emplace(raw, std::move(box));
  return sdk::ToStreamHandle(raw);
}

void VulkanDevice::DestroyStream(weft_stream stream) {
  std::unique_ptr<StreamBox> box;
  {
    std::lock_guard<std::mutex> lock(handles_mu_);
    auto it = streams_.find(reinterpret_cast<StreamBox*>(stream));
    if (it == streams_.end()) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: stream_destroy: unknown stream");
    box = std::move(it->second);
    streams_.erase(it);
  }
  box->state->gpu->DestroyStream(box->state);
}

void VulkanDevice::SynchronizeStream(weft_stream stream) {
  std::shared_ptr<StreamState> s = StreamOf(stream);
  s->gpu->Synchronize(*s);
}

weft_event VulkanDevice::CreateEvent(int32_t device, uint32_t flags) {
  gpu(device).device();  // a device that cannot start fails here, not at the first wait
  auto box = std::make_unique<EventBox>();
  box->device = device;
  box->state.gpu = &gpu(device);
  box->state.flags = flags;
  EventBox* raw = box.get();
  std::lock_guard<std::mutex> lock(handles_mu_);
  events_.emplace(raw, std::move(box));
  return sdk::ToEventHandle(raw);
}

void VulkanDevice::DestroyEvent(weft_event event) {
  std::unique_ptr<EventBox> box;
  {
    std::lock_guard<std::mutex> lock(handles_mu_);
    auto it = events_.find(reinterpret_cast<EventBox*>(event));
    if (it == events_.end()) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: event_destroy: unknown event");
    box = std::move(it->second);
    events_.erase(it);
  }
  // The semaphore belongs to the stream. A timestamp query still to be written by queued work is
  // released once that work has completed.
  EventState& e = box->state;
  if (e.timestamp == VK_NULL_HANDLE) return;
  if (e.stream != nullptr && e.stream->retired.load() < e.value) {
    std::lock_guard<std::mutex> lock(e.stream->mu);
    Gpu* g = e.gpu;
    VkQueryPool pool = e.timestamp;
    g->After(
        *e.stream, [g, pool] { g->api().vkDestroyQueryPool(g->device(), pool, nullptr); }, false);
    return;
  }
  e.gpu->api().vkDestroyQueryPool(e.gpu->device(), e.timestamp, nullptr);
}

void VulkanDevice::RecordEvent(weft_event event, weft_stream stream) {
  EventBox& e = EventOf(event);
  std::shared_ptr<StreamState> s = stream != nullptr ? StreamOf(stream) : nullptr;
  uint64_t value = 0;
  std::lock_guard<std::mutex> elock(e.state.mu);
  if (s != nullptr) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (e.state.flags & WEFT_EVENT_TIMING) {
      Gpu& g = *s->gpu;
      if (e.state.timestamp == VK_NULL_HANDLE) {
        VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = 1;
        Check(g.api().vkCreateQueryPool(g.device(), &qi, nullptr, &e.state.timestamp),
              g.name() + ": vkCreateQueryPool");
      }
      VkQueryPool pool = e.state.timestamp;
      g.Record(*s, {}, {}, [&](VkCommandBuffer cb) {
        g.api().vkCmdResetQueryPool(cb, pool, 0, 1);
        g.api().vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
      });
      e.state.stamped = true;
    }
    // The open batch (not yet submitted) will signal last_value + 1.
    value = s->HasOpenWork() ? s->last_value + 1 : s->last_value;
  } else {
    e.state.stamped = false;
  }
  e.state.stream = std::move(s);
  e.state.value = value;
}

namespace {
// Captured (stream, value) of an event, with the stream's open batch submitted if it holds it.
std::pair<std::shared_ptr<StreamState>, uint64_t> Captured(EventState& e) {
  std::shared_ptr<StreamState> s;
  uint64_t v;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    s = e.stream;
    v = e.value;
  }
  if (s != nullptr) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (v > s->last_value) s->gpu->FlushLocked(*s);
  }
  return {s, v};
}

void ThrowStreamError(StreamState& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.error.empty()) throw sdk::Error(WEFT_ERR_UNKNOWN, s.error);
}
}  // namespace

void VulkanDevice::StreamWaitEvent(weft_stream stream, weft_event event) {
  auto [src, value] = Captured(EventOf(event).state);
  if (src == nullptr || value == 0) return;
  if (stream == nullptr) {
    src->gpu->WaitRetired(*src, value);
    ThrowStreamError(*src);
    return;
  }
  std::shared_ptr<StreamState> s = StreamOf(stream);
  if (s == src) return;  // queue order
  if (s->gpu != src->gpu)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, s->gpu->name() + ": stream_wait_event on an event of " +
                                                    src->gpu->name() + " (devices do not share semaphores here)");
  std::string err;
  {
    std::lock_guard<std::mutex> lock(src->mu);
    err = src->error;
  }
  std::lock_guard<std::mutex> lock(s->mu);
  if (!err.empty() && s->error.empty()) s->error = err;  // failures follow the data
  if (src->retired.load() >= value) return;
  // Submit what is recorded so far: the wait applies to work queued after this call.
  s->gpu->FlushLocked(*s);
  s->wait_sems.push_back(src->sem);
  s->wait_values.push_back(value);
}

bool VulkanDevice::QueryEvent(weft_event event) {
  auto [s, value] = Captured(EventOf(event).state);
  if (s == nullptr) return true;
  if (s->retired.load() < value) return false;
  ThrowStreamError(*s);
  return true;
}

void VulkanDevice::SynchronizeEvent(weft_event event) {
  auto [s, value] = Captured(EventOf(event).state);
  if (s == nullptr) return;
  s->gpu->WaitRetired(*s, value);
  ThrowStreamError(*s);
}

double VulkanDevice::EventElapsedMs(weft_event start, weft_event end) {
  auto stamp = [&](weft_event ev, const char* which) {
    EventState& e = EventOf(ev).state;
    if (QueryEvent(ev) == false)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       std::string("vulkan: event_elapsed: the ") + which + " event has not completed");
    std::lock_guard<std::mutex> lock(e.mu);
    if (!(e.flags & WEFT_EVENT_TIMING) || !e.stamped)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, std::string("vulkan: event_elapsed: the ") + which +
                                                      " event was not created with WEFT_EVENT_TIMING and recorded "
                                                      "on a stream");
    uint64_t t = 0;
    Check(e.gpu->api().vkGetQueryPoolResults(e.gpu->device(), e.timestamp, 0, 1, sizeof(t), &t, sizeof(t),
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    return std::make_pair(t, e.gpu);
  };
  auto [t0, g0] = stamp(start, "start");
  auto [t1, g1] = stamp(end, "end");
  if (g0 != g1) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: event_elapsed: events of two devices");
  const double ns = (static_cast<double>(t1) - static_cast<double>(t0)) * g0->props().limits.timestampPeriod;
  return ns / 1e6;
}

void VulkanDevice::LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) {
  std::shared_ptr<StreamState> s = StreamOf(stream);
  std::lock_guard<std::mutex> lock(s->mu);
  s->gpu->After(
      *s, [fn, user_data] { fn(user_data); }, /*gpu_waits_for_it=*/true);
}

void VulkanDevice::NativeHandle(weft_native_handle_args& a) {
  Gpu& g = gpu(a.device);
  switch (a.what) {
    case WEFT_NATIVE_STREAM: {
      std::shared_ptr<StreamState> s = StreamOf(a.stream);
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->cb == VK_NULL_HANDLE) g.Record(*s, {}, {}, [](VkCommandBuffer) {});
      a.kind = WEFT_NATIVE_KIND_VK_COMMAND_BUFFER;
      a.handle = s->cb;
      a.aux = g.queue();
      a.index = static_cast<int32_t>(g.family());
      return;
    }
    case WEFT_NATIVE_MEMORY: {
      auto [buf, at] = g.Locate(a.ptr, a.offset, 0, "native_handle");
      a.kind = WEFT_NATIVE_KIND_VK_BUFFER;
      a.handle = buf->buffer;
      a.value = at;
      a.size = std::min<uint64_t>(buf->bytes - at, g.props().limits.maxStorageBufferRange);
      return;
    }
    case WEFT_NATIVE_EVENT: {
      EventBox& e = EventOf(a.event);
      std::lock_guard<std::mutex> lock(e.state.mu);
      a.kind = WEFT_NATIVE_KIND_VK_SEMAPHORE;
      a.handle = e.state.stream != nullptr ? e.state.stream->sem : VK_NULL_HANDLE;
      a.value = e.state.value;
      return;
    }
    case WEFT_NATIVE_DEVICE:
      a.kind = WEFT_NATIVE_KIND_VK_DEVICE;
      a.handle = g.device();
      a.aux = g.phys();
      a.index = static_cast<int32_t>(g.family());
      return;
    default:
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: native_handle: unknown 'what' " + std::to_string(a.what));
  }
}

}  // namespace weft::vk

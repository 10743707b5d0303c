#include "gpu_device.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>

namespace weft::WEFT_GPU_NS {
namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void CopyString(char* dst, size_t cap, const std::string& s) {
  const size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

std::string ErrorText(gpuError_t e) {
  return std::string(gpuGetErrorName(e)) + " " + std::to_string(static_cast<int>(e)) + ": " + gpuGetErrorString(e);
}

// Why the runtime found no device, and what the user would install. The runtime's error codes
// differ: without a driver CUDA says cudaErrorInsufficientDriver (35), HIP hipErrorNoDevice (100).
std::string ReasonFor(gpuError_t e) {
  const std::string code = std::string(gpuGetErrorName(e)) + " " + std::to_string(static_cast<int>(e));
  int runtime = 0;
  (void)gpuRuntimeGetVersion(&runtime);
#if defined(WEFT_GPU_CUDA)
  const std::string rt = "CUDA runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  if (e == cudaErrorInsufficientDriver)
    return "CUDA driver not found or older than the " + rt + " (" + code +
           "): install the NVIDIA driver (Debian: nvidia-driver from non-free, version >= 580 for CUDA 13) and check "
           "that nvidia-smi lists the GPU";
  if (e == cudaErrorNoDevice)
    return "no CUDA-capable GPU found (" + code +
           "): the NVIDIA driver is loaded but sees no GPU; check nvidia-smi "
           "and CUDA_VISIBLE_DEVICES";
  return "the " + rt + " found no usable GPU (" + code + ": " + gpuGetErrorString(e) + "); check nvidia-smi";
#else
  const std::string rt =
      "HIP runtime " + std::to_string(runtime / 10000000) + "." + std::to_string(runtime / 100000 % 100);
  if (e == hipErrorNoDevice)
    return "no AMD GPU found (" + code + "): the " + rt +
           " needs a ROCm-supported AMD GPU and the amdgpu kernel driver (/dev/kfd readable; user in the render "
           "group); check rocminfo and HIP_VISIBLE_DEVICES";
  if (e == hipErrorInsufficientDriver)
    return "AMD GPU driver too old for the " + rt + " (" + code + "): update the amdgpu kernel driver";
  return "the " + rt + " found no usable GPU (" + code + ": " + gpuGetErrorString(e) + "); check rocminfo";
#endif
}

GpuStream* StreamOf(weft_stream s) { return reinterpret_cast<GpuStream*>(s); }
GpuEvent* EventOf(weft_event e) { return reinterpret_cast<GpuEvent*>(e); }

// Throws the error an event captured, if any (a new error object each time: the copy stays).
void ThrowCaptured(GpuEvent& e) {
  std::lock_guard<std::mutex> lock(e.mu);
  if (e.captured_code != 0) throw sdk::Error(e.captured_code, e.captured_message);
}

}  // namespace

void Check(gpuError_t e, const std::string& what, int32_t code) {
  if (e == gpuSuccess) return;
  (void)gpuGetLastError();  // clear the thread's last error so a later check does not see it again
#if defined(WEFT_GPU_CUDA)
  const bool oom = e == cudaErrorMemoryAllocation;
#else
  const bool oom = e == hipErrorOutOfMemory;
#endif
  throw sdk::Error(oom ? WEFT_ERR_OUT_OF_MEMORY : code, what + ": " + ErrorText(e));
}

GpuDevice::GpuDevice(std::string device_type, const weft_host_api* host)
    : sdk::Device(std::move(device_type)), host_(host) {
  Discover();
}

GpuDevice::~GpuDevice() {
  // Whatever the host did not free goes now: the plugin is being shut down.
  for (const auto& [ptr, a] : live_) {
    if (gpuSetDevice(a.device) == gpuSuccess) (void)gpuFree(a.raw);
  }
  for (void* p : pinned_) (void)gpuFreeHost(p);
}

void GpuDevice::Discover() {
  int n = 0;
  const gpuError_t e = gpuGetDeviceCount(&n);
  if (e != gpuSuccess || n <= 0) {
    count_ = 0;
#if defined(WEFT_GPU_CUDA)
    constexpr gpuError_t kNoDevice = cudaErrorNoDevice;
#else
    constexpr gpuError_t kNoDevice = hipErrorNoDevice;
#endif
    reason_ = ReasonFor(e == gpuSuccess ? kNoDevice : e);
    (void)gpuGetLastError();
    sdk::Log(host_, WEFT_LOG_DEBUG, device_type() + ": 0 devices: " + reason_);
    return;
  }
  count_ = n;
  info_.resize(static_cast<size_t>(n));
  for (int32_t d = 0; d < n; ++d) ReadDevice(d, info_[static_cast<size_t>(d)]);
}

void GpuDevice::ReadDevice(int32_t device, DeviceInfo& info) {
  Check(gpuGetDeviceProperties(&info.prop, device), Name(device) + ": get device properties");
  char bus[32] = {};
  if (gpuDeviceGetPCIBusId(bus, sizeof(bus), device) == gpuSuccess) info.pci_bus_id = bus;
  (void)gpuGetLastError();
  for (int32_t p = 0; p < count_; ++p) {
    int can = 0;
    if (p != device && gpuDeviceCanAccessPeer(&can, device, p) == gpuSuccess && can) {
      info.has_peer = true;
      Use(device);
      const gpuError_t e = gpuDeviceEnablePeerAccess(p, 0);
      if (e != gpuSuccess && e != gpuErrorPeerAccessAlreadyEnabled) info.has_peer = false;
      (void)gpuGetLastError();
    }
  }
  int driver = 0, runtime = 0;
  (void)gpuDriverGetVersion(&driver);
  (void)gpuRuntimeGetVersion(&runtime);
  const gpuDeviceProp_t& p = info.prop;
  info.attr_storage = {
#if defined(WEFT_GPU_CUDA)
    "compute_capability",
    std::to_string(p.major) + "." + std::to_string(p.minor),
#else
    "gcn_arch",
    p.gcnArchName,
#endif
    "driver_version",
    std::to_string(driver),
    "runtime_version",
    std::to_string(runtime),
    "warp_size",
    std::to_string(p.warpSize),
    "shared_memory_per_block",
    std::to_string(p.sharedMemPerBlock),
    "max_threads_per_block",
    std::to_string(p.maxThreadsPerBlock),
  };
  for (size_t i = 0; i + 1 < info.attr_storage.size(); i += 2)
    info.attrs.push_back(weft_kv{info.attr_storage[i].c_str(), info.attr_storage[i + 1].c_str()});
}

void GpuDevice::Use(int32_t device) const { Check(gpuSetDevice(device), Name(device) + ": set device"); }

void GpuDevice::FinishIfSynchronous(weft_stream s, const std::string& what) const {
  if (s == nullptr) Check(gpuStreamSynchronize(gpuStreamPerThread), what);
}

void GpuDevice::Properties(int32_t device, weft_device_props& props) {
  const DeviceInfo& info = info_[static_cast<size_t>(device)];
  CopyString(props.name, sizeof(props.name), info.prop.name);
#if defined(WEFT_GPU_CUDA)
  CopyString(props.vendor, sizeof(props.vendor), "NVIDIA");
#else
  CopyString(props.vendor, sizeof(props.vendor), "AMD");
#endif
  props.total_memory = info.prop.totalGlobalMem;
  size_t free_bytes = 0, total = 0;
  Use(device);
  if (gpuMemGetInfo(&free_bytes, &total) == gpuSuccess) props.free_memory = free_bytes;
  (void)gpuGetLastError();
  props.capabilities = WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_PINNED_HOST | WEFT_DEVICE_CAP_TIMESTAMPS |
                       WEFT_DEVICE_CAP_NATIVE_HANDLES | WEFT_DEVICE_CAP_HOST_FUNC |
                       (info.has_peer ? WEFT_DEVICE_CAP_PEER_COPY : 0) |
                       (info.prop.integrated ? WEFT_DEVICE_CAP_UNIFIED_MEMORY : 0);
  props.min_alignment = 256;  // what gpuMalloc guarantees
  props.compute_units = info.prop.multiProcessorCount;
  props.kind = info.prop.integrated ? WEFT_DEVICE_KIND_GPU_INTEGRATED : WEFT_DEVICE_KIND_GPU_DISCRETE;
  CopyString(props.pci_bus_id, sizeof(props.pci_bus_id), info.pci_bus_id);
  props.num_attributes = static_cast<int32_t>(info.attrs.size());
  props.attributes = info.attrs.data();
}

weft_device_ptr GpuDevice::Allocate(int32_t device, uint64_t bytes, uint64_t alignment) {
  Use(device);
  const uint64_t extra = alignment > 256 ? alignment - 256 : 0;  // gpuMalloc is 256-aligned already
  void* raw = nullptr;
  Check(gpuMalloc(&raw, bytes + extra),
        Name(device) + ": allocate " + std::to_string(bytes) + " bytes (alignment " + std::to_string(alignment) + ")");
  uint64_t p = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(raw));
  if (extra != 0) p = (p + alignment - 1) & ~(alignment - 1);
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(p, Allocation{raw, bytes, device});
  return p;
}

void GpuDevice::Free(int32_t device, weft_device_ptr ptr) {
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end() || it->second.device != device) {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       Name(device) + ": free " + Hex(ptr) + ": " +
                           (it == live_.end() ? "not the start of a live allocation of this plugin (foreign, "
                                                "interior, or freed twice)"
                                              : "it belongs to " + Name(it->second.device)));
    }
    a = it->second;
    live_.erase(it);
  }
  Use(device);
  Check(gpuFree(a.raw), Name(device) + ": free " + Hex(ptr));  // waits for queued work using it
}

uint64_t GpuDevice::CheckRange(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes,
                               const char* what) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto after = live_.upper_bound(ptr);
  std::string why;
  if (after == live_.begin() || ptr >= std::prev(after)->first + std::prev(after)->second.bytes) {
    why = "no live allocation of this plugin contains it (freed, foreign, or never allocated)";
  } else {
    const auto& [base, a] = *std::prev(after);
    const uint64_t start = ptr - base;
    if (a.device != device) {
      why = "it belongs to " + Name(a.device);
    } else if (offset > a.bytes - start || bytes > a.bytes - start - offset) {
      why = "bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " + std::to_string(bytes) +
            ") run past the end of its " + std::to_string(a.bytes) + "-byte allocation at " + Hex(base);
    } else {
      return a.bytes - start - offset;
    }
  }
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": " + what + ": device pointer " + Hex(ptr) + ": " + why);
}

void GpuDevice::Copy(const weft_copy_args& a) {
  const gpuStream_t s = NativeStreamOf(a.stream);
  auto dev_addr = [](weft_device_ptr p, uint64_t off) {
    return reinterpret_cast<char*>(static_cast<uintptr_t>(p + off));
  };
  std::string what;
  switch (a.kind) {
    case WEFT_COPY_HOST_TO_DEVICE:
      CheckRange(a.dst_device, a.dst, a.dst_offset, a.bytes, "copy host->device (destination)");
      what = Name(a.dst_device) + ": copy " + std::to_string(a.bytes) + " bytes host->device";
      Use(a.dst_device);
      Check(gpuMemcpyAsync(dev_addr(a.dst, a.dst_offset), static_cast<const char*>(a.src_host) + a.src_offset, a.bytes,
                           gpuMemcpyHostToDevice, s),
            what);
      break;
    case WEFT_COPY_DEVICE_TO_HOST:
      CheckRange(a.src_device, a.src, a.src_offset, a.bytes, "copy device->host (source)");
      what = Name(a.src_device) + ": copy " + std::to_string(a.bytes) + " bytes device->host";
      Use(a.src_device);
      Check(gpuMemcpyAsync(static_cast<char*>(a.dst_host) + a.dst_offset, dev_addr(a.src, a.src_offset), a.bytes,
                           gpuMemcpyDeviceToHost, s),
            what);
      break;
    default:  // WEFT_COPY_DEVICE_TO_DEVICE (the trampoline checked the kind)
      CheckRange(a.src_device, a.src, a.src_offset, a.bytes, "copy device->device (source)");
      CheckRange(a.dst_device, a.dst, a.dst_offset, a.bytes, "copy device->device (destination)");
      what = Name(a.src_device) + " -> " + Name(a.dst_device) + ": copy " + std::to_string(a.bytes) + " bytes";
      Use(a.dst_device);  // the stream belongs to the destination device
      if (a.src_device == a.dst_device) {
        Check(gpuMemcpyAsync(dev_addr(a.dst, a.dst_offset), dev_addr(a.src, a.src_offset), a.bytes,
                             gpuMemcpyDeviceToDevice, s),
              what);
      } else {
        Check(gpuMemcpyPeerAsync(dev_addr(a.dst, a.dst_offset), a.dst_device, dev_addr(a.src, a.src_offset),
                                 a.src_device, a.bytes, s),
              what);
      }
  }
  FinishIfSynchronous(a.stream, what);
}

void GpuDevice::Memset(const weft_memset_args& a) {
  CheckRange(a.device, a.dst, a.offset, a.bytes, "memset");
  const std::string what = Name(a.device) + ": memset " + std::to_string(a.bytes) + " bytes";
  Use(a.device);
  Check(gpuMemsetAsync(reinterpret_cast<void*>(static_cast<uintptr_t>(a.dst + a.offset)), a.value, a.bytes,
                       NativeStreamOf(a.stream)),
        what);
  FinishIfSynchronous(a.stream, what);
}

weft_stream GpuDevice::CreateStream(int32_t device, uint32_t /*flags*/, int32_t priority) {
  Use(device);
  int least = 0, greatest = 0;  // numerically: least = lowest urgency, greatest = most urgent
  Check(gpuDeviceGetStreamPriorityRange(&least, &greatest), Name(device) + ": stream priority range");
  auto s = std::make_unique<GpuStream>();
  s->device = device;
  Check(gpuStreamCreateWithPriority(&s->stream, gpuStreamNonBlocking, priority > 0 ? greatest : least),
        Name(device) + ": create stream");
  return sdk::ToStreamHandle(s.release());
}

void GpuDevice::DestroyStream(weft_stream stream) {
  std::unique_ptr<GpuStream> s(StreamOf(stream));
  Use(s->device);
  if (release_handles != nullptr) release_handles(*s);
  Check(gpuStreamDestroy(s->stream), Name(s->device) + ": destroy stream");  // released after its work
}

void GpuDevice::SynchronizeStream(weft_stream stream) {
  GpuStream& s = *StreamOf(stream);
  Use(s.device);
  const gpuError_t e = gpuStreamSynchronize(s.stream);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.sticky_code != 0) {
      const sdk::Error err(s.sticky_code, s.sticky_message);
      s.sticky_code = 0;
      s.sticky_message.clear();
      throw err;
    }
  }
  Check(e, Name(s.device) + ": stream work failed");
}

weft_event GpuDevice::CreateEvent(int32_t device, uint32_t flags) {
  Use(device);
  auto e = std::make_unique<GpuEvent>();
  e->device = device;
  e->timing = (flags & WEFT_EVENT_TIMING) != 0;
  Check(gpuEventCreateWithFlags(&e->event, e->timing ? gpuEventDefault : gpuEventDisableTiming),
        Name(device) + ": create event");
  return sdk::ToEventHandle(e.release());
}

void GpuDevice::DestroyEvent(weft_event event) {
  std::unique_ptr<GpuEvent> e(EventOf(event));
  Use(e->device);
  Check(gpuEventDestroy(e->event), Name(e->device) + ": destroy event");  // released after completion
}

void GpuDevice::RecordEvent(weft_event event, weft_stream stream) {
  GpuEvent& e = *EventOf(event);
  int32_t code = 0;
  std::string message;
  if (stream != nullptr) {
    GpuStream& s = *StreamOf(stream);
    std::lock_guard<std::mutex> lock(s.mu);
    code = s.sticky_code;
    message = s.sticky_message;
  }
  Use(e.device);
  Check(gpuEventRecord(e.event, NativeStreamOf(stream)), Name(e.device) + ": record event");
  if (stream == nullptr) FinishIfSynchronous(stream, Name(e.device) + ": record event");
  std::lock_guard<std::mutex> lock(e.mu);
  e.captured_code = code;
  e.captured_message = std::move(message);
}

void GpuDevice::StreamWaitEvent(weft_stream stream, weft_event event) {
  GpuEvent& e = *EventOf(event);
  if (stream == nullptr) {
    SynchronizeEvent(event);
    return;
  }
  GpuStream& s = *StreamOf(stream);
  Use(s.device);
  Check(gpuStreamWaitEvent(s.stream, e.event), Name(s.device) + ": stream wait event");
  std::scoped_lock lock(s.mu, e.mu);
  if (e.captured_code != 0 && s.sticky_code == 0) {  // the failure follows the data
    s.sticky_code = e.captured_code;
    s.sticky_message = e.captured_message;
  }
}

bool GpuDevice::QueryEvent(weft_event event) {
  GpuEvent& e = *EventOf(event);
  Use(e.device);
  const gpuError_t r = gpuEventQuery(e.event);
  if (r == gpuErrorNotReady) {
    (void)gpuGetLastError();
    return false;
  }
  Check(r, Name(e.device) + ": event's work failed");
  ThrowCaptured(e);
  return true;
}

void GpuDevice::SynchronizeEvent(weft_event event) {
  GpuEvent& e = *EventOf(event);
  Use(e.device);
  Check(gpuEventSynchronize(e.event), Name(e.device) + ": event's work failed");
  ThrowCaptured(e);
}

void* GpuDevice::PinnedAlloc(int32_t device, uint64_t bytes) {
  Use(device);
  void* p = nullptr;
  Check(gpuHostAlloc(&p, bytes), Name(device) + ": pinned alloc " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lock(mu_);
  pinned_.insert(p);
  return p;
}

void GpuDevice::PinnedFree(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pinned_.erase(ptr) == 0)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, device_type() + ": pinned_free " +
                                                      Hex(reinterpret_cast<uintptr_t>(ptr)) +
                                                      ": not pinned memory of this plugin (or freed twice)");
  }
  Check(gpuFreeHost(ptr), device_type() + ": pinned free");
}

double GpuDevice::EventElapsedMs(weft_event start, weft_event end) {
  GpuEvent& a = *EventOf(start);
  GpuEvent& b = *EventOf(end);
  if (!a.timing || !b.timing || a.device != b.device)
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, device_type() +
                                                    ": event_elapsed needs two events of one device created with "
                                                    "WEFT_EVENT_TIMING");
  Use(a.device);
  float ms = 0;
  const gpuError_t r = gpuEventElapsedTime(&ms, a.event, b.event);
  if (r == gpuErrorNotReady) {
    (void)gpuGetLastError();
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(a.device) + ": event_elapsed: an event has not completed");
  }
  Check(r, Name(a.device) + ": event_elapsed", WEFT_ERR_INVALID_ARGUMENT);
  return ms;
}

void GpuDevice::NativeHandle(weft_native_handle_args& a) {
#if defined(WEFT_GPU_CUDA)
  constexpr int32_t kBase = WEFT_NATIVE_KIND_CUDA_STREAM;
#else
  constexpr int32_t kBase = WEFT_NATIVE_KIND_HIP_STREAM;
#endif
  switch (a.what) {
    case WEFT_NATIVE_STREAM:
      a.kind = kBase;  // *_STREAM; the NULL stream is the legacy default stream (0)
      a.handle = a.stream == nullptr ? nullptr : static_cast<void*>(StreamOf(a.stream)->stream);
      a.index = a.stream == nullptr ? a.device : StreamOf(a.stream)->device;
      return;
    case WEFT_NATIVE_MEMORY:
      a.size = CheckRange(a.device, a.ptr, a.offset, 0, "native_handle");
      a.kind = kBase + 1;  // *_DEVICE_POINTER
      a.handle = reinterpret_cast<void*>(static_cast<uintptr_t>(a.ptr + a.offset));
      return;
    case WEFT_NATIVE_EVENT:
      if (a.event == nullptr) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "native_handle: event is NULL");
      a.kind = kBase + 2;  // *_EVENT
      a.handle = static_cast<void*>(EventOf(a.event)->event);
      return;
    case WEFT_NATIVE_DEVICE:
      a.kind = kBase + 3;  // *_DEVICE
      a.index = a.device;
      return;
    default:
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "native_handle: unknown 'what' " + std::to_string(a.what));
  }
}

void GpuDevice::LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) {
  GpuStream& s = *StreamOf(stream);
  Use(s.device);
#if defined(WEFT_GPU_CUDA)
  Check(cudaLaunchHostFunc(s.stream, fn, user_data), Name(s.device) + ": launch host function");
#else
  // HIP 5.2 has no hipLaunchHostFunc; a stream callback runs at the same point in the stream.
  struct Call {
    void (*fn)(void*);
    void* data;
  };
  auto* call = new Call{fn, user_data};
  const hipError_t e = hipStreamAddCallback(
      s.stream,
      [](hipStream_t, hipError_t, void* p) {
        std::unique_ptr<Call> c(static_cast<Call*>(p));
        c->fn(c->data);
      },
      call, 0);
  if (e != hipSuccess) delete call;
  Check(e, Name(s.device) + ": launch host function");
#endif
}

}  // namespace weft::WEFT_GPU_NS

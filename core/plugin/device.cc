#include "weft/internal/device.h"

#include <cstring>
#include <exception>

#include "weft/base.h"
#include "weft/internal/plugin.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft {
namespace {

// Calls into the plugin: its error becomes a C++ exception prefixed with `what()`; an exception
// escaping the plugin (a plugin bug) is caught here rather than crossing further.
template <typename What, typename Fn>
void Call(const What& what, Fn&& fn) {
  weft_error* err = nullptr;
  try {
    err = fn();
  } catch (const std::exception& e) {
    Fail("{}: the plugin threw an exception across the C ABI ({}); this is a plugin bug", what(), e.what());
  } catch (...) {
    Fail("{}: the plugin threw an exception across the C ABI; this is a plugin bug", what());
  }
  if (err) ThrowIfError(err, what());
}

DeviceProperties ReadProperties(const weft_device_api* api, void* state, int index, const std::string& label) {
  weft_device_props raw{};
  raw.struct_size = sizeof(raw);
  Call([&] { return label + ": get_properties"; }, [&] { return api->get_properties(state, index, &raw); });
  DeviceProperties p;
  raw.name[sizeof(raw.name) - 1] = '\0';
  raw.vendor[sizeof(raw.vendor) - 1] = '\0';
  p.name = raw.name;
  p.vendor = raw.vendor;
  p.total_memory = raw.total_memory;
  p.free_memory = raw.free_memory;
  p.capabilities = raw.capabilities;
  p.min_alignment = raw.min_alignment ? raw.min_alignment : 64;
  p.compute_units = raw.compute_units;
  p.kind = raw.kind;
  p.max_allocation = raw.max_allocation;
  raw.pci_bus_id[sizeof(raw.pci_bus_id) - 1] = '\0';
  p.pci_bus_id = raw.pci_bus_id;
  for (int i = 0; raw.attributes && i < raw.num_attributes; ++i) {
    const weft_kv& kv = raw.attributes[i];
    p.attributes.emplace_back(kv.key ? kv.key : "", kv.value ? kv.value : "");
  }
  return p;
}

}  // namespace

std::vector<std::string> CapabilityNames(uint64_t caps) {
  static const char* const kNames[] = {"host_addressable", "async_copy",     "peer_copy",      "pinned_host",
                                       "timestamps",       "unified_memory", "native_handles", "host_functions"};
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    if (!(caps & (uint64_t{1} << bit))) continue;
    out.push_back(bit < static_cast<int>(std::size(kNames)) ? kNames[bit] : fmt::format("bit{}", bit));
  }
  return out;
}

const char* DeviceKindName(int kind) {
  switch (kind) {
    case WEFT_DEVICE_KIND_CPU:
      return "cpu";
    case WEFT_DEVICE_KIND_GPU_DISCRETE:
      return "gpu (discrete)";
    case WEFT_DEVICE_KIND_GPU_INTEGRATED:
      return "gpu (integrated)";
    case WEFT_DEVICE_KIND_GPU_VIRTUAL:
      return "gpu (virtual)";
    case WEFT_DEVICE_KIND_SOFTWARE:
      return "software (a GPU API implemented on the CPU)";
    default:
      return "other";
  }
}

namespace {
std::atomic<uint64_t>& AllHostWaits() {
  static std::atomic<uint64_t> count{0};
  return count;
}
}  // namespace

uint64_t Device::TotalHostWaits() { return AllHostWaits().load(std::memory_order_relaxed); }

void Device::CountHostWait() {
  host_waits_.fetch_add(1, std::memory_order_relaxed);
  AllHostWaits().fetch_add(1, std::memory_order_relaxed);
}

Device::Device(const Plugin& plugin, int index)
    : plugin_(plugin), api_(plugin.device_api()), state_(plugin.state()), context_(plugin.device_type(), index) {
  WEFT_CHECK(api_ != nullptr, "plugin '{}' provides no devices", plugin.name());
  try {
    props_ = ReadProperties(api_, state_, index, context_.ToString());
  } catch (const Error& e) {
    LogWarning("{} (plugin {}): using default properties", e.what(), plugin.path());
  }
}

DeviceProperties Device::QueryProperties() const { return ReadProperties(api_, state_, id(), context_.ToString()); }

weft_device_ptr Device::Allocate(uint64_t bytes, uint64_t alignment) {
  if (bytes == 0) return 0;
  WEFT_CHECK(alignment == 0 || (alignment & (alignment - 1)) == 0,
             "{}: allocate {} bytes: alignment {} is not a power of two", context_, bytes, alignment);
  weft_alloc_args args{};
  args.struct_size = sizeof(args);
  args.device = id();
  args.bytes = bytes;
  args.alignment = alignment;
  Call([&] { return fmt::format("{}: allocate {} bytes", context_, bytes); },
       [&] { return api_->allocate(state_, &args); });
  return args.ptr;
}

void Device::Free(weft_device_ptr ptr) {
  if (ptr == 0 || !plugin_.alive()) return;
  Call([&] { return fmt::format("{}: free {:#x}", context_, ptr); }, [&] { return api_->free(state_, id(), ptr); });
}

void Device::CopyFromHost(weft_device_ptr dst, uint64_t dst_offset, const void* src, uint64_t bytes,
                          weft_stream stream) {
  weft_copy_args a{};
  a.struct_size = sizeof(a);
  a.kind = WEFT_COPY_HOST_TO_DEVICE;
  a.src_device = -1;
  a.dst_device = id();
  a.src_host = src;
  a.dst = dst;
  a.dst_offset = dst_offset;
  a.bytes = bytes;
  a.stream = stream;
  Call([&] { return fmt::format("{}: copy {} bytes from host", context_, bytes); },
       [&] { return api_->copy(state_, &a); });
}

void Device::CopyToHost(void* dst, weft_device_ptr src, uint64_t src_offset, uint64_t bytes, weft_stream stream) {
  weft_copy_args a{};
  a.struct_size = sizeof(a);
  a.kind = WEFT_COPY_DEVICE_TO_HOST;
  a.src_device = id();
  a.dst_device = -1;
  a.src = src;
  a.src_offset = src_offset;
  a.dst_host = dst;
  a.bytes = bytes;
  a.stream = stream;
  Call([&] { return fmt::format("{}: copy {} bytes to host", context_, bytes); },
       [&] { return api_->copy(state_, &a); });
}

void Device::CopyFromDevice(weft_device_ptr dst, uint64_t dst_offset, const Device& src_device, weft_device_ptr src,
                            uint64_t src_offset, uint64_t bytes, weft_stream stream) {
  WEFT_CHECK(&src_device.plugin() == &plugin_,
             "{}: copy {} bytes from {}: the devices belong to different plugins ({} and {}); copy through host "
             "memory instead",
             context_, bytes, src_device.context(), plugin_.name(), src_device.plugin().name());
  weft_copy_args a{};
  a.struct_size = sizeof(a);
  a.kind = WEFT_COPY_DEVICE_TO_DEVICE;
  a.src_device = src_device.id();
  a.dst_device = id();
  a.src = src;
  a.src_offset = src_offset;
  a.dst = dst;
  a.dst_offset = dst_offset;
  a.bytes = bytes;
  a.stream = stream;
  Call([&] { return fmt::format("{}: copy {} bytes from {}", context_, bytes, src_device.context()); },
       [&] { return api_->copy(state_, &a); });
}

void Device::Memset(weft_device_ptr dst, uint64_t offset, uint64_t bytes, uint8_t value, weft_stream stream) {
  weft_memset_args a{};
  a.struct_size = sizeof(a);
  a.device = id();
  a.dst = dst;
  a.offset = offset;
  a.bytes = bytes;
  a.value = value;
  a.stream = stream;
  Call([&] { return fmt::format("{}: memset {} bytes", context_, bytes); }, [&] { return api_->memset(state_, &a); });
}

weft_stream Device::CreateStream(uint32_t flags, int priority) {
  weft_stream_create_args a{};
  a.struct_size = sizeof(a);
  a.device = id();
  a.flags = flags;
  a.priority = priority;
  Call([&] { return fmt::format("{}: create stream", context_); }, [&] { return api_->stream_create(state_, &a); });
  return a.stream;
}

void Device::DestroyStream(weft_stream stream) {
  if (!stream || !plugin_.alive()) return;
  Call([&] { return fmt::format("{}: destroy stream", context_); },
       [&] { return api_->stream_destroy(state_, stream); });
}

void Device::SynchronizeStream(weft_stream stream) {
  CountHostWait();
  Call([&] { return fmt::format("{}: synchronize stream", context_); },
       [&] { return api_->stream_synchronize(state_, stream); });
}

weft_event Device::CreateEvent(uint32_t flags) {
  weft_event_create_args a{};
  a.struct_size = sizeof(a);
  a.device = id();
  a.flags = flags;
  Call([&] { return fmt::format("{}: create event", context_); }, [&] { return api_->event_create(state_, &a); });
  return a.event;
}

void Device::DestroyEvent(weft_event event) {
  if (!event || !plugin_.alive()) return;
  Call([&] { return fmt::format("{}: destroy event", context_); }, [&] { return api_->event_destroy(state_, event); });
}

void Device::RecordEvent(weft_event event, weft_stream stream) {
  Call([&] { return fmt::format("{}: record event", context_); },
       [&] { return api_->event_record(state_, event, stream); });
}

void Device::StreamWaitEvent(weft_stream stream, weft_event event) {
  Call([&] { return fmt::format("{}: make a stream wait for an event", context_); },
       [&] { return api_->stream_wait_event(state_, stream, event); });
}

bool Device::QueryEvent(weft_event event) {
  int32_t done = 0;
  Call([&] { return fmt::format("{}: query event", context_); },
       [&] { return api_->event_query(state_, event, &done); });
  return done != 0;
}

void Device::SynchronizeEvent(weft_event event) {
  CountHostWait();
  Call([&] { return fmt::format("{}: synchronize event", context_); },
       [&] { return api_->event_synchronize(state_, event); });
}

double Device::EventElapsedMs(weft_event start, weft_event end) {
  WEFT_CHECK(api_->event_elapsed != nullptr, "{}: the plugin '{}' offers no event timestamps", context_,
             plugin_.name());
  double ms = 0;
  Call([&] { return fmt::format("{}: elapsed time between events", context_); },
       [&] { return api_->event_elapsed(state_, start, end, &ms); });
  return ms;
}

void* Device::PinnedAlloc(uint64_t bytes) {
  if (!has_pinned_memory() || bytes == 0) return nullptr;
  void* p = nullptr;
  Call([&] { return fmt::format("{}: allocate {} bytes of pinned host memory", context_, bytes); },
       [&] { return api_->pinned_alloc(state_, id(), bytes, &p); });
  return p;
}

void Device::PinnedFree(void* ptr) {
  if (ptr == nullptr || !plugin_.alive() || !has_pinned_memory()) return;
  Call([&] { return fmt::format("{}: free pinned host memory", context_); },
       [&] { return api_->pinned_free(state_, ptr); });
}

bool Device::LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data) {
  if (api_->launch_host_func == nullptr) return false;
  Call([&] { return fmt::format("{}: queue a host function", context_); },
       [&] { return api_->launch_host_func(state_, stream, fn, user_data); });
  return true;
}

void Device::NativeHandle(weft_native_handle_args& args) {
  WEFT_CHECK(api_->native_handle != nullptr, "{}: the plugin '{}' offers no native handles", context_, plugin_.name());
  args.struct_size = sizeof(args);
  args.device = id();
  Call([&] { return fmt::format("{}: native handle", context_); }, [&] { return api_->native_handle(state_, &args); });
}

}  // namespace weft

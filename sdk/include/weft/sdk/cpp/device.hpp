// weft SDK C++ helpers — a device plugin as a C++ class.
//
// A plugin author derives from weft::sdk::Device and implements the virtual functions below in
// plain C++ (throwing weft::sdk::Error on failure). Device::api() is the weft_device_api table
// the host sees: each entry is a noexcept trampoline that validates the C arguments every
// device needs checked (struct sizes, device indices, zero sizes, copy kinds, alignments), calls
// the virtual function and turns any exception into an error object (error.hpp Guard()).
//
// Thread-safety: the trampolines add no locking. The virtual functions are called concurrently
// from several threads exactly as sdk/device.h allows, so implementations must be thread-safe
// (except that one stream is used by one thread at a time).
//
// The trampolines reach the Device, and the host table, through the plugin state, which is the
// weft::sdk::Plugin the plugin registered with WEFT_SDK_PLUGIN (plugin.hpp); a Device only works
// inside such a plugin. Nothing here is a per-library global: two hosts may load one plugin file
// (each init makes its own Plugin object).
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/device.h"
#include "weft/sdk/operator.h"
#include "weft/sdk/transport.h"

namespace weft::sdk {

class Device;

/// Configuration value `key` through `host` (environment first, then runtime options), or
/// nullopt when unset or when `host` is NULL.
inline std::optional<std::string> Config(const weft_host_api* host, const char* key) {
  if (host == nullptr || host->config_get == nullptr) return std::nullopt;
  char buf[256];
  const int64_t n = host->config_get(host->host_ctx, key, buf, sizeof(buf));
  if (n < 0) return std::nullopt;
  if (static_cast<uint64_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  const int64_t m = host->config_get(host->host_ctx, key, big.data(), big.size());
  if (m < 0) return std::nullopt;
  big.resize(static_cast<size_t>(m) < big.size() ? static_cast<size_t>(m) : big.size() - 1);
  return big;
}

/// Integer configuration value `key` in [lo, hi], `fallback` when unset. A value that is not an
/// integer or out of range throws Error(WEFT_ERR_INVALID_ARGUMENT) naming the key and the range
/// (plugins call this from their constructor, so init fails with that message).
inline int64_t ConfigInt(const weft_host_api* host, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
  std::optional<std::string> v = Config(host, key);
  if (!v || v->empty()) return fallback;
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v->size() || x < lo || x > hi) {
    throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(key) + "='" + *v + "' is not an integer in [" +
                                               std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

/// Base of every plugin's state object (see plugin.hpp). It holds the host table and names the
/// parts the plugin provides; the derived constructor calls Provide() for each.
class Plugin {
 public:
  /// `host`: the table init received; valid until shutdown returns.
  explicit Plugin(const weft_host_api* host) noexcept : host_(host) {}
  virtual ~Plugin() = default;
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const weft_host_api* host() const noexcept { return host_; }
  Device* device() const noexcept { return device_; }
  const weft_operator_api* operators() const noexcept { return operators_; }
  const weft_transport_api* transport() const noexcept { return transport_; }

  /// Configuration through the host (see the free functions above).
  std::optional<std::string> Config(const char* key) const { return sdk::Config(host_, key); }
  int64_t ConfigInt(const char* key, int64_t fallback, int64_t lo, int64_t hi) const {
    return sdk::ConfigInt(host_, key, fallback, lo, hi);
  }
  void Log(int32_t level, std::string_view message) const noexcept { sdk::Log(host_, level, message); }

 protected:
  void Provide(Device* device) noexcept { device_ = device; }
  void Provide(const weft_operator_api* operators) noexcept { operators_ = operators; }
  void Provide(const weft_transport_api* transport) noexcept { transport_ = transport; }

 private:
  const weft_host_api* host_;
  Device* device_ = nullptr;
  const weft_operator_api* operators_ = nullptr;
  const weft_transport_api* transport_ = nullptr;
};

/// The host table of a plugin state made by WEFT_SDK_PLUGIN (NULL for a NULL state).
inline const weft_host_api* HostOf(void* plugin_state) noexcept {
  return plugin_state == nullptr ? nullptr : static_cast<Plugin*>(plugin_state)->host();
}

/// Handles: a plugin's own stream / event objects travel through the C ABI as opaque pointers.
template <typename T>
weft_stream ToStreamHandle(T* stream) noexcept {
  return reinterpret_cast<weft_stream>(stream);
}
template <typename T>
weft_event ToEventHandle(T* event) noexcept {
  return reinterpret_cast<weft_event>(event);
}

/// The device half of a plugin. One object serves every device of the plugin (indices
/// 0..Count()-1), like the C table.
class Device {
 public:
  /// `device_type`: the Context name ("cpu", "simdev"): lower-case letters, digits, '_'.
  explicit Device(std::string device_type) : device_type_(std::move(device_type)) { FillTable(); }
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// The C table handed to the host. Valid as long as this object. The first call adds the
  /// optional entries the device supports (Has...()), which the constructor cannot ask for.
  const weft_device_api* api() noexcept {
    std::call_once(optional_once_, [this] { FillOptional(); });
    return &api_;
  }
  const std::string& device_type() const noexcept { return device_type_; }

  // --- what a plugin implements -------------------------------------------------------------
  // Arguments reaching these functions were already checked by the trampolines: `device` is in
  // 0..Count()-1, sizes are > 0, alignments are 0 or powers of two, copy kinds are valid, host
  // pointers of host copies are non-NULL, stream / event handles are non-NULL where the C API
  // requires one. Everything about pointers, offsets and handles the plugin handed out is for
  // the plugin to validate (throw Error(WEFT_ERR_INVALID_ARGUMENT, ...)).

  /// Number of devices; must not throw for "no hardware" (return 0 and say why in
  /// NoDeviceReason()).
  virtual int32_t Count() = 0;
  /// Why Count() is 0, with the remedy ("Vulkan loader not found: apt-get install libvulkan1"),
  /// or nullptr. The string must stay valid until shutdown (keep it in a member).
  virtual const char* NoDeviceReason() { return nullptr; }
  /// Fills a zeroed, full-size (this SDK's) props; the layer copies what the host's struct holds.
  virtual void Properties(int32_t device, weft_device_props& props) = 0;
  /// `bytes` > 0; `alignment` 0 (= min_alignment) or a power of two. Out of memory: throw
  /// Error(WEFT_ERR_OUT_OF_MEMORY, ...).
  virtual weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) = 0;
  /// `ptr` != 0.
  virtual void Free(int32_t device, weft_device_ptr ptr) = 0;
  /// `args.bytes` > 0; the devices named by `kind` are valid indices.
  virtual void Copy(const weft_copy_args& args) = 0;
  /// `args.bytes` > 0.
  virtual void Memset(const weft_memset_args& args) = 0;
  /// `flags`: WEFT_STREAM_*; `priority`: 0 = normal, higher = more urgent (may be ignored).
  virtual weft_stream CreateStream(int32_t device, uint32_t flags, int32_t priority) = 0;
  virtual void DestroyStream(weft_stream stream) = 0;
  /// Blocks until the stream is idle; throws (and clears) the stream's sticky error.
  virtual void SynchronizeStream(weft_stream stream) = 0;
  /// `flags`: WEFT_EVENT_*.
  virtual weft_event CreateEvent(int32_t device, uint32_t flags) = 0;
  virtual void DestroyEvent(weft_event event) = 0;
  /// `stream` may be NULL (the event completes at once: NULL-stream work is synchronous).
  virtual void RecordEvent(weft_event event, weft_stream stream) = 0;
  /// `stream` may be NULL (blocks the caller until the event completed).
  virtual void StreamWaitEvent(weft_stream stream, weft_event event) = 0;
  /// True when complete; throws the error of the captured work (sdk/device.h).
  virtual bool QueryEvent(weft_event event) = 0;
  /// Blocks until complete; throws the error of the captured work.
  virtual void SynchronizeEvent(weft_event event) = 0;

  // Optional parts: the table gets the function only when Has...() says so.
  virtual bool HasPinnedMemory() const { return false; }
  /// Pinned host memory for copies with `device` (a valid index).
  virtual void* PinnedAlloc(int32_t /*device*/, uint64_t /*bytes*/) {
    throw Error(WEFT_ERR_UNSUPPORTED, "no pinned memory");
  }
  virtual void PinnedFree(void* /*ptr*/) { throw Error(WEFT_ERR_UNSUPPORTED, "no pinned memory"); }
  virtual bool HasTimestamps() const { return false; }
  virtual double EventElapsedMs(weft_event /*start*/, weft_event /*end*/) {
    throw Error(WEFT_ERR_UNSUPPORTED, "no timestamps");
  }
  virtual bool HasNativeHandles() const { return false; }
  /// Fills the out fields of `args` (the in fields are as the caller gave them).
  virtual void NativeHandle(weft_native_handle_args& /*args*/) {
    throw Error(WEFT_ERR_UNSUPPORTED, "no native handles");
  }
  virtual bool HasHostFunc() const { return false; }
  virtual void LaunchHostFunc(weft_stream /*stream*/, void (* /*fn*/)(void*), void* /*user_data*/) {
    throw Error(WEFT_ERR_UNSUPPORTED, "no host functions on streams");
  }

  /// Throws WEFT_ERR_INVALID_ARGUMENT unless 0 <= device < Count(); the message names the
  /// device ("simdev(5)") and how many there are.
  void CheckDevice(int32_t device, const char* what) {
    const int32_t n = Count();
    if (device < 0 || device >= n) {
      throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + ": no device " + device_type_ + "(" +
                                                 std::to_string(device) + "); this plugin has " + std::to_string(n) +
                                                 " (indices 0.." + std::to_string(n - 1) + ")");
    }
  }
  /// "cpu(1)".
  std::string Name(int32_t device) const { return device_type_ + "(" + std::to_string(device) + ")"; }

 private:
  static Device& Of(void* plugin_state) {
    Device* d = plugin_state == nullptr ? nullptr : static_cast<Plugin*>(plugin_state)->device();
    if (d == nullptr) throw Error(WEFT_ERR_INTERNAL, "plugin state without a device");
    return *d;
  }
  template <typename T>
  static void CheckArgs(const T* args, size_t needed, const char* what) {
    if (args == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + ": args is NULL");
    if (args->struct_size < needed) {
      throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + ": args struct_size " +
                                                 std::to_string(args->struct_size) + " is smaller than SDK 2.0's " +
                                                 std::to_string(needed));
    }
  }
  static void CheckHandle(const void* handle, const char* what) {
    if (handle == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  }

  void FillTable() noexcept;
  void FillCopies() noexcept;
  void FillStreamsAndEvents() noexcept;
  void FillOptional() noexcept;

  std::string device_type_;
  weft_device_api api_{};
  std::once_flag optional_once_;
};

inline void Device::FillTable() noexcept {
  api_.struct_size = WEFT_STRUCT_SIZE(weft_device_api, launch_host_func);
  api_.device_type = device_type_.c_str();
  api_.device_count = [](void* st, const char** reason) noexcept -> int32_t {
    try {
      Device& d = Of(st);
      const int32_t n = d.Count();
      if (n == 0 && reason != nullptr) *reason = d.NoDeviceReason();
      return n < 0 ? 0 : n;
    } catch (...) {
      return 0;  // the C contract: a count query never fails
    }
  };
  api_.get_properties = [](void* st, int32_t device, weft_device_props* props) noexcept {
    return Guard(HostOf(st), [&] {
      Device& d = Of(st);
      d.CheckDevice(device, "get_properties");
      CheckHandle(props, "get_properties: props");
      const size_t host_size = props->struct_size;
      if (host_size < sizeof(size_t))
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "get_properties: props->struct_size unset");
      weft_device_props full{};
      full.struct_size = WEFT_STRUCT_SIZE(weft_device_props, attributes);
      full.min_alignment = 1;
      d.Properties(device, full);
      // An older host's struct is shorter: copy the prefix it has, keep its struct_size.
      const size_t n = host_size < sizeof(full) ? host_size : sizeof(full);
      std::memcpy(reinterpret_cast<char*>(props) + sizeof(size_t),
                  reinterpret_cast<const char*>(&full) + sizeof(size_t), n - sizeof(size_t));
    });
  };
  api_.allocate = [](void* st, weft_alloc_args* a) noexcept {
    return Guard(HostOf(st), [&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_alloc_args, ptr), "allocate");
      Device& d = Of(st);
      d.CheckDevice(a->device, "allocate");
      a->ptr = 0;
      if (a->bytes == 0) return;
      if ((a->alignment & (a->alignment - 1)) != 0) {
        throw Error(WEFT_ERR_INVALID_ARGUMENT, d.Name(a->device) + ": allocate: alignment " +
                                                   std::to_string(a->alignment) + " is not a power of two");
      }
      a->ptr = d.Allocate(a->device, a->bytes, a->alignment);
    });
  };
  api_.free = [](void* st, int32_t device, weft_device_ptr ptr) noexcept {
    return Guard(HostOf(st), [&] {
      Device& d = Of(st);
      d.CheckDevice(device, "free");
      if (ptr != 0) d.Free(device, ptr);
    });
  };
  FillCopies();
  FillStreamsAndEvents();
  // Optional entries stay NULL until FillOptional() (first api() call).
}

inline void Device::FillCopies() noexcept {
  api_.copy = [](void* st, const weft_copy_args* a) noexcept {
    return Guard(HostOf(st), [&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_copy_args, stream), "copy");
      Device& d = Of(st);
      switch (a->kind) {
        case WEFT_COPY_HOST_TO_DEVICE:
          d.CheckDevice(a->dst_device, "copy host->device");
          if (a->bytes != 0) CheckHandle(a->src_host, "copy host->device: src_host");
          break;
        case WEFT_COPY_DEVICE_TO_HOST:
          d.CheckDevice(a->src_device, "copy device->host");
          if (a->bytes != 0) CheckHandle(a->dst_host, "copy device->host: dst_host");
          break;
        case WEFT_COPY_DEVICE_TO_DEVICE:
          d.CheckDevice(a->src_device, "copy device->device (source)");
          d.CheckDevice(a->dst_device, "copy device->device (destination)");
          break;
        default:
          throw Error(WEFT_ERR_INVALID_ARGUMENT, "copy: unknown kind " + std::to_string(a->kind) +
                                                     " (expected WEFT_COPY_HOST_TO_DEVICE, _DEVICE_TO_HOST or "
                                                     "_DEVICE_TO_DEVICE)");
      }
      if (a->bytes != 0) d.Copy(*a);
    });
  };
  api_.memset = [](void* st, const weft_memset_args* a) noexcept {
    return Guard(HostOf(st), [&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_memset_args, stream), "memset");
      Device& d = Of(st);
      d.CheckDevice(a->device, "memset");
      if (a->bytes != 0) d.Memset(*a);
    });
  };
}

inline void Device::FillStreamsAndEvents() noexcept {
  api_.stream_create = [](void* st, weft_stream_create_args* a) noexcept {
    return Guard(HostOf(st), [&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_stream_create_args, stream), "stream_create");
      a->stream = nullptr;
      Device& d = Of(st);
      d.CheckDevice(a->device, "stream_create");
      a->stream = d.CreateStream(a->device, a->flags, a->priority);
    });
  };
  api_.stream_destroy = [](void* st, weft_stream s) noexcept {
    return Guard(HostOf(st), [&] {
      if (s != nullptr) Of(st).DestroyStream(s);  // destroying NULL is a no-op
    });
  };
  api_.stream_synchronize = [](void* st, weft_stream s) noexcept {
    return Guard(HostOf(st), [&] {
      if (s != nullptr) Of(st).SynchronizeStream(s);  // the NULL stream is always idle
    });
  };
  api_.event_create = [](void* st, weft_event_create_args* a) noexcept {
    return Guard(HostOf(st), [&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_event_create_args, event), "event_create");
      a->event = nullptr;
      Device& d = Of(st);
      d.CheckDevice(a->device, "event_create");
      if ((a->flags & WEFT_EVENT_TIMING) != 0 && !d.HasTimestamps())
        throw Error(WEFT_ERR_UNSUPPORTED, d.Name(a->device) + ": event_create: timing events are not supported");
      a->event = d.CreateEvent(a->device, a->flags);
    });
  };
  api_.event_destroy = [](void* st, weft_event e) noexcept {
    return Guard(HostOf(st), [&] {
      if (e != nullptr) Of(st).DestroyEvent(e);
    });
  };
  api_.event_record = [](void* st, weft_event e, weft_stream s) noexcept {
    return Guard(HostOf(st), [&] {
      CheckHandle(e, "event_record: event");
      Of(st).RecordEvent(e, s);
    });
  };
  api_.stream_wait_event = [](void* st, weft_stream s, weft_event e) noexcept {
    return Guard(HostOf(st), [&] {
      CheckHandle(e, "stream_wait_event: event");
      Of(st).StreamWaitEvent(s, e);
    });
  };
  api_.event_query = [](void* st, weft_event e, int32_t* done) noexcept {
    return Guard(HostOf(st), [&] {
      CheckHandle(e, "event_query: event");
      CheckHandle(done, "event_query: done");
      *done = 0;
      *done = Of(st).QueryEvent(e) ? 1 : 0;
    });
  };
  api_.event_synchronize = [](void* st, weft_event e) noexcept {
    return Guard(HostOf(st), [&] {
      CheckHandle(e, "event_synchronize: event");
      Of(st).SynchronizeEvent(e);
    });
  };
}

inline void Device::FillOptional() noexcept {
  if (HasPinnedMemory()) {
    api_.pinned_alloc = [](void* st, int32_t device, uint64_t bytes, void** out) noexcept {
      return Guard(HostOf(st), [&] {
        CheckHandle(out, "pinned_alloc: out");
        *out = nullptr;
        Device& d = Of(st);
        d.CheckDevice(device, "pinned_alloc");
        if (bytes != 0) *out = d.PinnedAlloc(device, bytes);
      });
    };
    api_.pinned_free = [](void* st, void* ptr) noexcept {
      return Guard(HostOf(st), [&] {
        if (ptr != nullptr) Of(st).PinnedFree(ptr);
      });
    };
  }
  if (HasTimestamps()) {
    api_.event_elapsed = [](void* st, weft_event start, weft_event end, double* ms) noexcept {
      return Guard(HostOf(st), [&] {
        CheckHandle(start, "event_elapsed: start");
        CheckHandle(end, "event_elapsed: end");
        CheckHandle(ms, "event_elapsed: ms");
        *ms = Of(st).EventElapsedMs(start, end);
      });
    };
  }
  if (HasNativeHandles()) {
    api_.native_handle = [](void* st, weft_native_handle_args* a) noexcept {
      return Guard(HostOf(st), [&] {
        CheckArgs(a, WEFT_STRUCT_SIZE(weft_native_handle_args, size), "native_handle");
        Device& d = Of(st);
        d.CheckDevice(a->device, "native_handle");
        a->kind = WEFT_NATIVE_KIND_NONE;
        a->index = 0;
        a->handle = nullptr;
        a->aux = nullptr;
        a->value = 0;
        a->size = 0;
        d.NativeHandle(*a);
      });
    };
  }
  if (HasHostFunc()) {
    api_.launch_host_func = [](void* st, weft_stream s, void (*fn)(void*), void* data) noexcept {
      return Guard(HostOf(st), [&] {
        CheckHandle(s, "launch_host_func: stream");
        if (fn == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, "launch_host_func: fn is NULL");
        Of(st).LaunchHostFunc(s, fn, data);
      });
    };
  }
}

}  // namespace weft::sdk

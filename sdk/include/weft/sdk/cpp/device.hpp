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
// The trampolines reach the Device through the plugin state, which is the weft::sdk::Plugin the
// plugin registered with WEFT_SDK_PLUGIN (plugin.hpp); a Device only works inside such a plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/device.h"
#include "weft/sdk/operator.h"
#include "weft/sdk/transport.h"

namespace weft::sdk {

class Device;

/// Base of every plugin's state object (see plugin.hpp). It names the parts the plugin provides;
/// the derived constructor calls Provide() for each. Kept here so device trampolines can reach
/// the Device from the C plugin_state without a virtual call.
class Plugin {
 public:
  virtual ~Plugin() = default;
  Device* device() const noexcept { return device_; }
  const weft_operator_api* operators() const noexcept { return operators_; }
  const weft_transport_api* transport() const noexcept { return transport_; }

 protected:
  void Provide(Device* device) noexcept { device_ = device; }
  void Provide(const weft_operator_api* operators) noexcept { operators_ = operators; }
  void Provide(const weft_transport_api* transport) noexcept { transport_ = transport; }

 private:
  Device* device_ = nullptr;
  const weft_operator_api* operators_ = nullptr;
  const weft_transport_api* transport_ = nullptr;
};

/// Carries an error object that a C function returned (e.g. a kernel's compute run on a stream's
/// worker thread) through C++ code back to the C boundary, where the device trampolines return
/// it unchanged (stream_synchronize). Error objects are opaque to plugins, so this is the only way
/// to keep the original code and message. Owns the object until Take(); one that is never taken
/// (a second failure on a stream before it is synchronised) is leaked: the host API has no
/// release function.
class ForwardedError : public std::exception {
 public:
  explicit ForwardedError(weft_error* err) noexcept : err_(err) {}
  const char* what() const noexcept override { return "error object forwarded to the host"; }
  weft_error* Take() noexcept { return std::exchange(err_, nullptr); }

 private:
  weft_error* err_;
};

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

  /// Number of devices; must not throw for "no hardware" (return 0).
  virtual int32_t Count() = 0;
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
  virtual weft_stream CreateStream(int32_t device) = 0;
  virtual void DestroyStream(weft_stream stream) = 0;
  /// Blocks until the stream is idle; throws the first error its asynchronous work hit.
  virtual void SynchronizeStream(weft_stream stream) = 0;
  virtual weft_event CreateEvent(int32_t device) = 0;
  virtual void DestroyEvent(weft_event event) = 0;
  /// `stream` may be NULL (the event completes at once: NULL-stream work is synchronous).
  virtual void RecordEvent(weft_event event, weft_stream stream) = 0;
  /// `stream` may be NULL (blocks the caller until the event completed).
  virtual void StreamWaitEvent(weft_stream stream, weft_event event) = 0;
  virtual bool QueryEvent(weft_event event) = 0;
  virtual void SynchronizeEvent(weft_event event) = 0;

  // Optional parts: the table gets the function only when Has...() says so.
  virtual bool HasPinnedMemory() const { return false; }
  virtual void* PinnedAlloc(uint64_t /*bytes*/) { throw Error(WEFT_ERR_UNSUPPORTED, "no pinned memory"); }
  virtual void PinnedFree(void* /*ptr*/) { throw Error(WEFT_ERR_UNSUPPORTED, "no pinned memory"); }
  virtual bool HasNativeStreamHandle() const { return false; }
  virtual void* NativeStreamHandle(weft_stream /*stream*/) {
    throw Error(WEFT_ERR_UNSUPPORTED, "no native stream handle");
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
                                                 std::to_string(args->struct_size) + " is smaller than SDK 1.0's " +
                                                 std::to_string(needed));
    }
  }
  static void CheckHandle(const void* handle, const char* what) {
    if (handle == nullptr) throw Error(WEFT_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  }

  void FillTable() noexcept;
  void FillOptional() noexcept;

  std::string device_type_;
  weft_device_api api_{};
  std::once_flag optional_once_;
};

inline void Device::FillTable() noexcept {
  api_.struct_size = WEFT_STRUCT_SIZE(weft_device_api, stream_native_handle);
  api_.device_type = device_type_.c_str();
  api_.device_count = [](void* st) noexcept -> int32_t {
    try {
      return Of(st).Count();
    } catch (...) {
      return 0;  // the C contract: a count query never fails
    }
  };
  api_.get_properties = [](void* st, int32_t device, weft_device_props* props) noexcept {
    return Guard([&] {
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
    return Guard([&] {
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
    return Guard([&] {
      Device& d = Of(st);
      d.CheckDevice(device, "free");
      if (ptr != 0) d.Free(device, ptr);
    });
  };
  api_.copy = [](void* st, const weft_copy_args* a) noexcept {
    return Guard([&] {
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
    return Guard([&] {
      CheckArgs(a, WEFT_STRUCT_SIZE(weft_memset_args, stream), "memset");
      Device& d = Of(st);
      d.CheckDevice(a->device, "memset");
      if (a->bytes != 0) d.Memset(*a);
    });
  };
  api_.stream_create = [](void* st, int32_t device, weft_stream* out) noexcept {
    return Guard([&] {
      CheckHandle(out, "stream_create: out");
      *out = nullptr;
      Device& d = Of(st);
      d.CheckDevice(device, "stream_create");
      *out = d.CreateStream(device);
    });
  };
  api_.stream_destroy = [](void* st, weft_stream s) noexcept {
    return Guard([&] {
      if (s != nullptr) Of(st).DestroyStream(s);  // destroying NULL is a no-op
    });
  };
  api_.stream_synchronize = [](void* st, weft_stream s) noexcept {
    return Guard([&]() -> weft_error* {
      if (s == nullptr) return nullptr;  // the NULL stream is always idle
      try {
        Of(st).SynchronizeStream(s);
      } catch (ForwardedError& e) {
        return e.Take();
      }
      return nullptr;
    });
  };
  api_.event_create = [](void* st, int32_t device, weft_event* out) noexcept {
    return Guard([&] {
      CheckHandle(out, "event_create: out");
      *out = nullptr;
      Device& d = Of(st);
      d.CheckDevice(device, "event_create");
      *out = d.CreateEvent(device);
    });
  };
  api_.event_destroy = [](void* st, weft_event e) noexcept {
    return Guard([&] {
      if (e != nullptr) Of(st).DestroyEvent(e);
    });
  };
  api_.event_record = [](void* st, weft_event e, weft_stream s) noexcept {
    return Guard([&] {
      CheckHandle(e, "event_record: event");
      Of(st).RecordEvent(e, s);
    });
  };
  api_.stream_wait_event = [](void* st, weft_stream s, weft_event e) noexcept {
    return Guard([&] {
      CheckHandle(e, "stream_wait_event: event");
      Of(st).StreamWaitEvent(s, e);
    });
  };
  api_.event_query = [](void* st, weft_event e, int32_t* done) noexcept {
    return Guard([&] {
      CheckHandle(e, "event_query: event");
      CheckHandle(done, "event_query: done");
      *done = Of(st).QueryEvent(e) ? 1 : 0;
    });
  };
  api_.event_synchronize = [](void* st, weft_event e) noexcept {
    return Guard([&] {
      CheckHandle(e, "event_synchronize: event");
      Of(st).SynchronizeEvent(e);
    });
  };
  api_.pinned_alloc = nullptr;  // optional entries: FillOptional()
  api_.pinned_free = nullptr;
  api_.stream_native_handle = nullptr;
}

inline void Device::FillOptional() noexcept {
  if (HasPinnedMemory()) {
    api_.pinned_alloc = [](void* st, uint64_t bytes, void** out) noexcept {
      return Guard([&] {
        CheckHandle(out, "pinned_alloc: out");
        *out = nullptr;
        if (bytes != 0) *out = Of(st).PinnedAlloc(bytes);
      });
    };
    api_.pinned_free = [](void* st, void* ptr) noexcept {
      return Guard([&] {
        if (ptr != nullptr) Of(st).PinnedFree(ptr);
      });
    };
  }
  if (HasNativeStreamHandle()) {
    api_.stream_native_handle = [](void* st, weft_stream s, void** out) noexcept {
      return Guard([&] {
        CheckHandle(out, "stream_native_handle: out");
        CheckHandle(s, "stream_native_handle: stream");
        *out = Of(st).NativeStreamHandle(s);
      });
    };
  }
}

}  // namespace weft::sdk

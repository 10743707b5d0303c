// weft internal — Device: one device of a device plugin, with C++ errors instead of C error objects.
//
// A Device wraps the plugin's weft_device_api (sdk/include/weft/sdk/device.h) for one device
// index. Devices are created by the Runtime when a plugin is accepted and live until process exit
// (or internal::ResetRuntimeForTesting); obtain them with internal::GetDevice(Runtime::Get(), ctx)
// (weft/internal/runtime.h).
//
// Units: every size and offset is in bytes. Pointers are weft_device_ptr values of this device's
// plugin; only a host-addressable device (host_addressable()) may have them cast to host pointers.
//
// Thread-safety: as the SDK's device functions: every method may be called from several threads
// at once, except that one stream must not be used by two threads at the same time.
//
// Errors: every method turns a plugin error into weft::Error (weft::OutOfMemoryError for
// WEFT_ERR_OUT_OF_MEMORY) whose message starts with the device and the action, e.g.
// "simdev(0): allocate 4096 bytes: <the plugin's message>". A plugin that throws across the C
// ABI (a plugin bug) becomes a weft::Error saying so; nothing crashes the host.
#pragma once

#include "weft/export.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/context.h"
#include "weft/sdk/device.h"

namespace weft {

class Plugin;

/// A C++ copy of weft_device_props.
struct WEFT_API DeviceProperties {
  std::string name, vendor;
  uint64_t total_memory = 0;          ///< bytes, 0 = unknown
  uint64_t free_memory = 0;           ///< bytes free when the properties were read, 0 = unknown
  uint64_t capabilities = 0;          ///< WEFT_DEVICE_CAP_* bits
  uint64_t min_alignment = 64;        ///< bytes; every allocation is aligned to at least this
  int compute_units = 0;              ///< 0 = unknown
  int kind = WEFT_DEVICE_KIND_OTHER;  ///< WEFT_DEVICE_KIND_* (cpu, discrete GPU, software, ...)
  uint64_t max_allocation = 0;        ///< bytes one allocation may have, 0 = no limit beyond memory
  std::string pci_bus_id;             ///< "0000:65:00.0", empty when none
  std::vector<std::pair<std::string, std::string>> attributes;  ///< plugin's key/value facts, in its order
};

/// "cpu", "gpu (discrete)", "software" ... for a WEFT_DEVICE_KIND_* value.
WEFT_API const char* DeviceKindName(int kind);

/// Names of the capability bits set in `capabilities` ("host_addressable", "async_copy", ...), in
/// bit order; unknown bits appear as "bit<N>".
WEFT_API std::vector<std::string> CapabilityNames(uint64_t capabilities);

class WEFT_API Device {
 public:
  /// Reads the properties of device `index` of `plugin` (which must provide a device table).
  /// Used by the Runtime; a failing get_properties is logged and leaves default properties.
  Device(const Plugin& plugin, int index);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// The Context naming this device, e.g. cpu(1).
  Context context() const { return context_; }
  /// The plugin's device type, e.g. "cpu".
  const std::string& type() const { return context_.GetDeviceType(); }
  /// Index within the plugin (the Context's id).
  int id() const { return context_.GetDeviceId(); }
  /// Properties read when the device was created (free_memory is a snapshot).
  const DeviceProperties& properties() const { return props_; }
  /// Reads the properties again from the plugin (fresh free_memory). Throws weft::Error.
  DeviceProperties QueryProperties() const;
  /// True when weft_device_ptr values of this device are host pointers
  /// (WEFT_DEVICE_CAP_HOST_ADDRESSABLE).
  bool host_addressable() const { return (props_.capabilities & WEFT_DEVICE_CAP_HOST_ADDRESSABLE) != 0; }

  /// Allocates `bytes` bytes aligned to `alignment` (a power of two; 0 = the device's
  /// min_alignment). 0 bytes returns 0. Throws weft::OutOfMemoryError when the device is full.
  weft_device_ptr Allocate(uint64_t bytes, uint64_t alignment = 0);
  /// Frees an allocation of this device; 0 is a no-op. After the runtime shut down at process
  /// exit this is a no-op too (the plugin is gone; the memory goes with the process).
  void Free(weft_device_ptr ptr);

  /// Copies `bytes` bytes from host memory `src` to dst+dst_offset. With a non-NULL stream the
  /// copy may be asynchronous: `src` must stay valid until the stream has passed it.
  void CopyFromHost(weft_device_ptr dst, uint64_t dst_offset, const void* src, uint64_t bytes,
                    weft_stream stream = nullptr);
  /// Copies `bytes` bytes from src+src_offset to host memory `dst` (same stream rule).
  void CopyToHost(void* dst, weft_device_ptr src, uint64_t src_offset, uint64_t bytes, weft_stream stream = nullptr);
  /// Copies from `src_device` (this device or another device of the same plugin) to this device.
  /// Throws weft::Error when src_device belongs to another plugin (copy through host memory).
  void CopyFromDevice(weft_device_ptr dst, uint64_t dst_offset, const Device& src_device, weft_device_ptr src,
                      uint64_t src_offset, uint64_t bytes, weft_stream stream = nullptr);
  /// Sets `bytes` bytes at dst+offset to `value`.
  void Memset(weft_device_ptr dst, uint64_t offset, uint64_t bytes, uint8_t value, weft_stream stream = nullptr);

  /// Streams of this device. A NULL stream means "synchronous" everywhere. `flags`:
  /// WEFT_STREAM_COMPUTE or WEFT_STREAM_COPY; `priority`: 0 normal, higher more urgent.
  weft_stream CreateStream(uint32_t flags = WEFT_STREAM_COMPUTE, int priority = 0);
  void DestroyStream(weft_stream stream);
  /// Blocks the host until the stream's work has completed; raises (and clears) the stream's
  /// sticky error. Counts as a host wait.
  void SynchronizeStream(weft_stream stream);

  /// Events of this device (see sdk device.h for their semantics). `flags`: WEFT_EVENT_*.
  weft_event CreateEvent(uint32_t flags = WEFT_EVENT_DEFAULT);
  void DestroyEvent(weft_event event);
  void RecordEvent(weft_event event, weft_stream stream);
  /// Orders later work on `stream` after `event` without blocking the host (an event of any
  /// device of this device's plugin).
  void StreamWaitEvent(weft_stream stream, weft_event event);
  /// True when the event has completed (or was never recorded); raises the captured work's error.
  bool QueryEvent(weft_event event);
  /// Blocks the host until the event has completed; raises the captured work's error. Counts as
  /// a host wait.
  void SynchronizeEvent(weft_event event);
  /// Milliseconds between two completed timing events (WEFT_EVENT_TIMING). Throws weft::Error
  /// when the device has no timestamps.
  double EventElapsedMs(weft_event start, weft_event end);

  /// Host waits: how many times core blocked the host on this device (SynchronizeStream,
  /// SynchronizeEvent), since the device was created; and the sum over every device. For
  /// benchmarks and tests of the asynchronous engine. Thread-safe.
  uint64_t host_waits() const { return host_waits_.load(std::memory_order_relaxed); }
  static uint64_t TotalHostWaits();

  /// Page-locked host memory from the plugin for copies with this device (nullptr from
  /// PinnedAlloc when the plugin offers none: has_pinned_memory() false). `bytes` > 0.
  bool has_pinned_memory() const { return api_->pinned_alloc != nullptr && api_->pinned_free != nullptr; }
  void* PinnedAlloc(uint64_t bytes);
  void PinnedFree(void* ptr);

  /// Queues fn(user_data) on `stream` after the work queued so far (the plugin's
  /// launch_host_func). Returns false (and queues nothing) when the plugin offers none.
  bool LaunchHostFunc(weft_stream stream, void (*fn)(void*), void* user_data);

  /// Forwards to the plugin's native_handle (sdk device.h); `args.device` is set to this device.
  /// Throws weft::Error when the plugin offers none or refuses.
  void NativeHandle(weft_native_handle_args& args);

  /// The plugin's device table, normalised to this host's SDK: fields past the plugin's
  /// struct_size read as NULL (so optional functions such as pinned_alloc may be NULL).
  const weft_device_api* api() const { return api_; }
  /// The plugin state to pass as the first argument of api()'s functions.
  void* plugin_state() const { return state_; }
  const Plugin& plugin() const { return plugin_; }

 private:
  void CountHostWait();

  const Plugin& plugin_;
  const weft_device_api* api_;
  void* state_;
  Context context_;
  DeviceProperties props_;
  std::atomic<uint64_t> host_waits_{0};
};

}  // namespace weft

// weft internal — Plugin: a plugin the Runtime loaded and accepted (not installed: the runtime,
// weft's tools, tests and bindings use it; programs see plugins through PluginRecord only).
//
// The tables a Plugin exposes are normalised copies of the plugin's: each is a zero-initialised
// struct of this host's size into which min(plugin struct_size, host sizeof) bytes were copied, so
// fields an older plugin does not know read as NULL / 0 and fields of a newer plugin past what this
// host knows are never read. Nested definitions (op defs, kernel defs, attribute arrays) are
// normalised the same way.
//
// Thread-safety: Plugin objects are immutable after loading; any thread may read them.
#pragma once

#include "weft/export.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "weft/plugin.h"
#include "weft/sdk/plugin.h"

namespace weft {

namespace detail {
struct PluginTables;  // normalised copies owned by the plugin (plugin/plugin_tables.h)
}

class WEFT_API Plugin {
 public:
  Plugin(std::string path, const weft_plugin_api& raw_api, uint32_t sdk_version, uint32_t plugin_min,
         uint32_t plugin_max, int load_index);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  /// The plugin's unique name ("cpu"), as WEFT_PLUGINS_DISABLE names it.
  const std::string& name() const { return name_; }
  /// The file it was loaded from (absolute, canonical).
  const std::string& path() const { return path_; }
  /// The plugin's own version string ("0.1.0"); not the SDK version.
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  /// SDK version negotiated with the plugin (WEFT_SDK_MAKE_VERSION), and the plugin's own range.
  uint32_t sdk_version() const { return sdk_version_; }
  uint32_t plugin_min_sdk() const { return plugin_min_; }
  uint32_t plugin_max_sdk() const { return plugin_max_; }
  /// WEFT_PLUGIN_PROVIDES_* bits the plugin declared.
  uint32_t provides() const;
  /// 0 for the first plugin accepted, 1 for the next, ... (shutdown runs in reverse).
  int load_index() const { return load_index_; }
  /// The plugin's state from init (the first argument of all its functions).
  void* state() const { return state_; }
  /// The plugin table (normalised).
  const weft_plugin_api* api() const;
  /// The host services handed to the plugin's init.
  const weft_host_api* host() const { return host_; }
  /// The normalised device / operator / transport tables; nullptr when the plugin has none.
  const weft_device_api* device_api() const;
  const weft_operator_api* operator_api() const;
  const weft_transport_api* transport_api() const;
  /// device_api()->device_type, or "" when the plugin provides no devices.
  const std::string& device_type() const { return device_type_; }
  /// Why a device plugin reported no devices (its device_count reason, e.g. "CUDA driver not
  /// found ..."), or a note on a count the runtime clamped; "" when devices were found.
  const std::string& device_note() const { return device_note_; }

  // Loader internals (plugin/loader.cc): set during acceptance.
  void SetState(void* state, const weft_host_api* host) {
    state_ = state;
    host_ = host;
  }
  detail::PluginTables& tables() { return *tables_; }
  const detail::PluginTables& tables() const { return *tables_; }
  void SetDeviceType(std::string type) { device_type_ = std::move(type); }
  void SetDeviceNote(std::string note) { device_note_ = std::move(note); }
  /// False once the plugin's shutdown has run (at process exit): its functions must not be called.
  bool alive() const { return alive_.load(std::memory_order_acquire); }
  void MarkShutDown() { alive_.store(false, std::memory_order_release); }

 private:
  std::string path_, name_, version_, description_, device_type_, device_note_;
  uint32_t sdk_version_, plugin_min_, plugin_max_;
  int load_index_;
  void* state_ = nullptr;
  const weft_host_api* host_ = nullptr;
  std::unique_ptr<detail::PluginTables> tables_;
  std::atomic<bool> alive_{true};
};

}  // namespace weft

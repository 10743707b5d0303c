// weft core — Runtime: the process-wide set of loaded plugins and the devices they provide.
//
// Discovery (on the first Runtime::Get()): every file named by WEFT_PLUGIN_PATH (colon-separated
// directories, whose *.so files are tried in name order, or plugin files), then the plugin
// directories next to the module that holds libweft: <dir>/weft/plugins and
// <dir>/../lib/weft/plugins. WEFT_PLUGINS_DISABLE=name,name skips plugins by name. A plugin that
// cannot be loaded, negotiated or initialised is skipped with one warning line naming the file,
// the cause and a remedy, and kept as a rejected PluginRecord; the runtime works on with the rest.
// Plugins are loaded RTLD_NOW | RTLD_LOCAL and never unloaded; their shutdown functions run at
// process exit in reverse load order.
//
// This is the program's view: which plugins were considered, which device types and devices
// exist. The ops the plugins define are listed by weft/op_info.h. (weft's own tree reaches the
// devices, plugin tables and kernels through the internal header weft/internal/runtime.h.)
//
// Thread-safety: every method may be called from any thread. Loading is serialised; lookups take
// a shared lock.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/context.h"
#include "weft/plugin.h"

namespace weft {

namespace internal {
struct RuntimeAccess;  // the internal functions' way to the state (weft/internal/runtime.h)
}

class WEFT_API Runtime {
 public:
  /// The process-wide runtime; runs discovery on the first call. Thread-safe. The first call
  /// checks the WEFT_* settings first (ValidateSettings in weft/env.h) and throws weft::Error for
  /// a malformed one; later calls retry that check until it passes.
  static Runtime& Get();
  /// SDK versions this host speaks: [1.0, WEFT_SDK_VERSION], as WEFT_SDK_MAKE_VERSION values
  /// (SdkVersionString prints them). Never throw.
  static uint32_t HostSdkMin();
  static uint32_t HostSdkMax();

  /// Loads the plugin file at `path` (explicit loads ignore WEFT_PLUGINS_DISABLE); its devices
  /// and ops are usable once it returns an accepted record. Never throws for a bad plugin: the
  /// returned record says whether it was accepted and why not (and the rejection is logged as a
  /// warning). Loading a file already considered returns its record. Thread-safe (serialised with
  /// discovery and other loads).
  PluginRecord LoadPlugin(const std::string& path);
  /// Every file considered so far, in order (accepted and rejected); copies. Thread-safe.
  std::vector<PluginRecord> PluginRecords() const;
  /// Discovery trace, one line per step (directories searched, files tried, outcomes), for
  /// `weft-info --verbose`. Thread-safe.
  std::vector<std::string> DiscoveryTrace() const;

  /// Device types of the accepted device plugins, in load order (e.g. {"cpu", "simdev"}).
  /// Thread-safe; never throws.
  std::vector<std::string> DeviceTypes() const;
  /// Number of devices of `device_type` ("cpu", "cuda", ...); 0 when no plugin provides it.
  /// Thread-safe; never throws.
  int DeviceCount(std::string_view device_type) const;
  /// Every device as a Context, grouped by type in load order, ids 0..count-1. Thread-safe.
  std::vector<Context> ListDevices() const;
  /// True when `ctx` names a loaded device (its type is provided and 0 <= id < DeviceCount).
  /// Thread-safe; never throws.
  bool HasDevice(const Context& ctx) const;

  ~Runtime();
  struct Impl;

 private:
  friend struct internal::RuntimeAccess;
  Runtime();
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

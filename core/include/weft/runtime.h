// weft core — Runtime: the process-wide set of loaded plugins, their devices, op definitions and
// kernels.
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
// Thread-safety: every method may be called from any thread. Loading is serialised; lookups take
// a shared lock.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/device.h"
#include "weft/plugin.h"
#include "weft/sdk/plugin.h"

namespace weft {

/// A kernel some plugin registered (normalised copy). Pass plugin_state to its functions.
struct WEFT_API KernelInfo {
  const weft_kernel_def* def;
  void* plugin_state;
  const Plugin* plugin;
};
/// An op definition some plugin registered (normalised copy).
struct WEFT_API PluginOpDef {
  const weft_op_def* def;
  void* plugin_state;
  const Plugin* plugin;
};

class WEFT_API Runtime {
 public:
  /// The process-wide runtime; runs discovery on the first call. Thread-safe. The first call
  /// checks the WEFT_* settings first (ValidateSettings in weft/env.h) and throws weft::Error for
  /// a malformed one; later calls retry that check until it passes.
  static Runtime& Get();
  /// SDK versions this host speaks: [1.0, WEFT_SDK_VERSION].
  static uint32_t HostSdkMin();
  static uint32_t HostSdkMax();

  /// Loads the plugin file at `path` (explicit loads ignore WEFT_PLUGINS_DISABLE). Never throws
  /// for a bad plugin: the returned record says whether it was accepted and why not (and the
  /// rejection is logged as a warning). Loading a file already considered returns its record.
  PluginRecord LoadPlugin(const std::string& path);
  /// Every file considered so far, in order (accepted and rejected).
  std::vector<PluginRecord> PluginRecords() const;
  /// The accepted plugins, in load order.
  std::vector<const Plugin*> Plugins() const;
  /// The accepted plugin named `name`, or nullptr.
  const Plugin* FindPlugin(std::string_view name) const;
  /// Discovery trace, one line per step (directories searched, files tried, outcomes), for
  /// `weft-info --verbose`.
  std::vector<std::string> DiscoveryTrace() const;

  /// Device types of the accepted device plugins, in load order (e.g. {"cpu", "simdev"}).
  std::vector<std::string> DeviceTypes() const;
  /// Devices of that type; 0 when no plugin provides it.
  int DeviceCount(std::string_view device_type) const;
  /// Every device, grouped by type in load order.
  std::vector<Context> ListDevices() const;
  bool HasDevice(const Context& ctx) const;
  /// The device `ctx` names. Throws weft::Error naming the loaded device types and counts and
  /// how to find out why a plugin is missing (e.g. "no device cuda(0): loaded device types are
  /// cpu (2 devices), simdev (1 device); ...").
  Device& GetDevice(const Context& ctx);

  /// The first kernel registered for (op, device_type) whose dtype mask contains `dtype`, or
  /// nullptr. When several plugins register the same (op, device_type, dtype), the first loaded wins.
  const KernelInfo* FindKernel(std::string_view op, std::string_view device_type, DType dtype) const;
  /// Every kernel registered for `device_type`, in registration order.
  std::vector<KernelInfo> Kernels(std::string_view device_type) const;
  /// Every op definition any plugin registered, in load order (duplicates by name included: the
  /// operator registry decides).
  std::vector<PluginOpDef> OpDefs() const;

  /// Calls fn for every accepted plugin: now for those already loaded, later for each new one
  /// (from the thread that loads it). Calls are serialised with loading; fn may call Runtime
  /// methods but must not throw (an exception is logged and dropped).
  void OnPluginLoaded(std::function<void(const Plugin&)> fn);

  /// Tests only: shuts every plugin down (reverse load order), unloads them and forgets all
  /// records, so that the next Runtime::Get() discovers again (with the environment as it is
  /// then). References to Devices, Plugins and kernels become dangling. OnPluginLoaded callbacks
  /// are kept and called again for the plugins loaded next.
  static void ResetForTesting();

  ~Runtime();
  struct Impl;

 private:
  Runtime();
  std::unique_ptr<Impl> impl_;
};

/// Takes ownership of `err` (NULL = success: nothing happens) and throws weft::OutOfMemoryError
/// (WEFT_ERR_OUT_OF_MEMORY) or weft::Error with the message "<what>: <plugin message>".
WEFT_API void ThrowIfError(weft_error* err, std::string_view what);

/// Error objects (what the host's error_create makes). CreateError never returns NULL.
WEFT_API weft_error* CreateError(int32_t code, std::string_view message);
/// Code and message of an error object (borrowed; valid until it is released).
WEFT_API int32_t ErrorCode(const weft_error* err);
WEFT_API std::string_view ErrorMessage(const weft_error* err);
/// Frees an error object; NULL is a no-op.
WEFT_API void ReleaseError(weft_error* err);

}  // namespace weft

#include "loader.h"

#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <exception>
#include <filesystem>

#include "load_diagnostics.h"
#include "plugin_tables.h"
#include "weft/internal/host_services.h"
#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::detail {
namespace {

std::string Range(uint32_t lo, uint32_t hi) { return fmt::format("{}–{}", SdkVersionString(lo), SdkVersionString(hi)); }

std::string CurrentExceptionText() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "not a std::exception";
  }
}

// Negotiation result check (sdk/plugin.h step 3). "" when acceptable.
std::string CheckNegotiation(int32_t rc, const weft_plugin_entry_args& a) {
  uint32_t host_min = Runtime::HostSdkMin(), host_max = Runtime::HostSdkMax();
  std::string ranges =
      a.plugin_min || a.plugin_max
          ? fmt::format("plugin speaks SDK {}, host speaks {}", Range(a.plugin_min, a.plugin_max),
                        Range(host_min, host_max))
          : fmt::format("plugin did not state its SDK range, host speaks {}", Range(host_min, host_max));
  if (rc != 0) {
    unsigned plugin_major = WEFT_SDK_VERSION_MAJOR_OF(a.plugin_max);
    std::string remedy =
        plugin_major > WEFT_SDK_VERSION_MAJOR_OF(host_max)
            ? fmt::format("upgrade weft or use a build of the plugin for SDK {}.x", WEFT_SDK_VERSION_MAJOR_OF(host_max))
            : fmt::format("rebuild the plugin against SDK {}", SdkVersionString(host_max));
    return fmt::format("SDK versions do not overlap: {}{}{}; {}", ranges, a.message[0] ? ": " : "", a.message, remedy);
  }
  bool in_host = a.chosen >= host_min && a.chosen <= host_max;
  bool in_plugin = a.chosen >= a.plugin_min && a.chosen <= a.plugin_max;
  if (!in_host || !in_plugin) {
    return fmt::format(
        "plugin chose SDK {}, which is outside {} ({}); its negotiation is broken: fix its "
        "weft_plugin_entry",
        SdkVersionString(a.chosen), in_host ? "its own range" : "the host's range", ranges);
  }
  if (!a.api) return "weft_plugin_entry reported success but returned no table; fix the plugin";
  return "";
}

// Runs the plugin's init and reads its tables. On failure after init, shuts it down again.
std::string InitPlugin(Plugin& plugin, const weft_host_api* host, const LoadPolicy& policy) {
  const weft_plugin_api* api = plugin.api();
  void* state = nullptr;
  weft_error* err = nullptr;
  try {
    err = api->init(host, &state);
  } catch (...) {
    return fmt::format("init threw an exception ({}); a plugin must return an error object instead: fix the plugin",
                       CurrentExceptionText());
  }
  if (err) {
    std::string msg(ErrorMessage(err));
    ReleaseError(err);
    return fmt::format("init failed: {}", msg);
  }
  plugin.SetState(state, host);
  PluginTables& t = plugin.tables();
  std::string reason;
  try {
    if (api->device_api) {
      if (const weft_device_api* d = api->device_api(state)) {
        reason = NormalizeDeviceApi(d, t);
        if (reason.empty()) {
          plugin.SetDeviceType(t.device->device_type);
          reason = policy.check_device_type(plugin.device_type());
        }
      }
    }
    if (reason.empty() && api->operator_api) {
      if (const weft_operator_api* o = api->operator_api(state)) reason = NormalizeOperatorApi(o, t);
    }
    if (reason.empty() && api->transport_api) {
      if (const weft_transport_api* tr = api->transport_api(state)) reason = NormalizeTransportApi(tr, t);
    }
  } catch (...) {
    reason = fmt::format("reading its tables threw an exception ({}); fix the plugin", CurrentExceptionText());
  }
  if (!reason.empty()) {
    plugin.SetDeviceType("");
    ShutdownPlugin(plugin);
  }
  return reason;
}

}  // namespace

void ShutdownPlugin(Plugin& plugin) {
  if (!plugin.alive()) return;
  plugin.MarkShutDown();
  if (!plugin.api()->shutdown) return;
  try {
    plugin.api()->shutdown(plugin.state());
  } catch (...) {
    LogWarning("plugin {} ({}): shutdown threw an exception ({}); ignored", plugin.name(), plugin.path(),
               CurrentExceptionText());
  }
}

LoadOutcome LoadPluginFile(const std::string& path, const std::string& origin, int load_index, const LoadPolicy& policy,
                           std::vector<std::string>* trace) {
  LoadOutcome out;
  PluginRecord& rec = out.record;
  rec.path = path;
  rec.origin = origin;
  auto reject = [&](std::string reason) -> LoadOutcome {
    rec.accepted = false;
    rec.reason = std::move(reason);
    trace->push_back(fmt::format("    rejected: {}", rec.reason));
    if (rec.disabled) {
      LogInfo("skipping plugin {}: {}", path, rec.reason);
    } else {
      LogWarning("skipping plugin {}: {}", path, rec.reason);
    }
    return std::move(out);
  };

  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return reject("file does not exist; check the path (WEFT_PLUGIN_PATH entries name plugin directories or files)");
  }
  if (std::filesystem::is_directory(path, ec)) return reject("is a directory, not a plugin file");
  if (std::string bad = CheckElfHeader(path); !bad.empty()) return reject(bad);
  if (std::string bad = CheckElfExports(path, WEFT_PLUGIN_ENTRY_SYMBOL); !bad.empty()) return reject(bad);

  auto lib = std::make_shared<boost::dll::shared_library>();
  try {
    lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return reject(ExplainDlopenError(ExtractDlerror(e.what()), path));
  }
  out.library = lib;
  if (!lib->has(WEFT_PLUGIN_ENTRY_SYMBOL)) {
    return reject(
        "has no weft_plugin_entry symbol, so it is not a weft plugin; declare the entry with "
        "WEFT_DECLARE_PLUGIN_ENTRY() (sdk/plugin.h) and build it with weft_add_plugin, or remove it from the plugin "
        "directory");
  }
  weft_plugin_entry_fn entry = &lib->get<int32_t(weft_plugin_entry_args*)>(WEFT_PLUGIN_ENTRY_SYMBOL);

  weft_plugin_entry_args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.host_min = Runtime::HostSdkMin();
  args.host_max = Runtime::HostSdkMax();
  int32_t rc = 0;
  try {
    rc = entry(&args);
  } catch (...) {
    return reject(
        fmt::format("weft_plugin_entry threw an exception ({}); a plugin must not throw across the C ABI: "
                    "fix the plugin",
                    CurrentExceptionText()));
  }
  args.message[sizeof(args.message) - 1] = '\0';
  rec.plugin_min = args.plugin_min;
  rec.plugin_max = args.plugin_max;
  if (std::string bad = CheckNegotiation(rc, args); !bad.empty()) return reject(bad);
  rec.chosen = args.chosen;

  if (std::string bad = RequiredSizeError("plugin table", args.api->struct_size, kPluginApiRequired); !bad.empty()) {
    return reject(bad);
  }
  weft_plugin_api api = NormalizeStruct(args.api);
  if (!api.name || !*api.name) return reject("plugin table has no name; fix the plugin");
  if (!api.init) return reject("plugin table has no init function; fix the plugin");
  rec.name = api.name;
  rec.version = api.version ? api.version : "";
  if (std::string why = policy.check_disabled(rec.name); !why.empty()) {
    rec.disabled = true;
    return reject(why);
  }
  if (std::string why = policy.check_duplicate_name(rec.name); !why.empty()) {
    rec.duplicate = true;
    return reject(why);
  }

  auto plugin = std::make_unique<Plugin>(path, api, args.chosen, args.plugin_min, args.plugin_max, load_index);
  const weft_host_api* host = CreateHostApi(rec.name, args.chosen);
  // The runtime keeps the host table even when init fails: a misbehaving plugin might hold it.
  out.host = host;
  if (std::string bad = InitPlugin(*plugin, host, policy); !bad.empty()) return reject(bad);
  rec.accepted = true;
  rec.plugin = plugin.get();
  out.plugin = std::move(plugin);
  trace->push_back(fmt::format(
      "    accepted: plugin '{}' {}, SDK {} (plugin speaks {}){}", rec.name, rec.version, SdkVersionString(rec.chosen),
      Range(rec.plugin_min, rec.plugin_max),
      out.plugin->device_type().empty() ? std::string() : fmt::format(", device type {}", out.plugin->device_type())));
  return out;
}

}  // namespace weft::detail

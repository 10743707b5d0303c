// weft SDK C++ helpers — the plugin entry point, generated from one macro.
//
// A plugin author writes a class derived from weft::sdk::Plugin (device.hpp) whose constructor
// takes the host table (`explicit MyPlugin(const weft_host_api* host) : Plugin(host) {...}`),
// builds the plugin (it may read configuration through Config()/ConfigInt(), log through Log())
// and calls Provide() for each part it offers, then writes once, in one source file:
//
//     WEFT_SDK_PLUGIN(MyPlugin, "cpu", "0.1.0", "one-line description",
//                     WEFT_PLUGIN_PROVIDES_DEVICE | WEFT_PLUGIN_PROVIDES_OPERATORS);
//
// The macro defines the exported weft_plugin_entry (two-sided version negotiation, see
// sdk/plugin.h) and the weft_plugin_api table whose init constructs MyPlugin (exceptions become
// the init error the host prints) and whose shutdown deletes it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "weft/sdk/cpp/device.hpp"
#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/plugin.h"

namespace weft::sdk {

/// The SDK versions a plugin built with this header speaks: 2.0 up to the SDK it was built with
/// (2.0 changed the 1.x layouts, so 1.x hosts are not spoken).
inline constexpr uint32_t kPluginMinVersion = WEFT_SDK_MAKE_VERSION(2, 0);
inline constexpr uint32_t kPluginMaxVersion = WEFT_SDK_VERSION;

/// The plugin side of the negotiation in sdk/plugin.h, for a plugin speaking [plugin_min,
/// plugin_max] (both of one major). Fills plugin_min/plugin_max; on success stores the highest
/// version both sides speak in `chosen` and returns 0; otherwise writes a one-line reason with a
/// remedy into `message` and returns non-zero. `api` is left for the caller. Never throws,
/// allocates nothing.
inline int32_t Negotiate(weft_plugin_entry_args* args, const char* plugin_name, uint32_t plugin_min,
                         uint32_t plugin_max) noexcept {
  if (args == nullptr) return 1;
  // The entry args struct is frozen; anything shorter is not a weft host we can talk to.
  if (args->struct_size < WEFT_STRUCT_SIZE(weft_plugin_entry_args, message)) return 2;
  args->plugin_min = plugin_min;
  args->plugin_max = plugin_max;
  args->chosen = 0;
  args->api = nullptr;
  args->message[0] = '\0';
  auto maj = [](uint32_t v) { return WEFT_SDK_VERSION_MAJOR_OF(v); };
  auto min = [](uint32_t v) { return WEFT_SDK_VERSION_MINOR_OF(v); };
  if (args->host_min > args->host_max) {
    std::snprintf(args->message, sizeof(args->message),
                  "plugin '%s': the host's SDK range is empty (min %u.%u > max %u.%u)", plugin_name,
                  maj(args->host_min), min(args->host_min), maj(args->host_max), min(args->host_max));
    return 3;
  }
  // Versions pack (major, minor) so that plain integer order is version order.
  const uint32_t lo = args->host_min > plugin_min ? args->host_min : plugin_min;
  const uint32_t hi = args->host_max < plugin_max ? args->host_max : plugin_max;
  if (hi < lo) {
    const bool host_newer = args->host_min > plugin_max;
    std::snprintf(args->message, sizeof(args->message),
                  "plugin '%s' speaks SDK %u.%u..%u.%u but the host speaks %u.%u..%u.%u: %s", plugin_name,
                  maj(plugin_min), min(plugin_min), maj(plugin_max), min(plugin_max), maj(args->host_min),
                  min(args->host_min), maj(args->host_max), min(args->host_max),
                  host_newer ? "rebuild the plugin against the host's SDK"
                             : "use a newer weft, or build the plugin against an older SDK");
    return 4;
  }
  args->chosen = hi;  // plugin_max's major, the highest minor both sides speak
  return 0;
}

namespace detail {

template <typename P>
const weft_plugin_api* PluginTable(const char* name, const char* version, const char* description,
                                   uint32_t provides) noexcept {
  // Constant data only: the entry point must not allocate (it may run for rejected plugins).
  static const weft_plugin_api table = {
      WEFT_STRUCT_SIZE(weft_plugin_api, transport_api),
      name,
      version,
      description,
      provides,
      // init
      [](const weft_host_api* host, void** state) noexcept -> weft_error* {
        if (host == nullptr || state == nullptr) return nullptr;  // nothing to report through
        *state = nullptr;
        return Guard(host, [&] { *state = static_cast<Plugin*>(new P(host)); });
      },
      // shutdown
      [](void* state) noexcept {
        try {
          delete static_cast<Plugin*>(state);
        } catch (...) {  // destructors are noexcept; belt and braces for the C boundary
        }
      },
      [](void* state) noexcept -> const weft_device_api* {
        Device* d = state == nullptr ? nullptr : static_cast<Plugin*>(state)->device();
        return d == nullptr ? nullptr : d->api();
      },
      [](void* state) noexcept -> const weft_operator_api* {
        return state == nullptr ? nullptr : static_cast<Plugin*>(state)->operators();
      },
      [](void* state) noexcept -> const weft_transport_api* {
        return state == nullptr ? nullptr : static_cast<Plugin*>(state)->transport();
      },
  };
  return &table;
}

}  // namespace detail
}  // namespace weft::sdk

/// Defines the plugin's exported entry point for plugin class `PluginClass` (derived from
/// weft::sdk::Plugin, constructible from `const weft_host_api*`). `name`, `version`, `description`: string literals;
/// `provides`: the WEFT_PLUGIN_PROVIDES_* bits of the parts the class Provide()s.
#define WEFT_SDK_PLUGIN(PluginClass, name, version, description, provides)                                  \
  WEFT_DECLARE_PLUGIN_ENTRY() {                                                                             \
    const int32_t rc =                                                                                      \
        ::weft::sdk::Negotiate(args, name, ::weft::sdk::kPluginMinVersion, ::weft::sdk::kPluginMaxVersion); \
    if (rc == 0) {                                                                                          \
      args->api = ::weft::sdk::detail::PluginTable<PluginClass>(name, version, description, provides);      \
    }                                                                                                       \
    return rc;                                                                                              \
  }

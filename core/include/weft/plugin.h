// weft core — PluginRecord: what plugin discovery or an explicit load (Runtime::LoadPlugin) did
// with one plugin file, for diagnostics such as weft-info and for programs that load a plugin of
// their own (samples/custom_op).
//
// Thread-safety: records are plain values (copies of the runtime's); SdkVersionString may be
// called from any thread.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <string>

namespace weft {

/// The runtime's record of an accepted plugin. Opaque to programs (its class is internal to weft's
/// own tree); only its identity is useful outside: two records of one plugin hold the same pointer.
class Plugin;

/// "2.1" for WEFT_SDK_MAKE_VERSION(2, 1) (major in bits 16-31, minor in bits 0-15; sdk/version.h).
/// Never throws.
WEFT_API std::string SdkVersionString(uint32_t version);

/// What discovery or an explicit load did with one file. SDK versions are
/// WEFT_SDK_MAKE_VERSION values (print them with SdkVersionString).
struct WEFT_API PluginRecord {
  std::string path;     ///< as found or given (canonical when the file exists)
  std::string origin;   ///< "WEFT_PLUGIN_PATH", "install directory" or "explicit"
  std::string name;     ///< the plugin's name; "" when loading failed before its table was read
  std::string version;  ///< the plugin's own version string; "" when unknown
  bool accepted = false;
  bool duplicate = false;                   ///< rejected because a plugin of the same name was already loaded
  bool disabled = false;                    ///< rejected because WEFT_PLUGINS_DISABLE names it
  std::string reason;                       ///< why it was rejected: cause and remedy, one line ("" when accepted)
  uint32_t plugin_min = 0, plugin_max = 0;  ///< the plugin's SDK range; 0 when unknown
  uint32_t chosen = 0;                      ///< negotiated SDK version; 0 when negotiation failed
  const Plugin* plugin = nullptr;           ///< the accepted plugin (opaque, see above), else nullptr
};

}  // namespace weft

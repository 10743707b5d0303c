// Loading one plugin file: dlopen, entry, negotiation, init, table checks. Never throws for a
// bad plugin: the outcome's record says why it was rejected.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/internal/plugin.h"

namespace boost::dll {
class shared_library;
}

namespace weft::detail {

/// Checks the runtime applies before init, given by the Runtime. Each returns "" to accept or
/// the rejection reason.
struct LoadPolicy {
  std::function<std::string(const std::string& name)> check_disabled;
  std::function<std::string(const std::string& name)> check_duplicate_name;
  std::function<std::string(const std::string& device_type)> check_device_type;
};

struct LoadOutcome {
  PluginRecord record;
  std::unique_ptr<Plugin> plugin;                       // set when accepted (record.plugin points to it)
  std::shared_ptr<boost::dll::shared_library> library;  // kept loaded even when rejected
  const weft_host_api* host = nullptr;                  // the accepted plugin's services
};

/// Loads `path` (canonical) as plugin number `load_index`. Appends trace lines to *trace.
LoadOutcome LoadPluginFile(const std::string& path, const std::string& origin, int load_index, const LoadPolicy& policy,
                           std::vector<std::string>* trace);

/// Calls the plugin's shutdown (exceptions caught and logged) and marks it shut down.
void ShutdownPlugin(Plugin& plugin);

}  // namespace weft::detail

// Helpers shared by the loader tests: fixture paths and a fresh runtime per test.
#pragma once

#include <cstdlib>
#include <string>

#include "weft/internal/runtime.h"

namespace weft::loader_test {

inline std::string Fixture(const std::string& name) { return std::string(LOADER_FIXTURE_DIR) + "/lib" + name + ".so"; }
inline std::string Extra(const std::string& name) { return std::string(LOADER_EXTRA_DIR) + "/lib" + name + ".so"; }

// Forgets every plugin and rediscovers with WEFT_PLUGIN_PATH / WEFT_PLUGINS_DISABLE set as given
// (nullptr = unset). Plugins next to the test binary (the build tree's plugin directory) are
// still discovered, so tests check for what they loaded rather than for exact totals.
inline Runtime& FreshRuntime(const char* plugin_path = nullptr, const char* disable = nullptr) {
  if (plugin_path) {
    setenv("WEFT_PLUGIN_PATH", plugin_path, 1);
  } else {
    unsetenv("WEFT_PLUGIN_PATH");
  }
  if (disable) {
    setenv("WEFT_PLUGINS_DISABLE", disable, 1);
  } else {
    unsetenv("WEFT_PLUGINS_DISABLE");
  }
  internal::ResetRuntimeForTesting();
  return Runtime::Get();
}

inline const PluginRecord* FindRecord(const std::vector<PluginRecord>& records, const std::string& path) {
  for (const auto& r : records)
    if (r.path == path) return &r;
  return nullptr;
}

}  // namespace weft::loader_test

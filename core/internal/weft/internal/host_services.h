// weft internal — the services the host hands to every plugin (weft_host_api, sdk host.h), and the
// hooks other parts of core use to plug into them (the profiler's trace sink, runtime options,
// the rendezvous store used by transports).
//
// Thread-safety: every function here may be called from any thread.
#pragma once

#include "weft/export.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "weft/sdk/host.h"

namespace weft {

/// Receives the trace events plugins emit, with the emitting plugin's name. Runs on the plugin's
/// thread; must be thread-safe and must not throw (exceptions are dropped).
using TraceSink = std::function<void(const weft_trace_event& event, const std::string& plugin)>;
/// Installs the sink (an empty function turns tracing off: trace_enabled then returns 0).
WEFT_API void SetTraceSink(TraceSink sink);

/// Sets a runtime option that plugins read through config_get when no environment variable of
/// that name is set.
WEFT_API void SetConfig(const std::string& key, const std::string& value);

/// The store behind kv_set / kv_get. The default is in-process (enough for one process with
/// several transports); a multi-process rendezvous replaces it with SetRendezvousStore.
class WEFT_API RendezvousStore {
 public:
  virtual ~RendezvousStore() = default;
  /// Publishes (or replaces) `value` under `key`.
  virtual void Set(const std::string& key, std::string value) = 0;
  /// The value under `key`, waiting up to `timeout` for it to appear (a negative timeout waits
  /// forever); nullopt when it did not appear in time.
  virtual std::optional<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
};
/// Replaces the store (nullptr restores the in-process default).
WEFT_API void SetRendezvousStore(std::shared_ptr<RendezvousStore> store);

/// Fills a weft_host_api for the plugin named `plugin_name`; the table and its host_ctx stay
/// valid until ReleaseHostApi. Used by the loader; tests may use it to call a plugin directly.
WEFT_API const weft_host_api* CreateHostApi(const std::string& plugin_name, uint32_t sdk_version);
WEFT_API void ReleaseHostApi(const weft_host_api* api);

}  // namespace weft

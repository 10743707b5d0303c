/* weft SDK — the plugin entry point, version negotiation and the plugin table.
 *
 * A plugin is a shared object that exports exactly one symbol, WEFT_PLUGIN_ENTRY_SYMBOL:
 *
 *     int32_t weft_plugin_entry(weft_plugin_entry_args* args);
 *
 * Negotiation (two-sided, modelled on the Vulkan loader/ICD handshake):
 *   1. The host fills host_min/host_max: the range of SDK versions it speaks.
 *   2. The plugin stores its own range in plugin_min/plugin_max, picks the highest version both
 *      sides speak (same major, minor = min(host max minor, plugin max minor)) into `chosen`,
 *      and returns its table in `api`, or, when the ranges do not overlap, returns non-zero
 *      and explains why in `message`.
 *   3. The host checks `chosen` lies in both ranges, then calls api->init with its services.
 * The entry function must not throw, allocate device memory or start threads: it may run for
 * plugins the host then rejects. weft_plugin_entry_args is frozen: it never grows.
 *
 * Lifetime: init once, shutdown once before unload. Everything the plugin hands out (tables,
 * strings, states) stays valid until shutdown returns. Production hosts never unload plugins.
 */
#ifndef WEFT_SDK_PLUGIN_H_
#define WEFT_SDK_PLUGIN_H_

#include "weft/sdk/device.h"
#include "weft/sdk/host.h"
#include "weft/sdk/operator.h"
#include "weft/sdk/transport.h"
#include "weft/sdk/types.h"
#include "weft/sdk/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PLUGIN_ENTRY_SYMBOL "weft_plugin_entry"

typedef struct weft_plugin_api weft_plugin_api;

typedef struct weft_plugin_entry_args {
  size_t struct_size;
  uint32_t host_min;          /* in: lowest SDK version the host speaks (WEFT_SDK_MAKE_VERSION) */
  uint32_t host_max;          /* in: highest */
  uint32_t plugin_min;        /* out: lowest SDK version the plugin speaks */
  uint32_t plugin_max;        /* out: highest */
  uint32_t chosen;            /* out: the version both will use */
  const weft_plugin_api* api; /* out: the plugin's table; NULL when rejected */
  char message[256];          /* out: NUL-terminated reason when the entry returns non-zero */
} weft_plugin_entry_args;

typedef int32_t (*weft_plugin_entry_fn)(weft_plugin_entry_args* args);

/* What a plugin provides (weft_plugin_api.provides). */
#define WEFT_PLUGIN_PROVIDES_DEVICE (1u << 0)
#define WEFT_PLUGIN_PROVIDES_OPERATORS (1u << 1)
#define WEFT_PLUGIN_PROVIDES_TRANSPORT (1u << 2)

struct weft_plugin_api {
  size_t struct_size;
  const char* name;        /* unique plugin name, e.g. "cpu"; used by WEFT_PLUGINS_DISABLE */
  const char* version;     /* the plugin's own version string, e.g. "0.1.0" */
  const char* description; /* one line */
  uint32_t provides;       /* WEFT_PLUGIN_PROVIDES_* */

  /* Called once after negotiation. `host` stays valid until shutdown returns. Stores the
   * plugin's state (passed back as plugin_state to every function) in *plugin_state. An error
   * here makes the host skip the plugin and print the error's message. */
  weft_error* (*init)(const weft_host_api* host, void** plugin_state);
  /* Releases everything; called once, after the host stopped using the plugin's objects. */
  void (*shutdown)(void* plugin_state);

  /* The parts this plugin provides; each NULL when absent. Called after init. */
  const weft_device_api* (*device_api)(void* plugin_state);
  const weft_operator_api* (*operator_api)(void* plugin_state);
  const weft_transport_api* (*transport_api)(void* plugin_state);
};

/* Declares the entry point inside a plugin (C or C++). */
#define WEFT_DECLARE_PLUGIN_ENTRY() WEFT_PLUGIN_EXPORT int32_t weft_plugin_entry(weft_plugin_entry_args* args)

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_PLUGIN_H_ */

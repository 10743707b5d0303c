// weft core — op definitions from operator plugins (weft_op_def, sdk/include/weft/sdk/operator.h)
// adapted into OpDef and registered in the OpRegistry.
//
// OpRegistry::Get() connects the registry to the Runtime once (internal::OnPluginLoaded), so every
// plugin loaded before or after gets its definitions registered. A definition whose name is taken
// (built-in or another plugin's) is skipped with a warning naming both sources; the plugin stays
// loaded and its kernels stay usable.
//
// The adapted OpDef calls back into the plugin (infer_shape, infer_type); the weft_op_def and
// its strings must stay valid for the life of the process (plugins are never unloaded, except by
// internal::ResetRuntimeForTesting, after which such OpDefs must not be used).
#pragma once

#include <string>
#include <vector>

#include "operator/op_def.h"
#include "weft/sdk/operator.h"

namespace weft::opdef {

/// Builds the OpDef of a plugin definition. `source` names the plugin (OpDef::source).
/// Plugin inference errors become weft::Error "<op> (plugin '<source>'): <message>"; shapes with
/// more than WEFT_MAX_NDIM axes are rejected before the call. Throws weft::Error for a malformed
/// definition (no name, NULL name arrays with non-zero counts).
OpDef AdaptPluginOpDef(const weft_op_def& def, void* plugin_state, const std::string& source);

/// Adapts and registers `defs`; a definition that cannot be registered (duplicate name,
/// malformed) is logged as a warning and skipped. Returns the names registered.
std::vector<std::string> RegisterPluginOpDefs(OpRegistry& registry, const std::vector<const weft_op_def*>& defs,
                                              void* plugin_state, const std::string& source);

/// Registers the definitions of every plugin the Runtime has loaded and will load. Called once
/// by OpRegistry::Get(); never throws (a failure is logged).
void ConnectPluginOps(OpRegistry& registry) noexcept;

}  // namespace weft::opdef

// weft internal — the Runtime's devices, plugins and plugin registrations (not installed).
//
// weft/runtime.h is what a program sees of the runtime (plugin records, device types and counts).
// Core's modules, weft's tools (weft-info, weft-conformance), its tests and bindings also need the
// objects behind that: the Device wrapper of each device (to allocate and copy), the accepted
// Plugin objects with their normalised tables, the kernels and op definitions the plugins
// registered, a callback for plugins loaded later, and a way for tests to start discovery over.
// Those are the functions here, on the runtime passed in (Runtime::Get()).
//
// Thread-safety: as weft/runtime.h: every function may be called from any thread; loading is
// serialised, lookups take a shared lock.
#pragma once

#include "weft/export.h"

#include <functional>
#include <string_view>
#include <vector>

#include "weft/base.h"
#include "weft/context.h"
#include "weft/internal/device.h"
#include "weft/internal/error.h"
#include "weft/internal/plugin.h"
#include "weft/runtime.h"
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

namespace internal {

/// The accepted plugins, in load order.
WEFT_API std::vector<const Plugin*> Plugins(const Runtime& rt);
/// The accepted plugin named `name`, or nullptr.
WEFT_API const Plugin* FindPlugin(const Runtime& rt, std::string_view name);

/// The device `ctx` names. Throws weft::Error naming the loaded device types and counts and how
/// to find out why a plugin is missing (e.g. "no device cuda(0): loaded device types are cpu (2
/// devices), simdev (1 device); ...").
WEFT_API Device& GetDevice(Runtime& rt, const Context& ctx);

/// The first dense kernel (no sparse bit in storage_types) registered for (op, device_type) whose
/// dtype mask contains `dtype`, or nullptr. When several plugins register the same (op, device_type, dtype), the first
/// loaded wins.
WEFT_API const KernelInfo* FindKernel(const Runtime& rt, std::string_view op, std::string_view device_type,
                                      DType dtype);
/// The first sparse kernel (weft_kernel_def.storage_types with a sparse bit) for (op,
/// device_type, dtype) whose infer_storage claims `query` (SDK 2.1). `query` is filled by the
/// caller except kernel_data and claimed; on a claim its output_stypes hold the kernel's answer.
/// nullptr when no kernel claims the call (the caller falls back to dense or refuses by name).
/// Throws weft::Error with a plugin's message when its infer_storage fails.
WEFT_API const KernelInfo* FindSparseKernel(const Runtime& rt, std::string_view op, std::string_view device_type,
                                            DType dtype, weft_storage_args& query);
/// True for a kernel that takes sparse arrays (a sparse bit in its storage_types).
WEFT_API bool IsSparseKernel(const weft_kernel_def& def);
/// Every kernel registered for `device_type`, in registration order.
WEFT_API std::vector<KernelInfo> Kernels(const Runtime& rt, std::string_view device_type);
/// Every op definition any plugin registered, in load order (duplicates by name included: the
/// operator registry decides).
WEFT_API std::vector<PluginOpDef> OpDefs(const Runtime& rt);

/// Calls fn for every accepted plugin: now for those already loaded, later for each new one
/// (from the thread that loads it). Calls are serialised with loading; fn may call Runtime
/// functions but must not throw (an exception is logged and dropped).
WEFT_API void OnPluginLoaded(Runtime& rt, std::function<void(const Plugin&)> fn);

/// Tests only: shuts every plugin down (reverse load order), unloads them and forgets all
/// records, so that the next Runtime::Get() discovers again (with the environment as it is
/// then). References to Devices, Plugins and kernels become dangling. OnPluginLoaded callbacks
/// are kept and called again for the plugins loaded next. No-op before the first Runtime::Get().
WEFT_API void ResetRuntimeForTesting();

}  // namespace internal
}  // namespace weft

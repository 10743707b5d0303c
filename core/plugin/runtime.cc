#include "weft/internal/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include <boost/dll/shared_library.hpp>

#include "loader.h"
#include "plugin_tables.h"
#include "weft/env.h"
#include "weft/internal/host_services.h"
#include "weft/logging.h"

namespace fs = std::filesystem;

namespace weft {
namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

struct DeviceGroup {
  std::string type;
  const Plugin* plugin;
  std::vector<std::unique_ptr<Device>> devices;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string CanonicalPath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

bool LooksLikePluginFile(const fs::path& p) {
  std::string name = p.filename().string();
  return name.size() > 3 && (name.ends_with(".so") || name.find(".so.") != std::string::npos);
}

// The file holding this code: libweft.so, or the executable when the module is linked statically.
std::string ThisModulePath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ThisModulePath), &info) == 0 || !info.dli_fname) return "";
  return CanonicalPath(info.dli_fname);
}

void RunShutdownHandler();

}  // namespace

struct WEFT_HIDDEN Runtime::Impl {  // not exported with Runtime
  std::recursive_mutex load_mu;     // serialises discovery, loads, callbacks, reset
  mutable std::shared_mutex mu;     // guards the state below for readers
  std::atomic<bool> discovered{false};
  bool discovering = false;

  std::vector<PluginRecord> records;
  std::map<std::string, size_t> considered;  // canonical path -> index in records
  std::vector<std::unique_ptr<Plugin>> plugins;
  std::vector<std::shared_ptr<boost::dll::shared_library>> libraries;
  std::vector<const weft_host_api*> hosts;
  std::vector<DeviceGroup> groups;
  std::deque<KernelInfo> kernel_store;
  StringMap<StringMap<std::vector<const KernelInfo*>>> kernels;  // op -> device type -> kernels
  std::vector<PluginOpDef> op_defs;
  std::vector<std::string> trace;
  std::vector<std::function<void(const Plugin&)>> callbacks;
  std::set<std::string> disabled, disabled_seen;

  void Trace(std::string line) {
    LogDebug("plugin discovery: {}", line);
    std::unique_lock<std::shared_mutex> lock(mu);
    trace.push_back(std::move(line));
  }

  const DeviceGroup* FindGroup(std::string_view type) const {
    for (const auto& g : groups)
      if (g.type == type) return &g;
    return nullptr;
  }

  void EnsureDiscovered() {
    if (discovered.load(std::memory_order_acquire)) return;
    std::lock_guard<std::recursive_mutex> lock(load_mu);
    if (discovered.load(std::memory_order_acquire) || discovering) return;
    discovering = true;
    try {
      Discover();
    } catch (const std::exception& e) {
      LogError("plugin discovery failed: {}", e.what());
    }
    discovering = false;
    discovered.store(true, std::memory_order_release);
  }

  void Discover() {
    Trace(fmt::format("host speaks SDK {}–{}, core {}", SdkVersionString(HostSdkMin()), SdkVersionString(HostSdkMax()),
                      WEFT_CORE_VERSION_STRING));
    auto disable = GetEnv("WEFT_PLUGINS_DISABLE");
    disabled.clear();
    disabled_seen.clear();
    if (disable) {
      for (auto& n : Split(*disable, ',')) disabled.insert(n);
      Trace(fmt::format("WEFT_PLUGINS_DISABLE={}", *disable));
    }
    if (auto path = GetEnv("WEFT_PLUGIN_PATH")) {
      Trace(fmt::format("WEFT_PLUGIN_PATH={}", *path));
      for (const auto& entry : Split(*path, ':')) SearchEntry(entry, "WEFT_PLUGIN_PATH");
    } else {
      Trace("WEFT_PLUGIN_PATH is not set");
    }
    SearchInstallDirectories();
    for (const auto& name : disabled) {
      if (!disabled_seen.count(name))
        Trace(fmt::format("WEFT_PLUGINS_DISABLE names '{}', which no plugin found has", name));
    }
  }

  void SearchInstallDirectories() {
    std::string module = ThisModulePath();
    if (module.empty()) {
      Trace("cannot locate the module holding libweft (dladdr failed): install directory not searched");
      return;
    }
    fs::path dir = fs::path(module).parent_path();
    std::set<std::string> seen;
    for (const fs::path& candidate : {dir / "weft" / "plugins", dir / ".." / "lib" / "weft" / "plugins"}) {
      std::string c = CanonicalPath(candidate.string());
      if (!seen.insert(c).second) continue;
      std::error_code ec;
      if (!fs::is_directory(c, ec)) {
        Trace(fmt::format("install directory {} (next to {}): does not exist", c, module));
        continue;
      }
      Trace(fmt::format("searching install directory {} (next to {})", c, module));
      SearchDirectory(c, "install directory");
    }
  }

  void SearchEntry(const std::string& entry, const std::string& origin) {
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
      Trace(fmt::format("searching {} ({})", CanonicalPath(entry), origin));
      SearchDirectory(entry, origin);
    } else if (fs::exists(entry, ec) || LooksLikePluginFile(entry)) {
      LoadCandidate(entry, origin);
    } else {
      Trace(fmt::format("{} ({}): no such directory; ignored", entry, origin));
      LogWarning("WEFT_PLUGIN_PATH names {}, which is neither a directory nor a plugin file; ignored", entry);
    }
  }

  void SearchDirectory(const std::string& dir, const std::string& origin) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::error_code ec2;
      if (!e.is_directory(ec2) && LooksLikePluginFile(e.path())) files.push_back(e.path());
    }
    if (ec) Trace(fmt::format("  cannot list {}: {}", dir, ec.message()));
    std::sort(files.begin(), files.end());
    if (files.empty()) Trace("  no plugin files (*.so) here");
    for (const auto& f : files) LoadCandidate(f.string(), origin);
  }

  PluginRecord LoadCandidate(const std::string& given, const std::string& origin) {
    std::string path = CanonicalPath(given);
    {
      std::shared_lock<std::shared_mutex> lock(mu);
      if (auto it = considered.find(path); it != considered.end()) {
        PluginRecord rec = records[it->second];
        lock.unlock();
        Trace(fmt::format("  {}: already considered ({})", path, rec.accepted ? "accepted" : "rejected"));
        return rec;
      }
    }
    Trace(fmt::format("  trying {}", path));
    detail::LoadPolicy policy;
    policy.check_disabled = [&](const std::string& name) -> std::string {
      if (origin == "explicit" || !disabled.count(name)) return "";
      disabled_seen.insert(name);
      return "disabled by WEFT_PLUGINS_DISABLE";
    };
    policy.check_duplicate_name = [&](const std::string& name) -> std::string {
      for (const auto& p : plugins)
        if (p->name() == name) {
          return fmt::format(
              "duplicate: a plugin named '{}' was already loaded from {}; this one is ignored (remove "
              "one of the two)",
              name, p->path());
        }
      return "";
    };
    policy.check_device_type = [&](const std::string& type) -> std::string {
      if (const DeviceGroup* g = FindGroup(type)) {
        return fmt::format(
            "device type '{}' is already provided by plugin '{}' ({}); disable one of the two with "
            "WEFT_PLUGINS_DISABLE",
            type, g->plugin->name(), g->plugin->path());
      }
      return "";
    };
    detail::LoadOutcome out;
    {
      std::vector<std::string> lines;
      out = detail::LoadPluginFile(path, origin, static_cast<int>(plugins.size()), policy, &lines);
      for (auto& l : lines) Trace(std::move(l));
    }
    Plugin* accepted = out.plugin.get();
    if (accepted) RegisterDevices(*accepted);
    {
      std::unique_lock<std::shared_mutex> lock(mu);
      if (out.library) libraries.push_back(out.library);
      if (out.host) hosts.push_back(out.host);
      if (accepted) Register(out);
      considered[path] = records.size();
      records.push_back(out.record);
    }
    if (accepted) {
      std::atexit(RunShutdownHandler);
      size_t n = callbacks.size();
      for (size_t i = 0; i < n; ++i) Notify(callbacks[i], *accepted);
    }
    return out.record;
  }

  // Enumerates the devices of a newly accepted plugin (before it is visible to readers).
  std::vector<std::unique_ptr<Device>> pending_devices;
  // More devices than any machine has: a count above it is a plugin bug, clamped.
  static constexpr int32_t kMaxDevicesPerPlugin = 4096;

  void RegisterDevices(Plugin& p) {
    pending_devices.clear();
    if (p.device_type().empty()) return;
    int32_t count = 0;
    const char* reason = nullptr;
    try {
      count = p.device_api()->device_count(p.state(), &reason);
    } catch (...) {
      LogWarning("plugin {} ({}): device_count threw an exception; assuming no devices", p.name(), p.path());
    }
    if (count < 0 || count > kMaxDevicesPerPlugin) {
      std::string note = fmt::format("device_count returned {}, outside 0..{}; the plugin is broken, using {}", count,
                                     kMaxDevicesPerPlugin, count < 0 ? 0 : kMaxDevicesPerPlugin);
      LogWarning("plugin {} ({}): {}", p.name(), p.path(), note);
      p.SetDeviceNote(std::move(note));
      count = count < 0 ? 0 : kMaxDevicesPerPlugin;
    } else if (count == 0) {
      // The reason is plugin-owned text: copy a bounded, one-line prefix of it.
      std::string why = reason != nullptr ? std::string(reason, strnlen(reason, 512)) : "";
      std::replace(why.begin(), why.end(), '\n', ' ');
      p.SetDeviceNote(why.empty() ? "the plugin found no devices (it gave no reason)" : why);
    }
    for (int32_t i = 0; i < count; ++i) pending_devices.push_back(std::make_unique<Device>(p, i));
  }

  void Register(detail::LoadOutcome& out) {
    Plugin* p = out.plugin.get();
    if (!p->device_type().empty()) groups.push_back(DeviceGroup{p->device_type(), p, std::move(pending_devices)});
    for (const weft_kernel_def& k : p->tables().kernels) {
      kernel_store.push_back(KernelInfo{&k, p->state(), p});
      kernels[k.op_name][k.device_type].push_back(&kernel_store.back());
    }
    for (const weft_op_def& d : p->tables().op_defs) op_defs.push_back(PluginOpDef{&d, p->state(), p});
    plugins.push_back(std::move(out.plugin));
  }

  static void Notify(const std::function<void(const Plugin&)>& fn, const Plugin& p) {
    try {
      fn(p);
    } catch (const std::exception& e) {
      LogError("a plugin-loaded callback threw for plugin {}: {}", p.name(), e.what());
    } catch (...) {
      LogError("a plugin-loaded callback threw for plugin {}", p.name());
    }
  }

  // Shuts down the newest plugin still alive; returns false when none is.
  bool ShutdownNewest() {
    for (auto it = plugins.rbegin(); it != plugins.rend(); ++it) {
      if ((*it)->alive()) {
        detail::ShutdownPlugin(**it);
        return true;
      }
    }
    return false;
  }

  void Reset() {
    std::lock_guard<std::recursive_mutex> load_lock(load_mu);
    while (ShutdownNewest()) {
    }
    std::unique_lock<std::shared_mutex> lock(mu);
    groups.clear();
    kernels.clear();
    kernel_store.clear();
    op_defs.clear();
    plugins.clear();
    for (const weft_host_api* h : hosts) ReleaseHostApi(h);
    hosts.clear();
    libraries.clear();  // unloads (dlclose): tests only
    records.clear();
    considered.clear();
    trace.clear();
    discovered.store(false, std::memory_order_release);
  }
};

namespace {
Runtime::Impl* g_impl = nullptr;

// Registered with atexit after each accepted plugin, so it runs before the static destructors of
// that plugin (registered while it loaded) and after those of plugins loaded later: each call
// shuts down the newest plugin still alive, which yields reverse load order.
void RunShutdownHandler() {
  if (!g_impl) return;
  std::lock_guard<std::recursive_mutex> lock(g_impl->load_mu);
  g_impl->ShutdownNewest();
}

}  // namespace

Runtime::Runtime() : impl_(std::make_unique<Impl>()) { g_impl = impl_.get(); }
Runtime::~Runtime() = default;

Runtime& Runtime::Get() {
  // Before any plugin reads a setting; an exception leaves the static unset, so it is retried.
  static const bool settings_ok = (ValidateSettings(), ApplyOpenMPDefaults(), true);
  (void)settings_ok;
  static Runtime* runtime = new Runtime();
  runtime->impl_->EnsureDiscovered();
  return *runtime;
}

uint32_t Runtime::HostSdkMin() { return WEFT_SDK_MAKE_VERSION(WEFT_SDK_VERSION_MAJOR, 0); }
uint32_t Runtime::HostSdkMax() { return WEFT_SDK_VERSION; }

PluginRecord Runtime::LoadPlugin(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(impl_->load_mu);
  return impl_->LoadCandidate(path, "explicit");
}

std::vector<PluginRecord> Runtime::PluginRecords() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return impl_->records;
}

std::vector<std::string> Runtime::DiscoveryTrace() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return impl_->trace;
}

std::vector<std::string> Runtime::DeviceTypes() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  std::vector<std::string> out;
  for (const auto& g : impl_->groups) out.push_back(g.type);
  return out;
}

int Runtime::DeviceCount(std::string_view device_type) const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  const DeviceGroup* g = impl_->FindGroup(device_type);
  return g ? static_cast<int>(g->devices.size()) : 0;
}

std::vector<Context> Runtime::ListDevices() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  std::vector<Context> out;
  for (const auto& g : impl_->groups)
    for (const auto& d : g.devices) out.push_back(d->context());
  return out;
}

bool Runtime::HasDevice(const Context& ctx) const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  const DeviceGroup* g = impl_->FindGroup(ctx.GetDeviceType());
  return g && ctx.GetDeviceId() >= 0 && ctx.GetDeviceId() < static_cast<int>(g->devices.size());
}

namespace internal {

// The internal functions below are the Runtime's former members that reach its devices and
// plugins; they live outside the class so that weft/runtime.h (installed) does not declare them.
struct RuntimeAccess {
  static Runtime::Impl* Of(const Runtime& rt) { return rt.impl_.get(); }
};

std::vector<const Plugin*> Plugins(const Runtime& rt) {
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  std::vector<const Plugin*> out;
  for (const auto& p : impl->plugins) out.push_back(p.get());
  return out;
}

const Plugin* FindPlugin(const Runtime& rt, std::string_view name) {
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  for (const auto& p : impl->plugins)
    if (p->name() == name) return p.get();
  return nullptr;
}

Device& GetDevice(Runtime& rt, const Context& ctx) {
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  const DeviceGroup* g = impl->FindGroup(ctx.GetDeviceType());
  int id = ctx.GetDeviceId();
  if (g && id >= 0 && id < static_cast<int>(g->devices.size())) return *g->devices[id];
  if (g) {
    Fail("no device {}: {} has {} device{}{}", ctx, g->type, g->devices.size(), g->devices.size() == 1 ? "" : "s",
         g->devices.empty() ? "" : fmt::format(" ({}(0) to {}({}))", g->type, g->type, g->devices.size() - 1));
  }
  std::string loaded;
  for (const auto& grp : impl->groups) {
    loaded += fmt::format("{}{} ({} device{})", loaded.empty() ? "" : ", ", grp.type, grp.devices.size(),
                          grp.devices.size() == 1 ? "" : "s");
  }
  size_t rejected = std::count_if(impl->records.begin(), impl->records.end(),
                                  [](const PluginRecord& r) { return !r.accepted && !r.disabled; });
  Fail(
      "no device {}: loaded device types are {}; no plugin provides '{}': install its plugin or add its directory "
      "to WEFT_PLUGIN_PATH{} (run weft-info to see which plugins were found)",
      ctx, loaded.empty() ? std::string("none") : loaded, ctx.GetDeviceType(),
      rejected ? fmt::format("; {} plugin file{} rejected", rejected, rejected == 1 ? " was" : "s were") : "");
}

namespace {

// The kernels for (op, device_type) taking `dtype` that are sparse (or dense), in registration order.
std::vector<const KernelInfo*> KernelsOf(const Runtime& rt, std::string_view op, std::string_view device_type,
                                         DType dtype, bool sparse) {
  std::vector<const KernelInfo*> out;
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  auto it = impl->kernels.find(op);
  if (it == impl->kernels.end()) return out;
  auto jt = it->second.find(device_type);
  if (jt == it->second.end()) return out;
  const uint64_t bit = WEFT_DTYPE_BIT(static_cast<int32_t>(dtype));
  for (const KernelInfo* k : jt->second)
    if ((k->def->dtypes & bit) && IsSparseKernel(*k->def) == sparse) out.push_back(k);
  return out;
}

}  // namespace

const KernelInfo* FindKernel(const Runtime& rt, std::string_view op, std::string_view device_type, DType dtype) {
  const std::vector<const KernelInfo*> dense = KernelsOf(rt, op, device_type, dtype, false);
  return dense.empty() ? nullptr : dense.front();
}

bool IsSparseKernel(const weft_kernel_def& def) {
  return (def.storage_types & ~WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT)) != 0;
}

const KernelInfo* FindSparseKernel(const Runtime& rt, std::string_view op, std::string_view device_type, DType dtype,
                                   weft_storage_args& query) {
  // Asked outside the lock (KernelsOf releases it): infer_storage is plugin code.
  const std::vector<const KernelInfo*> candidates = KernelsOf(rt, op, device_type, dtype, true);
  if (candidates.empty()) return nullptr;
  const std::vector<int32_t> requested(query.output_stypes, query.output_stypes + query.num_outputs);
  for (const KernelInfo* k : candidates) {
    bool takes_all = true;
    for (int32_t i = 0; i < query.num_inputs; ++i)
      takes_all = takes_all && (k->def->storage_types & WEFT_STYPE_BIT(query.input_stypes[i])) != 0;
    if (!takes_all) continue;
    std::copy(requested.begin(), requested.end(), query.output_stypes);
    query.kernel_data = k->def->kernel_data;
    query.claimed = 0;
    ThrowIfError(k->def->infer_storage(k->plugin_state, &query),
                 fmt::format("{} on {} (infer_storage of plugin {})", op, device_type, k->plugin->name()));
    if (query.claimed == 0) continue;
    bool fits = true;  // a claim must give every output a storage type the kernel takes
    for (int32_t o = 0; o < query.num_outputs; ++o) {
      const int32_t st = query.output_stypes[o];
      fits = fits && st >= WEFT_STYPE_DEFAULT && st <= WEFT_STYPE_CSR && (k->def->storage_types & WEFT_STYPE_BIT(st)) &&
             (requested[static_cast<size_t>(o)] < 0 || requested[static_cast<size_t>(o)] == st);
    }
    if (fits) return k;
  }
  std::copy(requested.begin(), requested.end(), query.output_stypes);
  return nullptr;
}

std::vector<KernelInfo> Kernels(const Runtime& rt, std::string_view device_type) {
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  std::vector<KernelInfo> out;
  for (const auto& k : impl->kernel_store)
    if (device_type == k.def->device_type) out.push_back(k);
  return out;
}

std::vector<PluginOpDef> OpDefs(const Runtime& rt) {
  const Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::shared_lock<std::shared_mutex> lock(impl->mu);
  return impl->op_defs;
}

void OnPluginLoaded(Runtime& rt, std::function<void(const Plugin&)> fn) {
  Runtime::Impl* impl = RuntimeAccess::Of(rt);
  std::lock_guard<std::recursive_mutex> lock(impl->load_mu);
  impl->callbacks.push_back(fn);
  for (const Plugin* p : Plugins(rt)) Runtime::Impl::Notify(fn, *p);
}

void ResetRuntimeForTesting() {
  if (g_impl) g_impl->Reset();
}

}  // namespace internal
}  // namespace weft

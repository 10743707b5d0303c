// OpRegistry: name -> OpDef, aliases, suggestions for unknown names.
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include <fmt/ranges.h>

#include "operator/defs/builtin.h"
#include "operator/name_match.h"
#include "operator/op_def.h"
#include "operator/plugin_ops.h"

namespace weft {

struct OpRegistry::Impl {
  mutable std::shared_mutex mu;
  std::map<std::string, std::unique_ptr<const OpDef>, std::less<>> defs;  // stable addresses
  std::map<std::string, std::string, std::less<>> aliases;                // alias -> target
};

OpRegistry::OpRegistry() : impl_(new Impl) {}
OpRegistry::~OpRegistry() = default;  // never runs: Get() leaks the instance on purpose

namespace {

// Connecting to the Runtime loads plugins, which may (through other OnPluginLoaded callbacks)
// come back to OpRegistry::Get() on the same thread: so no lock is held while connecting, and
// only a lookup that misses waits for the connection made by another thread.
enum HookState : int { kNotHooked, kHooking, kHooked };
std::atomic<int> g_hook_state{kNotHooked};
std::atomic<std::thread::id> g_hook_thread;
std::mutex g_hook_mu;
std::condition_variable g_hook_cv;

void WaitForPluginOps() {
  if (g_hook_state.load(std::memory_order_acquire) != kHooking) return;
  if (g_hook_thread.load() == std::this_thread::get_id()) return;
  std::unique_lock lock(g_hook_mu);
  g_hook_cv.wait(lock, [] { return g_hook_state.load(std::memory_order_acquire) == kHooked; });
}

// Op name -> definition file of the built-ins; written once, before Get() first returns.
std::map<std::string, std::string>& BuiltinFiles() {
  static std::map<std::string, std::string> files;
  return files;
}

}  // namespace

const std::string& opdef::BuiltinDefinitionFile(const std::string& name) {
  OpRegistry::Get();
  static const std::string none;
  const auto& files = BuiltinFiles();
  const auto it = files.find(name);
  return it == files.end() ? none : it->second;
}

OpRegistry& OpRegistry::Get() {
  // Built-ins are registered here, not by static initialisers: those live in a static library
  // and the linker drops object files nothing references.
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    BuiltinFiles() = opdef::RegisterBuiltinOps(*r);
    return r;
  }();
  int expected = kNotHooked;
  if (g_hook_state.load(std::memory_order_acquire) == kNotHooked &&
      g_hook_state.compare_exchange_strong(expected, kHooking)) {
    g_hook_thread.store(std::this_thread::get_id());
    opdef::ConnectPluginOps(*registry);
    {
      std::lock_guard lock(g_hook_mu);
      g_hook_state.store(kHooked, std::memory_order_release);
    }
    g_hook_cv.notify_all();
  }
  return *registry;
}

const OpDef* OpRegistry::Find(std::string_view name) const {
  if (const OpDef* def = FindNoWait(name)) return def;
  WaitForPluginOps();
  return FindNoWait(name);
}

const OpDef* OpRegistry::FindNoWait(std::string_view name) const {
  std::shared_lock lock(impl_->mu);
  auto it = impl_->defs.find(name);
  if (it != impl_->defs.end()) return it->second.get();
  auto a = impl_->aliases.find(name);
  if (a == impl_->aliases.end()) return nullptr;
  it = impl_->defs.find(a->second);
  return it == impl_->defs.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::Lookup(std::string_view name) const {
  if (const OpDef* def = Find(name)) return *def;
  std::vector<std::string> names = ListNames();
  for (const auto& [alias, target] : ListAliases()) names.push_back(alias);
  std::vector<std::string> close = opdef::CloseNames(name, names);
  if (close.empty()) Fail("unknown operator '{}' (no registered operator has a similar name)", name);
  Fail("unknown operator '{}'; close names: {}", name, fmt::join(close, ", "));
}

void OpRegistry::Register(OpDef def) {
  WEFT_CHECK(!def.name.empty(), "cannot register an operator without a name (source '{}')", def.source);
  WEFT_CHECK(def.list_inputs && def.list_outputs && def.infer_shape,
             "operator '{}' from '{}' lacks list_inputs, list_outputs or infer_shape", def.name, def.source);
  WEFT_CHECK(def.grad != GradKind::kOp || !def.backward_op.empty(),
             "operator '{}' from '{}' has GradKind::kOp but no backward_op", def.name, def.source);
  std::unique_lock lock(impl_->mu);
  if (auto it = impl_->defs.find(def.name); it != impl_->defs.end()) {
    Fail("operator '{}' is already registered by '{}'; '{}' cannot register it again", def.name, it->second->source,
         def.source);
  }
  if (auto a = impl_->aliases.find(def.name); a != impl_->aliases.end()) {
    Fail("operator name '{}' from '{}' is already an alias of '{}'", def.name, def.source, a->second);
  }
  std::string name = def.name;
  impl_->defs.emplace(std::move(name), std::make_unique<const OpDef>(std::move(def)));
}

void OpRegistry::AddAlias(std::string alias, std::string target) {
  std::unique_lock lock(impl_->mu);
  auto t = impl_->defs.find(target);
  WEFT_CHECK(t != impl_->defs.end(), "cannot add alias '{}': operator '{}' is not registered", alias, target);
  if (auto it = impl_->defs.find(alias); it != impl_->defs.end()) {
    Fail("cannot add alias '{}' -> '{}': '{}' is an operator registered by '{}'", alias, target, alias,
         it->second->source);
  }
  if (auto a = impl_->aliases.find(alias); a != impl_->aliases.end() && a->second != target) {
    Fail("cannot add alias '{}' -> '{}': it already stands for '{}'", alias, target, a->second);
  }
  impl_->aliases[alias] = std::move(target);
}

std::vector<std::string> OpRegistry::ListNames() const {
  std::shared_lock lock(impl_->mu);
  std::vector<std::string> out;
  for (const auto& [name, def] : impl_->defs) out.push_back(name);
  return out;
}

std::string OpRegistry::ResolveAlias(std::string_view name) const {
  std::shared_lock lock(impl_->mu);
  auto a = impl_->aliases.find(name);
  return a == impl_->aliases.end() ? std::string(name) : a->second;
}

std::vector<std::pair<std::string, std::string>> OpRegistry::ListAliases() const {
  std::shared_lock lock(impl_->mu);
  return {impl_->aliases.begin(), impl_->aliases.end()};
}

}  // namespace weft

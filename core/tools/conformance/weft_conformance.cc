// weft-conformance: certifies one plugin against weft's device contract and operator conformance
// suite, on each of its devices, against the cpu plugin's results; writes the certificate as JSON
// and Markdown. See certificate.h for the report, op_checks.h and contract_checks.h for the checks.
//
//   weft-conformance --plugin path/to/libfoo.so [--json cert.json] [--markdown cert.md]
//   weft-conformance --plugin simdev --ops elemwise_add,dot --dtypes float32 --devices 0
//   weft-conformance --list-cases      # the suite's cases per op, as JSON (for OPS.md)
//
// Exit status: 0 everything the plugin claims passed; 1 something it claims failed; 2 the plugin
// could not be loaded (or bad options); 3 the plugin has no device to test here (the reason is
// printed); 4 incomplete (time budget used up, or claimed dtypes no case reaches), nothing failed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "certificate.h"
#include "op_cases.h"
#include "weft/internal/runtime.h"

namespace {

namespace fs = std::filesystem;

constexpr int kExitFailed = 1, kExitUsage = 2, kExitNoDevice = 3, kExitIncomplete = 4;

struct Args {
  std::string plugin, json, markdown;
  std::vector<std::string> ops, dtypes, devices;
  bool small = false, stable = false, no_contract = false, verbose = false, list_cases = false;
  double budget = 0;
  uint64_t seed = 20261121;
};

// A weft::Error carrying the exit status.
struct Exit {
  int code;
  std::string message;
};

std::set<std::string> Split(const std::vector<std::string>& items) {
  std::set<std::string> out;
  for (const std::string& i : items) {
    std::stringstream ss(i);
    for (std::string x; std::getline(ss, x, ',');)
      if (!x.empty()) out.insert(x);
  }
  return out;
}

// The plugin named by --plugin: a file (loaded explicitly) or the name of a discovered plugin.
const weft::Plugin& ResolvePlugin(const std::string& spec, weft::PluginRecord* record) {
  weft::Runtime& rt = weft::Runtime::Get();
  const bool is_path = spec.find('/') != std::string::npos || spec.ends_with(".so");
  if (is_path) {
    if (!fs::exists(spec)) throw Exit{kExitUsage, "plugin file " + spec + " does not exist"};
    *record = rt.LoadPlugin(fs::absolute(spec).string());
    if (!record->accepted) throw Exit{kExitUsage, fmt::format("cannot load plugin {}: {}", spec, record->reason)};
    return *record->plugin;
  }
  for (const weft::PluginRecord& r : rt.PluginRecords()) {
    if (r.name != spec) continue;
    if (r.accepted) {
      *record = r;
      return *r.plugin;
    }
    throw Exit{kExitUsage, fmt::format("plugin '{}' ({}) was found but not loaded: {}", spec, r.path, r.reason)};
  }
  std::vector<std::string> names;
  for (const weft::Plugin* p : weft::internal::Plugins(rt)) names.push_back(p->name());
  throw Exit{kExitUsage, fmt::format("no plugin named '{}' was found (accepted: {}); pass its file with --plugin "
                                     "path/to/lib.so, or see weft-info --verbose for the discovery trace",
                                     spec, fmt::join(names, ", "))};
}

// The devices to certify: the plugin's own (a device plugin), or those of every device type its
// kernels are for (an operator plugin); narrowed by --devices ("0,1", "cpu(1)").
std::vector<weft::Context> DevicesOf(const weft::Plugin& p, const std::set<std::string>& pick) {
  weft::Runtime& rt = weft::Runtime::Get();
  std::set<std::string> types;
  if (!p.device_type().empty()) {
    types.insert(p.device_type());
  } else if (const weft_operator_api* o = p.operator_api()) {
    for (int i = 0; i < o->num_kernels; ++i) types.insert(o->kernels[i]->device_type);
  }
  std::vector<weft::Context> out;
  for (const weft::Context& c : rt.ListDevices()) {
    if (types.count(c.GetDeviceType()) == 0) continue;
    if (!pick.empty() && !pick.count(c.ToString()) && !pick.count(std::to_string(c.GetDeviceId()))) continue;
    out.push_back(c);
  }
  if (out.empty()) {
    std::string why = p.device_note().empty() ? "" : ": " + p.device_note();
    if (types.empty()) why = ": it provides no device and no kernels";
    throw Exit{kExitNoDevice, fmt::format("plugin {} has no device to test on this machine{}{}", p.name(),
                                          pick.empty() ? "" : " (after --devices)", why)};
  }
  return out;
}

nlohmann::json DeviceJson(const weft::Context& ctx) {
  const weft::DeviceProperties& p = weft::internal::GetDevice(weft::Runtime::Get(), ctx).properties();
  nlohmann::json attrs = nlohmann::json::object();
  for (const auto& [k, v] : p.attributes) attrs[k] = v;
  return {{"context", ctx.ToString()},
          {"name", p.name},
          {"vendor", p.vendor},
          {"kind", weft::DeviceKindName(p.kind)},
          {"total_memory_mib", p.total_memory >> 20},
          {"compute_units", p.compute_units},
          {"min_alignment", p.min_alignment},
          {"capabilities", weft::CapabilityNames(p.capabilities)},
          {"attributes", attrs}};
}

std::string Range(uint32_t lo, uint32_t hi) { return weft::SdkVersionString(lo) + "–" + weft::SdkVersionString(hi); }

void Write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.good()) throw Exit{kExitUsage, "cannot write " + path};
}

int Run(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  weft::PluginRecord rec;
  const weft::Plugin& plugin = ResolvePlugin(a.plugin, &rec);
  const std::vector<weft::Context> devices = DevicesOf(plugin, Split(a.devices));

  wconf::Certificate cert;
  cert.plugin_name = plugin.name();
  cert.plugin_version = rec.version;
  cert.plugin_description = plugin.description();
  cert.plugin_path = rec.path;
  cert.plugin_sdk = weft::SdkVersionString(rec.chosen);
  cert.plugin_sdk_range = Range(rec.plugin_min, rec.plugin_max);
  cert.provides_device = !plugin.device_type().empty();
  cert.weft_version = weft::CoreVersion();
  cert.host_sdk_range = Range(weft::Runtime::HostSdkMin(), weft::Runtime::HostSdkMax());
  std::set<std::string> types;
  for (const weft::Context& c : devices) {
    cert.devices.push_back(DeviceJson(c));
    types.insert(c.GetDeviceType());
  }
  cert.device_types.assign(types.begin(), types.end());
  for (const wconf::OpCase& c : wconf::AllCases()) cert.suite_ops.insert(weft::OpRegistry::Get().Lookup(c.op).name);
  auto log = [&](const std::string& s) {
    if (a.verbose) std::fprintf(stderr, "%s\n", s.c_str());
  };

  if (cert.provides_device && !a.no_contract) {
    for (const weft::contract::ContractCheck& check : weft::contract::ContractChecks()) {
      auto& entry = cert.contract.emplace_back(check.name, std::map<std::string, weft::contract::ContractOutcome>{});
      for (const weft::Context& c : devices) {
        log(fmt::format("contract {} on {}", check.name, c.ToString()));
        entry.second[c.ToString()] =
            weft::contract::RunContractCheck(check, weft::internal::GetDevice(weft::Runtime::Get(), c));
      }
    }
  }

  wconf::OpOptions o;
  o.devices = devices;
  o.plugin = &plugin;
  for (const std::string& op : Split(a.ops)) {  // canonical names (aliases resolved)
    const weft::OpDef* def = weft::OpRegistry::Get().Find(op);
    if (def == nullptr) throw Exit{kExitUsage, fmt::format("--ops: unknown op '{}'", op)};
    o.ops.insert(def->name);
  }
  o.dtypes = Split(a.dtypes);
  for (const std::string& dt : o.dtypes) (void)weft::DTypeFromName(dt);  // throws naming the dtypes
  o.small = a.small;
  o.time_budget_s = a.budget;
  o.seed = a.seed;
  o.log = log;
  cert.only_ops = o.ops;
  cert.only_dtypes = o.dtypes;
  cert.ops = wconf::RunOpConformance(o);
  cert.options = {{"ops", o.ops},   {"dtypes", o.dtypes},        {"small", a.small},
                  {"seed", a.seed}, {"time_budget_s", a.budget}, {"contract", !a.no_contract}};
  std::vector<std::string> dev_names;
  for (const weft::Context& c : devices) dev_names.push_back(c.ToString());
  cert.options["devices"] = dev_names;
  cert.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!a.json.empty()) Write(a.json, ToJson(cert, a.stable).dump(2) + "\n");
  if (!a.markdown.empty()) Write(a.markdown, ToMarkdown(cert, a.stable));
  std::fputs(ToText(cert).c_str(), stdout);
  if (cert.HasFailures()) return kExitFailed;
  return cert.Incomplete() ? kExitIncomplete : 0;
}

// --list-cases: every case of the suite by forward op (aliases resolved), with the file that made
// it: the input of scripts/gen_ops_md.py's conformance column. Needs no plugin.
int ListCases() {
  try {
    nlohmann::ordered_json ops = nlohmann::ordered_json::object();
    std::map<std::string, std::vector<const wconf::OpCase*>> by_op;
    for (const wconf::OpCase& c : wconf::AllCases()) by_op[weft::OpRegistry::Get().Lookup(c.op).name].push_back(&c);
    for (const auto& [op, cases] : by_op) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const wconf::OpCase* c : cases) list.push_back({{"case", c->Label()}, {"file", c->source}});
      ops[op] = list;
    }
    std::printf("%s\n", nlohmann::ordered_json{{"ops", ops}}.dump(1).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-conformance: %s\n", e.what());
    return kExitUsage;
  }
}

// An install whose plugin directory is not <prefix>/lib/weft/plugins: point discovery at it
// (relative to this program in <prefix>/bin), before the first Runtime::Get().
void AddInstallPluginDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || std::string_view(WEFT_INSTALL_PLUGIN_DIR) == "lib/weft/plugins") return;
  const fs::path dir = exe.parent_path() / ".." / WEFT_INSTALL_PLUGIN_DIR;
  if (!fs::is_directory(dir, ec)) return;
  const char* old = std::getenv("WEFT_PLUGIN_PATH");
  const std::string value = old != nullptr && *old ? std::string(old) + ":" + dir.string() : dir.string();
  setenv("WEFT_PLUGIN_PATH", value.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "weft-conformance: certify a weft plugin (device contract + every op it claims, against the cpu "
      "plugin)"};
  Args a;
  app.add_option("-p,--plugin", a.plugin,
                 "plugin file (path/to/libfoo.so) or the name of a discovered plugin (required unless --list-cases)");
  app.add_flag("--list-cases", a.list_cases,
               "print the suite's cases as JSON ({\"ops\": {op: [{\"case\", \"file\"}, ...]}}) and exit");
  app.add_option("--ops", a.ops, "only these forward ops (comma-separated; their gradients included)");
  app.add_option("--dtypes", a.dtypes, "only these dtypes (float32,float16,...)");
  app.add_option("--devices", a.devices, "only these devices: ids (0,1) or contexts (simdev(1))");
  app.add_flag("--small", a.small, "one case per op and dtype (slow devices such as lavapipe)");
  app.add_option("--time-budget", a.budget, "start no op case after this many seconds (cells left: 'not run')");
  app.add_option("--seed", a.seed, "base seed of the random inputs (printed with every failure)");
  app.add_flag("--no-contract", a.no_contract, "skip the device contract checks");
  app.add_option("--json", a.json, "write the certificate as JSON to this file");
  app.add_option("--markdown", a.markdown, "write the certificate as Markdown to this file");
  app.add_flag("--stable", a.stable,
               "leave machine-dependent values (errors, timings, device properties, paths) out of the files");
  app.add_flag("-v,--verbose", a.verbose, "print each check as it runs (stderr)");
  CLI11_PARSE(app, argc, argv);
  if (a.list_cases) return ListCases();
  if (a.plugin.empty()) {
    std::fprintf(stderr, "weft-conformance: --plugin is required (see --help)\n");
    return kExitUsage;
  }
  AddInstallPluginDir();
  try {
    return Run(a);
  } catch (const Exit& e) {
    std::fprintf(stderr, "weft-conformance: %s\n", e.message.c_str());
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-conformance: %s\n", e.what());
    return kExitUsage;
  }
}

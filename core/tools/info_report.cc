#include "info_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

namespace weft::tools {
namespace {

constexpr size_t kWidth = 100;

std::string Mib(uint64_t bytes) { return bytes ? fmt::format("{} MiB", bytes >> 20) : "unknown"; }

std::string Range(uint32_t lo, uint32_t hi) { return fmt::format("{}–{}", SdkVersionString(lo), SdkVersionString(hi)); }

// Appends `items` separated by ", ", wrapping at kWidth columns with lines starting with `indent`.
std::string Wrap(const std::vector<std::string>& items, const std::string& indent) {
  std::string out = indent, line;
  size_t col = indent.size();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (col + item.size() + 1 > kWidth && col > indent.size()) {
      out += "\n" + indent;
      col = indent.size();
    } else if (col > indent.size()) {
      out += " ";
      ++col;
    }
    out += item;
    col += item.size();
  }
  return out;
}

// op names per device type, sorted and unique.
std::map<std::string, std::set<std::string>> OpsByDeviceType(const Runtime& rt) {
  std::map<std::string, std::set<std::string>> ops;
  std::set<std::string> types;
  for (const Plugin* p : internal::Plugins(rt))
    if (const weft_operator_api* o = p->operator_api())
      for (int i = 0; i < o->num_kernels; ++i) types.insert(o->kernels[i]->device_type);
  for (const auto& t : types)
    for (const KernelInfo& k : internal::Kernels(rt, t)) ops[t].insert(k.def->op_name);
  return ops;
}

// {device_type: {op: [file, ...]}}: the source_file of each kernel registered for op on the device
// type, then its math_files, each file once in registration order. A kernel from a plugin built
// against an SDK without these fields (struct_size before source_file) adds nothing.
nlohmann::json KernelFiles(const Runtime& rt) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> files;
  for (const auto& [type, names] : OpsByDeviceType(rt)) {
    for (const KernelInfo& k : internal::Kernels(rt, type)) {
      std::vector<std::string>& list = files[type][k.def->op_name];
      auto add = [&list](const char* f) {
        if (f != nullptr && *f != 0 && std::find(list.begin(), list.end(), f) == list.end()) list.emplace_back(f);
      };
      if (!WEFT_STRUCT_HAS(k.def, weft_kernel_def, math_files)) continue;
      add(k.def->source_file);
      for (const char* const* m = k.def->math_files; m != nullptr && *m != nullptr; ++m) add(*m);
    }
  }
  return files;
}

}  // namespace

std::string TextReport(const Runtime& rt, bool verbose) {
  std::string out =
      fmt::format("weft core {}, plugin SDK {} (host speaks SDK {})\n", CoreVersion(),
                  SdkVersionString(Runtime::HostSdkMax()), Range(Runtime::HostSdkMin(), Runtime::HostSdkMax()));
  if (verbose) {
    out += "\nDiscovery trace:\n";
    for (const auto& line : rt.DiscoveryTrace()) out += "  " + line + "\n";
  }
  auto records = rt.PluginRecords();
  size_t accepted = 0;
  for (const auto& r : records) accepted += r.accepted;
  out += fmt::format("\nPlugins ({} considered, {} accepted):\n", records.size(), accepted);
  if (records.empty()) out += "  none found: set WEFT_PLUGIN_PATH to a directory holding plugins\n";
  for (const auto& r : records) {
    if (r.accepted) {
      const Plugin& p = *r.plugin;
      out +=
          fmt::format("  accepted  {} {}: SDK {} (plugin speaks {}){}\n", r.name, r.version, SdkVersionString(r.chosen),
                      Range(r.plugin_min, r.plugin_max), p.description().empty() ? "" : " - " + p.description());
      if (!p.device_type().empty() && !p.device_note().empty())
        out += fmt::format("            devices: {}\n", p.device_note());
    } else {
      std::string who = r.name.empty() ? std::filesystem::path(r.path).filename().string() : r.name;
      out += fmt::format("  rejected  {}{}: {}\n", who,
                         r.duplicate ? " (duplicate)" : (r.disabled ? " (disabled)" : ""), r.reason);
    }
    out += fmt::format("            {} (from {})\n", r.path, r.origin);
  }

  out += "\nDevices:\n";
  auto devices = rt.ListDevices();
  if (devices.empty()) out += "  none\n";
  for (const Context& ctx : devices) {
    Device& d = internal::GetDevice(const_cast<Runtime&>(rt), ctx);
    const DeviceProperties& p = d.properties();
    out += fmt::format("  {}: {} ({}), plugin {}\n", ctx, p.name, p.vendor.empty() ? "unknown vendor" : p.vendor,
                       d.plugin().name());
    out += fmt::format("      kind {}{}\n", DeviceKindName(p.kind),
                       p.pci_bus_id.empty() ? "" : fmt::format(", PCI bus id {}", p.pci_bus_id));
    out += fmt::format("      memory {} total, {} free; {} compute units; allocations aligned to {} bytes{}\n",
                       Mib(p.total_memory), Mib(p.free_memory), p.compute_units, p.min_alignment,
                       p.max_allocation ? fmt::format(", at most {} per allocation", Mib(p.max_allocation)) : "");
    auto caps = CapabilityNames(p.capabilities);
    out += fmt::format("      capabilities: {}\n", caps.empty() ? "none" : fmt::format("{}", fmt::join(caps, ", ")));
    if (!p.attributes.empty()) {
      std::vector<std::string> kv;
      for (const auto& [k, v] : p.attributes) kv.push_back(k + "=" + v);
      out += "      attributes:\n" + Wrap(kv, "        ") + "\n";
    }
  }

  out += "\nKernels (ops each device type can run):\n";
  auto ops = OpsByDeviceType(rt);
  if (ops.empty()) out += "  none\n";
  for (const auto& [type, names] : ops) {
    out += fmt::format("  {} ({} ops):\n", type, names.size());
    out += Wrap(std::vector<std::string>(names.begin(), names.end()), "    ") + "\n";
  }
  return out;
}

nlohmann::json JsonReport(Runtime& rt, bool verbose) {
  nlohmann::json j;
  j["core_version"] = CoreVersion();
  j["sdk"] = {{"min", SdkVersionString(Runtime::HostSdkMin())}, {"max", SdkVersionString(Runtime::HostSdkMax())}};
  j["plugins"] = nlohmann::json::array();
  for (const auto& r : rt.PluginRecords()) {
    nlohmann::json p = {{"path", r.path},         {"origin", r.origin},     {"name", r.name},
                        {"version", r.version},   {"accepted", r.accepted}, {"duplicate", r.duplicate},
                        {"disabled", r.disabled}, {"reason", r.reason}};
    if (r.plugin_min || r.plugin_max) p["plugin_sdk"] = Range(r.plugin_min, r.plugin_max);
    if (r.chosen) p["sdk"] = SdkVersionString(r.chosen);
    if (r.accepted && !r.plugin->device_type().empty()) {
      p["device_type"] = r.plugin->device_type();
      if (!r.plugin->device_note().empty()) p["devices_note"] = r.plugin->device_note();
    }
    j["plugins"].push_back(p);
  }
  j["devices"] = nlohmann::json::array();
  for (const Context& ctx : rt.ListDevices()) {
    const Device& d = internal::GetDevice(rt, ctx);
    const DeviceProperties& p = d.properties();
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& [k, v] : p.attributes) attrs[k] = v;
    j["devices"].push_back({{"context", ctx.ToString()},
                            {"plugin", d.plugin().name()},
                            {"name", p.name},
                            {"vendor", p.vendor},
                            {"total_memory_mib", p.total_memory >> 20},
                            {"free_memory_mib", p.free_memory >> 20},
                            {"compute_units", p.compute_units},
                            {"kind", DeviceKindName(p.kind)},
                            {"pci_bus_id", p.pci_bus_id},
                            {"max_allocation", p.max_allocation},
                            {"min_alignment", p.min_alignment},
                            {"capabilities", CapabilityNames(p.capabilities)},
                            {"attributes", attrs}});
  }
  j["kernels"] = nlohmann::json::object();
  for (const auto& [type, names] : OpsByDeviceType(rt)) j["kernels"][type] = names;
  j["kernel_files"] = KernelFiles(rt);
  if (verbose) j["trace"] = rt.DiscoveryTrace();
  return j;
}

}  // namespace weft::tools

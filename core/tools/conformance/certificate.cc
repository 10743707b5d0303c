#include "certificate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "operator/op_def.h"

namespace wconf {
namespace {

using weft::contract::ContractOutcome;
using weft::contract::OutcomeName;

// Which of two statuses a merged cell (several device types) shows.
int Rank(Status s) {
  switch (s) {
    case Status::kFail:
      return 4;
    case Status::kNotRun:
      return 3;
    case Status::kPass:
      return 2;
    case Status::kNoGradient:
      return 1;
    default:
      return 0;
  }
}

struct Table {
  std::vector<std::string> dtypes;                                         // columns
  std::map<std::string, std::map<std::string, std::array<Cell, 2>>> rows;  // op -> dtype -> cells
};

bool HasGradient(const std::string& op) {
  const weft::OpDef* d = weft::OpRegistry::Get().Find(op);
  return d != nullptr && d->grad == weft::GradKind::kOp;
}

// The op table over every device type certified (the worst status of each cell wins).
Table MergedTable(const Certificate& c) {
  Table t;
  std::set<std::string> dtypes = {"float32"};
  std::set<std::string> rows;
  for (const auto& [type, ops] : c.ops.by_type)
    for (const auto& [op, row] : ops) {
      rows.insert(op);
      for (const auto& [dt, cells] : row.cells) dtypes.insert(dt);
    }
  if (c.provides_device) rows.insert(c.suite_ops.begin(), c.suite_ops.end());
  if (!c.only_ops.empty()) std::erase_if(rows, [&](const std::string& op) { return !c.only_ops.count(op); });
  if (!c.only_dtypes.empty()) dtypes = c.only_dtypes;
  t.dtypes.assign(dtypes.begin(), dtypes.end());
  for (const std::string& op : rows) {
    auto& out = t.rows[op];
    for (const std::string& dt : t.dtypes) {
      std::array<Cell, 2>& m = out[dt];
      if (!HasGradient(op)) m[1].status = Status::kNoGradient;
      for (const auto& [type, ops] : c.ops.by_type) {
        auto r = ops.find(op);
        if (r == ops.end()) continue;
        auto cell = r->second.cells.find(dt);
        if (cell == r->second.cells.end()) continue;
        for (size_t dir = 0; dir < 2; ++dir) {
          const Cell& x = cell->second[dir];
          if (Rank(x.status) > Rank(m[dir].status)) m[dir].status = x.status;
          m[dir].cases += x.cases;
          if (x.cases > 0 && x.worst >= m[dir].worst) {
            m[dir].worst = x.worst;
            m[dir].worst_case = x.worst_case;
          }
        }
      }
    }
  }
  return t;
}

// One contract check over every device: fail if any failed, skip if all skipped, else pass.
ContractOutcome::Status Overall(const std::map<std::string, ContractOutcome>& by_device) {
  bool all_skip = !by_device.empty();
  for (const auto& [dev, o] : by_device) {
    if (o.status == ContractOutcome::Status::kFail) return o.status;
    all_skip = all_skip && o.status == ContractOutcome::Status::kSkip;
  }
  return all_skip ? ContractOutcome::Status::kSkip : ContractOutcome::Status::kPass;
}

std::string Sci(double x) { return std::isinf(x) ? "inf" : fmt::format("{:.2g}", x); }

nlohmann::json FailureJson(const Failure& f) {
  return {{"device", f.device},
          {"op", f.row},
          {"kernel", f.op},
          {"dtype", f.dtype},
          {"direction", f.backward ? "backward" : "forward"},
          {"check", f.check},
          {"case", f.case_label},
          {"seed", f.seed},
          {"error", f.error}};
}

}  // namespace

bool Certificate::HasFailures() const {
  if (!ops.failures.empty()) return true;
  for (const auto& [check, by_device] : contract)
    if (Overall(by_device) == ContractOutcome::Status::kFail) return true;
  return false;
}

bool Certificate::Incomplete() const {
  for (const auto& [type, rows] : ops.by_type)
    for (const auto& [op, row] : rows)
      for (const auto& [dt, cells] : row.cells)
        if (cells[0].status == Status::kNotRun || cells[1].status == Status::kNotRun) return true;
  return ops.budget_exhausted;
}

std::string Certificate::Result() const { return HasFailures() ? "failed" : Incomplete() ? "incomplete" : "certified"; }

nlohmann::json ToJson(const Certificate& c, bool stable) {
  nlohmann::json j;
  j["format"] = "weft-conformance certificate 1";
  j["result"] = c.Result();
  j["plugin"] = {{"name", c.plugin_name},
                 {"version", c.plugin_version},
                 {"description", c.plugin_description},
                 {"file", std::filesystem::path(c.plugin_path).filename().string()},
                 {"sdk", c.plugin_sdk},
                 {"sdk_range", c.plugin_sdk_range},
                 {"kind", c.provides_device ? "device" : "operator"}};
  if (!stable) j["plugin"]["path"] = c.plugin_path;
  j["weft"] = {{"version", c.weft_version}, {"sdk_range", c.host_sdk_range}};
  j["device_types"] = c.device_types;
  if (!stable) {
    j["devices"] = c.devices;
    j["seconds"] = std::round(c.seconds * 100) / 100;
  }
  nlohmann::json opts = c.options;
  if (stable) opts.erase("devices");
  j["options"] = opts;
  j["contract"] = nlohmann::json::object();
  for (const auto& [check, by_device] : c.contract) {
    // Stable: whether a check applies can depend on the machine (peer copies need two devices),
    // so skips read as passes there; the full form tells them apart.
    ContractOutcome::Status st = Overall(by_device);
    if (stable && st == ContractOutcome::Status::kSkip) st = ContractOutcome::Status::kPass;
    nlohmann::json e = {{"status", OutcomeName(st)}};
    std::vector<std::string> failures;
    for (const auto& [dev, o] : by_device) {
      if (!stable) e["devices"][dev] = OutcomeName(o.status);
      if (!stable && o.status == ContractOutcome::Status::kSkip) e["skip_reason"] = o.skip_reason;
      for (const std::string& f : o.failures) failures.push_back(dev + ": " + f);
    }
    if (!failures.empty()) e["failures"] = failures;
    j["contract"][check] = e;
  }
  const Table t = MergedTable(c);
  j["ops"] = nlohmann::json::object();
  for (const auto& [op, by_dtype] : t.rows) {
    for (const auto& [dt, cells] : by_dtype) {
      nlohmann::json e = {{"forward", StatusName(cells[0].status)}, {"backward", StatusName(cells[1].status)}};
      if (!stable) {
        for (size_t dir = 0; dir < 2; ++dir) {
          if (cells[dir].cases == 0) continue;
          const char* d = dir == 0 ? "forward" : "backward";
          e[fmt::format("{}_cases", d)] = cells[dir].cases;
          e[fmt::format("{}_worst_nmse", d)] = std::isinf(cells[dir].worst) ? 1e308 : cells[dir].worst;
          e[fmt::format("{}_worst_case", d)] = cells[dir].worst_case;
        }
      }
      j["ops"][op][dt] = e;
    }
  }
  j["failures"] = nlohmann::json::array();
  for (const Failure& f : c.ops.failures) j["failures"].push_back(FailureJson(f));
  j["notes"] = c.ops.notes;
  return j;
}

std::string ToMarkdown(const Certificate& c, bool stable) {
  std::string m = fmt::format("# weft-conformance certificate: {} {}\n\n", c.plugin_name, c.plugin_version);
  m += fmt::format("**Result: {}**{}\n\n", c.Result(),
                   stable ? " (stable form: machine-dependent values such as errors, timings and device properties "
                            "are left out; run `weft-conformance` for them)"
                          : "");
  m += "| | |\n|---|---|\n";
  m += fmt::format("| plugin | `{}` {} ({} plugin) |\n", c.plugin_name, c.plugin_version,
                   c.provides_device ? "device" : "operator");
  if (!c.plugin_description.empty()) m += fmt::format("| description | {} |\n", c.plugin_description);
  m += fmt::format("| file | `{}` |\n",
                   stable ? std::filesystem::path(c.plugin_path).filename().string() : c.plugin_path);
  m += fmt::format("| SDK negotiated | {} (plugin speaks {}, host {}) |\n", c.plugin_sdk, c.plugin_sdk_range,
                   c.host_sdk_range);
  m += fmt::format("| weft | {} |\n", c.weft_version);
  m += fmt::format("| device types | {} |\n", fmt::join(c.device_types, ", "));
  if (!stable) {
    for (const nlohmann::json& d : c.devices)
      m += fmt::format("| {} | {} ({}), {} MiB, {} compute units |\n", d.value("context", ""), d.value("name", ""),
                       d.value("vendor", ""), d.value("total_memory_mib", 0), d.value("compute_units", 0));
    m += fmt::format("| time | {:.1f} s |\n", c.seconds);
  }
  if (!c.contract.empty()) {
    m += "\n## Device contract\n\n";
    if (stable) m += "`pass`: no device failed it (a check that does not apply to a device is skipped there).\n\n";
    m += "| check | result |\n|---|---|\n";
    for (const auto& [check, by_device] : c.contract) {
      ContractOutcome::Status st = Overall(by_device);
      if (stable && st == ContractOutcome::Status::kSkip) st = ContractOutcome::Status::kPass;
      m += fmt::format("| {} | {} |\n", check, OutcomeName(st));
    }
  }
  const Table t = MergedTable(c);
  m += "\n## Operators\n\nEach op's cases (edge shapes, in-place, add-to and null requests, sentinel-padded outputs). "
       "The cpu's results are compared with a double-precision reference implementation (the conformance library's "
       "reference.h); its gradients with central finite differences at float32 and float64, with the reference "
       "gradient of ops that define theirs (loss layers, Dropout), and at other dtypes with its float64 gradient of "
       "the same values. Other devices are compared with the cpu. `none`: the op has no gradient.\n\n| op |";
  std::string rule = "|---|";
  for (const std::string& dt : t.dtypes) {
    m += fmt::format(" {} forward | {} backward |", dt, dt);
    rule += "---|---|";
  }
  if (!stable) {
    m += " worst NMSE (case) |";
    rule += "---|";
  }
  m += "\n" + rule + "\n";
  for (const auto& [op, by_dtype] : t.rows) {
    m += fmt::format("| `{}` |", op);
    double worst = -1;
    std::string worst_case;
    for (const std::string& dt : t.dtypes) {
      const auto& cells = by_dtype.at(dt);
      m += fmt::format(" {} | {} |", StatusName(cells[0].status), StatusName(cells[1].status));
      for (const Cell& x : cells)
        if (x.cases > 0 && x.worst > worst) worst = x.worst, worst_case = x.worst_case;
    }
    if (!stable) m += worst >= 0 ? fmt::format(" {} ({}) |", Sci(worst), worst_case) : " |";
    m += "\n";
  }
  if (!c.ops.failures.empty()) {
    m += "\n## Failures\n\n| device | op | dtype | direction | check | case | seed | error "
         "|\n|---|---|---|---|---|---|---|---|\n";
    for (const Failure& f : c.ops.failures)
      m += fmt::format("| {} | `{}` | {} | {} | {} | `{}` | {} | {} |\n", f.device, f.op, f.dtype,
                       f.backward ? "backward" : "forward", f.check, f.case_label, f.seed, f.error);
  }
  for (const auto& [check, by_device] : c.contract)
    for (const auto& [dev, o] : by_device)
      for (const std::string& f : o.failures) m += fmt::format("- contract {} on {}: {}\n", check, dev, f);
  if (!c.ops.notes.empty()) {
    m += "\n## Notes\n\n";
    for (const std::string& n : c.ops.notes) m += "- " + n + "\n";
  }
  return m;
}

std::string ToText(const Certificate& c) {
  std::string s = fmt::format("weft-conformance: plugin {} {} ({}), SDK {} negotiated, weft {}\n", c.plugin_name,
                              c.plugin_version, c.plugin_path, c.plugin_sdk, c.weft_version);
  for (const nlohmann::json& d : c.devices)
    s += fmt::format("  device {}: {} ({})\n", d.value("context", ""), d.value("name", ""), d.value("vendor", ""));
  if (c.provides_device) {
    int pass = 0, skip = 0, fail = 0;
    for (const auto& [check, by_device] : c.contract)
      for (const auto& [dev, o] : by_device) {
        pass += o.status == ContractOutcome::Status::kPass;
        skip += o.status == ContractOutcome::Status::kSkip;
        fail += o.status == ContractOutcome::Status::kFail;
        for (const std::string& f : o.failures) s += fmt::format("  FAIL contract {} on {}: {}\n", check, dev, f);
      }
    s += fmt::format("device contract: {} checks × devices passed, {} skipped, {} failed\n", pass, skip, fail);
  }
  const Table t = MergedTable(c);
  std::map<std::string, int> counts;
  for (const auto& [op, by_dtype] : t.rows)
    for (const auto& [dt, cells] : by_dtype)
      for (const Cell& x : cells) ++counts[StatusName(x.status)];
  s += fmt::format(
      "operators: {} case runs; cells (op × dtype × forward/backward): {} pass, {} fail, {} not run, "
      "{} not claimed, {} no gradient\n",
      c.ops.case_runs, counts["pass"], counts["fail"], counts["not run"], counts["not claimed"], counts["none"]);
  for (const Failure& f : c.ops.failures)
    s += fmt::format("  FAIL {} {} {} {} [{}] case {} (seed {}): {}\n", f.device, f.op, f.dtype,
                     f.backward ? "backward" : "forward", f.check, f.case_label, f.seed, f.error);
  for (const std::string& n : c.ops.notes) s += "  note: " + n + "\n";
  s += fmt::format("result: {} ({:.1f} s)\n", c.Result(), c.seconds);
  return s;
}

}  // namespace wconf

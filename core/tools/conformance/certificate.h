// A plugin's conformance certificate: who was tested (plugin name, version, file, SDK version
// negotiated, weft version, device properties), the device contract's outcome per check, and the
// op table op × dtype × forward/backward → pass / fail / not claimed / none (no gradient) /
// not run, with the worst error and the failing cases named. Written as JSON, Markdown and a
// terminal summary by weft-conformance.
//
// JSON contract (read by other tools, e.g. the OPS.md generator; keys are only ever added):
//   "plugin": {"name", "version", "file", "sdk", ...}
//   "ops": {"<op>": {"<dtype>": {"forward": "pass"|"fail"|"not claimed"|"not run",
//                                "backward": "pass"|"fail"|"not claimed"|"not run"|"none"}}}
//   "result": "certified" | "failed" | "incomplete"
// Stable form (--stable): no numbers that vary by machine (errors, timings, memory sizes, device
// counts, host names, paths), so that a certificate committed to a repository stays current on
// any machine that builds the same sources.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract_checks.h"
#include "op_checks.h"

namespace wconf {

struct Certificate {
  // The plugin under test.
  std::string plugin_name, plugin_version, plugin_description, plugin_path, plugin_sdk, plugin_sdk_range;
  bool provides_device = false;  // a device plugin (contract checked) rather than an operator plugin
  // The host.
  std::string weft_version, host_sdk_range;
  // Devices certified, with their properties (weft-info's JSON form).
  std::vector<nlohmann::json> devices;
  std::vector<std::string> device_types;
  // Contract: check name -> device ("cpu(0)") -> outcome, checks in ContractChecks() order.
  std::vector<std::pair<std::string, std::map<std::string, weft::contract::ContractOutcome>>> contract;
  OpResults ops;
  std::set<std::string> suite_ops;              // forward ops the suite has cases for (rows shown as not claimed)
  std::set<std::string> only_ops, only_dtypes;  // --ops / --dtypes: rows and columns shown (empty: all)
  nlohmann::json options;                       // how it was run (ops, dtypes, devices, small, budget, seed)
  double seconds = 0;

  bool HasFailures() const;
  /// Claimed cells not run (time budget, no case for the dtype).
  bool Incomplete() const;
  /// "certified", "failed" or "incomplete".
  std::string Result() const;
};

/// The certificate as JSON (stable: without machine-dependent values).
nlohmann::json ToJson(const Certificate& c, bool stable);
/// The certificate as a Markdown document (stable: likewise).
std::string ToMarkdown(const Certificate& c, bool stable);
/// The terminal summary: what was tested, counts, every failure with its op, case, seed and error.
std::string ToText(const Certificate& c);

}  // namespace wconf

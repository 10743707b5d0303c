// weft-info's report: what the runtime found, as text or JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "weft/base.h"
#include "weft/internal/runtime.h"

namespace weft::tools {

/// The human-readable report (plugins, devices, kernels); with `verbose` also the discovery trace.
std::string TextReport(const Runtime& runtime, bool verbose);
/// The same facts as JSON: {"core_version", "sdk": {"min", "max"}, "plugins": [...], "devices":
/// [...], "kernels": {device_type: [op, ...]}, "kernel_files": {device_type: {op: [path, ...]}},
/// "trace": [...] (verbose only)}. kernel_files: per op, the files that registered its kernels
/// and hold their math (weft_kernel_def.source_file, math_files), paths as the plugin's compiler
/// saw them; ops whose plugin did not fill those fields have an empty list.
nlohmann::json JsonReport(Runtime& runtime, bool verbose);

}  // namespace weft::tools

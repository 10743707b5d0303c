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
/// [...], "kernels": {device_type: [op, ...]}, "trace": [...] (verbose only)}.
nlohmann::json JsonReport(Runtime& runtime, bool verbose);

}  // namespace weft::tools

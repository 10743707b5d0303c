// MXNet symbol JSON (nnvm's graph JSON as MXNet 1.9 writes it; the README's "Formats" section): writer with MXNet's
// exact whitespace, and a reader that accepts every MXNet version and applies MXNet's legacy upgrades.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "symbol/graph.h"

namespace weft::graph {

/// The version weft writes: MXNet 1.9.1 (MXNET_MAKE_VERSION = major*10000 + minor*100 + patch).
inline constexpr int kMXNetVersion = 10901;

/// The graph reachable from `heads` as MXNet 1.9.1 writes it (no trailing newline).
std::string SaveJSON(const std::vector<Entry>& heads);

/// Parses a symbol file; returns the heads. Throws weft::Error naming the node (index and name)
/// for structural problems (see weft::Symbol::LoadJSON).
std::vector<Entry> LoadJSON(std::string_view json);

}  // namespace weft::graph

// weft core — MXNet-compatible checkpoints (see weft/model.h).
#include "weft/model.h"

#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"

namespace weft {

std::string CheckpointSymbolFile(const std::string& prefix) { return prefix + "-symbol.json"; }
std::string CheckpointParamsFile(const std::string& prefix, int epoch) {
  return fmt::format("{}-{:04d}.params", prefix, epoch);
}
std::string CheckpointStatesFile(const std::string& prefix, int epoch) {
  return fmt::format("{}-{:04d}.states", prefix, epoch);
}

void CheckCheckpointPrefix(const std::string& prefix, const Symbol& symbol, bool replace_network) {
  const std::string file = CheckpointSymbolFile(prefix);
  detail::CheckCanWriteNextTo(file, "checkpoints");
  std::error_code ec;
  if (replace_network || !std::filesystem::exists(file, ec)) return;
  // Compared as weft writes them, so a file written by MXNet (other spacing, legacy keys) matches
  // the same network.
  std::string existing;
  try {
    existing = Symbol::Load(file).ToJSON();
  } catch (const std::exception& e) {
    Fail("checkpoint prefix '{}': '{}' cannot be read ({}); remove it or choose another prefix", prefix, file,
         e.what());
  }
  WEFT_CHECK(existing == symbol.ToJSON(),
             "checkpoint prefix '{}': '{}' holds a different network, and the params files saved with it would no "
             "longer load; choose another prefix, or ask to replace the network (train_mnist --replace-network)",
             prefix, file);
}

void CheckTrainingCheckpoints(const std::string& prefix, int load_epoch, int num_epoch, const Symbol& symbol,
                              bool replace_network) {
  WEFT_CHECK(load_epoch >= 0, "resume epoch (load_epoch) {} is negative; 0 starts a fresh run", load_epoch);
  WEFT_CHECK(load_epoch == 0 || !prefix.empty(),
             "resuming from epoch {} (load_epoch) needs the checkpoint prefix it was saved under (model_prefix)",
             load_epoch);
  WEFT_CHECK(load_epoch < num_epoch,
             "resume epoch {} (load_epoch) is not below the number of epochs {} (num_epoch, resumed ones included): "
             "nothing to train; raise the number of epochs",
             load_epoch, num_epoch);
  if (prefix.empty() || load_epoch > 0) return;
  CheckCheckpointPrefix(prefix, symbol, replace_network);
  std::error_code ec;
  if (replace_network) std::filesystem::remove(CheckpointSymbolFile(prefix), ec);
  WEFT_CHECK(!ec, "cannot replace the network of checkpoint prefix '{}': removing '{}' failed: {}", prefix,
             CheckpointSymbolFile(prefix), ec.message());
}

void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params,
                    const SaveCheckpointOptions& options) {
  CheckCheckpointPrefix(prefix, symbol, options.replace_network);
  const std::string params = CheckpointParamsFile(prefix, epoch);
  // The params file is the epoch's commit point: gone while the others are rewritten.
  if (::unlink(params.c_str()) != 0 && errno != ENOENT)
    Fail("cannot replace checkpoint '{}': {}", params, std::strerror(errno));
  if (options.write_states) options.write_states(CheckpointStatesFile(prefix, epoch));
  const std::string json = symbol.ToJSON();
  detail::WriteFileAtomically(CheckpointSymbolFile(prefix),
                              {reinterpret_cast<const uint8_t*>(json.data()), json.size()}, "checkpoint symbol");
  std::map<std::string, NDArray> all;
  for (const auto& [k, v] : arg_params) all["arg:" + k] = v;
  for (const auto& [k, v] : aux_params) all["aux:" + k] = v;
  NDArray::Save(params, all);  // atomic itself
}

Checkpoint LoadCheckpoint(const std::string& prefix, int epoch) {
  Checkpoint c;
  c.symbol = Symbol::Load(CheckpointSymbolFile(prefix));
  const std::string file = CheckpointParamsFile(prefix, epoch);
  for (auto& [name, array] : NDArray::LoadToMap(file)) {
    if (name.rfind("arg:", 0) == 0) {
      c.arg_params[name.substr(4)] = array;
    } else if (name.rfind("aux:", 0) == 0) {
      c.aux_params[name.substr(4)] = array;
    } else {
      Fail("'{}': array '{}' has neither the 'arg:' nor the 'aux:' prefix of a checkpoint", file, name);
    }
  }
  return c;
}

void RequireAllParams(const std::vector<std::string>& arg_names, const std::vector<std::string>& aux_names,
                      const std::map<std::string, NDArray>& arg_params,
                      const std::map<std::string, NDArray>& aux_params, const std::string& source) {
  std::vector<std::string> missing;
  for (const std::string& n : arg_names)
    if (!arg_params.count(n)) missing.push_back("arg:" + n);
  for (const std::string& n : aux_names)
    if (!aux_params.count(n)) missing.push_back("aux:" + n);
  if (missing.empty()) return;
  const size_t shown = std::min<size_t>(missing.size(), 10);
  Fail(
      "{}: {} parameter(s) of the network are missing: {}{} (MXNet's allow_missing=False); the file belongs to "
      "another network or is incomplete",
      source, missing.size(), fmt::join(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
      shown < missing.size() ? ", ..." : "");
}

}  // namespace weft

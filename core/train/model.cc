// weft core — MXNet-compatible checkpoints (see weft/model.h).
#include "weft/model.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace weft {

std::string CheckpointSymbolFile(const std::string& prefix) { return prefix + "-symbol.json"; }
std::string CheckpointParamsFile(const std::string& prefix, int epoch) {
  return fmt::format("{}-{:04d}.params", prefix, epoch);
}
std::string CheckpointStatesFile(const std::string& prefix, int epoch) {
  return fmt::format("{}-{:04d}.states", prefix, epoch);
}

namespace {

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    WEFT_CHECK(out.good(), "cannot write '{}': the directory does not exist or is not writable", tmp);
    out << text;
    out.flush();
    WEFT_CHECK(out.good(), "writing '{}' failed (disk full?)", tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    Fail("cannot rename '{}' to '{}': {}", tmp, path, ec.message());
  }
}

}  // namespace

void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params) {
  WriteFileAtomically(CheckpointSymbolFile(prefix), symbol.ToJSON());
  std::map<std::string, NDArray> all;
  for (const auto& [k, v] : arg_params) all["arg:" + k] = v;
  for (const auto& [k, v] : aux_params) all["aux:" + k] = v;
  NDArray::Save(CheckpointParamsFile(prefix, epoch), all);  // atomic itself
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

}  // namespace weft

// weft core — MXNet-compatible checkpoints (python/mxnet/model.py save_checkpoint / load_checkpoint):
//   <prefix>-symbol.json   the symbol (Symbol::ToJSON)
//   <prefix>-%04d.params   arguments as "arg:<name>", aux states as "aux:<name>" (NDArray list format)
// Both are written atomically (temporary file + rename), so a crash never leaves a torn file.
#pragma once

#include <map>
#include <string>

#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft::train {

struct Checkpoint {
  Symbol symbol;
  std::map<std::string, NDArray> arg_params;
  std::map<std::string, NDArray> aux_params;
};

/// "<prefix>-symbol.json" and "<prefix>-%04d.params" for `epoch`.
std::string SymbolFile(const std::string& prefix);
std::string ParamsFile(const std::string& prefix, int epoch);

/// Writes both files. Throws weft::Error naming the file on I/O errors.
void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params);
/// Reads both files (written by weft or MXNet). Throws weft::Error naming the file when it is
/// missing or malformed, or when a params name has no "arg:"/"aux:" prefix.
Checkpoint LoadCheckpoint(const std::string& prefix, int epoch);

}  // namespace weft::train

// weft — MXNet-compatible checkpoints (python/mxnet/model.py save_checkpoint / load_checkpoint):
//   <prefix>-symbol.json   the symbol (Symbol::ToJSON)
//   <prefix>-%04d.params   arguments as "arg:<name>", aux states as "aux:<name>" (NDArray list format)
//   <prefix>-%04d.states   optional: the optimizer states (KVStore::SaveOptimizerStates; Module)
// Every file is written atomically (temporary file in the same directory + rename), so a crash
// never leaves a torn file, and a reader never sees a half-written one.
// Thread-safety: the functions share no state; two writers of one prefix race for the last rename.
#pragma once

#include <map>
#include <string>

#include "weft/export.h"
#include "weft/ndarray.h"
#include "weft/symbol.h"

namespace weft {

/// A loaded checkpoint: the symbol and its parameters by name (without the arg:/aux: prefix),
/// on cpu(0).
struct Checkpoint {
  Symbol symbol;
  std::map<std::string, NDArray> arg_params;
  std::map<std::string, NDArray> aux_params;
};

/// "<prefix>-symbol.json", "<prefix>-%04d.params" and "<prefix>-%04d.states" for `epoch`.
WEFT_API std::string CheckpointSymbolFile(const std::string& prefix);
WEFT_API std::string CheckpointParamsFile(const std::string& prefix, int epoch);
WEFT_API std::string CheckpointStatesFile(const std::string& prefix, int epoch);

/// Writes the symbol and params files. Throws weft::Error naming the file on I/O errors (the
/// earlier file of the prefix, if any, is then left unchanged).
WEFT_API void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                             const std::map<std::string, NDArray>& arg_params,
                             const std::map<std::string, NDArray>& aux_params);
/// Reads both files (written by weft or MXNet). Throws weft::Error naming the file when it is
/// missing or malformed, or when a params name has no "arg:"/"aux:" prefix.
WEFT_API Checkpoint LoadCheckpoint(const std::string& prefix, int epoch);

}  // namespace weft

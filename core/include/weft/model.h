// weft — MXNet-compatible checkpoints (python/mxnet/model.py save_checkpoint / load_checkpoint):
//   <prefix>-symbol.json   the symbol (Symbol::ToJSON)
//   <prefix>-%04d.params   arguments as "arg:<name>", aux states as "aux:<name>" (NDArray list format)
//   <prefix>-%04d.states   optional: the optimizer states (KVStore::SaveOptimizerStates; Module)
// Every file is written atomically (temporary file in the same directory + rename), so a crash
// never leaves a torn file, and a reader never sees a half-written one.
// Thread-safety: the functions share no state; two writers of one prefix race for the last rename.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

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

/// How SaveCheckpoint writes an epoch.
struct SaveCheckpointOptions {
  /// Called with CheckpointStatesFile(prefix, epoch) after the old params file is removed and
  /// before the new one is written (e.g. to call KVStore::SaveOptimizerStates); empty: no states.
  std::function<void(const std::string& states_file)> write_states;
  /// Replace a "<prefix>-symbol.json" that holds a different network (which makes the params
  /// files of that network unloadable). By default that is an error.
  bool replace_network = false;
};

/// Throws weft::Error, before any long work, when checkpoints of `symbol` cannot be saved under
/// `prefix`: its directory is not writable, or (unless `replace_network`) "<prefix>-symbol.json"
/// holds another network or cannot be read. The message names the file and the fix.
WEFT_API void CheckCheckpointPrefix(const std::string& prefix, const Symbol& symbol, bool replace_network = false);

/// Checks a training run's checkpoint settings before any long work (MXNet fit.py's
/// --model-prefix / --load-epoch), so that a mistake is reported before the data is read:
///  - resuming (load_epoch > 0) needs the prefix the run was saved under, and load_epoch below
///    num_epoch (the total, counting resumed epochs), or nothing is left to train;
///  - a fresh run (load_epoch 0) with a prefix checks it (CheckCheckpointPrefix) and, with
///    replace_network, removes "<prefix>-symbol.json" of another network so the first save
///    succeeds (that network's params files stay, and no longer load with the new symbol).
/// `prefix` "" = the run saves no checkpoints. Throws weft::Error naming the setting and the fix.
WEFT_API void CheckTrainingCheckpoints(const std::string& prefix, int load_epoch, int num_epoch, const Symbol& symbol,
                                       bool replace_network = false);

/// Saves epoch `epoch` in an order that makes the params file the epoch's commit point: checks
/// the prefix (CheckCheckpointPrefix), removes an old params file of that epoch, writes the states
/// (options.write_states), the symbol, then the params, each atomically. So a params file that
/// exists was written after its states and its symbol. Throws weft::Error naming the file on I/O
/// errors; no temporary file is left behind.
WEFT_API void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                             const std::map<std::string, NDArray>& arg_params,
                             const std::map<std::string, NDArray>& aux_params,
                             const SaveCheckpointOptions& options = {});
/// Reads the symbol and params files (written by weft or MXNet). Throws weft::Error naming the
/// file when it is missing or malformed, when a params name has no "arg:"/"aux:" prefix or
/// appears twice.
WEFT_API Checkpoint LoadCheckpoint(const std::string& prefix, int epoch);

/// Throws weft::Error listing (the first few of) the names in `arg_names` / `aux_names` that
/// `arg_params` / `aux_params` lack: MXNet's set_params(allow_missing=False). A parameter left out
/// of a file would otherwise keep its initial value silently. `source` names where the params
/// came from (a file) for the message.
WEFT_API void RequireAllParams(const std::vector<std::string>& arg_names, const std::vector<std::string>& aux_names,
                               const std::map<std::string, NDArray>& arg_params,
                               const std::map<std::string, NDArray>& aux_params, const std::string& source);

}  // namespace weft

// The optimizer MXNet's frontend sends to a distributed KVStore (pickled), as a weft Optimizer.
//
// MXNet's Python pickles its optimizer and sends it to the parameter servers
// (MXKVStoreSendCommmandToServers, command 0), which unpickle it and update with it. weft's
// distributed stores run weft's optimizers (on the servers of dist_async, on every worker for the
// Gloo dist_sync), so the worker reads the pickled object in its own Python and rebuilds it as the
// weft optimizer of the same type and settings; the store then ships that where it runs.
#pragma once

#include <memory>
#include <string>

#include "weft/optimizer.h"

namespace weft::mx {

/// Reads a pickled mx.optimizer.Optimizer (SGD, NAG, Adam, RMSProp, with a FactorScheduler or
/// MultiFactorScheduler or none) and returns weft's equivalent. Throws weft::Error naming the
/// optimizer type, or the setting, weft has no equivalent for.
std::unique_ptr<Optimizer> OptimizerFromPickle(const std::string& pickled);

}  // namespace weft::mx

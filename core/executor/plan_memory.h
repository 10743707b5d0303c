// Static memory planning for the executor graph (MXNet's PlanMemory pass, after the note
// "Optimizing Memory Consumption in Deep Learning"): simulate running the nodes in order with a
// reference count per value; an output may take over an input's block in place when the op allows
// it, the input has no other pending reader and the sizes are equal; otherwise it takes the
// best-fitting freed block within a size ratio, or a new block. Blocks are sized to the largest
// value they hold. Only EntryKind::kInternal entries are planned; user arrays (arguments, aux
// states, bound gradients), head gradients and zero constants are external. Graph outputs keep
// their block for ever (users read them after Backward). An entry that is a view of a later
// entry (EntryInfo::view_of: a Concat input written in place, concat_view.h) takes that entry's
// block, which is planned when its first view is written and lives until the last of them and
// of its own readers are done.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/exec_graph.h"

namespace weft::exec {

struct MemoryPlan {
  std::vector<int32_t> storage;       // per entry: block id, -1 = external / not planned
  std::vector<uint64_t> block_bytes;  // per block
  std::vector<int32_t> block_dev;     // per block: device index (ExecGraph::contexts)
  uint64_t total_bytes() const;
  uint64_t unshared_bytes = 0;  // sum of the planned entries' sizes (no sharing at all)
};

/// Plans `g`. `match_range` is MXNet's size ratio for reusing a freed block (default 16: a block
/// between bytes/16 and bytes*16 may be reused). Sets WEFT_REQ_WRITE_INPLACE on outputs that share
/// their input's block. `allow_sharing` false gives every planned entry its own block.
MemoryPlan PlanMemory(ExecGraph& g, bool allow_sharing = true, uint64_t match_range = 16);

}  // namespace weft::exec

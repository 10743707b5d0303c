// The executor's flat graph: the forward nodes of a bound symbol followed by the backward nodes
// that compute the requested gradients (MXNet's gradient pass, following core/operator/gradient.h),
// with every value ("entry") given a shape, a dtype and a kind that says where its memory comes from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "operator/op_def.h"
#include "symbol/graph.h"
#include "weft/base.h"
#include "weft/context.h"

namespace weft::exec {

inline constexpr uint32_t kNoEntry = std::numeric_limits<uint32_t>::max();

enum class EntryKind {
  kArg,       // argument variable: the user's array `index`
  kAux,       // aux-state variable: the user's array `index`
  kInternal,  // computed; memory from the plan
  kHeadGrad,  // gradient of output `index`, copied in by Backward
  kArgGrad,   // gradient of argument `index`, written straight into the user's grad array
  kZero,      // constant zeros (gradients of outputs nothing differentiates)
};

struct EntryInfo {
  EntryKind kind = EntryKind::kInternal;
  Shape shape;
  DType dtype = DType::kFloat32;
  uint32_t index = 0;            // see EntryKind
  uint32_t producer = kNoEntry;  // exec node writing it (kNoEntry for variables/head grads/zeros)
  uint32_t out_index = 0;        // output slot on the producer
  std::string label;             // "fc(0)" style reference for DebugStr
  int32_t dev = 0;               // index into ExecGraph::contexts: where the value lives
  // A channel slice of entry `view_of`'s memory from channel `view_channel` on, images at that
  // entry's image stride (concat_view.h: a Concat input written in place; view_of has memory of
  // its own); kNoEntry: its own memory.
  uint32_t view_of = kNoEntry;
  int64_t view_channel = 0;
  // Bytes the value occupies when more than its shape's: a blocked activation whose last block
  // of channels is padded (fuse_conv.h, BlockedBytes); 0 otherwise.
  uint64_t padded_bytes = 0;
  uint64_t bytes() const {
    return std::max<uint64_t>(static_cast<uint64_t>(shape.Size()) * DTypeSize(dtype), padded_bytes);
  }
};

struct ExecNode {
  std::string op;                    // registered op name (backward ops: "_backward_X")
  std::string name;                  // "fc", "fc_backward", "sum_grad", "fc_weight_copy_grad"
  const graph::Node* fwd = nullptr;  // the forward node (backward: the node differentiated)
  AttrMap params;                    // normalised attributes given to the kernel
  uint32_t resources = 0;            // kResource* bits
  bool backward = false;
  bool is_copy = false;                      // a device-to-device copy (op "_CrossDeviceCopy"), no kernel
  int32_t dev = 0;                           // index into ExecGraph::contexts: where it runs
  std::vector<uint32_t> inputs;              // entry ids (op inputs only)
  std::vector<uint32_t> outputs;             // entry ids; kNoEntry = not wanted (req null)
  std::vector<uint32_t> aux;                 // entry ids
  std::vector<int32_t> req;                  // WEFT_REQ_* per output
  std::vector<uint32_t> out_like;            // per output: an entry with its shape and dtype
  std::vector<std::pair<int, int>> inplace;  // (input, output) pairs the op allows to share
};

struct ExecGraph {
  std::vector<Context> contexts;  // [0] = the executor's context, then group contexts
  graph::IndexedGraph fwd;        // forward graph; entry ids [0, fwd.num_entries()) are its entries
  std::vector<EntryInfo> entries;
  std::vector<ExecNode> nodes;  // forward op nodes (topological), then backward nodes
  size_t num_forward = 0;
  std::vector<uint32_t> heads;           // entry id per symbol output
  std::vector<uint32_t> head_grads;      // per output: kHeadGrad entry, or kNoEntry (loss / not needed)
  std::vector<uint32_t> arg_entries;     // per argument: its variable's entry id
  std::vector<uint32_t> aux_entries;     // per aux state
  std::vector<uint32_t> zero_fill_args;  // arguments with req write whose gradient is identically 0
  std::vector<std::string> arg_names, aux_names, output_names;
};

/// Where things live (model parallelism): devices as indices into `contexts`.
struct Placement {
  std::vector<Context> contexts;  // [0] = default
  std::vector<int32_t> node_dev;  // per forward node id (variables: ignored)
  std::vector<int32_t> arg_dev;   // per argument (its array's device)
  std::vector<int32_t> aux_dev;   // per aux state
};

/// Builds the executor graph of the forward graph `g` whose entries have the (fully known) shapes
/// and dtypes `entry_shapes` / `entry_types` (per forward entry id, from inference), with gradient
/// requests `grad_reqs` (WEFT_REQ_* per argument, ListArguments order). A node that reads a value
/// living on another device reads a copy made by an inserted _CrossDeviceCopy node (gradients flow
/// back through such copies). Throws weft::Error naming the node when an op's backward does not
/// fit its definition, or when an aux state lives on another device than its op.
ExecGraph BuildExecGraph(graph::IndexedGraph g, const std::vector<ShapeSlot>& entry_shapes,
                         const std::vector<int>& entry_types, const std::vector<int32_t>& grad_reqs,
                         const Placement& placement);

}  // namespace weft::exec

// What an Executor holds: the graph, the memory plan, the arrays of every entry and a prepared
// kernel per node.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "executor/exec_graph.h"
#include "executor/plan_memory.h"
#include "operator/kernel_runner.h"
#include "weft/executor.h"

namespace weft::exec {

struct NodeRun {
  std::shared_ptr<KernelRunner> runner;  // shared with pushed bulk segments
  std::vector<NDArray> inputs, outputs, aux;
};

/// Bulk execution settings (MXNet's MXNET_EXEC_BULK_EXEC_*), read when the executor is bound:
///   WEFT_EXEC_BULK_EXEC_TRAIN (0/1, default 1): training passes run consecutive nodes of one
///     device as one engine operation, at most MAX_NODE_TRAIN_FWD (forward) / _BWD (backward)
///     nodes each;
///   WEFT_EXEC_BULK_EXEC_INFERENCE (0/1, default 1): an inference forward pass runs each run of
///     consecutive nodes on one device as one operation, however long;
///   WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD / _BWD (>= 1, default WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN,
///     default 15).
/// A segment also ends at a cross-device copy. With a monitor callback nodes run one by one.
struct BulkConfig {
  bool train = true, inference = true;
  int max_node_train_fwd = 15, max_node_train_bwd = 15;
  static BulkConfig FromEnv();
};

/// Nodes pushed as one engine operation: copies of their runs (runner and arrays, so pushed work
/// outlives the executor safely) and requests, and the union of their variables.
struct Segment {
  std::vector<NodeRun> nodes;
  std::vector<std::vector<int32_t>> reqs;
  std::vector<VarHandle> reads, writes;
  Context ctx;
  std::string name;  // "bulk(first..last)" for traces
};

/// The bound graph's variables and what inference makes of them (Init's first phases).
struct BoundGraph {
  graph::IndexedGraph ig;
  std::vector<std::string> arg_names, aux_names;
  std::vector<ShapeSlot> shapes;
  std::vector<int> types;
};

struct ExecState {
  Symbol symbol;
  Symbol optimized;  // the graph run: `symbol`, or its inference rewrite (pool_first.h, fuse_conv.h)
  Context ctx;
  std::map<std::string, Context> group2ctx;
  ExecGraph graph;
  MemoryPlan plan;
  std::vector<OpReqType> grad_reqs;
  std::vector<NDArray> blocks;   // one per planned block
  uint64_t allocated_bytes = 0;  // bytes of the blocks allocated here (not taken from a shared executor)
  std::vector<NDArray> entries;  // per entry id
  std::vector<NodeRun> runs;     // per exec node
  MonitorCallback monitor;
  bool monitor_all = false;
  BulkConfig bulk;

  /// Infers, builds the graph, plans and allocates, prepares every node (see Executor's ctor).
  /// With `shared`, planned blocks are taken from its blocks where one on the same device is
  /// large enough (MXNet's shared memory pool for bucketing), else allocated.
  void Init(const Symbol& sym, const Context& context, const std::vector<NDArray>& args,
            const std::vector<NDArray>& grads, const std::vector<OpReqType>& reqs, const std::vector<NDArray>& aux,
            const std::map<std::string, Context>& group2ctx, const ExecState* shared = nullptr);
  /// Pushes nodes [begin, end): bulked into segments as `bulk` says, else one by one.
  void RunNodes(size_t begin, size_t end, bool is_train) const;
  /// Makes `array` argument `arg`'s value in every prepared node and cached segment (the caller
  /// checked shape, dtype and context). Returns false, changing nothing, when the argument's
  /// memory is also reached another way (a view, an output, an in-place write) or `array`'s chunk
  /// is already used by this executor: then only a copy keeps the graph's meaning.
  bool RebindArg(uint32_t arg, const NDArray& array);
  /// Makes `array` the memory of entry `eid` (any kind: an argument, an aux state, a graph output,
  /// a head or argument gradient) in every prepared node and cached segment, for a CachedOp call's
  /// arrays without copies. The caller checked shape, dtype and context. Returns false, changing
  /// nothing, when the entry's memory is also reached another way (another entry or a view shares
  /// it: in-place planning, a reshape of an argument) or `array`'s memory is already used by this
  /// state; then only a copy keeps the graph's meaning.
  bool RebindEntry(uint32_t eid, const NDArray& array);
  std::string DebugStr() const;

 private:
  /// Pushes nodes [begin, end) one operation per node (with the monitor's reports).
  void RunNodesOneByOne(size_t begin, size_t end, bool is_train) const;
  /// The plan for [begin, end) with segments of at most `max_nodes`: per item, a segment, or
  /// null for a node that runs alone (at `single`'s index). Built once, then cached.
  struct Plan {
    std::vector<std::shared_ptr<const Segment>> segments;  // null entry: run node singles[i] alone
    std::vector<size_t> singles;
  };
  const Plan& GetPlan(size_t begin, size_t end, size_t max_nodes) const;
  std::shared_ptr<const Segment> MakeSegment(size_t begin, size_t end) const;
  /// Replaces `b` by its inference rewrite when the fusion is on and the context's plugin has the
  /// fused kernels: average poolings moved before 1x1 convolutions (pool_first.h), then
  /// convolution chains fused (fuse_conv.h); Init calls it for binds without gradients.
  void FuseForInference(BoundGraph& b, const std::vector<NDArray>& args, const std::vector<NDArray>& aux);
  /// Makes `heads`, a rewrite of b's graph with the same variables, the bound graph: indexed, the
  /// variables in b's order, shapes and dtypes inferred from the bound arrays.
  void AdoptRewrite(BoundGraph& b, const std::vector<graph::Entry>& heads, const std::vector<NDArray>& args,
                    const std::vector<NDArray>& aux);
  /// Fills `blocks` for the plan: from `shared`'s blocks where they fit, the rest allocated.
  void AllocateBlocks(const ExecState* shared);
  /// Fills `entries`: the bound arrays for variables and gradients, planned block views (or new
  /// arrays) for the rest (Init's phase after AllocateBlocks).
  void BindEntries(const std::vector<NDArray>& args, const std::vector<NDArray>& grads,
                   const std::vector<NDArray>& aux);
  /// Fills `runs`: each node's arrays and its kernel, made once here (Init's last phase).
  void PrepareKernels();
  /// What the monitor reports for entry `eid` (array `a`): `a`, or for a view (concat_view.h) a
  /// contiguous copy of its images.
  NDArray Monitored(uint32_t eid, const NDArray& a) const;
  /// Replaces every whole-entry use of `old` (the same view) by `array` in runs and cached plans.
  void Redirect(const NDArray& old, const NDArray& array);

  mutable std::mutex plans_mu_;
  mutable std::map<std::tuple<size_t, size_t, size_t>, std::unique_ptr<Plan>> plans_;
};

}  // namespace weft::exec

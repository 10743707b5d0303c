// What an Executor holds: the graph, the memory plan, the arrays of every entry and a prepared
// kernel per node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/exec_graph.h"
#include "executor/plan_memory.h"
#include "operator/kernel_runner.h"
#include "weft/executor.h"

namespace weft::exec {

struct NodeRun {
  std::unique_ptr<KernelRunner> runner;
  std::vector<NDArray> inputs, outputs, aux;
};

struct ExecState {
  Symbol symbol;
  Context ctx;
  std::map<std::string, Context> group2ctx;
  ExecGraph graph;
  MemoryPlan plan;
  std::vector<OpReqType> grad_reqs;
  std::vector<NDArray> blocks;   // one per planned block
  std::vector<NDArray> entries;  // per entry id
  std::vector<NodeRun> runs;     // per exec node
  MonitorCallback monitor;
  bool monitor_all = false;

  /// Infers, builds the graph, plans and allocates, prepares every node (see Executor's ctor).
  void Init(const Symbol& sym, const Context& context, const std::vector<NDArray>& args,
            const std::vector<NDArray>& grads, const std::vector<OpReqType>& reqs, const std::vector<NDArray>& aux,
            const std::map<std::string, Context>& group2ctx);
  /// Pushes nodes [begin, end).
  void RunNodes(size_t begin, size_t end, bool is_train) const;
  std::string DebugStr() const;
};

}  // namespace weft::exec

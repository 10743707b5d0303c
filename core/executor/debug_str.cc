// Executor::DebugStr in MXNet 1.9's layout (GraphExecutor::Print).
#include <map>
#include <sstream>

#include "executor/exec_state.h"

namespace weft::exec {
namespace {

void PrintNode(std::ostringstream& os, const ExecGraph& g, const ExecNode& x,
               const std::vector<graph::IndexedGraph::EntryRef>* fwd_inputs) {
  os << "--------------------\n";
  os << "Op:" << x.op << ", Name=" << x.name << "\n";
  os << "Inputs:\n";
  for (size_t j = 0; j < x.inputs.size(); ++j) {
    std::string ref = g.entries[x.inputs[j]].label;
    const EntryKind k = g.entries[x.inputs[j]].kind;
    if (k == EntryKind::kArg || k == EntryKind::kAux) {
      const uint32_t v = fwd_inputs != nullptr && j < fwd_inputs->size() ? (*fwd_inputs)[j].version : 0;
      ref += " version=" + std::to_string(v);
    }
    os << "\targ[" << j << "]=" << ref << "\n";
  }
  std::map<std::string, std::string> attrs;
  if (x.fwd != nullptr) {
    attrs = x.fwd->attrs;
  } else {
    attrs = x.params.values();
  }
  if (!attrs.empty()) {
    os << "Attrs:\n";
    for (const auto& [k, v] : attrs) os << "\t" << k << "=" << v << "\n";
  }
  // Concat inputs written in place (concat_view.h): where the output lies.
  for (uint32_t o : x.outputs)
    if (o != kNoEntry && g.entries[o].view_of != kNoEntry)
      os << "Output in place:\n\t" << g.entries[o].label << " = " << g.entries[g.entries[o].view_of].label
         << " channels from " << g.entries[o].view_channel << "\n";
  if (x.backward && x.fwd != nullptr) os << "Control deps:\n\tcdep[0]=" << x.fwd->name << "\n";
}

}  // namespace

std::string ExecState::DebugStr() const {
  const ExecGraph& g = graph;
  std::ostringstream os;
  os << "Symbol Outputs:\n";
  size_t n = 0;
  for (uint32_t h : g.heads) os << "\toutput[" << n++ << "]=" << g.entries[h].label << "\n";
  std::map<uint32_t, uint32_t> grad_of_arg;  // argument index -> its gradient entry
  for (size_t e = 0; e < g.entries.size(); ++e)
    if (g.entries[e].kind == EntryKind::kArgGrad) grad_of_arg[g.entries[e].index] = static_cast<uint32_t>(e);
  for (const auto& [arg, e] : grad_of_arg) os << "\toutput[" << n++ << "]=" << g.entries[e].label << "\n";
  // Forward: variables and op nodes in topological order.
  size_t next_op = 0;
  for (uint32_t nid = 0; nid < g.fwd.nodes.size(); ++nid) {
    const graph::Node& node = *g.fwd.nodes[nid].node;
    if (node.is_variable()) {
      os << "Variable:" << node.name << "\n";
      continue;
    }
    while (g.nodes[next_op].is_copy) PrintNode(os, g, g.nodes[next_op++], nullptr);
    PrintNode(os, g, g.nodes[next_op++], &g.fwd.nodes[nid].inputs);
  }
  for (size_t i = 0; i < g.head_grads.size(); ++i)
    if (g.head_grads[i] != kNoEntry) os << "Variable:_head_grad_" << i << "\n";
  for (size_t k = g.num_forward; k < g.nodes.size(); ++k) PrintNode(os, g, g.nodes[k], nullptr);
  size_t temp = 0;
  for (const ExecNode& x : g.nodes) temp += (x.resources & kResourceTempSpace) ? 1 : 0;
  os << "Total " << (plan.total_bytes() >> 20) << " MB allocated\n";
  os << "Total " << temp << " TempSpace resource requested\n";
  return os.str();
}

}  // namespace weft::exec

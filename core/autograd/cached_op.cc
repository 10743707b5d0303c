// CachedOp (weft/cached_op.h): a symbol run as one imperative op on the executor's ExecState, one
// planned buffer set ("plan") per input signature and concurrent recorded call.
#include "weft/cached_op.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>

#include "autograd/tape.h"
#include "executor/exec_state.h"
#include "symbol/graph.h"
#include "weft/autograd.h"
#include "weft/imperative.h"

namespace weft {

using autograd_detail::InGraph;

namespace {

bool ParseBoolFlag(const std::string& key, const std::string& v) {
  if (v == "True" || v == "true" || v == "1") return true;
  if (v == "False" || v == "false" || v == "0") return false;
  Fail("CachedOp: flag {}='{}' is not a boolean (True, False, 1, 0)", key, v);
}

int ParseIntFlag(const std::string& key, const std::string& v, int lo) {
  try {
    size_t used = 0;
    const long x = std::stol(v, &used);
    if (used == v.size() && x >= lo && x <= 1000000) return static_cast<int>(x);
  } catch (const std::exception&) {
  }
  Fail("CachedOp: flag {}='{}' is not an integer from {} to 1000000", key, v, lo);
}

std::vector<int> ParseListFlag(const std::string& key, const std::string& v) {
  std::vector<int> out;
  std::string num;
  for (char c : v + ",") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      num += c;
    } else if (c == ',' || c == ']' || c == ')' || c == ' ' || c == '[' || c == '(') {
      if (!num.empty()) out.push_back(ParseIntFlag(key, num, 0));
      num.clear();
    } else {
      Fail("CachedOp: flag {}='{}' is not a list of input positions such as [0, 2]", key, v);
    }
  }
  return out;
}

CachedOp::Flags ParseFlags(const std::vector<std::pair<std::string, std::string>>& given) {
  CachedOp::Flags f;
  for (const auto& [key, v] : given) {
    if (key == "static_alloc") {
      f.static_alloc = ParseBoolFlag(key, v);
    } else if (key == "static_shape") {
      f.static_shape = ParseBoolFlag(key, v);
    } else if (key == "inline_limit") {
      f.inline_limit = ParseIntFlag(key, v, 0);
    } else if (key == "forward_bulk_size") {
      f.forward_bulk_size = v == "None" ? 0 : ParseIntFlag(key, v, 1);
    } else if (key == "backward_bulk_size") {
      f.backward_bulk_size = v == "None" ? 0 : ParseIntFlag(key, v, 1);
    } else if (key == "data_indices") {
      f.data_indices = ParseListFlag(key, v);
    } else if (key == "param_indices") {
      f.param_indices = ParseListFlag(key, v);
    } else {
      Fail(
          "CachedOp: unknown flag '{}'; flags are static_alloc, static_shape, inline_limit, forward_bulk_size, "
          "backward_bulk_size, data_indices, param_indices",
          key);
    }
  }
  return f;
}

// One planned buffer set: an ExecState bound to arrays it owns, into which each call binds its own.
struct Plan {
  std::string key;
  std::unique_ptr<exec::ExecState> state;
  std::vector<NDArray> owned_args, owned_aux, owned_head_grads, owned_grads;
  std::vector<uint32_t> grad_entry;        // per argument: its gradient entry, or kNoEntry
  std::vector<bool> arg_read_by_backward;  // per argument
  std::vector<bool> out_read_by_backward;  // per output
  bool busy = false;
};

}  // namespace

struct WEFT_HIDDEN CachedOp::Impl : std::enable_shared_from_this<CachedOp::Impl> {
  Symbol symbol;
  Flags flags;
  graph::IndexedGraph ig;
  std::vector<std::string> input_names;
  std::vector<int> input_arg, input_aux;  // per input: argument / aux position, or -1
  size_t num_ops = 0;
  std::function<void(const std::string&, const std::string&, const NDArray&)> hook;
  bool hook_all = false;
  std::map<std::string, std::string> op_of_report;  // monitor name -> op name

  mutable std::mutex mu;
  std::vector<std::shared_ptr<Plan>> plans;
  std::shared_ptr<Plan> last;

  void Call(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs);
  void CallInline(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs);
  std::shared_ptr<Plan> Acquire(const std::vector<NDArray>& inputs, const std::vector<bool>& need);
  std::shared_ptr<Plan> MakePlan(const std::string& key, const std::vector<NDArray>& inputs,
                                 const std::vector<bool>& need);
  void Release(const std::shared_ptr<Plan>& plan);
  void InstallMonitor(exec::ExecState& state);
  std::vector<NDArray> Backward(Plan& plan, const std::vector<NDArray>& og, const std::vector<bool>& need,
                                bool is_train);
};

namespace {

// A recorded call: holds its plan (and so its forward values) until backward or the tape drops it.
class CachedOpCall final : public autograd_detail::GraphCall {
 public:
  CachedOpCall(std::shared_ptr<CachedOp::Impl> op, std::shared_ptr<Plan> plan)
      : op_(std::move(op)), plan_(std::move(plan)) {}
  ~CachedOpCall() override { Release(); }
  std::vector<NDArray> Backward(const std::vector<NDArray>& og, const std::vector<bool>& need, bool is_train) override {
    WEFT_CHECK(plan_ != nullptr, "Backward: {}: its values were freed by an earlier backward without retain_graph",
               Describe());
    return op_->Backward(*plan_, og, need, is_train);
  }
  void Release() override {
    if (plan_) op_->Release(plan_);
    plan_.reset();
  }
  Symbol GetGraph() const override { return op_->symbol; }
  std::string Describe() const override { return fmt::format("CachedOp of {} ops", op_->num_ops); }

 private:
  std::shared_ptr<CachedOp::Impl> op_;
  std::shared_ptr<Plan> plan_;
};

std::string SignatureKey(const std::vector<NDArray>& inputs, const std::vector<bool>& need) {
  std::string key = inputs[0].GetContext().ToString();
  for (size_t i = 0; i < inputs.size(); ++i)
    key += fmt::format("|{}{}{}", inputs[i].GetShape(), static_cast<int>(inputs[i].GetDType()), need[i] ? "g" : "");
  return key;
}

// Binds `array` as entry `eid`, or copies it into `owned` (bound instead) when the graph reaches the
// entry's memory another way. Returns false when it copied.
bool BindOrCopyIn(exec::ExecState& s, uint32_t eid, const NDArray& array, const NDArray& owned) {
  if (s.RebindEntry(eid, array)) return true;
  WEFT_CHECK(s.RebindEntry(eid, owned), "CachedOp: cannot bind an input (internal error)");
  NDArray::CopyFromTo(array, owned);
  return false;
}

}  // namespace

void CachedOp::Impl::InstallMonitor(exec::ExecState& state) {
  if (!hook) {
    state.monitor = nullptr;
    return;
  }
  auto h = hook;
  auto ops = op_of_report;
  state.monitor = [h, ops](const std::string& name, const NDArray& a) {
    auto it = ops.find(name);
    h(name, it == ops.end() ? std::string() : it->second, a);
  };
  state.monitor_all = hook_all;
}

std::shared_ptr<Plan> CachedOp::Impl::MakePlan(const std::string& key, const std::vector<NDArray>& inputs,
                                               const std::vector<bool>& need) {
  auto plan = std::make_shared<Plan>();
  plan->key = key;
  const Context ctx = inputs[0].GetContext();
  const size_t num_args = ig.arg_nodes.size(), num_aux = ig.aux_nodes.size();
  plan->owned_args.resize(num_args);
  plan->owned_aux.resize(num_aux);
  std::vector<NDArray> grads(num_args);
  std::vector<OpReqType> reqs(num_args, kNullOp);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArray like(inputs[i].GetShape(), ctx, true, inputs[i].GetDType());
    if (input_arg[i] >= 0) {
      const auto a = static_cast<size_t>(input_arg[i]);
      plan->owned_args[a] = like;
      if (need[i]) {
        grads[a] = NDArray(inputs[i].GetShape(), ctx, true, inputs[i].GetDType());
        reqs[a] = kWriteTo;
      }
    } else {
      plan->owned_aux[static_cast<size_t>(input_aux[i])] = like;
    }
  }
  plan->state = std::make_unique<exec::ExecState>();
  exec::ExecState& s = *plan->state;
  try {
    s.Init(symbol, ctx, plan->owned_args, grads, reqs, plan->owned_aux, {});
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (const Error& e) {
    Fail("CachedOp: {}", e.what());
  }
  if (flags.forward_bulk_size > 0) s.bulk.max_node_train_fwd = flags.forward_bulk_size;
  if (flags.backward_bulk_size > 0) s.bulk.max_node_train_bwd = flags.backward_bulk_size;
  InstallMonitor(s);
  plan->owned_grads = grads;
  const exec::ExecGraph& g = s.graph;
  for (uint32_t hg : g.head_grads) plan->owned_head_grads.push_back(hg == exec::kNoEntry ? NDArray() : s.entries[hg]);
  plan->grad_entry.assign(num_args, exec::kNoEntry);
  for (uint32_t e = 0; e < g.entries.size(); ++e)
    if (g.entries[e].kind == exec::EntryKind::kArgGrad) plan->grad_entry[g.entries[e].index] = e;
  plan->arg_read_by_backward.assign(num_args, false);
  plan->out_read_by_backward.assign(g.heads.size(), false);
  for (size_t k = g.num_forward; k < g.nodes.size(); ++k)
    for (uint32_t in : g.nodes[k].inputs) {
      for (size_t a = 0; a < num_args; ++a)
        plan->arg_read_by_backward[a] = plan->arg_read_by_backward[a] || in == g.arg_entries[a];
      for (size_t o = 0; o < g.heads.size(); ++o)
        plan->out_read_by_backward[o] = plan->out_read_by_backward[o] || in == g.heads[o];
    }
  return plan;
}

std::shared_ptr<Plan> CachedOp::Impl::Acquire(const std::vector<NDArray>& inputs, const std::vector<bool>& need) {
  const std::string key = SignatureKey(inputs, need);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& p : plans)
      if (!p->busy && p->key == key) {
        p->busy = true;
        last = p;
        return p;
      }
  }
  std::shared_ptr<Plan> plan = MakePlan(key, inputs, need);  // outside the lock: planning takes a while
  std::lock_guard<std::mutex> lock(mu);
  plan->busy = true;
  plans.push_back(plan);
  last = plan;
  return plan;
}

void CachedOp::Impl::Release(const std::shared_ptr<Plan>& plan) {
  std::lock_guard<std::mutex> lock(mu);
  plan->busy = false;
  if (flags.static_alloc) return;
  // Without static_alloc one idle set per signature is enough.
  const auto idle =
      std::count_if(plans.begin(), plans.end(), [&](const auto& p) { return !p->busy && p->key == plan->key; });
  if (idle > 1) plans.erase(std::find(plans.begin(), plans.end(), plan));
}

void CachedOp::Impl::CallInline(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs) {
  std::vector<NDArray> values(ig.num_entries());
  for (size_t i = 0; i < ig.var_nodes.size(); ++i) values[ig.entry_id(ig.var_nodes[i], 0)] = inputs[i];
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const graph::Node& n = *ig.nodes[nid].node;
    if (n.is_variable()) continue;
    ImperativeCall call;
    call.op = n.op->name;
    call.params = n.params.values();
    for (const auto& in : ig.nodes[nid].inputs) call.inputs.push_back(values[ig.entry_id(in)]);
    std::vector<NDArray> outs(n.num_outputs);
    weft::Invoke(call, &outs);
    for (uint32_t k = 0; k < n.num_outputs; ++k) values[ig.entry_id(nid, k)] = outs[k];
  }
  const bool given = !outputs->empty();
  for (size_t o = 0; o < ig.outputs.size(); ++o) {
    const NDArray& v = values[ig.entry_id(ig.outputs[o])];
    if (given) {
      NDArray::CopyFromTo(v, (*outputs)[o]);
    } else {
      outputs->push_back(v);
    }
  }
}

void CachedOp::Impl::Call(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs) {
  WEFT_CHECK(outputs != nullptr, "CachedOp::Invoke: outputs is null");
  WEFT_CHECK(inputs.size() == input_names.size(), "CachedOp::Invoke: {} inputs given, the graph takes {} ({})",
             inputs.size(), input_names.size(), fmt::join(input_names, ", "));
  for (size_t i = 0; i < inputs.size(); ++i) {
    WEFT_CHECK(!inputs[i].is_none(), "CachedOp::Invoke: input {} ('{}') is a none array", i, input_names[i]);
    WEFT_CHECK(inputs[i].GetContext() == inputs[0].GetContext(),
               "CachedOp::Invoke: input '{}' is on {} but '{}' is on {}; every input must be on one device",
               input_names[i], inputs[i].GetContext(), input_names[0], inputs[0].GetContext());
  }
  const size_t num_out = ig.outputs.size();
  WEFT_CHECK(outputs->empty() || outputs->size() == num_out,
             "CachedOp::Invoke: {} output arrays given, the graph has {}", outputs->size(), num_out);
  const bool recording = autograd::IsRecording(), is_train = autograd::IsTraining();
  std::vector<bool> need(inputs.size(), false);
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    need[i] = recording && input_arg[i] >= 0 && InGraph(inputs[i]);
    any = any || need[i];
  }
  if (any) {
    for (const NDArray& o : *outputs)
      WEFT_CHECK(!InGraph(o),
                 "CachedOp::Invoke: an output array is part of a recorded graph ({}); while recording "
                 "write into a new array",
                 o.autograd_node()->Describe());
  }
  if (any && num_ops <= static_cast<size_t>(flags.inline_limit)) {
    CallInline(inputs, outputs);
    return;
  }
  std::shared_ptr<Plan> plan = Acquire(inputs, need);
  exec::ExecState& s = *plan->state;
  const exec::ExecGraph& g = s.graph;
  std::vector<std::pair<NDArray, NDArray>> copy_back;  // (owned aux, caller's aux)
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (input_arg[i] >= 0) {
        const auto a = static_cast<uint32_t>(input_arg[i]);
        if (!s.RebindArg(a, inputs[i])) {
          WEFT_CHECK(s.RebindArg(a, plan->owned_args[a]), "CachedOp: cannot bind input '{}' (internal error)",
                     input_names[i]);
          NDArray::CopyFromTo(inputs[i], plan->owned_args[a]);
        }
      } else {
        const auto x = static_cast<size_t>(input_aux[i]);
        if (!BindOrCopyIn(s, g.aux_entries[x], inputs[i], plan->owned_aux[x]))
          copy_back.emplace_back(plan->owned_aux[x], inputs[i]);
      }
    }
    // Outputs: the caller's or new arrays, bound in place of the planned ones where possible.
    std::vector<NDArray> out = *outputs;
    std::vector<std::pair<NDArray, NDArray>> copy_out;  // (planned value, output)
    for (size_t o = 0; o < num_out; ++o) {
      const exec::EntryInfo& e = g.entries[g.heads[o]];
      if (out.size() <= o) out.emplace_back(e.shape, inputs[0].GetContext(), true, e.dtype);
      WEFT_CHECK(out[o].GetShape() == e.shape && out[o].GetDType() == e.dtype,
                 "CachedOp::Invoke: output {} array is {}, the graph makes {} {}", o,
                 autograd_detail::DescribeArray(out[o]), e.shape, DTypeName(e.dtype));
      const bool first = std::find(g.heads.begin(), g.heads.begin() + static_cast<std::ptrdiff_t>(o), g.heads[o]) ==
                         g.heads.begin() + static_cast<std::ptrdiff_t>(o);
      if (e.kind == exec::EntryKind::kInternal && first && s.RebindEntry(g.heads[o], out[o])) continue;
      copy_out.emplace_back(s.entries[g.heads[o]], out[o]);
    }
    s.RunNodes(0, g.num_forward, is_train);
    for (const auto& [from, to] : copy_out) NDArray::CopyFromTo(from, to);
    for (const auto& [from, to] : copy_back) NDArray::CopyFromTo(from, to);
    if (any) {
      std::vector<bool> keep_in(inputs.size(), false);
      for (size_t i = 0; i < inputs.size(); ++i)
        keep_in[i] = input_arg[i] >= 0 && plan->arg_read_by_backward[static_cast<size_t>(input_arg[i])];
      autograd_detail::NodePtr node = autograd_detail::RecordNode(autograd_detail::NodeKind::kGraph, nullptr, AttrMap(),
                                                                  inputs, static_cast<uint32_t>(inputs.size()), out,
                                                                  is_train, keep_in, plan->out_read_by_backward);
      node->graph = std::make_shared<CachedOpCall>(shared_from_this(), plan);
    } else {
      Release(plan);
    }
    *outputs = std::move(out);
  } catch (...) {
    Release(plan);
    throw;
  }
}

std::vector<NDArray> CachedOp::Impl::Backward(Plan& plan, const std::vector<NDArray>& og, const std::vector<bool>& need,
                                              bool is_train) {
  exec::ExecState& s = *plan.state;
  const exec::ExecGraph& g = s.graph;
  for (size_t o = 0; o < g.heads.size(); ++o) {
    const uint32_t hg = g.head_grads[o];
    if (hg == exec::kNoEntry) continue;
    NDArray grad = o < og.size() ? og[o] : NDArray();
    if (grad.is_none()) {
      grad = NDArray(g.entries[hg].shape, s.entries[hg].GetContext(), false, g.entries[hg].dtype);
      grad = 0.0f;
    }
    BindOrCopyIn(s, hg, grad, plan.owned_head_grads[o]);
  }
  std::vector<NDArray> result(input_arg.size());
  std::vector<std::pair<NDArray, NDArray>> copy_out;
  for (size_t i = 0; i < input_arg.size(); ++i) {
    if (input_arg[i] < 0) continue;
    const auto a = static_cast<size_t>(input_arg[i]);
    if (plan.owned_grads[a].is_none()) continue;  // not requested when planned
    const exec::EntryInfo& info = g.entries[g.arg_entries[a]];
    NDArray fresh(info.shape, s.entries[g.arg_entries[a]].GetContext(), true, info.dtype);
    const uint32_t ge = plan.grad_entry[a];
    if (ge == exec::kNoEntry) {
      fresh = 0.0f;  // nothing flows to it
    } else if (!s.RebindEntry(ge, fresh)) {
      WEFT_CHECK(s.RebindEntry(ge, plan.owned_grads[a]), "CachedOp: cannot bind a gradient (internal error)");
      copy_out.emplace_back(plan.owned_grads[a], fresh);
    }
    if (i < need.size() && need[i]) result[i] = fresh;
  }
  s.RunNodes(g.num_forward, g.nodes.size(), is_train);
  for (const auto& [from, to] : copy_out) NDArray::CopyFromTo(from, to);
  return result;
}

CachedOp::CachedOp(const Symbol& symbol, const std::vector<std::pair<std::string, std::string>>& flags)
    : impl_(std::make_shared<Impl>()) {
  WEFT_CHECK(!symbol.IsEmpty(), "CachedOp: the symbol is empty");
  Impl& m = *impl_;
  m.symbol = symbol;
  m.flags = ParseFlags(flags);
  m.ig = graph::Index(graph::ExpandSubgraphs(symbol.outputs()));
  for (uint32_t nid : m.ig.var_nodes) {
    m.input_names.push_back(m.ig.nodes[nid].node->name);
    auto a = std::find(m.ig.arg_nodes.begin(), m.ig.arg_nodes.end(), nid);
    auto x = std::find(m.ig.aux_nodes.begin(), m.ig.aux_nodes.end(), nid);
    m.input_arg.push_back(a == m.ig.arg_nodes.end() ? -1 : static_cast<int>(a - m.ig.arg_nodes.begin()));
    m.input_aux.push_back(x == m.ig.aux_nodes.end() ? -1 : static_cast<int>(x - m.ig.aux_nodes.begin()));
  }
  const int n = static_cast<int>(m.input_names.size());
  for (const auto* list : {&m.flags.data_indices, &m.flags.param_indices})
    for (int i : *list)
      WEFT_CHECK(i < n, "CachedOp: data_indices / param_indices name input {}, but the graph has {} inputs ({})", i, n,
                 fmt::join(m.input_names, ", "));
  for (int i : m.flags.data_indices)
    WEFT_CHECK(std::find(m.flags.param_indices.begin(), m.flags.param_indices.end(), i) == m.flags.param_indices.end(),
               "CachedOp: input {} ('{}') is in both data_indices and param_indices", i,
               m.input_names[static_cast<size_t>(i)]);
  for (const auto& info : m.ig.nodes) {
    const graph::Node& node = *info.node;
    if (node.is_variable()) continue;
    ++m.num_ops;
    for (const std::string& o : node.output_names) m.op_of_report[node.name + "_" + o] = node.op->name;
    for (const std::string& i : node.input_names) m.op_of_report[node.name + "_" + i] = node.op->name;
  }
}

CachedOp::~CachedOp() = default;

std::vector<NDArray> CachedOp::Invoke(const std::vector<NDArray>& inputs) {
  std::vector<NDArray> out;
  impl_->Call(inputs, &out);
  return out;
}

void CachedOp::Invoke(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs) {
  impl_->Call(inputs, outputs);
}

const std::vector<std::string>& CachedOp::ListInputNames() const { return impl_->input_names; }
size_t CachedOp::NumOutputs() const { return impl_->ig.outputs.size(); }
const CachedOp::Flags& CachedOp::flags() const { return impl_->flags; }
const Symbol& CachedOp::symbol() const { return impl_->symbol; }

void CachedOp::RegisterOpHook(std::function<void(const std::string&, const std::string&, const NDArray&)> hook,
                              bool monitor_all) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hook = std::move(hook);
  impl_->hook_all = monitor_all;
  for (const auto& p : impl_->plans) impl_->InstallMonitor(*p->state);
}

size_t CachedOp::num_plans() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->plans.size();
}

uint64_t CachedOp::planned_bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last ? impl_->last->state->plan.total_bytes() : 0;
}

}  // namespace weft

// Forward nodes + MXNet's gradient pass (reverse topological order, sums at fan-out).
#include "executor/exec_graph.h"

#include <map>
#include <set>

#include "executor/fuse_conv.h"
#include "operator/gradient.h"
#include "operator/infer.h"
#include "weft/sdk/operator.h"

namespace weft::exec {
namespace {

class Builder {
 public:
  Builder(ExecGraph& eg, const Placement& p) : g_(eg), ig_(eg.fwd), p_(p) {}

  void Forward(const std::vector<ShapeSlot>& shapes, const std::vector<int>& types) {
    g_.entries.resize(ig_.num_entries());
    for (uint32_t nid = 0; nid < ig_.nodes.size(); ++nid) {
      const graph::Node& n = *ig_.nodes[nid].node;
      for (uint32_t k = 0; k < n.num_outputs; ++k) {
        const uint32_t eid = ig_.entry_id(nid, k);
        EntryInfo& e = g_.entries[eid];
        e.shape = *shapes[eid];
        e.dtype = static_cast<DType>(types[eid]);
        e.out_index = k;
        e.label = n.name + "(" + std::to_string(k) + ")";
      }
    }
    for (size_t i = 0; i < ig_.arg_nodes.size(); ++i) {
      const uint32_t eid = ig_.entry_id(ig_.arg_nodes[i], 0);
      g_.entries[eid].kind = EntryKind::kArg;
      g_.entries[eid].index = static_cast<uint32_t>(i);
      g_.entries[eid].dev = p_.arg_dev[i];
      g_.arg_entries.push_back(eid);
      g_.arg_names.push_back(ig_.nodes[ig_.arg_nodes[i]].node->name);
    }
    for (size_t i = 0; i < ig_.aux_nodes.size(); ++i) {
      const uint32_t eid = ig_.entry_id(ig_.aux_nodes[i], 0);
      g_.entries[eid].kind = EntryKind::kAux;
      g_.entries[eid].index = static_cast<uint32_t>(i);
      g_.entries[eid].dev = p_.aux_dev[i];
      g_.aux_entries.push_back(eid);
      g_.aux_names.push_back(ig_.nodes[ig_.aux_nodes[i]].node->name);
    }
    for (uint32_t nid = 0; nid < ig_.nodes.size(); ++nid) {
      const auto& info = ig_.nodes[nid];
      const graph::Node& n = *info.node;
      if (n.is_variable()) continue;
      ExecNode x;
      x.op = n.op->name;
      x.name = n.name;
      x.fwd = &n;
      x.params = n.params;
      x.resources = n.op->resources;
      x.dev = p_.node_dev[nid];
      for (size_t i = 0; i < info.inputs.size(); ++i) {
        const uint32_t in = ig_.entry_id(info.inputs[i]);
        if (i < n.num_args) {
          x.inputs.push_back(OnDev(in, x.dev));
        } else {
          WEFT_CHECK(g_.entries[in].dev == x.dev,
                     "Executor::Bind: auxiliary state '{}' of {} lives on {} but the node runs on {}; bind it there",
                     n.input_names[i], n.Describe(), g_.contexts[g_.entries[in].dev].ToString(),
                     g_.contexts[x.dev].ToString());
          x.aux.push_back(in);
        }
      }
      for (uint32_t k = 0; k < n.num_outputs; ++k) {
        x.outputs.push_back(ig_.entry_id(nid, k));
        g_.entries[x.outputs.back()].dev = x.dev;
      }
      // A blocked output takes its padded size when its channels fill no whole block (a blocked
      // attribute on other data is the kernel's to refuse).
      if (const int64_t block = ActivationBlock(x.op, x.params, -1); block > 1) {
        EntryInfo& out = g_.entries[x.outputs[0]];
        if (out.shape.ndim() == 4) out.padded_bytes = BlockedBytes(out.shape, out.dtype, block);
      }
      x.req.assign(n.num_outputs, WEFT_REQ_WRITE);
      x.inplace = OpInplacePairs(*n.op, n.params);
      AddNode(std::move(x));
    }
    g_.num_forward = g_.nodes.size();
    for (const auto& h : ig_.outputs) {
      g_.heads.push_back(ig_.entry_id(h));
      g_.output_names.push_back(graph::OutputName(graph::Entry{ig_.nodes[h.node_id].node, h.index, 0}));
    }
  }

  void Backward(const std::vector<int32_t>& grad_reqs) {
    in_backward_ = true;  // copies made from here on belong to the backward pass
    const std::vector<bool> needs = NeedsGradient(grad_reqs);
    contrib_.assign(g_.entries.size(), {});
    SeedHeadGradients(needs);
    for (size_t k = g_.num_forward; k-- > 0;) AddBackwardOf(k, needs);
    for (size_t i = 0; i < grad_reqs.size(); ++i)
      if (grad_reqs[i] != WEFT_REQ_NULL) ConnectArgGradient(i, grad_reqs[i]);
  }

 private:
  // Which forward entries depend on an argument whose gradient is wanted.
  std::vector<bool> NeedsGradient(const std::vector<int32_t>& grad_reqs) const {
    std::vector<bool> needs(g_.entries.size(), false);
    for (size_t i = 0; i < grad_reqs.size(); ++i)
      if (grad_reqs[i] != WEFT_REQ_NULL) needs[g_.arg_entries[i]] = true;
    for (size_t k = 0; k < g_.num_forward; ++k) {
      const ExecNode& x = g_.nodes[k];
      bool any = false;
      for (uint32_t in : x.inputs) any = any || needs[in];
      // A gradient flows back only through copies and ops with a backward op (kZero ones, such as
      // BlockGrad, give zeros, as the args' zero fill does), and reaches batch_take-like ops to be
      // refused there: outputs of others need no head gradient (MXNet's test_zero_prop2 calls
      // backward() on a stop_gradient output without one).
      if (any && (x.is_copy || x.fwd->op->grad == GradKind::kOp || x.fwd->op->no_gradient_is_error))
        for (uint32_t out : x.outputs) needs[out] = true;
    }
    return needs;
  }

  // A head gradient entry for each output a gradient must flow back from (loss layers make their
  // own).
  void SeedHeadGradients(const std::vector<bool>& needs) {
    g_.head_grads.assign(g_.heads.size(), kNoEntry);
    for (size_t i = 0; i < g_.heads.size(); ++i) {
      const uint32_t eid = g_.heads[i];
      if (!needs[eid]) continue;
      const EntryInfo& e = g_.entries[eid];
      if (e.producer != kNoEntry && g_.nodes[e.producer].fwd->op->is_loss) continue;
      EntryInfo hg;
      hg.kind = EntryKind::kHeadGrad;
      hg.shape = e.shape;
      hg.dtype = e.dtype;
      hg.index = static_cast<uint32_t>(i);
      hg.dev = e.dev;
      hg.label = "_head_grad_" + std::to_string(i) + "(0)";
      g_.head_grads[i] = NewEntry(std::move(hg));
      contrib_[eid].push_back(g_.head_grads[i]);
    }
  }

  // The backward node of forward node k (or the copy back to its source device), when a gradient
  // reaches it and one of its inputs needs one.
  void AddBackwardOf(size_t k, const std::vector<bool>& needs) {
    // Copy what we need: AddNode may reallocate g_.nodes.
    const ExecNode fx = g_.nodes[k];
    bool any = false;
    for (uint32_t in : fx.inputs) any = any || needs[in];
    if (!any) return;
    if (fx.is_copy) {  // the gradient goes back to the source device
      const uint32_t s = Sum(fx.outputs[0]);
      if (s != kNoEntry) contrib_[fx.inputs[0]].push_back(Copy(s, g_.entries[fx.inputs[0]].dev));
      return;
    }
    const graph::Node& n = *fx.fwd;
    // No gradient reaches any output (all behind a BlockGrad, say): the inputs' gradients are
    // zero, so no backward node (and no memory) is made, as MXNet's gradient pass skips nodes
    // whose output gradients are all zero (test_zero_prop). Loss layers make their own.
    if (!n.op->is_loss &&
        std::all_of(fx.outputs.begin(), fx.outputs.end(), [&](uint32_t out) { return contrib_[out].empty(); }))
      return;
    if (n.op->no_gradient_is_error)
      for (uint32_t out : fx.outputs)
        WEFT_CHECK(contrib_[out].empty(),
                   "Executor::Bind: {} has no gradient (operator '{}' is not differentiable) but a gradient "
                   "reaches it and one of its inputs requests one: bind those inputs with grad_req 'null' or "
                   "stop the gradient before it (BlockGrad)",
                   n.Describe(), n.op->name);
    if (n.op->grad != GradKind::kOp) return;
    auto bn = DescribeBackward(*n.op, n.params, static_cast<int>(fx.inputs.size()), static_cast<int>(fx.outputs.size()),
                               static_cast<int>(fx.aux.size()));
    std::vector<uint32_t> out_grads;
    for (uint32_t out : fx.outputs) {
      uint32_t s = Sum(out);
      out_grads.push_back(s != kNoEntry ? s : Zeros(out));
    }
    ExecNode b;
    b.op = bn->op;
    b.name = n.name + "_backward";
    b.fwd = &n;
    b.params = n.params;
    b.resources = bn->resources;
    b.backward = true;
    b.dev = fx.dev;
    b.inputs = GatherBackwardInputs(*bn, out_grads, fx.inputs, fx.outputs, fx.aux);
    if (BackwardInplaceOk(b.op) && fx.inputs.size() == 1 && !bn->inputs.empty() &&
        bn->inputs[0].source == BackwardSource::kOutGrad)
      b.inplace = {{0, 0}};
    b.out_like = fx.inputs;
    const uint32_t bid = static_cast<uint32_t>(g_.nodes.size());
    for (size_t i = 0; i < fx.inputs.size(); ++i) {
      const uint32_t in = fx.inputs[i];
      EntryInfo ge;
      ge.shape = g_.entries[in].shape;
      ge.dtype = g_.entries[in].dtype;
      ge.dev = b.dev;
      ge.producer = bid;
      ge.out_index = static_cast<uint32_t>(i);
      ge.label = b.name + "(" + std::to_string(i) + ")";
      const uint32_t geid = NewEntry(std::move(ge));
      b.outputs.push_back(geid);
      // Unwanted gradients still get (briefly used, planned) memory with req null: SDK kernel
      // tables resolve every tensor's address, and a non-host device refuses a null one.
      b.req.push_back(needs[in] ? WEFT_REQ_WRITE : WEFT_REQ_NULL);
      if (needs[in]) contrib_[in].push_back(geid);
    }
    AddNode(std::move(b));
  }

  // Argument i's gradient: the sum of what reached it (a head gradient is copied, so the array is
  // the argument's own), written with its grad_req; zero-filled when nothing reached it.
  void ConnectArgGradient(size_t i, int32_t grad_req) {
    const uint32_t arg = g_.arg_entries[i];
    uint32_t s = Sum(arg);
    if (s == kNoEntry) {
      if (grad_req == WEFT_REQ_WRITE) g_.zero_fill_args.push_back(static_cast<uint32_t>(i));
      return;
    }
    if (g_.entries[s].kind != EntryKind::kInternal) {  // a head gradient: copy it
      ExecNode c;
      c.op = "_copy";
      c.name = g_.arg_names[i] + "_copy_grad";
      c.inputs = {s};
      c.dev = g_.entries[s].dev;
      EntryInfo ce;
      ce.shape = g_.entries[s].shape;
      ce.dtype = g_.entries[s].dtype;
      ce.dev = c.dev;
      ce.producer = static_cast<uint32_t>(g_.nodes.size());
      ce.label = c.name + "(0)";
      s = NewEntry(std::move(ce));
      c.outputs = {s};
      c.req = {WEFT_REQ_WRITE};
      c.backward = true;
      AddNode(std::move(c));
    }
    EntryInfo& e = g_.entries[s];
    e.kind = EntryKind::kArgGrad;
    e.index = static_cast<uint32_t>(i);
    g_.nodes[e.producer].req[e.out_index] = grad_req;
  }

  uint32_t NewEntry(EntryInfo e) {
    g_.entries.push_back(std::move(e));
    return static_cast<uint32_t>(g_.entries.size() - 1);
  }

  void AddNode(ExecNode x) {
    const uint32_t id = static_cast<uint32_t>(g_.nodes.size());
    if (x.out_like.empty()) x.out_like = x.outputs;
    for (size_t k = 0; k < x.outputs.size(); ++k) {
      if (x.outputs[k] == kNoEntry) continue;
      g_.entries[x.outputs[k]].producer = id;
      g_.entries[x.outputs[k]].out_index = static_cast<uint32_t>(k);
    }
    g_.nodes.push_back(std::move(x));
  }

  // The gradient of forward entry `eid`: kNoEntry (nothing flows), the single contribution, or an
  // add_n of all of them (MXNet's "sum_grad" nodes).
  uint32_t Sum(uint32_t eid) {
    std::vector<uint32_t>& c = contrib_[eid];
    if (c.empty()) return kNoEntry;
    if (c.size() == 1) return c[0];
    ExecNode x;
    x.op = "add_n";
    x.name = "sum_grad";
    x.backward = true;
    x.params = AttrMap(std::map<std::string, std::string>{{"num_args", std::to_string(c.size())}});
    x.inputs = c;
    x.inplace = {{0, 0}};
    x.dev = g_.entries[eid].dev;
    EntryInfo e;
    e.shape = g_.entries[eid].shape;
    e.dtype = g_.entries[eid].dtype;
    e.dev = x.dev;
    e.label = "sum_grad(0)";
    const uint32_t out = NewEntry(std::move(e));
    x.outputs = {out};
    x.req = {WEFT_REQ_WRITE};
    AddNode(std::move(x));
    c = {out};
    return out;
  }

  // A constant zero entry with the shape and dtype of `eid` (shared per shape and dtype).
  uint32_t Zeros(uint32_t eid) {
    const EntryInfo& src = g_.entries[eid];
    std::string key = src.shape.ToString() + std::string(DTypeName(src.dtype)) + "@" + std::to_string(src.dev);
    auto it = zeros_.find(key);
    if (it != zeros_.end()) return it->second;
    EntryInfo z;
    z.kind = EntryKind::kZero;
    z.shape = src.shape;
    z.dtype = src.dtype;
    z.dev = src.dev;
    z.label = "_zeros" + std::to_string(zeros_.size()) + "(0)";
    const uint32_t id = NewEntry(std::move(z));
    zeros_.emplace(std::move(key), id);
    return id;
  }

  // `eid` as seen from device `dev`: itself, or (once per entry and device) a copy.
  uint32_t OnDev(uint32_t eid, int32_t dev) {
    if (g_.entries[eid].dev == dev) return eid;
    auto key = std::make_pair(eid, dev);
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;
    const uint32_t c = Copy(eid, dev);
    copies_.emplace(key, c);
    return c;
  }

  // A _CrossDeviceCopy node writing a copy of `eid` on `dev`; returns the copy's entry.
  uint32_t Copy(uint32_t eid, int32_t dev) {
    ExecNode x;
    x.op = "_CrossDeviceCopy";
    x.name = g_.entries[eid].label.substr(0, g_.entries[eid].label.rfind('(')) + "_copy_to_" +
             g_.contexts[static_cast<size_t>(dev)].ToString();
    x.is_copy = true;
    x.backward = in_backward_;
    x.dev = dev;
    x.inputs = {eid};
    EntryInfo e;
    e.shape = g_.entries[eid].shape;
    e.dtype = g_.entries[eid].dtype;
    e.dev = dev;
    e.label = x.name + "(0)";
    const uint32_t out = NewEntry(std::move(e));
    x.outputs = {out};
    x.req = {WEFT_REQ_WRITE};
    AddNode(std::move(x));
    return out;
  }

  ExecGraph& g_;
  const graph::IndexedGraph& ig_;
  const Placement& p_;
  bool in_backward_ = false;
  std::map<std::pair<uint32_t, int32_t>, uint32_t> copies_;
  std::vector<std::vector<uint32_t>> contrib_;
  std::map<std::string, uint32_t> zeros_;
};

}  // namespace

ExecGraph BuildExecGraph(graph::IndexedGraph g, const std::vector<ShapeSlot>& entry_shapes,
                         const std::vector<int>& entry_types, const std::vector<int32_t>& grad_reqs,
                         const Placement& placement) {
  ExecGraph eg;
  eg.fwd = std::move(g);
  eg.contexts = placement.contexts;
  Builder b(eg, placement);
  b.Forward(entry_shapes, entry_types);
  b.Backward(grad_reqs);
  return eg;
}

}  // namespace weft::exec

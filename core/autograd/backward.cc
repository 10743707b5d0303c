// Backward over the tape: MXNet's Imperative::Backward without building a second graph. The nodes
// reachable from the heads are ordered, then visited in reverse: each node's output gradients are
// summed (add_n), its backward op (`_backward_X`, the executor's, core/operator/gradient.h) is
// pushed on the node's device, and, without retain_graph, the node's kept values are dropped right
// away so their memory returns to the pool as soon as the pushed work is done.
//
// Sparse arrays (MXNet's FComputeEx / storage fallback in its gradient graph): a node a sparse
// kernel ran keeps its sparse values, and its backward runs on the sparse kernel that claims the
// backward op's storage types, giving the gradients the storage types that kernel infers (MXNet's
// backward FInferStorageType); when no kernel claims them, the backward runs on dense copies of the
// sparse values. Gradient terms that are sparse are summed, and handed to a backward op as head
// gradient, as dense arrays (the sparse backward kernels take a dense out_grad); a variable's
// buffer receives its gradient converted to the buffer's storage type, except that row_sparse
// terms for a row_sparse buffer are summed row_sparse (MXNet's ElementwiseSum FComputeEx).
#include "autograd/backward.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "autograd/higher_order.h"
#include "ndarray/sparse_rows.h"
#include "operator/autograd_hook.h"
#include "operator/infer.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/operator.h"
#include "weft/sparse.h"

namespace weft::autograd_detail {
namespace {

// A gradient term and whether this pass made it (a user's head gradient must not be handed out or
// written through).
struct Term {
  NDArray array;
  bool owned = true;
};

// Sets the switches for the pass and restores them (also when it throws).
struct PassSwitches {
  PassSwitches(bool record, bool train)
      : prev_record(imperative_detail::SetIsRecording(record)), prev_train(imperative_detail::SetIsTraining(train)) {}
  ~PassSwitches() {
    imperative_detail::SetIsRecording(prev_record);
    imperative_detail::SetIsTraining(prev_train);
  }
  bool prev_record, prev_train;
};

bool IsSparse(const NDArray& a) { return !a.is_none() && a.storage_type() != StorageType::kDefault; }

// Whether every array is row_sparse float32 (what SumRowSparse sums).
bool AllRowSparseFloat(const std::vector<NDArray>& arrays) {
  return std::all_of(arrays.begin(), arrays.end(), [](const NDArray& a) {
    return !a.is_none() && a.storage_type() == StorageType::kRowSparse && a.GetDType() == DType::kFloat32;
  });
}

// `a` as a dense array (a dense copy of a sparse one; synchronous, not recorded).
NDArray DenseOf(const NDArray& a) { return IsSparse(a) ? CastStorage(a, StorageType::kDefault) : a; }

std::string SlotName(const Node& n, bool output, size_t i) {
  if (n.kind != NodeKind::kOp) return (output ? "output " : "input ") + std::to_string(i);
  const std::vector<std::string> names = output ? OpOutputNames(*n.def, n.attrs) : [&] {
    std::vector<std::string> v = OpInputNames(*n.def, n.attrs), a = OpAuxNames(*n.def, n.attrs);
    v.insert(v.end(), a.begin(), a.end());
    return v;
  }();
  return std::string(output ? "output '" : "input '") + (i < names.size() ? names[i] : std::to_string(i)) + "'";
}

// Throws when a kept value was written after it was recorded. Aux states (BatchNorm's moving
// statistics) are state that later calls update by design, so only their presence is checked.
void CheckKept(const Node& n, const Saved& s, bool output, size_t i, bool aux = false) {
  WEFT_CHECK(s.kept(), "Backward: {} did not keep its {} (internal error)", n.Describe(), SlotName(n, output, i));
  WEFT_CHECK(aux || s.array.write_count() == s.writes,
             "Backward: {} needs its {} ({}) as it was when the op was recorded, but that memory was written since "
             "(an in-place op, a copy into it or an optimizer update); its gradient would be wrong. Change a copy, "
             "or record the computation again after the change",
             n.Describe(), SlotName(n, output, i), DescribeArray(s.array));
}

class Pass {
 public:
  Pass(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads, const std::vector<NDArray>& variables,
       bool retain, bool create, bool is_train)
      : heads_(heads),
        head_grads_(head_grads),
        vars_(variables),
        retain_(retain),
        create_(create),
        is_train_(is_train) {}

  std::vector<NDArray> Run() {
    CheckHeads();
    Order();
    Wanted();
    Needs();
    Validate();  // nothing is pushed when a kept value was overwritten or a gradient is missing
    PassSwitches switches(create_, is_train_);
    SeedHeads();
    for (size_t k = order_.size(); k-- > 0;) {
      Node& n = *order_[k];
      if (n.is_variable()) {
        FinishVariable(k);
        continue;
      }
      if (needs_[k]) Visit(k);
      contribs_[k].clear();
      if (!retain_) n.Clear();
    }
    return std::move(results_);
  }

 private:
  size_t Id(const Node* n) const { return ids_.at(n); }

  void CheckHeads() {
    WEFT_CHECK(!heads_.empty(), "Backward: no heads given");
    WEFT_CHECK(head_grads_.empty() || head_grads_.size() == heads_.size(),
               "Backward: {} head gradients for {} heads; give one per head (none arrays for ones) or none",
               head_grads_.size(), heads_.size());
    for (size_t i = 0; i < heads_.size(); ++i) {
      const NDArray& h = heads_[i];
      WEFT_CHECK(!h.is_none(), "Backward: head {} is a none array", i);
      if (h.autograd_node() && h.autograd_node()->cleared)
        Fail(
            "Backward: cannot differentiate head {} ({}): its graph was freed by an earlier backward without "
            "retain_graph. If you want to differentiate the same graph twice, you need to pass retain_graph=True to "
            "backward.",
            i, DescribeArray(h));
      WEFT_CHECK(InGraph(h),
                 "Backward: head {} ({}): Cannot differentiate node because it is not in a computational graph. You "
                 "need to set is_recording to true or use autograd.record() to save computational graphs for "
                 "backward. If you want to differentiate the same graph twice, you need to pass retain_graph=True to "
                 "backward.",
                 i, DescribeArray(h));
      if (i < head_grads_.size() && !head_grads_[i].is_none()) {
        const NDArray& g = head_grads_[i];
        WEFT_CHECK(g.GetShape() == h.GetShape() && g.GetDType() == h.GetDType() && g.GetContext() == h.GetContext(),
                   "Backward: the head gradient of head {} is {}, the head is {}; give one of the head's shape, dtype "
                   "and device",
                   i, DescribeArray(g), DescribeArray(h));
      }
    }
  }

  // Topological order of the nodes reachable from the heads (inputs first), iteratively.
  void Order() {
    std::vector<std::pair<Node*, size_t>> stack;
    std::unordered_map<const Node*, NodePtr> owners;
    auto visit = [&](const NodePtr& n, const Node* from) {
      if (ids_.count(n.get()) || owners.count(n.get())) return;
      if (n->cleared)
        Fail(
            "Backward: {} depends on {}, whose values an earlier backward without retain_graph freed; pass "
            "retain_graph=true to that backward to differentiate through it again",
            from != nullptr ? from->Describe() : "a head", n->Describe());
      owners.emplace(n.get(), n);
      stack.emplace_back(n.get(), 0);
    };
    for (const NDArray& h : heads_) {
      visit(h.autograd_node(), nullptr);
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < n->inputs.size()) {
          const NodePtr& in = n->inputs[next++].node;
          if (in) visit(in, n);
          continue;
        }
        ids_.emplace(n, order_.size());
        order_.push_back(owners.at(n));
        stack.pop_back();
      }
    }
    contribs_.resize(order_.size());
    for (size_t k = 0; k < order_.size(); ++k) contribs_[k].resize(order_[k]->num_outputs());
  }

  // Which variables get gradients.
  void Wanted() {
    wanted_.assign(order_.size(), false);
    if (!vars_.empty()) {
      for (size_t i = 0; i < vars_.size(); ++i) {
        const NDArray& v = vars_[i];
        const Node* n = v.autograd_node().get();
        WEFT_CHECK(!v.is_none() && n != nullptr && n->is_variable(),
                   "Backward: Cannot differentiate with respect to the {}-th variable because it does not require "
                   "gradient ({}: mark it with MarkVariables / AttachGrad before recording)",
                   i + 1, DescribeArray(v));
        auto it = ids_.find(n);
        if (it != ids_.end()) wanted_[it->second] = true;
      }
      results_.resize(vars_.size());
      return;
    }
    bool any = false;
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& n = *order_[k];
      if (n.is_variable() && n.grad_req != kNullOp) wanted_[k] = any = true;
    }
    WEFT_CHECK(any, "Backward: There are no inputs in computation graph that require gradients.");
  }

  // A node needs its backward when some wanted variable flows into it through differentiable ops.
  void Needs() {
    needs_.assign(order_.size(), false);
    count_.assign(order_.size(), 0);
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& n = *order_[k];
      if (n.is_variable()) {
        needs_[k] = wanted_[k];
        continue;
      }
      if (n.kind == NodeKind::kOp && n.def->grad != GradKind::kOp) continue;
      const size_t slots = n.kind == NodeKind::kOp ? n.num_args : n.inputs.size();
      for (size_t i = 0; i < slots; ++i)
        if (n.inputs[i].node && needs_[Id(n.inputs[i].node.get())]) needs_[k] = true;
    }
    // Gradient terms per variable: one term can be written straight into the buffer.
    for (const NDArray& h : heads_) ++count_[Id(h.autograd_node().get())];
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& n = *order_[k];
      if (n.is_variable() || !needs_[k]) continue;
      const size_t slots = n.kind == NodeKind::kOp ? n.num_args : n.inputs.size();
      for (size_t i = 0; i < slots; ++i)
        if (n.inputs[i].node) ++count_[Id(n.inputs[i].node.get())];
    }
  }

  void Validate() const {
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& n = *order_[k];
      if (!needs_[k] || n.is_variable()) continue;
      if (n.kind == NodeKind::kOp) {
        const auto bw =
            DescribeBackward(*n.def, n.attrs, static_cast<int>(n.num_args), static_cast<int>(n.num_outputs()),
                             static_cast<int>(n.inputs.size() - n.num_args));
        for (const BackwardInput& b : bw->inputs) {
          const size_t i = static_cast<size_t>(b.index);
          if (b.source == BackwardSource::kInput) CheckKept(n, n.saved_inputs[i], false, i);
          if (b.source == BackwardSource::kAux)
            CheckKept(n, n.saved_inputs[n.num_args + i], false, n.num_args + i, /*aux=*/true);
          if (b.source == BackwardSource::kOutput) CheckKept(n, n.saved_outputs[i], true, i);
        }
        continue;
      }
      for (size_t i = 0; i < n.saved_inputs.size(); ++i)
        if (n.saved_inputs[i].kept()) CheckKept(n, n.saved_inputs[i], false, i);
      for (size_t i = 0; i < n.saved_outputs.size(); ++i)
        if (n.saved_outputs[i].kept()) CheckKept(n, n.saved_outputs[i], true, i);
      if (n.kind == NodeKind::kBackward) CheckHigherOrder(n);
    }
  }

  void SeedHeads() {
    for (size_t i = 0; i < heads_.size(); ++i) {
      const NDArray& h = heads_[i];
      Term t;
      if (i < head_grads_.size() && !head_grads_[i].is_none()) {
        t = Term{head_grads_[i], false};
      } else {
        t.array = Take(h.GetShape(), h.GetDType(), h.GetContext());
        t.array = 1.0f;
      }
      contribs_[Id(h.autograd_node().get())][h.autograd_index()].push_back(std::move(t));
    }
  }

  // The sum of a gradient's terms: the one term, or an add_n into memory from Take; the summed
  // terms' memory is given back. *owned: made by this pass (not a caller's head gradient).
  NDArray Sum(std::vector<Term>& terms, bool* owned) {
    *owned = terms.size() != 1 || terms[0].owned;
    if (terms.size() <= 1) {
      NDArray a = terms.empty() ? NDArray() : std::move(terms[0].array);
      terms.clear();
      return a;
    }
    std::vector<NDArray> arrays;
    for (const Term& t : terms) arrays.push_back(t.array);
    NDArray out;
    if (create_) {
      out = SumArrays(arrays);
    } else {
      out = Take(arrays[0].GetShape(), arrays[0].GetDType(), arrays[0].GetContext());
      AddInto(arrays, out);
    }
    for (Term& t : terms)
      if (t.owned) Give(std::move(t.array));
    terms.clear();
    return out;
  }

  // add_n(arrays) written into `out` (not recorded).
  static void AddInto(const std::vector<NDArray>& arrays, const NDArray& out) {
    ImperativeCall call;
    call.op = "add_n";
    for (const NDArray& a : arrays) call.inputs.push_back(DenseOf(a));
    std::vector<NDArray> result{out};
    Invoke(call, &result);
  }

  // Memory for an output of this pass: a block an earlier output of the pass no longer needs
  // (Give), else a new array. The engine orders the new write after the block's pending reads
  // (same chunk, same variable), as the executor's memory plan does with its blocks; so at most
  // a few gradients are allocated at a time even though the whole pass is pushed at once. Off
  // with create_graph (the arrays join the new graph).
  NDArray Take(const Shape& shape, DType dtype, const Context& ctx) {
    const uint64_t need = static_cast<uint64_t>(shape.Size()) * DTypeSize(dtype);
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); ++i) {
      const Block& b = free_[i];
      // MXNet's match range: a block at most 16 times the request.
      if (b.array.GetContext() != ctx || b.capacity < need || b.capacity > need * 16) continue;
      if (best == free_.size() || b.capacity < free_[best].capacity) best = i;
    }
    if (need > 0 && best < free_.size()) {
      NDArray a = free_[best].array.AsArray(shape, dtype);
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
      return a;
    }
    NDArray a(shape, ctx, true, dtype);
    if (!create_) capacity_[a.var()] = need;
    return a;
  }

  // Gives back memory from Take whose last reader was pushed. Arrays this pass did not make from
  // Take (a caller's head gradient, zeros, values handed out) are never reused.
  void Give(NDArray a) {
    if (create_ || a.is_none()) return;
    auto it = capacity_.find(a.var());
    if (it != capacity_.end()) free_.push_back(Block{std::move(a), it->second});
  }

  NDArray Zeros(const Shape& shape, DType dtype, const Context& ctx) {
    const std::string key = fmt::format("{}{}{}", shape, DTypeName(dtype), ctx);
    auto it = zeros_.find(key);
    if (it != zeros_.end()) return it->second;
    NDArray z(shape, ctx, false, dtype);
    z = 0.0f;
    zeros_.emplace(key, z);
    return z;
  }

  void Visit(size_t k) {
    const NodePtr& self = order_[k];
    Node& n = *self;
    std::vector<NDArray> og(n.num_outputs());
    std::vector<bool> og_owned(og.size());
    bool any = false;
    for (size_t o = 0; o < og.size(); ++o) {
      bool owned = true;
      og[o] = Sum(contribs_[k][o], &owned);
      if (IsSparse(og[o])) og[o] = DenseOf(og[o]);  // every backward kernel takes a dense out_grad
      og_owned[o] = owned;
      any = any || !og[o].is_none();
    }
    if (!any) return;  // nothing flows back into this node
    std::vector<NDArray> grads;
    if (n.kind == NodeKind::kGraph) {
      std::vector<bool> need(n.inputs.size());
      for (size_t i = 0; i < need.size(); ++i) need[i] = n.inputs[i].node && needs_[Id(n.inputs[i].node.get())];
      grads = n.graph->Backward(og, need, is_train_);
    } else if (n.kind == NodeKind::kBackward) {
      std::vector<bool> need(n.inputs.size());
      for (size_t i = 0; i < need.size(); ++i) need[i] = n.inputs[i].node && needs_[Id(n.inputs[i].node.get())];
      grads = HigherOrderBackward(n, og, need, is_train_);
    } else {
      grads = OpBackward(self, og, og_owned);
    }
    for (size_t i = 0; i < grads.size() && i < n.inputs.size(); ++i)
      if (!grads[i].is_none() && n.inputs[i].node)
        contribs_[Id(n.inputs[i].node.get())][n.inputs[i].index].push_back(Term{grads[i], true});
  }

  // For a backward reading a sparse value (a node a sparse kernel ran): the storage types of the
  // gradients (one per op input) from the sparse kernel of the node's device that claims the
  // inputs' storage types. When none claims them, the sparse inputs are replaced by dense copies
  // (MXNet's storage fallback) and the result is empty, as for a dense backward: the dense kernel runs.
  // A node whose attributes ask for sparse gradients (Embedding's sparse_grad) asks too, with
  // dense inputs: the kernel that claims it (MXNet's SparseEmbedding backward) writes a row_sparse
  // weight gradient storing the batch's rows, never a dense array of the whole table.
  std::vector<StorageType> SparseGradTypes(const Node& n, const BackwardNode& bw, std::vector<NDArray>& bw_in) const {
    const bool sparse_in = std::any_of(bw_in.begin(), bw_in.end(), IsSparse);
    if (!sparse_in && (create_ || !n.attrs.GetBool("sparse_grad", false))) return {};
    WEFT_CHECK(!create_,
               "Backward: {} ran on sparse arrays, and create_graph (a gradient of the gradient) through sparse "
               "operators is not supported; record the computation on dense arrays (cast_storage to 'default') to "
               "differentiate its gradient",
               n.Describe());
    NodeSignature sig;
    for (const NDArray& a : bw_in) {
      sig.in_shapes.push_back(a.GetShape());
      sig.in_dtypes.push_back(a.GetDType());
      sig.in_stypes.push_back(a.storage_type());
    }
    sig.out_shapes.assign(n.in_shapes.begin(), n.in_shapes.begin() + n.num_args);
    sig.out_dtypes.assign(n.in_dtypes.begin(), n.in_dtypes.begin() + n.num_args);
    std::vector<StorageType> out(n.num_args, StorageType::kUndefined);
    if (ClaimStorageTypes(bw.op, n.attrs, n.ctx, sig, &out)) return out;
    if (!sparse_in) return {};
    for (NDArray& a : bw_in) a = DenseOf(a);
    return {};
  }

  // The array gradient i of node `n` is written into: of the storage type `stypes` names (empty:
  // dense), dense ones from Take.
  NDArray NewGrad(const Node& n, size_t i, const std::vector<StorageType>& stypes) {
    if (stypes.empty() || stypes[i] == StorageType::kDefault) return Take(n.in_shapes[i], n.in_dtypes[i], n.ctx);
    return NDArray::CreateSparse(stypes[i], n.in_shapes[i], n.ctx, n.in_dtypes[i]);
  }

  // The node's `_backward_X`; returns the gradients that still have to be routed (none for inputs
  // that need none and for those written straight into a variable's buffer).
  std::vector<NDArray> OpBackward(const NodePtr& self, std::vector<NDArray>& og, const std::vector<bool>& og_owned) {
    Node& n = *self;
    const size_t na = n.num_args, nx = n.inputs.size() - na;
    const auto bw =
        DescribeBackward(*n.def, n.attrs, static_cast<int>(na), static_cast<int>(og.size()), static_cast<int>(nx));
    for (size_t o = 0; o < og.size(); ++o)
      if (og[o].is_none()) og[o] = Zeros(n.out_shapes[o], n.out_dtypes[o], n.ctx);
    std::vector<NDArray> ins(na), outs(og.size()), aux(nx);
    for (const BackwardInput& b : bw->inputs) {
      const size_t i = static_cast<size_t>(b.index);
      if (b.source == BackwardSource::kInput) ins[i] = create_ ? KeptInput(n, i) : n.saved_inputs[i].array;
      if (b.source == BackwardSource::kAux) aux[i] = n.saved_inputs[na + i].array;
      if (b.source == BackwardSource::kOutput) outs[i] = create_ ? KeptOutput(self, i) : n.saved_outputs[i].array;
    }
    std::vector<NDArray> bw_in = GatherBackwardInputs(*bw, og, ins, outs, aux);
    const std::vector<StorageType> stypes = SparseGradTypes(n, *bw, bw_in);
    std::vector<NDArray> grads(na);
    std::vector<int32_t> req(na, WEFT_REQ_NULL);
    std::vector<bool> routed(na, false);
    bool inplace = false;
    for (size_t i = 0; i < na; ++i) {
      const Input& in = n.inputs[i];
      const size_t src = in.node ? Id(in.node.get()) : 0;
      const bool need = in.node && needs_[src];
      Node* var = need && in.node->is_variable() ? in.node.get() : nullptr;
      if (var != nullptr && vars_.empty() && !create_ && stypes.empty() && count_[src] == 1 &&
          var->grad_req != kNullOp && var->grad.storage_type() == StorageType::kDefault) {
        // The only gradient term of a marked variable: written (or added) straight into its buffer
        // (a sparse buffer, Gluon's grad_stype='row_sparse', receives the dense sum converted).
        grads[i] = var->grad;
        req[i] = var->grad_req == kAddTo ? WEFT_REQ_ADD : WEFT_REQ_WRITE;
        direct_.push_back(var);
        continue;
      }
      if (!need) {
        // Host kernels skip req-null outputs; other devices, and sparse kernels, need every array.
        if (create_ || !stypes.empty() || !HostAddressable(n.ctx)) grads[i] = NewGrad(n, i, stypes);
        continue;
      }
      req[i] = WEFT_REQ_WRITE;
      routed[i] = true;
      if (!create_ && stypes.empty() && na == 1 && og_owned[0] && BackwardInplaceOk(bw->op) &&
          capacity_.count(og[0].var()) &&
          og[0].Bytes() == static_cast<size_t>(n.in_shapes[0].Size()) * DTypeSize(n.in_dtypes[0])) {
        // Element-wise backward over its own head gradient (the executor's in-place backward).
        grads[0] = og[0].AsArray(n.in_shapes[0], n.in_dtypes[0]);
        req[0] = WEFT_REQ_WRITE_INPLACE;
        inplace = true;
        continue;
      }
      grads[i] = NewGrad(n, i, stypes);
    }
    try {
      const auto end = static_cast<std::ptrdiff_t>(na);
      RunBackwardOp(*n.def, n.attrs, *bw, bw_in, std::vector<Shape>(n.in_shapes.begin(), n.in_shapes.begin() + end),
                    std::vector<DType>(n.in_dtypes.begin(), n.in_dtypes.begin() + end), grads, req, is_train_, stypes);
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const Error& e) {
      Fail("Backward: {}: {}", n.Describe(), e.what());
    }
    for (size_t o = 0; o < og.size(); ++o)
      if (og_owned[o] && !(inplace && o == 0)) Give(og[o]);
    // After the run: recording (create_graph) gave the arrays their entries.
    std::vector<NDArray> route(na);
    for (size_t i = 0; i < na; ++i) {
      if (routed[i]) {
        route[i] = grads[i];
      } else if (req[i] == WEFT_REQ_NULL) {
        Give(grads[i]);
      }
    }
    return route;
  }

  void FinishVariable(size_t k) {
    Node& n = *order_[k];
    std::vector<Term>& terms = contribs_[k][0];
    if (!vars_.empty()) {
      for (size_t j = 0; j < vars_.size(); ++j) {
        if (vars_[j].autograd_node().get() != &n) continue;
        bool owned = true;
        NDArray g = Sum(terms, &owned);
        if (g.is_none()) {
          g = NDArray(n.value.GetShape(), n.ctx, false, n.value.GetDType());
          g = 0.0f;
        } else if (!owned) {
          g = InvokeOne("_copy", {g});  // a user's head gradient: hand out a copy (recorded if create_graph)
        }
        results_[j] = g;
        terms.push_back(Term{g, false});  // a variable listed twice gets a copy the second time
      }
      return;
    }
    if (!wanted_[k]) return;
    const bool direct = std::find(direct_.begin(), direct_.end(), &n) != direct_.end();
    n.fresh_grad = true;
    if (direct) return;
    std::vector<NDArray> arrays;
    for (const Term& t : terms) arrays.push_back(t.array);
    const bool sparse = n.grad.storage_type() != StorageType::kDefault;
    if (arrays.empty()) {
      if (n.grad_req != kWriteTo) return;
      if (sparse) {
        NDArray::CopyFromTo(Zeros(n.value.GetShape(), n.grad.GetDType(), n.ctx), n.grad);
      } else {
        n.grad = 0.0f;
      }
      return;
    }
    {
      PassSwitches quiet(false, is_train_);  // not recorded: the buffer is not part of the graph
      if (n.grad_req == kWriteTo && arrays.size() == 1) {
        NDArray::CopyFromTo(arrays[0], n.grad);  // converts into a sparse buffer
      } else if (!sparse) {
        if (n.grad_req == kAddTo) arrays.insert(arrays.begin(), n.grad);
        AddInto(arrays, n.grad);
      } else {
        if (n.grad_req == kAddTo) arrays.insert(arrays.begin(), n.grad);
        if (AllRowSparseFloat(arrays)) {
          // MXNet's ElementwiseSum of row_sparse terms: row_sparse over the union of the terms'
          // rows (a row stored with zeros stays stored), never a dense array of the full shape.
          NDArray::CopyFromTo(SumRowSparse(arrays, n.ctx), n.grad);
        } else {
          // Mixed storage types: the dense sum, converted into the sparse buffer.
          NDArray sum(n.value.GetShape(), n.ctx, false, n.grad.GetDType());
          AddInto(arrays, sum);
          NDArray::CopyFromTo(sum, n.grad);
        }
      }
    }
    for (Term& t : terms)
      if (t.owned) Give(std::move(t.array));
    terms.clear();
  }

  bool HostAddressable(const Context& ctx) {
    auto it = host_.find(ctx);
    if (it == host_.end()) it = host_.emplace(ctx, internal::GetDevice(Runtime::Get(), ctx).host_addressable()).first;
    return it->second;
  }

  const std::vector<NDArray>& heads_;
  const std::vector<NDArray>& head_grads_;
  const std::vector<NDArray>& vars_;
  const bool retain_, create_, is_train_;
  std::vector<NodePtr> order_;
  std::unordered_map<const Node*, size_t> ids_;
  std::vector<bool> wanted_, needs_;
  std::vector<uint32_t> count_;
  std::vector<std::vector<std::vector<Term>>> contribs_;  // per node, per output
  std::vector<Node*> direct_;                             // variables written straight
  struct Block {
    NDArray array;
    uint64_t capacity;  // bytes of the chunk (Take made it)
  };
  std::vector<Block> free_;                           // memory of this pass no longer read (Give)
  std::unordered_map<VarHandle, uint64_t> capacity_;  // chunks Take made, by variable
  std::map<Context, bool> host_;
  std::map<std::string, NDArray> zeros_;
  std::vector<NDArray> results_;
};

}  // namespace

NDArray SumArrays(const std::vector<NDArray>& terms) {
  if (terms.empty()) return NDArray();
  if (terms.size() == 1) return terms[0];
  ImperativeCall call;
  call.op = "add_n";
  call.inputs = terms;
  return Invoke(call).at(0);
}

void RunBackwardOp(const OpDef& def, const AttrMap& attrs, const BackwardNode& bw, const std::vector<NDArray>& inputs,
                   const std::vector<Shape>& out_shapes, const std::vector<DType>& out_dtypes,
                   std::vector<NDArray>& outputs, const std::vector<int32_t>& req, bool is_train,
                   const std::vector<StorageType>& out_stypes) {
  NodeSignature sig;
  for (const NDArray& a : inputs) {
    sig.in_shapes.push_back(a.GetShape());
    sig.in_dtypes.push_back(a.GetDType());
    if (!out_stypes.empty()) sig.in_stypes.push_back(a.storage_type());
  }
  sig.out_shapes = out_shapes;
  sig.out_dtypes = out_dtypes;
  sig.out_stypes = out_stypes;
  const Context ctx = inputs.at(0).GetContext();
  SharedKernelRunner(bw.op, attrs, ctx, sig, bw.resources)->Run(inputs, outputs, req, {}, is_train);
  // A sparse output gets its parts while the kernel runs: wait, so readers see them (as Invoke).
  for (size_t o = 0; o < out_stypes.size(); ++o)
    if (out_stypes[o] != StorageType::kDefault && !outputs[o].is_none()) outputs[o].WaitToRead();
  if (!imperative_detail::IsRecording()) return;
  NodePtr node = RecordNode(NodeKind::kBackward, &def, attrs, inputs, static_cast<uint32_t>(inputs.size()), outputs,
                            is_train, std::vector<bool>(inputs.size(), true), {});
  if (node) node->backward = bw;
}

std::vector<NDArray> RunBackward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
                                 const std::vector<NDArray>& variables, bool retain_graph, bool create_graph,
                                 bool is_train) {
  EnsureRecorder();
  return Pass(heads, head_grads, variables, retain_graph, create_graph, is_train).Run();
}

}  // namespace weft::autograd_detail

namespace weft::autograd {

std::vector<NDArray> BackwardEx(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads,
                                const std::vector<NDArray>& variables, bool retain_graph, bool create_graph,
                                bool is_train) {
  return autograd_detail::RunBackward(heads, head_grads, variables, retain_graph, create_graph, is_train);
}

void Backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads, bool retain_graph,
              bool train_mode) {
  BackwardEx(heads, head_grads, {}, retain_graph, false, train_mode);
}

std::vector<NDArray> Grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads, std::optional<bool> retain_graph, bool create_graph,
                          bool train_mode) {
  WEFT_CHECK(!variables.empty(), "Grad: variables cannot be an empty list");
  return BackwardEx(heads, head_grads, variables, retain_graph.value_or(create_graph), create_graph, train_mode);
}

}  // namespace weft::autograd

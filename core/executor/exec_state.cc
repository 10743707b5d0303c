// Binding: checks, inference, graph, plan, allocation, kernel preparation; and running nodes.
#include "executor/exec_state.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "executor/concat_view.h"
#include "executor/fuse_conv.h"
#include "executor/pool_first.h"
#include "symbol/infer.h"
#include "weft/env.h"
#include "weft/internal/runtime.h"
#include "weft/sdk/operator.h"

namespace weft::exec {
namespace {

void CheckArrays(const char* what, const std::vector<NDArray>& arrays, const std::vector<std::string>& names,
                 const Context& ctx, bool any_device) {
  WEFT_CHECK(arrays.size() == names.size(), "Executor::Bind: expects {} {} arrays ({}), got {}", names.size(), what,
             fmt::join(names, ", "), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    WEFT_CHECK(!arrays[i].is_none(), "Executor::Bind: the array for {} '{}' is a none array", what, names[i]);
    WEFT_CHECK(any_device || arrays[i].GetContext() == ctx,
               "Executor::Bind: the array for {} '{}' lives on {}, the executor on {}", what, names[i],
               arrays[i].GetContext().ToString(), ctx.ToString());
  }
}

std::string ShapeList(const std::vector<std::string>& names, const std::vector<NDArray>& arrays) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < arrays.size(); ++i) {
    if (!s.empty()) s += ", ";
    s += names[i] + "=" + arrays[i].GetShape().ToString();
  }
  return s;
}

}  // namespace

BulkConfig BulkConfig::FromEnv() {
  BulkConfig c;
  c.train = GetEnvBool("WEFT_EXEC_BULK_EXEC_TRAIN", true);
  c.inference = GetEnvBool("WEFT_EXEC_BULK_EXEC_INFERENCE", true);
  const int64_t all = GetEnvInt("WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15);
  auto read = [&](const char* name) {
    return static_cast<int>(GetEnvIntInRange(name, all, 1, 1000000, "a number of nodes"));
  };
  c.max_node_train_fwd = read("WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD");
  c.max_node_train_bwd = read("WEFT_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD");
  return c;
}

void ExecState::AllocateBlocks(const ExecState* shared) {
  const size_t n = plan.block_bytes.size();
  blocks.assign(n, NDArray());
  allocated_bytes = 0;
  // Largest blocks first, each taking the smallest free shared block on its device that holds it
  // (best fit), so that a smaller graph bound after the largest one allocates (almost) nothing.
  std::vector<size_t> order(n);
  for (size_t b = 0; b < n; ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return plan.block_bytes[x] > plan.block_bytes[y]; });
  std::vector<bool> taken(shared ? shared->blocks.size() : 0, false);
  for (size_t b : order) {
    const Context& dev = graph.contexts[static_cast<size_t>(plan.block_dev[b])];
    const uint64_t bytes = plan.block_bytes[b];
    size_t best = taken.size();
    for (size_t s = 0; s < taken.size(); ++s) {
      const NDArray& cand = shared->blocks[s];
      if (taken[s] || cand.GetContext() != dev || cand.Bytes() < bytes) continue;
      if (best == taken.size() || cand.Bytes() < shared->blocks[best].Bytes()) best = s;
    }
    if (best < taken.size()) {
      taken[best] = true;
      blocks[b] = shared->blocks[best];
      continue;
    }
    blocks[b] = NDArray(Shape{static_cast<int64_t>(bytes)}, dev, false, DType::kUint8);
    allocated_bytes += bytes;
  }
}

namespace {

// Requests: one per argument, one for all, or none (write when gradients are given); each checked
// against its gradient array. kWriteInplace becomes kWriteTo (the executor plans in-place itself).
std::vector<OpReqType> ResolveRequests(const std::vector<std::string>& arg_names, const std::vector<NDArray>& args,
                                       const std::vector<NDArray>& grads, const std::vector<OpReqType>& reqs) {
  std::vector<OpReqType> out;
  if (reqs.size() == arg_names.size()) {
    out = reqs;
  } else if (reqs.size() == 1 || reqs.empty()) {
    out.assign(arg_names.size(), reqs.empty() ? (grads.empty() ? kNullOp : kWriteTo) : reqs[0]);
  } else {
    Fail("Executor::Bind: expects {} grad requests (one per argument: {}), or one for all; got {}", arg_names.size(),
         fmt::join(arg_names, ", "), reqs.size());
  }
  WEFT_CHECK(grads.empty() || grads.size() == arg_names.size(),
             "Executor::Bind: expects {} gradient arrays (one per argument: {}; none arrays where the request is "
             "null), got {}",
             arg_names.size(), fmt::join(arg_names, ", "), grads.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int r = static_cast<int>(out[i]);
    WEFT_CHECK(r >= kNullOp && r <= kAddTo,
               "Executor::Bind: grad request {} for argument '{}' is not one of kNullOp (0), kWriteTo (1), "
               "kWriteInplace (2), kAddTo (3)",
               r, arg_names[i]);
    if (out[i] == kWriteInplace) out[i] = kWriteTo;
    if (out[i] == kNullOp) continue;
    WEFT_CHECK(!grads.empty() && !grads[i].is_none(),
               "Executor::Bind: argument '{}' has grad request {} but no gradient array; give one or use kNullOp",
               arg_names[i], OpReqTypeName(out[i]));
    WEFT_CHECK(grads[i].GetShape() == args[i].GetShape() && grads[i].GetDType() == args[i].GetDType(),
               "Executor::Bind: the gradient array of '{}' is {} {}, the argument is {} {}", arg_names[i],
               grads[i].GetShape().ToString(), DTypeName(grads[i].GetDType()), args[i].GetShape().ToString(),
               DTypeName(args[i].GetDType()));
    WEFT_CHECK(grads[i].GetContext() == args[i].GetContext(),
               "Executor::Bind: the gradient array of '{}' lives on {}, the argument on {}", arg_names[i],
               grads[i].GetContext().ToString(), args[i].GetContext().ToString());
  }
  return out;
}

// Shapes and dtypes of every entry from the bound arrays; every one must be known, and every
// variable's array must have the shape the graph gives it.
void InferFromBoundArrays(BoundGraph& b, const std::vector<NDArray>& args, const std::vector<NDArray>& aux) {
  std::map<std::string, Shape> known_shapes;
  std::map<std::string, int> known_types;
  for (size_t i = 0; i < args.size(); ++i) {
    known_shapes[b.arg_names[i]] = args[i].GetShape();
    known_types[b.arg_names[i]] = static_cast<int>(args[i].GetDType());
  }
  for (size_t i = 0; i < aux.size(); ++i) {
    known_shapes[b.aux_names[i]] = aux[i].GetShape();
    known_types[b.aux_names[i]] = static_cast<int>(aux[i].GetDType());
  }
  try {
    b.shapes = graph::InferShapes(b.ig, known_shapes);
    b.types = graph::InferTypes(b.ig, known_types);
  } catch (const Error& e) {
    Fail("Executor::Bind: the bound arrays do not fit the graph (arguments: {}; aux states: {}): {}",
         ShapeList(b.arg_names, args), ShapeList(b.aux_names, aux), e.what());
  }
  for (uint32_t nid = 0; nid < b.ig.nodes.size(); ++nid) {
    const graph::Node& n = *b.ig.nodes[nid].node;
    for (uint32_t k = 0; k < n.num_outputs; ++k) {
      const uint32_t eid = b.ig.entry_id(nid, k);
      WEFT_CHECK(graph::FullyKnown(b.shapes[eid]) && b.types[eid] >= 0,
                 "Executor::Bind: cannot infer the shape/dtype of output {} of {} from the bound arrays", k,
                 n.Describe());
    }
  }
  auto check_var = [&](uint32_t nid, const NDArray& a, const char* what) {
    const uint32_t eid = b.ig.entry_id(nid, 0);
    WEFT_CHECK(*b.shapes[eid] == a.GetShape(),
               "Executor::Bind: {} '{}' is bound to an array of shape {} but the graph needs {}", what,
               b.ig.nodes[nid].node->name, a.GetShape().ToString(), b.shapes[eid]->ToString());
  };
  for (size_t i = 0; i < args.size(); ++i) check_var(b.ig.arg_nodes[i], args[i], "argument");
  for (size_t i = 0; i < aux.size(); ++i) check_var(b.ig.aux_nodes[i], aux[i], "auxiliary state");
}

// Placement: nodes by their __ctx_group__ attribute, variables where their arrays are.
Placement PlaceNodes(const graph::IndexedGraph& ig, const Context& ctx, const std::map<std::string, Context>& groups,
                     const std::vector<NDArray>& args, const std::vector<NDArray>& aux) {
  Placement place;
  place.contexts = {ctx};
  auto dev_of = [&](const Context& c) {
    for (size_t i = 0; i < place.contexts.size(); ++i)
      if (place.contexts[i] == c) return static_cast<int32_t>(i);
    place.contexts.push_back(c);
    return static_cast<int32_t>(place.contexts.size() - 1);
  };
  place.node_dev.assign(ig.nodes.size(), 0);
  for (uint32_t nid = 0; nid < ig.nodes.size(); ++nid) {
    const graph::Node& n = *ig.nodes[nid].node;
    auto g = n.attrs.find("__ctx_group__");
    if (n.is_variable() || g == n.attrs.end()) continue;
    auto it = groups.find(g->second);
    if (it != groups.end()) place.node_dev[nid] = dev_of(it->second);
  }
  for (const NDArray& a : args) place.arg_dev.push_back(dev_of(a.GetContext()));
  for (const NDArray& a : aux) place.aux_dev.push_back(dev_of(a.GetContext()));
  return place;
}

}  // namespace

void ExecState::Init(const Symbol& sym, const Context& context, const std::vector<NDArray>& args,
                     const std::vector<NDArray>& grads, const std::vector<OpReqType>& reqs,
                     const std::vector<NDArray>& aux, const std::map<std::string, Context>& groups,
                     const ExecState* shared) {
  WEFT_CHECK(!sym.IsEmpty(), "Executor::Bind: the symbol is empty");
  symbol = sym;
  ctx = context;
  group2ctx = groups;
  bulk = BulkConfig::FromEnv();
  {
    std::lock_guard<std::mutex> lock(plans_mu_);
    plans_.clear();
  }
  BoundGraph b{graph::Index(graph::ExpandSubgraphs(sym.outputs())), {}, {}, {}, {}};
  for (uint32_t nid : b.ig.arg_nodes) b.arg_names.push_back(b.ig.nodes[nid].node->name);
  for (uint32_t nid : b.ig.aux_nodes) b.aux_names.push_back(b.ig.nodes[nid].node->name);
  const bool placed = !groups.empty();
  CheckArrays("argument", args, b.arg_names, ctx, placed);
  CheckArrays("auxiliary state", aux, b.aux_names, ctx, placed);
  grad_reqs = ResolveRequests(b.arg_names, args, grads, reqs);
  std::vector<int32_t> req_codes;
  for (OpReqType r : grad_reqs) req_codes.push_back(static_cast<int32_t>(r));
  InferFromBoundArrays(b, args, aux);
  optimized = sym;
  const bool inference = std::all_of(grad_reqs.begin(), grad_reqs.end(), [](OpReqType r) { return r == kNullOp; });
  if (inference && groups.empty()) FuseForInference(b, args, aux);
  CheckBlockedLayouts(b.ig);
  Placement place = PlaceNodes(b.ig, ctx, groups, args, aux);
  graph = BuildExecGraph(std::move(b.ig), b.shapes, b.types, req_codes, place);
  if (inference && groups.empty() && ConcatInPlaceEnabled()) PlaceConcatInputs(graph);
  plan = PlanMemory(graph);
  AllocateBlocks(shared);
  BindEntries(args, grads, aux);
  PrepareKernels();
}

void ExecState::FuseForInference(BoundGraph& b, const std::vector<NDArray>& args, const std::vector<NDArray>& aux) {
  if (!GraphFusionEnabled()) return;
  for (const char* op : {"_sg_conv", "_sg_batch_norm"})  // what the pass makes
    if (!internal::FindKernel(Runtime::Get(), op, ctx.GetDeviceType(), DType::kFloat32)) return;
  // The layout the device's fused convolutions may pass activations in (none without the
  // attribute, or with WEFT_BLOCKED_ACTIVATIONS=0) and the activations they take.
  FusionTarget target;
  const bool blocked = GetEnvBool("WEFT_BLOCKED_ACTIVATIONS", true);
  for (const auto& [key, value] : internal::GetDevice(Runtime::Get(), ctx).properties().attributes) {
    if (key == "blocked_activations" && blocked) target.blocked_format = value;
    if (key == "fused_activations") {
      target.activations.clear();
      std::istringstream words(value);
      for (std::string w; std::getline(words, w, ',');) target.activations.push_back(w);
    }
  }
  size_t swapped = 0, fused = 0;
  std::vector<graph::Entry> heads = PoolBeforeConvolution(b.ig, b.shapes, b.types, &swapped);
  if (swapped != 0) AdoptRewrite(b, heads, args, aux);
  heads = FuseConvolutions(b.ig, b.shapes, b.types, target, &fused);
  if (fused != 0) AdoptRewrite(b, heads, args, aux);
  if (swapped != 0 || fused != 0) optimized = Symbol::FromOutputs(std::move(heads));
}

void ExecState::AdoptRewrite(BoundGraph& b, const std::vector<graph::Entry>& heads, const std::vector<NDArray>& args,
                             const std::vector<NDArray>& aux) {
  BoundGraph f{graph::Index(heads), b.arg_names, b.aux_names, {}, {}};
  // The variables are the same nodes; keep the bound arrays' order (the rewritten graph's
  // depth-first order may differ).
  auto reorder = [&](const std::vector<uint32_t>& old_ids, std::vector<uint32_t>& ids) {
    std::map<const graph::Node*, uint32_t> id_of;
    for (uint32_t nid : ids) id_of[f.ig.nodes[nid].node.get()] = nid;
    WEFT_CHECK(id_of.size() == old_ids.size(),
               "Executor::Bind: an inference graph rewrite lost a variable (internal error)");
    ids.clear();
    for (uint32_t nid : old_ids) ids.push_back(id_of.at(b.ig.nodes[nid].node.get()));
  };
  reorder(b.ig.arg_nodes, f.ig.arg_nodes);
  reorder(b.ig.aux_nodes, f.ig.aux_nodes);
  InferFromBoundArrays(f, args, aux);
  b = std::move(f);
}

void ExecState::BindEntries(const std::vector<NDArray>& args, const std::vector<NDArray>& grads,
                            const std::vector<NDArray>& aux) {
  entries.assign(graph.entries.size(), NDArray());
  for (size_t e = 0; e < graph.entries.size(); ++e) {
    const EntryInfo& info = graph.entries[e];
    const Context& ectx = graph.contexts[static_cast<size_t>(info.dev)];
    switch (info.kind) {
      case EntryKind::kArg:
        entries[e] = args[info.index];
        break;
      case EntryKind::kAux:
        entries[e] = aux[info.index];
        break;
      case EntryKind::kArgGrad:
        entries[e] = grads[info.index];
        break;
      case EntryKind::kZero:
        entries[e] = NDArray(info.shape, ectx, false, info.dtype);
        entries[e] = 0.0f;
        break;
      case EntryKind::kHeadGrad:
        entries[e] = NDArray(info.shape, ectx, false, info.dtype);
        break;
      case EntryKind::kInternal: {
        if (plan.storage[e] < 0) {
          entries[e] = NDArray(info.shape, ectx, false, info.dtype);
          break;
        }
        const NDArray& block = blocks[static_cast<size_t>(plan.storage[e])];
        if (info.view_of == kNoEntry) {
          entries[e] = block.AsArray(info.shape, info.dtype);
          break;
        }
        // A view (concat_view.h: 4-D) starts at its first channel of image 0; it ends within the
        // block (view_channel + n * C <= n * C_total), so the contiguous shape fits.
        const size_t at =
            static_cast<size_t>(info.view_channel * info.shape[2] * info.shape[3]) * DTypeSize(info.dtype);
        entries[e] = block.Slice(at, static_cast<size_t>(block.GetShape()[0])).AsArray(info.shape, info.dtype);
        break;
      }
    }
  }
}

void ExecState::PrepareKernels() {
  runs.clear();
  runs.resize(graph.nodes.size());
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const ExecNode& x = graph.nodes[k];
    NodeRun& r = runs[k];
    NodeSignature sig;
    for (uint32_t e : x.inputs) {
      r.inputs.push_back(entries[e]);
      sig.in_shapes.push_back(graph.entries[e].shape);
      sig.in_dtypes.push_back(graph.entries[e].dtype);
    }
    for (size_t o = 0; o < x.outputs.size(); ++o) {
      r.outputs.push_back(x.outputs[o] == kNoEntry ? NDArray() : entries[x.outputs[o]]);
      sig.out_shapes.push_back(graph.entries[x.out_like[o]].shape);
      sig.out_dtypes.push_back(graph.entries[x.out_like[o]].dtype);
    }
    for (uint32_t e : x.aux) {
      r.aux.push_back(entries[e]);
      sig.aux_shapes.push_back(graph.entries[e].shape);
      sig.aux_dtypes.push_back(graph.entries[e].dtype);
    }
    if (x.is_copy) continue;
    try {
      r.runner =
          std::make_shared<KernelRunner>(x.op, x.params, graph.contexts[static_cast<size_t>(x.dev)], sig, x.resources);
      r.runner->SetNodeName(x.name);
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const Error& e) {
      Fail("Executor::Bind: node '{}': {}", x.name, e.what());
    }
  }
}

void ExecState::RunNodes(size_t begin, size_t end, bool is_train) const {
  size_t max_nodes = 1;
  if (!monitor) {
    if (!is_train) {
      if (bulk.inference) max_nodes = end - begin;
    } else if (bulk.train) {
      max_nodes = static_cast<size_t>(begin < graph.num_forward ? bulk.max_node_train_fwd : bulk.max_node_train_bwd);
    }
  }
  if (max_nodes <= 1) {
    RunNodesOneByOne(begin, end, is_train);
    return;
  }
  const Plan& plan = GetPlan(begin, end, max_nodes);
  Engine* engine = Engine::Get();
  size_t single = 0;
  for (const auto& seg : plan.segments) {
    if (!seg) {
      const size_t k = plan.singles[single++];
      RunNodesOneByOne(k, k + 1, is_train);
      continue;
    }
    for (const NodeRun& r : seg->nodes)
      for (const auto* list : {&r.outputs, &r.aux})
        for (const NDArray& x : *list) x.NoteWrite();
    // Seeds are drawn now, in push order as for unbulked runs: drawn when the segment runs, they
    // would depend on whether mx.random.seed came before or after that (a race).
    std::vector<uint64_t> seeds(seg->nodes.size(), 0);
    for (size_t i = 0; i < seeds.size(); ++i)
      if (seg->nodes[i].runner->uses_random()) seeds[i] = NextRandomSeed();
    engine->PushSync(
        [seg, is_train, seeds = std::move(seeds)](RunContext rctx) {
          for (size_t i = 0; i < seg->nodes.size(); ++i) {
            const NodeRun& r = seg->nodes[i];
            r.runner->RunInline(rctx, r.inputs, r.outputs, seg->reqs[i], r.aux, is_train, seeds[i]);
          }
        },
        seg->ctx, seg->reads, seg->writes, FnProperty::kNormal, 0, seg->name.c_str());
  }
}

bool ExecState::RebindArg(uint32_t arg, const NDArray& array) {
  const uint32_t eid = graph.arg_entries[arg];
  const NDArray old = entries[eid];
  if (old.SharesChunkWith(array) && old.offset() == array.offset()) return true;
  // Only plain reads of the whole argument may be redirected; anything else (a reshape view, the
  // argument as an output, an aux or in-place write) keeps the copy.
  auto whole = [&](const NDArray& x) {
    return x.offset() == old.offset() && x.GetShape() == old.GetShape() && x.GetDType() == old.GetDType();
  };
  auto is_arg = [&](const NDArray& x) { return x.SharesChunkWith(old) && whole(x); };
  // `array` may share a chunk with the current value (consecutive batches viewing one data set).
  auto touches = [&](const NDArray& x) { return x.SharesChunkWith(old) || x.SharesChunkWith(array); };
  if (std::find(graph.heads.begin(), graph.heads.end(), eid) != graph.heads.end()) return false;
  for (size_t e = 0; e < entries.size(); ++e)
    if (e != eid && touches(entries[e])) return false;
  for (const NodeRun& r : runs) {
    for (const auto* list : {&r.outputs, &r.aux})
      for (const NDArray& x : *list)
        if (touches(x)) return false;
    for (const NDArray& x : r.inputs)
      if (!is_arg(x) && touches(x)) return false;
  }
  entries[eid] = array;
  Redirect(old, array);
  return true;
}

bool ExecState::RebindEntry(uint32_t eid, const NDArray& array) {
  const NDArray old = entries[eid];
  if (old.SharesChunkWith(array) && old.offset() == array.offset()) return true;
  auto same = [&](const NDArray& x) {
    return x.SharesChunkWith(old) && x.offset() == old.offset() && x.GetShape() == old.GetShape() &&
           x.GetDType() == old.GetDType();
  };
  auto touches = [&](const NDArray& x) { return x.SharesChunkWith(old) || x.SharesChunkWith(array); };
  for (size_t e = 0; e < entries.size(); ++e)
    if (e != eid && touches(entries[e])) return false;
  for (const NodeRun& r : runs)
    for (const auto* list : {&r.inputs, &r.outputs, &r.aux})
      for (const NDArray& x : *list)
        if (!same(x) && touches(x)) return false;
  entries[eid] = array;
  Redirect(old, array);
  return true;
}

void ExecState::Redirect(const NDArray& old, const NDArray& array) {
  array.CheckAndAlloc();  // bulk segments run kernels inline on allocated arrays
  auto is_old = [&](const NDArray& x) {
    return x.SharesChunkWith(old) && x.offset() == old.offset() && x.GetShape() == old.GetShape() &&
           x.GetDType() == old.GetDType();
  };
  auto redirect = [&](std::vector<NDArray>& arrays) {
    for (NDArray& x : arrays)
      if (is_old(x)) x = array;
  };
  for (NodeRun& r : runs)
    for (auto* list : {&r.inputs, &r.outputs, &r.aux}) redirect(*list);
  // Pushed segments keep their own copies; the cached ones are replaced, not edited.
  std::lock_guard<std::mutex> lock(plans_mu_);
  const VarHandle from = old.var(), to = array.var();
  for (auto& [key, plan] : plans_) {
    for (auto& seg : plan->segments) {
      if (!seg) continue;
      const bool reads = std::find(seg->reads.begin(), seg->reads.end(), from) != seg->reads.end();
      const bool writes = std::find(seg->writes.begin(), seg->writes.end(), from) != seg->writes.end();
      if (!reads && !writes) continue;
      auto copy = std::make_shared<Segment>(*seg);
      for (NodeRun& r : copy->nodes)
        for (auto* list : {&r.inputs, &r.outputs, &r.aux}) redirect(*list);
      for (auto* vars : {&copy->reads, &copy->writes}) {
        std::replace(vars->begin(), vars->end(), from, to);
        std::sort(vars->begin(), vars->end());
        vars->erase(std::unique(vars->begin(), vars->end()), vars->end());
      }
      seg = std::move(copy);
    }
  }
}

const ExecState::Plan& ExecState::GetPlan(size_t begin, size_t end, size_t max_nodes) const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  auto& slot = plans_[{begin, end, max_nodes}];
  if (slot) return *slot;
  auto plan = std::make_unique<Plan>();
  size_t k = begin;
  while (k < end) {
    // A segment: consecutive kernel nodes on one device, at most max_nodes of them.
    size_t e = k;
    // Host operators run on their own threads, never inside a bulked segment.
    auto bulkable = [&](size_t n) { return !graph.nodes[n].is_copy && !(runs[n].runner && runs[n].runner->is_host()); };
    while (e < end && e - k < max_nodes && bulkable(e) && graph.nodes[e].dev == graph.nodes[k].dev) ++e;
    if (e - k >= 2) {
      plan->segments.push_back(MakeSegment(k, e));
      k = e;
    } else {
      plan->segments.push_back(nullptr);
      plan->singles.push_back(k);
      ++k;
    }
  }
  slot = std::move(plan);
  return *slot;
}

std::shared_ptr<const Segment> ExecState::MakeSegment(size_t begin, size_t end) const {
  auto seg = std::make_shared<Segment>();
  seg->ctx = graph.contexts[static_cast<size_t>(graph.nodes[begin].dev)];
  seg->name = fmt::format("bulk({}..{})", graph.nodes[begin].name, graph.nodes[end - 1].name);
  auto add = [](const std::vector<NDArray>& arrays, std::vector<VarHandle>& vars) {
    for (const NDArray& a : arrays) {
      if (a.is_none()) continue;
      a.CheckAndAlloc();  // RunInline needs allocated arrays
      vars.push_back(a.var());
    }
  };
  for (size_t k = begin; k < end; ++k) {
    const NodeRun& r = runs[k];
    seg->nodes.push_back(r);
    seg->reqs.push_back(graph.nodes[k].req);
    add(r.inputs, seg->reads);
    add(r.outputs, seg->writes);
    add(r.aux, seg->writes);
    // The shared workspace slot the node computes in (other operations may use it too).
    if (r.runner && r.runner->workspace_var() != nullptr) seg->writes.push_back(r.runner->workspace_var());
  }
  // The engine de-duplicates; a variable both read and written (an internal value) is a write.
  std::sort(seg->reads.begin(), seg->reads.end());
  seg->reads.erase(std::unique(seg->reads.begin(), seg->reads.end()), seg->reads.end());
  std::sort(seg->writes.begin(), seg->writes.end());
  seg->writes.erase(std::unique(seg->writes.begin(), seg->writes.end()), seg->writes.end());
  return seg;
}

NDArray ExecState::Monitored(uint32_t eid, const NDArray& a) const {
  const uint32_t parent = graph.entries[eid].view_of;
  return parent == kNoEntry ? a : ContiguousCopy(graph, eid, entries[parent]);
}

void ExecState::RunNodesOneByOne(size_t begin, size_t end, bool is_train) const {
  for (size_t k = begin; k < end; ++k) {
    const ExecNode& x = graph.nodes[k];
    const NodeRun& r = runs[k];
    // Inputs are reported before the node runs: it may overwrite them in place.
    if (monitor && monitor_all && x.fwd != nullptr && !x.backward) {
      for (size_t i = 0; i < r.inputs.size(); ++i) {
        r.inputs[i].WaitToRead();
        const int64_t block = ActivationBlock(x.op, x.params, static_cast<int>(i));
        const NDArray a = Monitored(x.inputs[i], r.inputs[i]);
        monitor(x.name + "_" + x.fwd->input_names[i], block ? PlainCopy(a, block) : a);
      }
    }
    if (x.is_copy) {
      NDArray::CopyFromTo(r.inputs[0], r.outputs[0]);
    } else {
      r.runner->Run(r.inputs, r.outputs, x.req, r.aux, is_train);
    }
    if (!monitor) continue;
    const size_t visible = (!x.backward && x.fwd != nullptr) ? x.fwd->num_visible_outputs : r.outputs.size();
    for (size_t o = 0; o < visible && o < r.outputs.size(); ++o) {
      if (r.outputs[o].is_none()) continue;
      r.outputs[o].WaitToRead();
      std::string name = (!x.backward && x.fwd != nullptr) ? x.name + "_" + x.fwd->output_names[o]
                                                           : x.name + "_output" + std::to_string(o);
      // Blocked activations (fuse_conv.h) are reported in NCHW, as every other array.
      const int64_t block = x.backward ? 0 : ActivationBlock(x.op, x.params, -1);
      const NDArray a = Monitored(x.outputs[o], r.outputs[o]);
      monitor(name, block ? PlainCopy(a, block) : a);
    }
  }
}

}  // namespace weft::exec

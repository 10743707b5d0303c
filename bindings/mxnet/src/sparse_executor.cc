#include "sparse_executor.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "common.h"
#include "storage_fallback.h"
#include "weft/autograd.h"
#include "weft/imperative.h"
#include "weft/logging.h"
#include "weft/ndarray.h"
#include "weft/sparse.h"

namespace weft::mx {
namespace {

using Entry = std::pair<size_t, size_t>;  // (node id, output index)

// Element-wise ops that MXNet runs on a csr array keeping its stored elements (their value at 0
// is 0): a dot's csr lhs may pass through them.
const std::set<std::string, std::less<>>& KeepCsrOps() {
  static const std::set<std::string, std::less<>> ops = {
      "_copy",   "_mul_scalar", "_div_scalar", "abs",   "arcsin", "arcsinh",  "arctan",  "arctanh", "ceil",
      "degrees", "expm1",       "fix",         "floor", "log1p",  "negative", "radians", "relu",    "rint",
      "round",   "sign",        "sin",         "sinh",  "sqrt",   "square",   "tan",     "tanh",    "trunc"};
  return ops;
}

bool IsTrue(const std::string& v) { return v == "True" || v == "true" || v == "1"; }

// The symbol's graph as its JSON gives it, with each entry's consumers.
struct Graph {
  nlohmann::json nodes;
  std::map<Entry, std::vector<Entry>> consumers;  // entry -> (node, input slot)
  std::set<Entry> heads;
  std::map<size_t, size_t> arg_of;  // variable node -> argument index
  std::vector<StorageType> stypes;  // per argument
  // OutPlan's and GradPlan's results by entry: a graph that reuses an entry (y * y) is walked once.
  mutable std::map<Entry, StoragePlan> out_plans, grad_plans;

  Graph(const Symbol& s, std::vector<StorageType> arg_stypes) : stypes(std::move(arg_stypes)) {
    const nlohmann::json g = nlohmann::json::parse(s.ToJSON());
    nodes = g.at("nodes");
    for (const auto& h : g.at("heads")) heads.emplace(h.at(0).get<size_t>(), h.at(1).get<size_t>());
    const std::vector<std::string> args = s.ListArguments();
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (IsVariable(n)) {
        auto it = std::find(args.begin(), args.end(), nodes[n].at("name").get<std::string>());
        if (it != args.end()) arg_of[n] = static_cast<size_t>(it - args.begin());
        continue;
      }
      const auto& in = nodes[n].at("inputs");
      for (size_t k = 0; k < in.size(); ++k)
        consumers[{in[k].at(0).get<size_t>(), in[k].at(1).get<size_t>()}].emplace_back(n, k);
    }
  }
  bool IsVariable(size_t n) const { return nodes[n].value("op", "null") == "null"; }
  std::string Op(size_t n) const { return nodes[n].value("op", "null"); }
  std::string Name(size_t n) const { return nodes[n].value("name", ""); }
  std::string Attr(size_t n, const char* key, const char* fallback) const {
    for (const char* group : {"attrs", "attr", "param"}) {
      if (!nodes[n].contains(group)) continue;
      auto it = nodes[n][group].find(key);
      if (it != nodes[n][group].end()) return it->get<std::string>();
    }
    return fallback;
  }
  Entry Input(size_t n, size_t k) const {
    const auto& in = nodes[n].at("inputs").at(k);
    return {in.at(0).get<size_t>(), in.at(1).get<size_t>()};
  }
  // The argument that entry e is, when e is an argument of storage type `stype`.
  std::optional<size_t> ArgOf(Entry e, StorageType stype) const {
    auto it = arg_of.find(e.first);
    if (it == arg_of.end() || stypes[it->second] != stype) return std::nullopt;
    return it->second;
  }
  // The csr argument whose stored elements entry e has (through KeepCsrOps).
  std::optional<size_t> CsrArg(Entry e) const {
    if (IsVariable(e.first)) return ArgOf(e, StorageType::kCSR);
    if (!KeepCsrOps().contains(Op(e.first))) return std::nullopt;
    return CsrArg(Input(e.first, 0));
  }
};

void WarnDenseEmbeddingGrad(const std::string& node) {
  if (!FirstTime("dense embedding gradient: " + node)) return;
  LogWarning(
      "{}: sparse_grad=True but data is not an argument of the graph; weft reads a row_sparse gradient's rows from "
      "an argument, so this weight's gradient is dense",
      node);
}

bool IsCast(const std::string& op) { return op == "cast_storage" || op == "_sparse_cast_storage"; }

// Ops whose sparse result stores what their (first) input stores (MXNet's FComputeEx of the
// unary ops that keep zeros and of the scatter scalar ops; MakeLoss).
bool KeepsStorage(const std::string& op) {
  return KeepCsrOps().contains(op) || op == "_scatter_plus_scalar" || op == "_scatter_minus_scalar" ||
         op == "MakeLoss" || op == "make_loss";
}

bool IsElemwiseMul(const std::string& op) { return op == "elemwise_mul" || op == "_mul" || op == "_Mul"; }

RowSource Source(RowSource::Kind kind, size_t arg, std::string node = "") {
  RowSource src;
  src.kind = kind;
  src.arg = arg;
  src.node = std::move(node);
  return src;
}

// MXNet's forward storage of entry e (its ops' FInferStorageType): an argument's own; what the
// ops above keep; cast_storage's stype; _sparse_retain's row_sparse storing the indices' rows;
// _scatter_elemwise_div of a row_sparse lhs, row_sparse storing lhs's rows. Anything else is dense.
StoragePlan OutPlan(const Graph& g, Entry e);

StoragePlan OutPlanOf(const Graph& g, Entry e) {
  StoragePlan plan;
  if (g.IsVariable(e.first)) {
    auto it = g.arg_of.find(e.first);
    if (it == g.arg_of.end()) return plan;
    plan.stype = g.stypes[it->second];
    if (plan.stype == StorageType::kRowSparse) plan.rows = RowPlan{Source(RowSource::Kind::kStoredRows, it->second)};
    if (plan.stype == StorageType::kCSR) plan.pattern = it->second;
    return plan;
  }
  const std::string op = g.Op(e.first);
  if (e.second != 0) return plan;
  if (KeepsStorage(op)) return OutPlan(g, g.Input(e.first, 0));
  if (IsElemwiseMul(op)) {
    // MXNet's elemwise_mul of a row_sparse array and a dense one stores the row_sparse one's rows;
    // of two row_sparse ones it is row_sparse too (here: its non-zero rows).
    StoragePlan lhs = OutPlan(g, g.Input(e.first, 0)), rhs = OutPlan(g, g.Input(e.first, 1));
    if (lhs.stype == StorageType::kRowSparse && rhs.stype == StorageType::kRowSparse) {
      plan.stype = StorageType::kRowSparse;
      return plan;
    }
    if (lhs.stype == StorageType::kRowSparse && rhs.stype == StorageType::kDefault) return lhs;
    if (rhs.stype == StorageType::kRowSparse && lhs.stype == StorageType::kDefault) return rhs;
    return plan;
  }
  if (op == "_scatter_elemwise_div") {
    StoragePlan lhs = OutPlan(g, g.Input(e.first, 0));
    return lhs.stype == StorageType::kRowSparse ? lhs : plan;
  }
  if (IsCast(op)) {
    plan.stype = StorageTypeFromName(g.Attr(e.first, "stype", "default"));
    StoragePlan in = OutPlan(g, g.Input(e.first, 0));
    if (in.stype != StorageType::kDefault && plan.stype != StorageType::kDefault && in.stype != plan.stype) {
      Fail("node '{}' (cast_storage): from {} to {} is not supported (as in MXNet): cast to 'default' first",
           g.Name(e.first), StorageTypeName(in.stype), StorageTypeName(plan.stype));
    }
    return in.stype == plan.stype ? in : plan;  // to another type: the non-zero values are stored
  }
  if (op == "_sparse_retain") {
    plan.stype = StorageType::kRowSparse;
    if (auto indices = g.ArgOf(g.Input(e.first, 1), StorageType::kDefault))
      plan.rows =
          RowPlan{Source(RowSource::Kind::kIndexValues, *indices, "node '" + g.Name(e.first) + "' (" + op + ")")};
  }
  return plan;
}

// MXNet's storage of the gradient of entry e: dense unless every use gives a sparse one of one
// type (sparse_executor.h). A row_sparse one stores the union of the uses' rows.
StoragePlan OutPlan(const Graph& g, Entry e) {
  if (auto it = g.out_plans.find(e); it != g.out_plans.end()) return it->second;
  return g.out_plans[e] = OutPlanOf(g, e);
}

StoragePlan GradPlan(const Graph& g, Entry e);

StoragePlan GradPlanOf(const Graph& g, Entry e) {
  StoragePlan dense;
  if (g.heads.contains(e)) {
    // MXNet's head gradient has the output's storage type; an argument's own is dense.
    if (g.IsVariable(e.first)) return dense;
    StoragePlan head;
    head.stype = OutPlan(g, e).stype;
    return head;
  }
  StoragePlan plan;
  plan.stype = StorageType::kRowSparse;
  plan.rows.emplace();
  auto it = g.consumers.find(e);
  if (it == g.consumers.end()) return plan;
  bool first = true;
  for (const auto& [n, slot] : it->second) {
    const std::string op = g.Op(n);
    StoragePlan use;
    use.stype = StorageType::kRowSparse;
    RowSource src;
    src.node = "node '" + g.Name(n) + "' (" + op + ")";
    if (op == "Embedding" && slot == 1 && IsTrue(g.Attr(n, "sparse_grad", "False"))) {
      const std::optional<size_t> data = g.ArgOf(g.Input(n, 0), StorageType::kDefault);
      if (!data) {
        WarnDenseEmbeddingGrad(src.node);
        return dense;
      }
      src.kind = RowSource::Kind::kIndexValues;
      src.arg = *data;
      src.bound = std::stoll(g.Attr(n, "input_dim", "0"));
      use.rows = RowPlan{src};
    } else if (op == "dot" && slot == 1 && !IsTrue(g.Attr(n, "transpose_a", "False")) &&
               !IsTrue(g.Attr(n, "transpose_b", "False"))) {
      const std::optional<size_t> csr = g.CsrArg(g.Input(n, 0));
      if (!csr) return dense;
      src.kind = RowSource::Kind::kCsrColumns;
      src.arg = *csr;
      use.rows = RowPlan{src};
    } else if (op == "_square_sum" && slot == 0) {
      const std::optional<size_t> data = g.ArgOf(e, StorageType::kRowSparse);
      if (!data) return dense;  // MXNet's _square_sum takes row_sparse data only
      src.kind = RowSource::Kind::kStoredRows;
      src.arg = *data;
      if (SquareSumKeepsRows(g.Attr(n, "axis", "()"), g.Attr(n, "keepdims", "False"))) {
        const StoragePlan out = GradPlan(g, {n, 0});
        if (out.stype == StorageType::kRowSparse) src.within = out.rows;
      }
      use.rows = RowPlan{src};
    } else if (op == "_sparse_retain" && slot == 0) {
      // _backward_sparse_retain: out_grad's rows at the indices (every index, as in MXNet).
      const StoragePlan out = OutPlan(g, {n, 0});
      use.rows = out.rows;
    } else if (slot == 0 && (IsCast(op) || KeepsStorage(op))) {
      // cast_storage's gradient is its out_grad (MXNet's _copy of it); an element-wise op's keeps
      // a sparse out_grad's type when its input has that type (the non-zero rows or elements).
      use = GradPlan(g, {n, 0});
      if (!IsCast(op) && use.stype != OutPlan(g, e).stype) return dense;
      use.rows.reset();
      use.pattern.reset();
    } else {
      return dense;
    }
    if (use.stype == StorageType::kDefault || (!first && use.stype != plan.stype)) return dense;
    if (plan.rows && use.rows) {
      plan.rows->insert(plan.rows->end(), use.rows->begin(), use.rows->end());
    } else {
      plan.rows.reset();
    }
    plan.stype = use.stype;
    first = false;
  }
  if (plan.stype != StorageType::kRowSparse) plan.rows.reset();
  return plan;
}

StoragePlan GradPlan(const Graph& g, Entry e) {
  if (auto it = g.grad_plans.find(e); it != g.grad_plans.end()) return it->second;
  return g.grad_plans[e] = GradPlanOf(g, e);
}

NDArray IndexArray(const std::vector<int64_t>& rows, const Context& ctx) {
  NDArray a(Shape{static_cast<int64_t>(rows.size())}, ctx, false, DType::kInt64);
  if (!rows.empty()) a.SyncCopyFromCPUBytes(rows.data(), rows.size() * sizeof(int64_t));
  return a;
}

void SortUnique(std::vector<int64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// Writes dense `dense` into csr `target` storing the elements csr `pattern` stores (MXNet's
// element-wise kernels on a csr input keep its indptr and indices), zero or not.
void WriteCsrLike(const NDArray& dense, const NDArray& pattern, const NDArray& target) {
  if (pattern.storage_type() != StorageType::kCSR || pattern.GetShape() != dense.GetShape()) {
    WriteSparse(dense, target);
    return;
  }
  const std::vector<int64_t> indptr = HostIndices(pattern.aux_ndarray(kCSRIndPtr));
  const std::vector<int64_t> indices = HostIndices(pattern.aux_ndarray(kCSRIndices));
  const int64_t cols = dense.GetShape()[1];
  std::vector<int64_t> flat(indices.size());
  for (size_t r = 0; r + 1 < indptr.size(); ++r)
    for (auto k = static_cast<size_t>(indptr[r]); k < static_cast<size_t>(indptr[r + 1]); ++k)
      flat[k] = static_cast<int64_t>(r) * cols + indices[k];
  const Context ctx = dense.GetContext();
  NDArray values(Shape{static_cast<int64_t>(flat.size())}, ctx, false, dense.GetDType());
  if (!flat.empty()) {
    const NDArray all = InvokeOne("Reshape", {dense}, {{"shape", "(-1,)"}});
    values = InvokeOne("take", {all, IndexArray(flat, ctx)}, {});
  }
  const NDArray result = NDArray::FromSparseParts(StorageType::kCSR, dense.GetShape(), values,
                                                  {IndexArray(indptr, ctx), IndexArray(indices, ctx)});
  NDArray::CopyFromTo(result, target);
  target.WaitToRead();
}

}  // namespace

Symbol DenseEmulation(const Symbol& symbol) {
  nlohmann::json g = nlohmann::json::parse(symbol.ToJSON());
  bool changed = false;
  for (auto& node : g.at("nodes")) {
    if (!IsCast(node.value("op", "null"))) continue;
    node["op"] = "_copy";
    for (const char* group : {"attrs", "attr", "param"})
      if (node.contains(group)) node[group].erase("stype");
    changed = true;
  }
  return changed ? Symbol::LoadJSON(g.dump()) : symbol;
}

std::vector<StorageType> ArgStorageTypes(const Symbol& symbol, const std::map<std::string, StorageType>& given) {
  const std::vector<std::string> args = symbol.ListArguments();
  const auto attrs = symbol.AttrDict();
  std::vector<StorageType> out;
  for (const std::string& name : args) {
    if (auto it = given.find(name); it != given.end()) {
      out.push_back(it->second);
      continue;
    }
    StorageType stype = StorageType::kDefault;
    if (auto a = attrs.find(name); a != attrs.end()) {
      if (auto s = a->second.find("__storage_type__"); s != a->second.end()) {
        int code = 0;
        try {
          code = std::stoi(s->second);
        } catch (const std::exception&) {
          Fail("variable '{}': __storage_type__ '{}' is not a storage type code (0 default, 1 row_sparse, 2 csr)", name,
               s->second);
        }
        if (code < 0 || code > 2)
          Fail("variable '{}': __storage_type__ {} is not 0 (default), 1 (row_sparse) or 2 (csr)", name, code);
        stype = static_cast<StorageType>(code);
      }
    }
    out.push_back(stype);
  }
  return out;
}

SparseStorage::SparseStorage(const Symbol& symbol, std::vector<StorageType> arg_stypes)
    : arg_stypes_(std::move(arg_stypes)) {
  const Graph g(symbol, arg_stypes_);
  grad_plans_.resize(arg_stypes_.size());
  for (const auto& [node, arg] : g.arg_of) grad_plans_[arg] = GradPlan(g, {node, 0});
  const nlohmann::json heads = nlohmann::json::parse(symbol.ToJSON()).at("heads");
  for (const auto& h : heads) out_plans_.push_back(OutPlan(g, {h.at(0).get<size_t>(), h.at(1).get<size_t>()}));
}

StorageType SparseStorage::grad_stype(size_t i) const {
  return i < grad_plans_.size() ? grad_plans_[i].stype : StorageType::kDefault;
}

StorageType SparseStorage::output_stype(size_t i) const {
  return i < out_plans_.size() ? out_plans_[i].stype : StorageType::kDefault;
}

bool SparseStorage::all_dense() const {
  for (size_t i = 0; i < arg_stypes_.size(); ++i)
    if (arg_stypes_[i] != StorageType::kDefault || grad_stype(i) != StorageType::kDefault) return false;
  for (const StoragePlan& p : out_plans_)
    if (p.stype != StorageType::kDefault) return false;
  return true;
}

std::vector<NDArray> SparseStorage::AttachOutputs(const std::vector<NDArray>& outputs) {
  std::vector<NDArray> front = outputs;
  for (size_t i = 0; i < outputs.size() && i < out_plans_.size(); ++i) {
    const StorageType stype = out_plans_[i].stype;
    if (stype == StorageType::kDefault || outputs[i].is_none()) continue;
    front[i] = NDArray::CreateSparse(stype, outputs[i].GetShape(), outputs[i].GetContext(), outputs[i].GetDType());
    outs_.emplace_back(outputs[i], front[i]);
  }
  return front;
}

void SparseStorage::AfterForward() const {
  size_t k = 0;
  for (size_t i = 0; i < out_plans_.size() && k < outs_.size(); ++i) {
    if (out_plans_[i].stype == StorageType::kDefault) continue;
    Write(out_plans_[i], outs_[k].first, outs_[k].second);
    ++k;
  }
}

void SparseStorage::Attach(const std::vector<NDArray>& args, const std::vector<NDArray>& grads,
                           std::vector<NDArray>* core_args, std::vector<NDArray>* core_grads,
                           std::vector<OpReqType>* reqs) {
  front_args_ = args;
  *core_args = args;
  *core_grads = grads;
  auto dense_like = [](const NDArray& a) {
    NDArray d(a.GetShape(), a.GetContext(), false, a.GetDType());
    d = 0.0f;
    return d;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (!IsSparse(args[i])) continue;
    args_.push_back({i, args[i], dense_like(args[i]), kNullOp});
    (*core_args)[i] = args_.back().dense;
  }
  for (size_t i = 0; i < grads.size() && i < reqs->size(); ++i) {
    if (grads[i].is_none() || !IsSparse(grads[i])) continue;
    if ((*reqs)[i] == kNullOp) {
      (*core_grads)[i] = NDArray();  // never written: the Executor gets no array
      continue;
    }
    grads_.push_back({i, grads[i], dense_like(grads[i]), (*reqs)[i]});
    (*core_grads)[i] = grads_.back().dense;
    (*reqs)[i] = kWriteTo;  // this backward's gradient; 'add' is done in AfterBackward
  }
}

void SparseStorage::BeforeForward() const {
  for (const Pair& p : args_) DenseInto(p.front, p.dense);
}

std::vector<char> SparseStorage::Mark(const RowPlan& plan, int64_t rows) const {
  // A flag per row (not a sort of the indices): a csr batch names each column many times.
  std::vector<char> mark(static_cast<size_t>(rows), 0);
  auto set = [&](int64_t r) {
    if (r >= 0 && r < rows) mark[static_cast<size_t>(r)] = 1;
  };
  for (const RowSource& src : plan) {
    const NDArray& a = front_args_[src.arg];
    if (src.kind == RowSource::Kind::kIndexValues) {
      const std::vector<double> values = HostValues(a);
      const int64_t bound = src.bound > 0 ? src.bound : rows;
      for (size_t i = 0; i < values.size(); ++i) {
        const auto row = static_cast<int64_t>(values[i]);  // MXNet's cast: toward zero
        if (row < 0 || row >= bound) {
          if (src.bound <= 0)
            Fail("{}: indices[{}] = {} is not a row of data (rows 0..{})", src.node, i, values[i], bound - 1);
          Fail(
              "{}: data[{}] = {} is outside the weight's rows [0, {}) (MXNet: SparseEmbedding input contains data "
              "out of bound)",
              src.node, i, values[i], src.bound);
        }
        set(row);
      }
    } else if (src.kind == RowSource::Kind::kCsrColumns) {
      for (int64_t c : HostIndices(a.aux_ndarray(kCSRIndices))) set(c);
    } else {
      const std::vector<char> keep = src.within ? Mark(*src.within, rows) : std::vector<char>();
      auto add = [&](int64_t r) {
        if (!src.within || (r >= 0 && r < rows && keep[static_cast<size_t>(r)])) set(r);
      };
      if (a.storage_type() == StorageType::kRowSparse) {
        for (int64_t r : HostIndices(a.aux_ndarray(kRowSparseIndices))) add(r);
      } else {
        for (int64_t r = 0; r < a.GetShape()[0]; ++r) add(r);
      }
    }
  }
  return mark;
}

void SparseStorage::Write(const StoragePlan& plan, const NDArray& dense, const NDArray& target) const {
  if (target.storage_type() == StorageType::kRowSparse && plan.stype == StorageType::kRowSparse && plan.rows) {
    const std::vector<char> mark = Mark(*plan.rows, target.GetShape()[0]);
    std::vector<int64_t> rows;
    for (size_t r = 0; r < mark.size(); ++r)
      if (mark[r]) rows.push_back(static_cast<int64_t>(r));
    WriteSparse(dense, target, IndexArray(rows, target.GetContext()));
  } else if (target.storage_type() == StorageType::kCSR && plan.pattern) {
    WriteCsrLike(dense, front_args_[*plan.pattern], target);
  } else {
    WriteSparse(dense, target);
  }
}

void SparseStorage::AfterBackward() const {
  for (const Pair& p : grads_) {
    const StoragePlan& plan = grad_plans_[p.arg];
    std::optional<std::vector<int64_t>> rows;
    if (plan.stype == StorageType::kRowSparse && plan.rows) {
      const std::vector<char> mark = Mark(*plan.rows, p.front.GetShape()[0]);
      rows.emplace();
      for (size_t r = 0; r < mark.size(); ++r)
        if (mark[r]) rows->push_back(static_cast<int64_t>(r));
    }
    NDArray dense = p.dense;
    if (p.req == kAddTo) {
      dense = CastStorage(p.front, StorageType::kDefault) + p.dense;
      if (rows && p.front.storage_type() == StorageType::kRowSparse) {
        const std::vector<int64_t> held = HostIndices(p.front.aux_ndarray(kRowSparseIndices));
        rows->insert(rows->end(), held.begin(), held.end());
        SortUnique(&*rows);
      }
    }
    std::optional<NDArray> index;
    if (rows) index = IndexArray(*rows, p.front.GetContext());
    WriteSparse(dense, p.front, index);
  }
}

}  // namespace weft::mx

// ---- SparseSplit ---------------------------------------------------------------------------------

namespace weft::mx {
namespace {

// A dot that SparseSplit may cut: its node and the arguments it reads.
struct CutNode {
  size_t node, csr, rhs;
};

// The dots of the graph SparseSplit may cut (sparse_executor.h): dot(csr argument, argument read
// by that dot only), not transposed, whose output is not a graph output.
std::vector<CutNode> FindCuts(const Graph& g) {
  std::vector<CutNode> cuts;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (g.Op(n) != "dot" || IsTrue(g.Attr(n, "transpose_a", "False")) || IsTrue(g.Attr(n, "transpose_b", "False")) ||
        g.heads.contains({n, 0}))
      continue;
    const std::optional<size_t> csr = g.ArgOf(g.Input(n, 0), StorageType::kCSR);
    const Entry rhs = g.Input(n, 1);
    auto rhs_arg = g.arg_of.find(rhs.first);
    if (!csr || rhs_arg == g.arg_of.end() || g.stypes[rhs_arg->second] == StorageType::kCSR || g.heads.contains(rhs) ||
        g.consumers.at(rhs).size() != 1)
      continue;
    cuts.push_back({n, *csr, rhs_arg->second});
  }
  return cuts;
}

// target += add, both row_sparse of one shape: target then stores the union of their rows (the
// dense emulation's grad_req 'add').
void AddRowSparse(const NDArray& target, const NDArray& add) {
  std::vector<int64_t> rows = HostIndices(add.aux_ndarray(kRowSparseIndices));
  if (rows.empty()) return;
  const std::vector<int64_t> held = HostIndices(target.aux_ndarray(kRowSparseIndices));
  rows.insert(rows.end(), held.begin(), held.end());
  SortUnique(&rows);
  const NDArray index = IndexArray(rows, target.GetContext());
  auto gather = [&](const NDArray& src) {
    NDArray r =
        NDArray::CreateSparse(StorageType::kRowSparse, target.GetShape(), target.GetContext(), target.GetDType());
    RetainRowsInto(src, index, r);
    return r;
  };
  const NDArray sum = gather(target);
  NDArray values = sum.data_ndarray();
  values += gather(add).data_ndarray();
  values.WaitToRead();
  RetainRowsInto(sum, index, target);
}

// dot(lhs, rhs) on its sparse kernel into `out`. Never recorded: an executor's nodes are not on
// autograd's tape (and the tape refuses sparse calls), even when the frontend binds or runs the
// executor inside autograd.record().
void RunDot(const std::map<std::string, std::string>& params, const NDArray& lhs, const NDArray& rhs,
            const NDArray& out) {
  const autograd::RecordingStateScope unrecorded(false, std::nullopt);
  ImperativeCall call;
  call.op = "dot";
  call.params = params;
  call.inputs = {lhs, rhs};
  std::vector<NDArray> outs{out};
  Invoke(call, &outs);
}

}  // namespace

std::optional<SparseSplit::Cut> SparseSplit::Prepare(std::map<std::string, std::string> params, const NDArray& csr,
                                                     const NDArray& rhs, const NDArray& rhs_grad, OpReqType rhs_req,
                                                     OpReqType csr_req) {
  // The arrays must be as planned: a csr whose gradient nobody asks for, a 2-d rhs whose
  // requested gradient is a row_sparse array.
  if (csr.storage_type() != StorageType::kCSR || csr_req != kNullOp || rhs.GetShape().ndim() != 2 ||
      rhs.storage_type() == StorageType::kCSR ||
      (rhs_req != kNullOp && rhs_grad.storage_type() != StorageType::kRowSparse))
    return std::nullopt;
  Cut cut;
  cut.csr = csr;
  cut.rhs = rhs;
  cut.params = std::move(params);
  auto zeros = [&] {
    NDArray z(Shape{csr.GetShape()[0], rhs.GetShape()[1]}, rhs.GetContext(), false, rhs.GetDType());
    z = 0.0f;
    return z;
  };
  cut.out = zeros();
  cut.req = rhs_req;
  if (rhs_req != kNullOp) {
    cut.rhs_grad = rhs_grad;
    cut.out_grad = zeros();
  }
  ImperativeCall call;
  call.op = "dot";
  call.params = cut.params;
  call.inputs = {csr, rhs};
  if (!SparseKernelClaims(call, {cut.out})) return std::nullopt;  // no sparse kernel: not cut
  return cut;
}

std::unique_ptr<SparseSplit> SparseSplit::Make(const Symbol& symbol, const std::vector<StorageType>& arg_stypes,
                                               const std::vector<NDArray>& args, const std::vector<NDArray>& grads,
                                               const std::vector<OpReqType>& reqs, const std::vector<NDArray>& aux) {
  if (args.size() != arg_stypes.size()) return nullptr;
  const Graph g(symbol, arg_stypes);
  auto grad_of = [&](size_t i) { return i < grads.size() && i < reqs.size() ? grads[i] : NDArray(); };
  auto req_of = [&](size_t i) { return grad_of(i).is_none() ? kNullOp : reqs[i]; };

  std::unique_ptr<SparseSplit> split(new SparseSplit());
  nlohmann::json json = nlohmann::json::parse(symbol.ToJSON());
  std::set<std::string> names;
  for (const auto& node : json.at("nodes")) names.insert(node.value("name", ""));
  std::map<std::string, size_t> cut_named;  // the remainder's new variables -> cuts_ index
  for (const CutNode& c : FindCuts(g)) {
    std::map<std::string, std::string> params;
    for (const auto& [k, v] : g.nodes[c.node].value("attrs", nlohmann::json::object()).items())
      if (!k.starts_with("__") && v.is_string()) params[k] = v.get<std::string>();
    std::optional<Cut> cut =
        Prepare(std::move(params), args[c.csr], args[c.rhs], grad_of(c.rhs), req_of(c.rhs), req_of(c.csr));
    if (!cut) continue;
    std::string name = g.Name(c.node) + "_output";
    while (!names.insert(name).second) name += "_";
    json["nodes"][c.node] = {{"op", "null"}, {"name", name}, {"inputs", nlohmann::json::array()}};
    json["arg_nodes"].push_back(c.node);
    cut_named[name] = split->cuts_.size();
    split->cuts_.push_back(std::move(*cut));
  }
  if (split->cuts_.empty()) return nullptr;
  split->dense_ = Symbol::LoadJSON(json.dump());

  const std::vector<std::string> arg_names = symbol.ListArguments(), aux_names = symbol.ListAuxiliaryStates();
  for (const std::string& name : split->dense_.ListArguments()) {
    if (auto c = cut_named.find(name); c != cut_named.end()) {
      const Cut& cut = split->cuts_[c->second];
      split->core_args_.push_back(cut.out);
      split->core_grads_.push_back(cut.out_grad);
      split->core_reqs_.push_back(cut.req == kNullOp ? kNullOp : kWriteTo);
      split->core_stypes_.push_back(StorageType::kDefault);
      continue;
    }
    const auto i = static_cast<size_t>(std::find(arg_names.begin(), arg_names.end(), name) - arg_names.begin());
    split->core_args_.push_back(args.at(i));
    split->core_grads_.push_back(grad_of(i));
    split->core_reqs_.push_back(req_of(i));
    split->core_stypes_.push_back(arg_stypes[i]);
  }
  for (const std::string& name : split->dense_.ListAuxiliaryStates()) {
    const auto i = static_cast<size_t>(std::find(aux_names.begin(), aux_names.end(), name) - aux_names.begin());
    split->core_aux_.push_back(aux.at(i));
  }
  return split;
}

void SparseSplit::BeforeForward() const {
  for (const Cut& c : cuts_) RunDot(c.params, c.csr, c.rhs, c.out);
}

void SparseSplit::AfterBackward() const {
  for (const Cut& c : cuts_) {
    if (c.req == kNullOp) continue;
    // The rhs's gradient csr.T . out_grad, row_sparse storing the csr's stored columns.
    const std::map<std::string, std::string> transposed = {{"transpose_a", "True"}};
    if (c.req != kAddTo) {
      RunDot(transposed, c.csr, c.out_grad, c.rhs_grad);
      continue;
    }
    const NDArray fresh = NDArray::CreateSparse(StorageType::kRowSparse, c.rhs_grad.GetShape(), c.rhs_grad.GetContext(),
                                                c.rhs_grad.GetDType());
    RunDot(transposed, c.csr, c.out_grad, fresh);
    AddRowSparse(c.rhs_grad, fresh);
  }
}

}  // namespace weft::mx

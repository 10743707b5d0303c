// Shape / dtype inference fixpoint over the indexed graph.
#include "symbol/infer.h"

#include <fmt/ranges.h>

#include <set>

#include "operator/infer.h"
#include "weft/sdk/cpp/attrs.hpp"

namespace weft::graph {

bool FullyKnown(const ShapeSlot& s) {
  if (!s) return false;
  for (int64_t d : s->dims()) {
    if (d < 0) return false;
  }
  return true;
}

namespace {

std::string SlotString(const ShapeSlot& s) { return s ? s->ToString() : std::string("unknown"); }
std::string SlotString(int t) {
  return t < 0             ? std::string("unknown")
         : IsValidDType(t) ? std::string(DTypeName(static_cast<DType>(t)))
                           : std::to_string(t);
}

// Merges `src` into `dst`; returns true when `dst` changed. Sets *conflict when both are known
// and differ (different ndim or a known extent that differs).
bool Merge(ShapeSlot& dst, const ShapeSlot& src, bool* conflict) {
  if (!src) return false;
  if (!dst) {
    dst = src;
    return true;
  }
  if (dst->ndim() != src->ndim()) {
    *conflict = true;
    return false;
  }
  bool changed = false;
  for (size_t i = 0; i < dst->ndim(); ++i) {
    int64_t& d = (*dst)[i];
    int64_t s = (*src)[i];
    if (s < 0) continue;
    if (d < 0) {
      d = s;
      changed = true;
    } else if (d != s) {
      *conflict = true;
    }
  }
  return changed;
}

bool Merge(int& dst, const int& src, bool* conflict) {
  if (src < 0) return false;
  if (dst < 0) {
    dst = src;
    return true;
  }
  if (dst != src) *conflict = true;
  return false;
}

// Maps variable names to node ids; throws for names that are no variable of the graph.
template <typename V>
std::vector<std::pair<uint32_t, V>> ResolveKnown(const IndexedGraph& g, const std::map<std::string, V>& known,
                                                 const char* what) {
  std::multimap<std::string, uint32_t> vars;
  for (uint32_t nid : g.var_nodes) vars.emplace(g.nodes[nid].node->name, nid);
  std::vector<std::pair<uint32_t, V>> out;
  for (const auto& [name, value] : known) {
    auto [lo, hi] = vars.equal_range(name);
    if (lo == hi) {
      std::vector<std::string> names;
      for (uint32_t nid : g.var_nodes) names.push_back(g.nodes[nid].node->name);
      Fail("{}: '{}' is not an argument or auxiliary state of the symbol; they are: {}", what, name,
           fmt::join(names, ", "));
    }
    for (auto it = lo; it != hi; ++it) out.emplace_back(it->second, value);
  }
  return out;
}

// One node's inference call: gathers its slots, runs `fn`, merges back. Returns true on change.
template <typename T, typename Fn>
bool Visit(const IndexedGraph& g, uint32_t nid, std::vector<T>& slots, const char* what, Fn&& fn) {
  const IndexedGraph::NodeInfo& info = g.nodes[nid];
  const Node& n = *info.node;
  std::vector<T> in, aux, out;
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    (i < n.num_args ? in : aux).push_back(slots[g.entry_id(info.inputs[i])]);
  }
  for (uint32_t k = 0; k < n.num_outputs; ++k) out.push_back(slots[g.entry_id(nid, k)]);
  try {
    fn(n, in, out, aux);
  } catch (const std::exception& e) {
    Fail("{} inference: error in operator {}: {}", what, n.name, e.what());
  }
  WEFT_CHECK(in.size() == n.num_args && aux.size() == n.num_aux() && out.size() == n.num_outputs,
             "{} inference: operator {} ({}) resized its slot lists", what, n.name, n.op->name);
  bool changed = false;
  auto merge = [&](T& slot, const T& v, const char* kind, const std::string& slot_name) {
    bool conflict = false;
    T before = slot;
    changed |= Merge(slot, v, &conflict);
    if (conflict) {
      Fail("{} inference: error in operator {} ({}): {} '{}' is {} but the operator needs {}", what, n.name, n.op->name,
           kind, slot_name, SlotString(before), SlotString(v));
    }
  };
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    merge(slots[g.entry_id(info.inputs[i])], i < n.num_args ? in[i] : aux[i - n.num_args], "input", n.input_names[i]);
  }
  for (uint32_t k = 0; k < n.num_outputs; ++k) merge(slots[g.entry_id(nid, k)], out[k], "output", n.output_names[k]);
  return changed;
}

template <typename T, typename Fn>
void Fixpoint(const IndexedGraph& g, std::vector<T>& slots, const char* what, Fn&& fn) {
  const size_t n = g.nodes.size();
  // Each sweep settles at least one more node in a chain; the bound only guards a bad op that
  // keeps changing its answer.
  for (size_t iter = 0; iter < 2 * n + 4; ++iter) {
    bool changed = false;
    for (uint32_t nid = 0; nid < n; ++nid) {
      if (!g.nodes[nid].node->is_variable()) changed |= Visit(g, nid, slots, what, fn);
    }
    for (uint32_t nid = static_cast<uint32_t>(n); nid-- > 0;) {
      if (!g.nodes[nid].node->is_variable()) changed |= Visit(g, nid, slots, what, fn);
    }
    if (!changed) return;
  }
}

}  // namespace

std::vector<ShapeSlot> InferShapes(const IndexedGraph& g, const std::map<std::string, Shape>& known) {
  std::vector<ShapeSlot> slots(g.num_entries());
  for (uint32_t nid : g.var_nodes) {
    const Node& v = *g.nodes[nid].node;
    auto it = v.attrs.find("__shape__");
    if (it == v.attrs.end()) continue;
    try {
      std::vector<int64_t> dims = sdk::ParseTuple(it->second, "__shape__");
      for (int64_t& d : dims) {
        if (d == 0) d = -1;  // MXNet's legacy shapes: 0 = unknown extent
      }
      slots[g.entry_id(nid, 0)] = Shape(std::move(dims));
    } catch (const std::exception& e) {
      Fail("shape inference: variable '{}': {}", v.name, e.what());
    }
  }
  for (const auto& [nid, shape] : ResolveKnown(g, known, "shape inference")) slots[g.entry_id(nid, 0)] = shape;
  Fixpoint(g, slots, "shape",
           [](const Node& n, auto& in, auto& out, auto& aux) { weft::InferShapes(*n.op, n.params, in, out, aux); });
  return slots;
}

std::vector<int> InferTypes(const IndexedGraph& g, const std::map<std::string, int>& known) {
  std::vector<int> slots(g.num_entries(), -1);
  for (uint32_t nid : g.var_nodes) {
    const Node& v = *g.nodes[nid].node;
    auto it = v.attrs.find("__dtype__");
    if (it == v.attrs.end()) continue;
    try {
      int64_t code = sdk::ParseInt(it->second, "__dtype__");
      WEFT_CHECK(IsValidDType(static_cast<int32_t>(code)), "'{}' is not a dtype code", it->second);
      slots[g.entry_id(nid, 0)] = static_cast<int>(code);
    } catch (const std::exception& e) {
      Fail("type inference: variable '{}': {}", v.name, e.what());
    }
  }
  for (const auto& [nid, type] : ResolveKnown(g, known, "type inference")) {
    WEFT_CHECK(IsValidDType(type), "type inference: {} is not a dtype code for '{}'", type, g.nodes[nid].node->name);
    slots[g.entry_id(nid, 0)] = type;
  }
  Fixpoint(g, slots, "type",
           [](const Node& n, auto& in, auto& out, auto& aux) { weft::InferTypes(*n.op, n.params, in, out, aux); });
  return slots;
}

}  // namespace weft::graph

// weft::Symbol shape and dtype inference (the mxnet-cpp signatures and the partial forms).
#include "symbol/graph.h"
#include "symbol/infer.h"
#include "weft/symbol.h"

namespace weft {
namespace {

template <typename T, typename Known>
void Collect(const graph::IndexedGraph& g, const std::vector<T>& slots, Known&& known, std::vector<T>* args,
             std::vector<T>* aux, std::vector<T>* outs, std::vector<std::string>* unknown, bool* complete) {
  *complete = true;
  auto take = [&](uint32_t nid, std::vector<T>* dst) {
    const T& v = slots[g.entry_id(nid, 0)];
    if (!known(v)) {
      unknown->push_back(g.nodes[nid].node->name);
      *complete = false;
    }
    dst->push_back(v);
  };
  for (uint32_t nid : g.arg_nodes) take(nid, args);
  for (uint32_t nid : g.aux_nodes) take(nid, aux);
  for (const auto& e : g.outputs) {
    const T& v = slots[g.entry_id(e)];
    *complete = *complete && known(v);
    outs->push_back(v);
  }
}

std::vector<mx_uint> ToMx(const std::optional<Shape>& s) {
  std::vector<mx_uint> out;
  if (!s) return out;
  for (int64_t d : s->dims()) out.push_back(d < 0 ? 0u : static_cast<mx_uint>(d));
  return out;
}

}  // namespace

ShapeInference Symbol::InferShapePartial(const std::map<std::string, Shape>& arg_shapes) const {
  WEFT_CHECK(!IsEmpty(), "Symbol::InferShape: the symbol is empty");
  graph::IndexedGraph g = graph::Index(graph::ExpandSubgraphs(outputs_));
  std::vector<ShapeSlot> slots = graph::InferShapes(g, arg_shapes);
  ShapeInference r;
  Collect(g, slots, graph::FullyKnown, &r.arg_shapes, &r.aux_shapes, &r.out_shapes, &r.unknown_args, &r.complete);
  return r;
}

bool Symbol::InferShape(const std::map<std::string, std::vector<mx_uint>>& arg_shapes,
                        std::vector<std::vector<mx_uint>>* in_shape, std::vector<std::vector<mx_uint>>* aux_shape,
                        std::vector<std::vector<mx_uint>>* out_shape) const {
  std::map<std::string, Shape> given;
  for (const auto& [name, dims] : arg_shapes) {
    std::vector<int64_t> d;
    for (mx_uint x : dims) d.push_back(x == 0 ? -1 : static_cast<int64_t>(x));  // mxnet-cpp: 0 = unknown
    given.emplace(name, Shape(std::move(d)));
  }
  ShapeInference r = InferShapePartial(given);
  auto fill = [](std::vector<std::vector<mx_uint>>* dst, const std::vector<std::optional<Shape>>& src) {
    if (dst == nullptr) return;
    dst->clear();
    for (const auto& s : src) dst->push_back(ToMx(s));
  };
  fill(in_shape, r.arg_shapes);
  fill(aux_shape, r.aux_shapes);
  fill(out_shape, r.out_shapes);
  return r.complete;
}

TypeInference Symbol::InferTypePartial(const std::map<std::string, int>& arg_types) const {
  WEFT_CHECK(!IsEmpty(), "Symbol::InferType: the symbol is empty");
  graph::IndexedGraph g = graph::Index(graph::ExpandSubgraphs(outputs_));
  std::vector<int> slots = graph::InferTypes(g, arg_types);
  TypeInference r;
  Collect(
      g, slots, [](int t) { return t >= 0; }, &r.arg_types, &r.aux_types, &r.out_types, &r.unknown_args, &r.complete);
  return r;
}

bool Symbol::InferType(const std::map<std::string, int>& arg_types, std::vector<int>* in_type,
                       std::vector<int>* aux_type, std::vector<int>* out_type) const {
  TypeInference r = InferTypePartial(arg_types);
  if (in_type) *in_type = r.arg_types;
  if (aux_type) *aux_type = r.aux_types;
  if (out_type) *out_type = r.out_types;
  return r.complete;
}

}  // namespace weft

#include "operator/infer.h"

#include "operator/op_util.h"
#include "weft/sdk/cpp/error.hpp"

namespace weft {
namespace {

// List functions read attributes with the sdk getters; report their errors as weft::Error.
template <typename F>
auto Guarded(const OpDef& def, F&& f) {
  try {
    return f();
  } catch (const sdk::Error& e) {
    Fail("{}: {}", def.name, e.what());
  }
}

void CheckCounts(const OpDef& def, const AttrMap& attrs, size_t in, size_t out, size_t aux, const char* what) {
  size_t ni = OpInputNames(def, attrs).size(), no = OpOutputNames(def, attrs).size(),
         na = OpAuxNames(def, attrs).size();
  WEFT_CHECK(in == ni && out == no && aux == na,
             "{}: {} got {} inputs, {} outputs, {} aux states; the op has {}, {}, {} with these attributes", def.name,
             what, in, out, aux, ni, no, na);
}

}  // namespace

std::vector<std::string> OpInputNames(const OpDef& def, const AttrMap& attrs) {
  return Guarded(def, [&] { return def.list_inputs(attrs); });
}

std::vector<std::string> OpOutputNames(const OpDef& def, const AttrMap& attrs) {
  return Guarded(def, [&] { return def.list_outputs(attrs); });
}

std::vector<std::string> OpAuxNames(const OpDef& def, const AttrMap& attrs) {
  if (!def.list_aux) return {};
  return Guarded(def, [&] { return def.list_aux(attrs); });
}

int OpNumVisibleOutputs(const OpDef& def, const AttrMap& attrs) {
  if (!def.num_visible_outputs) return static_cast<int>(OpOutputNames(def, attrs).size());
  return Guarded(def, [&] { return def.num_visible_outputs(attrs); });
}

std::vector<std::pair<int, int>> OpInplacePairs(const OpDef& def, const AttrMap& attrs) {
  if (!def.inplace) return {};
  return Guarded(def, [&] { return def.inplace(attrs); });
}

void InferShapes(const OpDef& def, const AttrMap& attrs, std::vector<ShapeSlot>& in, std::vector<ShapeSlot>& out,
                 std::vector<ShapeSlot>& aux) {
  CheckCounts(def, attrs, in.size(), out.size(), aux.size(), "shape inference");
  Guarded(def, [&] { def.infer_shape(attrs, in, out, aux); });
}

void InferTypes(const OpDef& def, const AttrMap& attrs, std::vector<int>& in, std::vector<int>& out,
                std::vector<int>& aux) {
  CheckCounts(def, attrs, in.size(), out.size(), aux.size(), "dtype inference");
  if (def.infer_type) {
    Guarded(def, [&] { def.infer_type(attrs, in, out, aux); });
    return;
  }
  int dtype = -1;
  for (const std::vector<int>* v : {&in, &out, &aux})
    for (int t : *v)
      if (dtype < 0 && t >= 0) dtype = t;
  if (dtype < 0) return;
  std::vector<std::string> ni = OpInputNames(def, attrs), no = OpOutputNames(def, attrs), na = OpAuxNames(def, attrs);
  for (size_t i = 0; i < in.size(); ++i) opdef::AssignType(def.name, "input", ni[i], in[i], dtype);
  for (size_t i = 0; i < out.size(); ++i) opdef::AssignType(def.name, "output", no[i], out[i], dtype);
  for (size_t i = 0; i < aux.size(); ++i) opdef::AssignType(def.name, "aux state", na[i], aux[i], dtype);
}

}  // namespace weft

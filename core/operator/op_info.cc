// weft/op_info.h: the public view of the operator registry.
#include "weft/op_info.h"

#include <algorithm>

#include "operator/op_def.h"
#include "weft/base.h"

namespace weft {
namespace {

OpAttrInfo AttrInfo(const AttrSpec& s) {
  OpAttrInfo a;
  a.name = s.name;
  a.type = s.type;
  a.default_value = s.default_value;
  a.doc = s.doc;
  a.choices = s.choices;
  a.used = s.use == AttrSpec::Use::kUsed;
  return a;
}

// The attributes an op's lists are computed for: its defaults, and 1 for a required num_args.
AttrMap DefaultAttrs(const OpDef& def) {
  AttrMap given;
  if (const AttrSpec* n = def.FindAttr("num_args"); n && !n->default_value) given.Set("num_args", "1");
  for (const AttrSpec& s : def.attrs) {
    // A required enum (Activation's act_type) takes its first word: "1" would fail it.
    if (!s.default_value && !given.Has(s.name))
      given.Set(s.name, !s.choices.empty() ? s.choices.front() : s.type == "shape" ? "(1,)" : "1");
  }
  return def.Normalize(given);
}

}  // namespace

std::vector<std::string> ListOpNames() { return OpRegistry::Get().ListNames(); }

std::vector<std::pair<std::string, std::string>> ListOpAliases() { return OpRegistry::Get().ListAliases(); }

std::optional<OpInfo> FindOpInfo(const std::string& name) {
  const OpDef* def = OpRegistry::Get().Find(name);
  if (def == nullptr) return std::nullopt;
  OpInfo info;
  info.name = def->name;
  info.description = def->description;
  info.source = def->source;
  for (const AttrSpec& s : def->attrs) info.attrs.push_back(AttrInfo(s));
  if (def->FindAttr("num_args")) info.variadic_attr = "num_args";
  // Required attributes get a placeholder value for listing; an op whose lists refuse it keeps
  // empty lists rather than failing the whole listing.
  try {
    const AttrMap attrs = DefaultAttrs(*def);
    std::vector<std::string> aux = def->list_aux ? def->list_aux(attrs) : std::vector<std::string>{};
    info.inputs = info.variadic_attr.empty() ? def->list_inputs(attrs) : std::vector<std::string>{"data"};
    info.num_aux = static_cast<int>(aux.size());
    info.inputs.insert(info.inputs.end(), aux.begin(), aux.end());
    info.num_visible_outputs =
        def->num_visible_outputs ? def->num_visible_outputs(attrs) : static_cast<int>(def->list_outputs(attrs).size());
  } catch (const std::exception&) {
  }
  for (const auto& [alias, target] : OpRegistry::Get().ListAliases())
    if (target == def->name) info.aliases.push_back(alias);
  info.has_backward = def->grad != GradKind::kNone;
  return info;
}

std::vector<std::string> ListOpInputs(const std::string& name, const std::map<std::string, std::string>& attrs) {
  const OpDef& def = OpRegistry::Get().Lookup(name);
  const AttrMap normalized = def.Normalize(AttrMap(attrs));
  std::vector<std::string> out = def.list_inputs(normalized);
  if (def.list_aux) {
    std::vector<std::string> aux = def.list_aux(normalized);
    out.insert(out.end(), aux.begin(), aux.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> InferOpOutputShapes(const std::string& name,
                                                      const std::map<std::string, std::string>& attrs,
                                                      const std::vector<std::vector<int64_t>>& input_shapes) {
  const OpDef& def = OpRegistry::Get().Lookup(name);
  const AttrMap normalized = def.Normalize(AttrMap(attrs));
  const size_t num_inputs = def.list_inputs(normalized).size();
  const size_t num_aux = def.list_aux ? def.list_aux(normalized).size() : 0;
  WEFT_CHECK(input_shapes.size() == num_inputs + num_aux, "operator '{}' takes {} inputs and {} aux states, got {} shapes",
             def.name, num_inputs, num_aux, input_shapes.size());
  std::vector<ShapeSlot> in, aux, out(def.list_outputs(normalized).size());
  for (size_t i = 0; i < input_shapes.size(); ++i) (i < num_inputs ? in : aux).emplace_back(Shape(input_shapes[i]));
  def.infer_shape(normalized, in, out, aux);
  const size_t visible = def.num_visible_outputs ? static_cast<size_t>(def.num_visible_outputs(normalized)) : out.size();
  std::vector<std::vector<int64_t>> result;
  for (size_t i = 0; i < visible; ++i) {
    WEFT_CHECK(out[i].has_value(), "operator '{}': output {} has no shape for these inputs", def.name, i);
    result.push_back(out[i]->dims());
  }
  return result;
}

}  // namespace weft

// weft/op_info.h: the public view of the operator registry.
#include "weft/op_info.h"

#include <algorithm>

#include "operator/op_def.h"
#include "weft/base.h"

namespace weft {
namespace {

// MXNet's type spelling for an attribute declared without one (operator plugins' weft_attr_defs).
std::string MxnetSpelling(const AttrSpec& s) {
  if (s.type == "int") return "int";
  if (s.type == "float") return "float";
  if (s.type == "bool") return "boolean";
  if (s.type == "shape") return "Shape(tuple)";
  if ((s.type == "enum" || s.type == "dtype") && !s.choices.empty()) {
    std::vector<std::string_view> words(s.choices.begin(), s.choices.end());
    return sdk::detail::ChoiceSpelling(words);
  }
  return "string";
}

OpAttrInfo AttrInfo(const AttrSpec& s) {
  OpAttrInfo a;
  a.name = s.name;
  a.type = s.type;
  a.default_value = s.default_value;
  a.doc = s.doc;
  a.choices = s.choices;
  a.used = s.use == AttrSpec::Use::kUsed;
  a.internal = s.internal;
  a.mxnet_type = s.mxnet_type.empty() ? MxnetSpelling(s) : s.mxnet_type;
  a.min = s.min;
  a.max = s.max;
  a.accepts_none = s.none_ok;
  return a;
}

// A valid value for a required attribute, so that an op's lists can be computed without one.
std::string Placeholder(const AttrSpec& s) {
  if (s.type == "shape") return "(1,)";
  if (s.type == "enum" && !s.choices.empty()) return s.choices.front();
  if (s.type == "dtype") return "float32";
  if (s.type == "bool") return "False";
  return "1";
}

}  // namespace

AttrMap DefaultAttrs(const OpDef& def) {
  AttrMap given;
  for (const AttrSpec& s : def.attrs)
    if (!s.default_value) given.Set(s.name, Placeholder(s));
  return def.Normalize(given);
}

namespace {

// Every input the op can take, as MXNet lists an op's arguments: the inputs for the default
// attributes, or more where another value of one bool or enum attribute adds inputs
// (Deconvolution's bias with no_bias False, LeakyReLU's gamma for prelu, softmax's length), or
// where several do together (CTCLoss's data_lengths and label_lengths).
std::vector<std::string> AllInputs(const OpDef& def, const AttrMap& defaults) {
  std::vector<std::string> best = def.list_inputs(defaults);
  const size_t at_defaults = best.size();
  AttrMap adding = defaults;  // every value that adds inputs on its own, together (CTCLoss's two lengths)
  for (const AttrSpec& s : def.attrs) {
    std::vector<std::string> values = s.type == "bool" ? std::vector<std::string>{"True", "False"} : s.choices;
    if (s.type != "bool" && s.type != "enum") continue;
    for (const std::string& v : values) {
      AttrMap variant = defaults;
      variant.Set(s.name, v);
      try {
        std::vector<std::string> in = def.list_inputs(def.Normalize(variant));
        if (in.size() > at_defaults) adding.Set(s.name, v);
        if (in.size() > best.size()) best = std::move(in);
      } catch (const std::exception&) {
        // a value the op refuses together with the other defaults adds nothing
      }
    }
  }
  try {
    std::vector<std::string> in = def.list_inputs(def.Normalize(adding));
    if (in.size() > best.size()) best = std::move(in);
  } catch (const std::exception&) {
    // the values that add inputs one at a time may exclude each other
  }
  return best;
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
  // MXNet's key_var_num_args: the attribute counting a variadic input list (Concat's num_args,
  // the multi-tensor updates' num_weights, multi_sum_sq's num_arrays).
  for (const char* count : {"num_args", "num_weights", "num_arrays"}) {
    if (def->FindAttr(count)) {
      info.variadic_attr = count;
      break;
    }
  }
  // Required attributes get a placeholder value for listing; an op whose lists refuse it keeps
  // empty lists rather than failing the whole listing.
  try {
    const AttrMap attrs = DefaultAttrs(*def);
    std::vector<std::string> aux = def->list_aux ? def->list_aux(attrs) : std::vector<std::string>{};
    if (info.variadic_attr.empty()) {
      info.inputs = AllInputs(*def, attrs);
      info.num_aux = static_cast<int>(aux.size());
      info.inputs.insert(info.inputs.end(), aux.begin(), aux.end());
    } else {
      // One list holds every array, states included, in MXNet's order (the multi-tensor updates'
      // momenta and float32 copies are aux states in weft, list entries in MXNet).
      info.inputs = {"data"};
    }
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
  WEFT_CHECK(input_shapes.size() == num_inputs + num_aux,
             "operator '{}' takes {} inputs and {} aux states, got {} shapes", def.name, num_inputs, num_aux,
             input_shapes.size());
  std::vector<ShapeSlot> in, aux, out(def.list_outputs(normalized).size());
  for (size_t i = 0; i < input_shapes.size(); ++i) (i < num_inputs ? in : aux).emplace_back(Shape(input_shapes[i]));
  def.infer_shape(normalized, in, out, aux);
  const size_t visible =
      def.num_visible_outputs ? static_cast<size_t>(def.num_visible_outputs(normalized)) : out.size();
  std::vector<std::vector<int64_t>> result;
  for (size_t i = 0; i < visible; ++i) {
    WEFT_CHECK(out[i].has_value(), "operator '{}': output {} has no shape for these inputs", def.name, i);
    result.push_back(out[i]->dims());
  }
  return result;
}

}  // namespace weft

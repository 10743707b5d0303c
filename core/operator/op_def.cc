// OpDef::Normalize: attribute validation by declared type.
#include "operator/op_def.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "operator/name_match.h"
#include "weft/sdk/cpp/error.hpp"

namespace weft {
namespace {

bool DefaultIsNone(const AttrSpec& spec) { return spec.default_value && sdk::IsNone(*spec.default_value); }

// Throws sdk::Error (from attrs.hpp) or weft::Error when `value` is not of the spec's type.
void CheckValue(const AttrSpec& spec, const std::string& value) {
  // "None" is an absent optional; a tuple attribute ("axis" of sum) may always be absent.
  if ((DefaultIsNone(spec) || spec.none_ok || spec.type == "shape") && sdk::IsNone(value)) return;
  const std::string& t = spec.type;
  if (t == "int" || t == "long") {
    sdk::ParseInt(value, spec.name);
  } else if (t == "float") {
    sdk::ParseFloat(value, spec.name);
  } else if (t == "bool") {
    sdk::ParseBool(value, spec.name);
  } else if (t == "shape") {
    sdk::ParseTuple(value, spec.name);
  } else if (t == "dtype" && spec.choices.empty()) {
    DTypeFromName(std::string(sdk::detail::Trim(value)));
  } else if ((t == "enum" || t == "dtype") && !spec.choices.empty()) {  // plugin enums carry no word list
    std::string v(sdk::detail::Trim(value));
    if (std::find(spec.choices.begin(), spec.choices.end(), v) == spec.choices.end()) {
      Fail("attribute '{}' = '{}' is not one of: {}", spec.name, value, fmt::join(spec.choices, ", "));
    }
  }
  // "string" and unknown informational types accept anything.
}

// Same value in the spec's type (so "(2,2)" equals "(2, 2)" and "0" equals "False").
bool SameValue(const AttrSpec& spec, const std::string& a, const std::string& b) {
  if (sdk::IsNone(a) || sdk::IsNone(b)) return sdk::IsNone(a) == sdk::IsNone(b);
  const std::string& t = spec.type;
  if (t == "int" || t == "long") return sdk::ParseInt(a, spec.name) == sdk::ParseInt(b, spec.name);
  if (t == "float") return sdk::ParseFloat(a, spec.name) == sdk::ParseFloat(b, spec.name);
  if (t == "bool") return sdk::ParseBool(a, spec.name) == sdk::ParseBool(b, spec.name);
  if (t == "shape") return sdk::ParseTuple(a, spec.name) == sdk::ParseTuple(b, spec.name);
  return sdk::detail::Trim(a) == sdk::detail::Trim(b);
}

}  // namespace

const AttrSpec* OpDef::FindAttr(std::string_view attr_name) const {
  for (const AttrSpec& s : attrs)
    if (s.name == attr_name) return &s;
  return nullptr;
}

AttrMap OpDef::Normalize(const AttrMap& given) const {
  AttrMap out;
  try {
    for (const auto& [key, value] : given.values()) {
      if (key.starts_with("__")) {
        out.Set(key, value);
        continue;
      }
      const AttrSpec* spec = FindAttr(key);
      // MXNet keeps, and ignores, any attribute given to an op without a parameter struct
      // (broadcast_maximum(..., axis=1) in Gluon's cosine loss): the ops declaring none do too.
      if (spec == nullptr && (any_attrs || attrs.empty())) {
        out.Set(key, value);
        continue;
      }
      if (spec == nullptr) {
        std::vector<std::string> names;
        for (const AttrSpec& s : attrs) names.push_back(s.name);
        std::vector<std::string> close = opdef::CloseNames(key, names);
        Fail("operator '{}' has no attribute '{}'{}; its attributes are: {}", name, key,
             close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close.front()),
             names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", ")));
      }
      CheckValue(*spec, value);
      if (spec->use == AttrSpec::Use::kDefaultOnly && !SameValue(*spec, value, spec->default_value.value_or(""))) {
        Fail("attribute '{}' = '{}' is not supported by weft (only the default '{}' is)", key, value,
             spec->default_value.value_or(""));
      }
      out.Set(key, value);
    }
    for (const AttrSpec& s : attrs) {
      if (out.Has(s.name)) continue;
      if (!s.default_value) Fail("attribute '{}' is required ({})", s.name, s.doc);
      out.Set(s.name, *s.default_value);
    }
    if (validate) validate(out);
  } catch (const sdk::Error& e) {
    Fail("operator '{}': {}", name, e.what());
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.starts_with("operator '" + name + "'") || msg.starts_with(name + ":")) throw;
    Fail("operator '{}': {}", name, msg);
  }
  return out;
}

}  // namespace weft

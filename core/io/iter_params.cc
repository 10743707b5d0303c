// Text parameters of registered iterators (io/iter_params.h).
#include "io/iter_params.h"

#include <charconv>
#include <cmath>

#include "base/untrusted.h"

namespace weft::io_detail {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<bool> ParseBool(const std::string& v) {
  if (v == "1" || v == "true" || v == "True") return true;
  if (v == "0" || v == "false" || v == "False") return false;
  return std::nullopt;
}

}  // namespace

std::string NormalizeParamText(const std::string& text) {
  std::string v = Trim(text);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  if (auto b = ParseBool(v)) return *b ? "1" : "0";
  return v;
}

ParamValues::ParamValues(std::string iter, const std::vector<ParamSpec>& specs,
                         const std::map<std::string, std::string>& given)
    : iter_(std::move(iter)) {
  std::string names;
  for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  for (const auto& entry : given) {
    const std::string& k = entry.first;  // (clang 14 cannot capture structured bindings)
    const std::string& v = entry.second;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == k; });
    WEFT_CHECK(it != specs.end(), "{}: unknown parameter '{}' (its parameters: {})", iter_, detail::Excerpt(k, 60),
               names);
    if (it->use == ParamUse::kDefaultOnly) {
      WEFT_CHECK(it->default_value && NormalizeParamText(v) == NormalizeParamText(*it->default_value),
                 "{}: parameter '{}' = '{}' is not implemented by weft; only its default '{}' is accepted", iter_, k,
                 detail::Excerpt(v, 60), it->default_value.value_or(""));
    }
    if (it->use == ParamUse::kUsed) values_[k] = v;
  }
  for (const auto& s : specs) {
    if (s.use != ParamUse::kUsed || values_.count(s.name)) continue;
    WEFT_CHECK(s.default_value.has_value(), "{}: parameter '{}' is required ({})", iter_, s.name, s.doc);
    values_[s.name] = *s.default_value;
  }
}

std::optional<std::string> ParamValues::Text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ParamValues::Required(const std::string& name) const {
  auto v = Text(name);
  WEFT_CHECK(v.has_value(), "{}: internal: parameter '{}' is not declared", iter_, name);
  return *v;
}

void ParamValues::Bad(const std::string& name, const std::string& value, const char* expected) const {
  Fail("{}: parameter '{}' = '{}' is not {}", iter_, name, detail::Excerpt(value, 60), expected);
}

std::string ParamValues::Str(const std::string& name) const { return NormalizeParamText(Required(name)); }

int ParamValues::Int(const std::string& name) const {
  const std::string v = NormalizeParamText(Required(name));
  int out = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) Bad(name, v, "an integer");
  return out;
}

float ParamValues::Float(const std::string& name) const {
  const std::string v = NormalizeParamText(Required(name));
  float out = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(out)) Bad(name, v, "a number");
  return out;
}

bool ParamValues::Bool(const std::string& name) const {
  const std::string v = Trim(Required(name));
  auto b = ParseBool(v);
  if (!b) Bad(name, v, "a boolean (1, 0, True, False)");
  return *b;
}

Shape ParamValues::ShapeOf(const std::string& name) const {
  const std::string v = NormalizeParamText(Required(name));
  std::string inner = v;
  if (inner.size() >= 2 &&
      ((inner.front() == '(' && inner.back() == ')') || (inner.front() == '[' && inner.back() == ']')))
    inner = inner.substr(1, inner.size() - 2);
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= inner.size()) {
    const size_t comma = std::min(inner.find(',', pos), inner.size());
    const std::string field = Trim(inner.substr(pos, comma - pos));
    if (!field.empty()) {
      int64_t d = 0;
      auto r = std::from_chars(field.data(), field.data() + field.size(), d);
      if (r.ec != std::errc() || r.ptr != field.data() + field.size() || d < 0)
        Bad(name, v, "a shape such as (3, 224, 224)");
      dims.push_back(d);
    } else if (comma < inner.size()) {
      Bad(name, v, "a shape such as (3, 224, 224)");
    }
    pos = comma + 1;
  }
  if (dims.empty()) Bad(name, v, "a shape such as (3, 224, 224)");
  return Shape(std::move(dims));
}

std::optional<int> ParamValues::OptInt(const std::string& name) const {
  if (NormalizeParamText(Required(name)) == "None") return std::nullopt;
  return Int(name);
}

DType ParamValues::Dtype(const std::string& name, DType fallback) const {
  const std::string v = NormalizeParamText(Required(name));
  if (v == "None") return fallback;
  return DTypeFromName(v);
}

}  // namespace weft::io_detail

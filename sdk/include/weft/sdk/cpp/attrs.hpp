// weft SDK C++ helpers — operator attributes in MXNet's string forms.
//
// Attributes cross the ABI (and live in symbol JSON) as strings, exactly as MXNet writes them:
//   int      "64", "-1"
//   float    "0.5", "1e-08", "-inf"
//   bool     "True" / "False" (also "true", "false", "1", "0" as MXNet's parser accepts)
//   tuple    "(3, 3)", "(3,)", "()", "[3, 3]", or a bare "3" (a one-element tuple)
//   optional "None" means absent (e.g. Pooling's stride, softmax's temperature)
//   enum     one of a fixed set of words ("relu", "max", "valid")
// Parse errors throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT) naming the attribute, its value
// and the expected form. Header-only; used by core and by plugins. Thread-safe (pure functions;
// an AttrMap is a value).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/types.h"

namespace weft::sdk {

namespace detail {
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}
[[noreturn]] inline void BadAttr(std::string_view name, std::string_view value, std::string_view form) {
  throw Error(WEFT_ERR_INVALID_ARGUMENT,
              "attribute '" + std::string(name) + "' = '" + std::string(value) + "' is not " + std::string(form));
}
}  // namespace detail

/// True for MXNet's spelling of an absent optional value.
inline bool IsNone(std::string_view value) { return detail::Trim(value) == "None"; }

/// Parses an integer ("64", "-1", "3L" as old MXNet wrote longs). `name` is used in errors only.
inline int64_t ParseInt(std::string_view value, std::string_view name) {
  std::string_view s = detail::Trim(value);
  if (!s.empty() && (s.back() == 'L' || s.back() == 'l')) s.remove_suffix(1);
  int64_t out = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) detail::BadAttr(name, value, "an integer, e.g. 64");
  return out;
}

/// Parses a real number ("0.5", "1e-08", "inf", "-inf", "nan").
inline double ParseFloat(std::string_view value, std::string_view name) {
  std::string s(detail::Trim(value));
  if (s == "inf" || s == "+inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  if (s == "nan") return NAN;
  if (s.empty()) detail::BadAttr(name, value, "a number, e.g. 0.5");
  char* end = nullptr;
  double out = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) detail::BadAttr(name, value, "a number, e.g. 0.5");
  return out;
}

/// Parses a boolean: True/False/true/false/1/0.
inline bool ParseBool(std::string_view value, std::string_view name) {
  std::string_view s = detail::Trim(value);
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  detail::BadAttr(name, value, "a boolean (True or False)");
}

/// Parses a tuple of integers: "(3, 3)", "(3,)", "()", "[3,3]", "3". Elements "None" are
/// stored as -1 (MXNet's optional-dimension spelling in shapes).
inline std::vector<int64_t> ParseTuple(std::string_view value, std::string_view name) {
  std::string_view s = detail::Trim(value);
  std::vector<int64_t> out;
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
    char close = s.front() == '(' ? ')' : ']';
    if (s.size() < 2 || s.back() != close) detail::BadAttr(name, value, "a tuple, e.g. (3, 3)");
    s = s.substr(1, s.size() - 2);
  }
  s = detail::Trim(s);
  if (s.empty()) return out;
  while (true) {
    size_t comma = s.find(',');
    std::string_view item = detail::Trim(s.substr(0, comma));
    if (item.empty()) {
      // "(3,)": a trailing comma ends the tuple.
      if (comma == std::string_view::npos && !out.empty()) break;
      detail::BadAttr(name, value, "a tuple, e.g. (3, 3)");
    }
    if (item == "None") {
      out.push_back(-1);
    } else {
      int64_t v = 0;
      std::string_view num = item;
      if (!num.empty() && (num.back() == 'L' || num.back() == 'l')) num.remove_suffix(1);
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
      if (ec != std::errc() || p != num.data() + num.size())
        detail::BadAttr(name, value, "a tuple of integers, e.g. (3, 3)");
      out.push_back(v);
    }
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
    if (detail::Trim(s).empty()) break;
  }
  return out;
}

/// MXNet's tuple string: "(3, 3)", "(3,)", "()".
inline std::string FormatTuple(const std::vector<int64_t>& t) {
  std::string out = "(";
  for (size_t i = 0; i < t.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(t[i]);
  }
  if (t.size() == 1) out += ",";
  return out + ")";
}

/// MXNet's bool string: "True" / "False".
inline const char* FormatBool(bool b) { return b ? "True" : "False"; }

/// A name -> string-value attribute map with typed, defaulted getters.
class AttrMap {
 public:
  AttrMap() = default;
  explicit AttrMap(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  AttrMap(const weft_kv* kv, int32_t n) {
    for (int32_t i = 0; i < n; ++i) values_[kv[i].key] = kv[i].value ? kv[i].value : "";
  }

  bool Has(std::string_view name) const { return values_.find(std::string(name)) != values_.end(); }
  /// The raw string, or nullptr when absent.
  const std::string* Find(std::string_view name) const {
    auto it = values_.find(std::string(name));
    return it == values_.end() ? nullptr : &it->second;
  }
  void Set(const std::string& name, std::string value) { values_[name] = std::move(value); }
  const std::map<std::string, std::string>& values() const { return values_; }

  /// Required getters throw WEFT_ERR_INVALID_ARGUMENT "attribute 'x' is required" when absent.
  std::string GetString(std::string_view name) const { return Required(name); }
  int64_t GetInt(std::string_view name) const { return ParseInt(Required(name), name); }
  double GetFloat(std::string_view name) const { return ParseFloat(Required(name), name); }
  bool GetBool(std::string_view name) const { return ParseBool(Required(name), name); }
  std::vector<int64_t> GetTuple(std::string_view name) const { return ParseTuple(Required(name), name); }

  /// Defaulted getters: the default applies when the attribute is absent or "None".
  std::string GetString(std::string_view name, std::string_view fallback) const {
    const std::string* v = Find(name);
    return v && !IsNone(*v) ? *v : std::string(fallback);
  }
  int64_t GetInt(std::string_view name, int64_t fallback) const {
    const std::string* v = Find(name);
    return v && !IsNone(*v) ? ParseInt(*v, name) : fallback;
  }
  double GetFloat(std::string_view name, double fallback) const {
    const std::string* v = Find(name);
    return v && !IsNone(*v) ? ParseFloat(*v, name) : fallback;
  }
  bool GetBool(std::string_view name, bool fallback) const {
    const std::string* v = Find(name);
    return v && !IsNone(*v) ? ParseBool(*v, name) : fallback;
  }
  std::vector<int64_t> GetTuple(std::string_view name, std::vector<int64_t> fallback) const {
    const std::string* v = Find(name);
    return v && !IsNone(*v) ? ParseTuple(*v, name) : fallback;
  }
  /// nullopt when absent or "None".
  std::optional<int64_t> GetOptionalInt(std::string_view name) const {
    const std::string* v = Find(name);
    if (!v || IsNone(*v)) return std::nullopt;
    return ParseInt(*v, name);
  }
  std::optional<double> GetOptionalFloat(std::string_view name) const {
    const std::string* v = Find(name);
    if (!v || IsNone(*v)) return std::nullopt;
    return ParseFloat(*v, name);
  }
  /// One of `allowed` (exact match); error lists the allowed words.
  std::string GetEnum(std::string_view name, std::initializer_list<std::string_view> allowed,
                      std::string_view fallback) const {
    std::string v = GetString(name, fallback);
    std::string list;
    for (std::string_view a : allowed) {
      if (a == v) return v;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    detail::BadAttr(name, v, "one of: " + list);
  }

 private:
  const std::string& Required(std::string_view name) const {
    const std::string* v = Find(name);
    if (!v) throw Error(WEFT_ERR_INVALID_ARGUMENT, "attribute '" + std::string(name) + "' is required");
    return *v;
  }
  std::map<std::string, std::string> values_;
};

}  // namespace weft::sdk

// weft SDK C++ helpers — an op's attributes declared once, as a typed parameter struct.
//
// Every built-in op's attributes are declared in one place, its parameter struct in
// weft/sdk/ops/<family>.hpp (MXNet's dmlc::Parameter structs play this part for all of MXNet's
// devices). Core builds the op's attribute list, its defaults and its checks from the struct; every
// backend's kernel reads the same struct, parsed from the attribute strings it was given:
//
//   struct LRNParam {
//     float alpha = 1e-4f;
//     int64_t nsize = 0;
//     template <class V>
//     void Visit(V& v) {
//       v(alpha, Attr("alpha").Default("0.0001").Doc("scale of the sum of squares"));
//       v(nsize, Attr("nsize").Min(1).Doc("number of channels in the window"));   // required
//     }
//     void Validate() const {}   // optional: checks between attributes; throws sdk::Error
//   };
//   LRNParam p = ParseParams<LRNParam>(attrs);      // in a kernel: setup.Params<LRNParam>()
//   std::vector<AttrDecl> d = DeclaredAttrs<LRNParam>();   // what core registers
//
// Each `v(member, Attr(...))` declares one attribute: its MXNet name, default (MXNet's text;
// none = required), one-line doc, range (Min / Max, inclusive), accepted words (Choices) and how
// weft uses it (Ignored: accepted for MXNet JSON and not read; DefaultOnly: MXNet semantics weft
// lacks, accepted at the default only). The member's C++ type gives the attribute's type:
//   int64_t (or another integer)  "int"     "64", "-1"
//   float / double                "float"   "0.5", "1e-08"  (MXNet calls them float / double)
//   bool                          "bool"    "True", "False", "1", "0"
//   Tuple                         "shape"   "(3, 3)", "()", "None" (= ())
//   OptTuple                      "shape"   "(0, None)": elements may be None
//   FloatTuple                    "string"  "(0.1, 0.01)" (MXNet's tuple of <float>; lrs, range)
//   std::string                   "string", or "enum" when Choices are given
//   an enum type                  "enum": the value is the index of the word in Choices
//   DTypeAttr                     "dtype"   "float32" (Choices narrow the accepted dtypes)
//   std::optional<T>              T's type, "None" = nullopt (MXNet's "int or None")
// Errors throw weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT) naming the attribute, its value and
// what was expected. Header-only; parsing is a pure function of the attributes (thread-safe).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "weft/sdk/cpp/attrs.hpp"
#include "weft/sdk/cpp/error.hpp"
#include "weft/sdk/types.h"

// Marks the inline geometry helpers of weft/sdk/ops/*.hpp as callable from GPU device code too
// (nvcc, hipcc), so one formula serves the host kernels and the GPU ones.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define WEFT_SDK_HD __host__ __device__
#else
#define WEFT_SDK_HD
#endif

namespace weft::sdk {

/// A tuple attribute (MXNet's Shape(tuple)): "(3, 3)"; "()" and "None" are empty.
using Tuple = std::vector<int64_t>;
/// A tuple whose elements may be None (slice's begin and end).
using OptTuple = std::vector<std::optional<int64_t>>;
/// A tuple of numbers (MXNet's tuple of <float>: multi_sgd_update's lrs, _histogram's range).
using FloatTuple = std::vector<double>;

/// A dtype attribute: a WEFT_DTYPE_* code; -1 for "None".
struct DTypeAttr {
  int32_t code = -1;
  bool is_none() const { return code < 0; }
  friend bool operator==(const DTypeAttr&, const DTypeAttr&) = default;
};

/// MXNet's dtype names, indexed by WEFT_DTYPE_* code.
inline constexpr std::string_view kDTypeNames[WEFT_DTYPE_COUNT] = {"float32", "float64", "float16", "uint8", "int32",
                                                                   "int8",    "int64",   "bool",    "int16", "uint16",
                                                                   "uint32",  "uint64",  "bfloat16"};

/// The WEFT_DTYPE_* code of MXNet's dtype name ("float32"); throws naming the attribute when the
/// name is none of MXNet's.
inline int32_t ParseDType(std::string_view value, std::string_view name) {
  const std::string_view s = detail::Trim(value);
  for (int32_t i = 0; i < WEFT_DTYPE_COUNT; ++i)
    if (kDTypeNames[i] == s) return i;
  detail::BadAttr(name, value, "a dtype name (float32, float64, float16, uint8, int8, int32, int64, ...)");
}

/// Parses a tuple whose elements may be "None" (slice's begin/end): those become nullopt, so
/// "None" stays distinct from -1. Same forms and errors as ParseTuple.
inline OptTuple ParseOptionalTuple(std::string_view value, std::string_view name) {
  OptTuple out;
  std::string_view s = detail::Trim(value);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);
  // Split on commas; each element is "None" or goes through ParseTuple's integer rules.
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string_view item = detail::Trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (item == "None") {
      out.emplace_back(std::nullopt);
    } else if (!item.empty()) {
      std::vector<int64_t> one = ParseTuple(item, name);
      if (one.size() != 1) detail::BadAttr(name, value, "a tuple of integers or None, e.g. (0, None)");
      out.emplace_back(one[0]);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  ParseTuple(value, name);  // the same syntax checks as any tuple ("None" is accepted there)
  return out;
}

/// Parses a tuple of numbers in MXNet's text, "(0.5, 1)" or "[0.5, 1]"; throws naming `name` for
/// an element that is not a number.
inline FloatTuple ParseFloatTuple(std::string_view value, std::string_view name) {
  std::string_view s = detail::Trim(value);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);
  FloatTuple out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string_view item =
        detail::Trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (!item.empty()) out.push_back(ParseFloat(item, name));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

/// How an op uses a declared attribute.
enum class AttrUse {
  kUsed,         // part of the op's semantics
  kIgnored,      // accepted for MXNet JSON compatibility, any valid value (cudnn_off, workspace)
  kDefaultOnly,  // MXNet semantics weft does not implement: only the default value is accepted
};

/// The declaration of one attribute: Attr("name") and setters, handed with the member it fills
/// to a visitor in a parameter struct's Visit (see the top of this file). Holds views only: the
/// texts and Choices arrays must outlive the declaration (string literals and static arrays do).
struct Attr {
  std::string_view name, doc, mxnet_type;
  std::optional<std::string_view> default_text;  // nullopt: required
  std::span<const std::string_view> choices;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  AttrUse use = AttrUse::kUsed;

  constexpr explicit Attr(std::string_view attr_name) : name(attr_name) {}
  /// The default in MXNet's text ("(1, 1)", "False", "None"); without one the attribute is required.
  constexpr Attr& Default(std::string_view text) {
    default_text = text;
    return *this;
  }
  constexpr Attr& Doc(std::string_view text) {
    doc = text;
    return *this;
  }
  /// Smallest allowed value of an int or float attribute (inclusive).
  constexpr Attr& Min(double v) {
    min = v;
    return *this;
  }
  /// Largest allowed value of an int or float attribute (inclusive).
  constexpr Attr& Max(double v) {
    max = v;
    return *this;
  }
  /// The accepted words of an enum (or of a string or dtype attribute).
  constexpr Attr& Choices(std::span<const std::string_view> words) {
    choices = words;
    return *this;
  }
  constexpr Attr& Ignored() {
    use = AttrUse::kIgnored;
    return *this;
  }
  constexpr Attr& DefaultOnly() {
    use = AttrUse::kDefaultOnly;
    return *this;
  }
  /// MXNet's spelling of the type where the derived one differs ("long (non-negative)").
  constexpr Attr& MxType(std::string_view spelling) {
    mxnet_type = spelling;
    return *this;
  }
};

/// One declared attribute, as the registry lists it (DeclaredAttrs).
struct AttrDecl {
  std::string name;
  std::string type;        // "int", "float", "bool", "shape", "string", "enum", "dtype"
  std::string mxnet_type;  // MXNet's docstring spelling: "int (non-negative)", "Shape(tuple)", "{'avg', 'max'}"
  std::optional<std::string> default_value;  // MXNet's text; nullopt = required
  std::string doc;
  std::vector<std::string> choices;  // the words of an enum (or the dtypes a dtype accepts)
  std::optional<double> min, max;    // inclusive range of an int or float
  AttrUse use = AttrUse::kUsed;
  bool none_ok = false;  // "None" is a valid value whatever the default (an optional, a tuple)
};

namespace detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

inline std::string Quoted(std::string_view w) { return w == "None" ? std::string("None") : "'" + std::string(w) + "'"; }

// MXNet prints an enum's words sorted, None first and unquoted: {None, 'NCHW', 'NCW'}.
inline std::string ChoiceSpelling(std::span<const std::string_view> words) {
  std::vector<std::string_view> sorted(words.begin(), words.end());
  std::sort(sorted.begin(), sorted.end(), [](std::string_view a, std::string_view b) {
    return (a == "None") != (b == "None") ? a == "None" : a < b;
  });
  std::string out = "{";
  for (size_t i = 0; i < sorted.size(); ++i) out += (i ? ", " : "") + Quoted(sorted[i]);
  return out + "}";
}

inline std::string Number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  return s;
}

[[noreturn]] inline void OutOfRange(const Attr& a, std::string_view value) {
  std::string range;
  if (a.min > -std::numeric_limits<double>::infinity() && a.max < std::numeric_limits<double>::infinity()) {
    range = "in [" + Number(a.min) + ", " + Number(a.max) + "]";
  } else if (a.min > -std::numeric_limits<double>::infinity()) {
    range = "at least " + Number(a.min);
  } else {
    range = "at most " + Number(a.max);
  }
  throw Error(WEFT_ERR_INVALID_ARGUMENT,
              "attribute '" + std::string(a.name) + "' = '" + std::string(Trim(value)) + "' must be " + range);
}

inline void CheckRange(const Attr& a, double v, std::string_view text) {
  if (v < a.min || v > a.max) OutOfRange(a, text);
}

// The index of `value` in the declaration's words; throws listing them.
inline size_t ChoiceIndex(const Attr& a, std::string_view value) {
  const std::string_view v = Trim(value);
  for (size_t i = 0; i < a.choices.size(); ++i)
    if (a.choices[i] == v) return i;
  std::string list;
  for (std::string_view w : a.choices) list += (list.empty() ? "" : ", ") + std::string(w);
  throw Error(WEFT_ERR_INVALID_ARGUMENT,
              "attribute '" + std::string(a.name) + "' = '" + std::string(value) + "' is not one of: " + list);
}

// Parsing and naming per member type.
template <class T>
struct AttrType;

template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct AttrType<T> {
  static constexpr std::string_view kWord = "int";
  static std::string Spelling(const Attr& a) { return a.min >= 0 ? "int (non-negative)" : "int"; }
  static T Parse(std::string_view text, const Attr& a) {
    const int64_t v = ParseInt(text, a.name);
    CheckRange(a, static_cast<double>(v), text);
    bool fits = true;
    if constexpr (std::is_signed_v<T>) {
      fits = v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      fits = v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    if (!fits) BadAttr(a.name, text, "an integer that fits its type");
    return static_cast<T>(v);
  }
};

template <class T>
requires std::is_floating_point_v<T>
struct AttrType<T> {
  static constexpr std::string_view kWord = "float";
  static std::string Spelling(const Attr&) { return std::is_same_v<T, float> ? "float" : "double"; }
  static T Parse(std::string_view text, const Attr& a) {
    const double v = ParseFloat(text, a.name);
    if (!std::isnan(v)) CheckRange(a, v, text);
    return static_cast<T>(v);
  }
};

template <>
struct AttrType<bool> {
  static constexpr std::string_view kWord = "bool";
  static std::string Spelling(const Attr&) { return "boolean"; }
  static bool Parse(std::string_view text, const Attr& a) { return ParseBool(text, a.name); }
};

template <>
struct AttrType<Tuple> {
  static constexpr std::string_view kWord = "shape";
  static std::string Spelling(const Attr&) { return "Shape(tuple)"; }
  static Tuple Parse(std::string_view text, const Attr& a) { return IsNone(text) ? Tuple{} : ParseTuple(text, a.name); }
};

template <>
struct AttrType<OptTuple> {
  static constexpr std::string_view kWord = "shape";
  static std::string Spelling(const Attr&) { return "Shape(tuple)"; }
  static OptTuple Parse(std::string_view text, const Attr& a) { return ParseOptionalTuple(text, a.name); }
};

// The type word stays "string": core checks such a value only by parsing it here (MXNet's
// registry calls it "tuple of <float>").
template <>
struct AttrType<FloatTuple> {
  static constexpr std::string_view kWord = "string";
  static std::string Spelling(const Attr&) { return "tuple of <float>"; }
  static FloatTuple Parse(std::string_view text, const Attr& a) { return ParseFloatTuple(text, a.name); }
};

template <>
struct AttrType<std::string> {
  static std::string_view Word(const Attr& a) { return a.choices.empty() ? "string" : "enum"; }
  static std::string Spelling(const Attr& a) { return a.choices.empty() ? "string" : ChoiceSpelling(a.choices); }
  static std::string Parse(std::string_view text, const Attr& a) {
    if (!a.choices.empty()) return std::string(a.choices[ChoiceIndex(a, text)]);
    return std::string(text);
  }
};

template <class E>
requires std::is_enum_v<E>
struct AttrType<E> {
  static constexpr std::string_view kWord = "enum";
  static std::string Spelling(const Attr& a) { return ChoiceSpelling(a.choices); }
  static E Parse(std::string_view text, const Attr& a) { return static_cast<E>(ChoiceIndex(a, text)); }
};

template <>
struct AttrType<DTypeAttr> {
  static constexpr std::string_view kWord = "dtype";
  static std::string Spelling(const Attr& a) {
    if (!a.choices.empty()) return ChoiceSpelling(a.choices);
    return ChoiceSpelling(std::span<const std::string_view>(kDTypeNames));
  }
  static DTypeAttr Parse(std::string_view text, const Attr& a) {
    if (!a.choices.empty()) ChoiceIndex(a, text);  // "None" only where it is one of the choices
    if (IsNone(text)) return DTypeAttr{};
    return DTypeAttr{ParseDType(text, a.name)};
  }
};

template <class T>
struct AttrType<std::optional<T>> {
  static std::string_view Word(const Attr& a) {
    if constexpr (requires { AttrType<T>::kWord; }) {
      return AttrType<T>::kWord;
    } else {
      return AttrType<T>::Word(a);
    }
  }
  static std::string Spelling(const Attr& a) { return AttrType<T>::Spelling(a) + " or None"; }
  static std::optional<T> Parse(std::string_view text, const Attr& a) {
    if (IsNone(text)) return std::nullopt;
    return AttrType<T>::Parse(text, a);
  }
};

template <class T>
std::string_view TypeWord(const Attr& a) {
  if constexpr (requires { AttrType<T>::kWord; }) {
    return AttrType<T>::kWord;
  } else {
    return AttrType<T>::Word(a);
  }
}

// Fills the members of a parameter struct from attribute strings.
struct ParseVisitor {
  const AttrMap& attrs;
  template <class T>
  void operator()(T& member, const Attr& a) const {
    const std::string* text = attrs.Find(a.name);
    if (text != nullptr) {
      member = AttrType<T>::Parse(*text, a);
      // MXNet semantics weft lacks: a kernel may rely on the default.
      if (a.use == AttrUse::kDefaultOnly && a.default_text && !(member == AttrType<T>::Parse(*a.default_text, a)))
        throw Error(WEFT_ERR_UNSUPPORTED, "attribute '" + std::string(a.name) + "' = '" + *text +
                                              "' is not supported by weft (only the default '" +
                                              std::string(*a.default_text) + "' is)");
    } else if (a.default_text) {
      member = AttrType<T>::Parse(*a.default_text, a);
    } else {
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "attribute '" + std::string(a.name) + "' is required" +
                                                 (a.doc.empty() ? std::string() : " (" + std::string(a.doc) + ")"));
    }
  }
};

// Lists the declarations of a parameter struct.
struct DeclareVisitor {
  std::vector<AttrDecl>& out;
  template <class T>
  void operator()(T&, const Attr& a) const {
    AttrDecl d;
    d.name = a.name;
    d.type = TypeWord<T>(a);
    d.mxnet_type = a.mxnet_type.empty() ? AttrType<T>::Spelling(a) : std::string(a.mxnet_type);
    if (a.default_text) d.default_value = std::string(*a.default_text);
    d.doc = a.doc;
    if (d.doc.empty() && a.use == AttrUse::kIgnored) d.doc = "accepted for MXNet compatibility; has no effect in weft";
    for (std::string_view w : a.choices) d.choices.emplace_back(w);
    if (a.min > -std::numeric_limits<double>::infinity()) d.min = a.min;
    if (a.max < std::numeric_limits<double>::infinity()) d.max = a.max;
    d.use = a.use;
    d.none_ok = IsOptional<T>::value || std::is_same_v<T, Tuple> || std::is_same_v<T, OptTuple>;
    out.push_back(std::move(d));
  }
};

template <class P>
concept HasValidate = requires(P& p) {
  p.Validate();
};

}  // namespace detail

/// The parameter struct P filled from `attrs` (absent attributes take their declared defaults),
/// then checked (and completed: a stride of () becomes one 1 per kernel axis) by P::Validate()
/// when P has one. Throws weft::sdk::Error naming the attribute: WEFT_ERR_INVALID_ARGUMENT for a
/// missing required attribute, a malformed value, a value out of its range or not among its
/// choices, or a failed Validate(); WEFT_ERR_UNSUPPORTED for a DefaultOnly attribute away from
/// its default.
template <class P>
P ParseParams(const AttrMap& attrs) {
  P p{};
  detail::ParseVisitor v{attrs};
  p.Visit(v);
  if constexpr (detail::HasValidate<P>) p.Validate();
  return p;
}

/// The attributes P declares, in declaration order (MXNet's order).
template <class P>
std::vector<AttrDecl> DeclaredAttrs() {
  std::vector<AttrDecl> out;
  P p{};
  detail::DeclareVisitor v{out};
  p.Visit(v);
  return out;
}

/// MXNet's text of a shape: "(2, 3)", "(5,)", "()".
inline std::string ShapeText(std::span<const int64_t> shape) {
  return FormatTuple(std::vector<int64_t>(shape.begin(), shape.end()));
}

/// Elements of a shape (1 for a scalar).
inline int64_t ShapeSize(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Throws weft::sdk::Error(code, "<op>: <what>"): a kernel's setup error naming its op.
[[noreturn]] inline void OpError(int32_t code, std::string_view op, const std::string& what) {
  throw Error(code, std::string(op) + ": " + what);
}

/// An array seen around one axis: `outer` blocks of `len` × `inner` elements.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

/// The split of `shape` at `axis` (negative counts from the end; attribute `attr` in errors).
/// Throws WEFT_ERR_INVALID_ARGUMENT naming op, attribute and shape for a scalar or an axis out of
/// range.
inline AxisSplit SplitAtAxis(std::string_view op, std::span<const int64_t> shape, int64_t axis,
                             std::string_view attr = "axis") {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd == 0) OpError(WEFT_ERR_INVALID_ARGUMENT, op, "data must have at least one axis");
  if (axis < -nd || axis >= nd)
    OpError(WEFT_ERR_INVALID_ARGUMENT, op,
            std::string(attr) + "=" + std::to_string(axis) + " is out of range for " + ShapeText(shape) + " (use -" +
                std::to_string(nd) + ".." + std::to_string(nd - 1) + ")");
  if (axis < 0) axis += nd;
  AxisSplit v;
  for (int64_t i = 0; i < nd; ++i) (i < axis ? v.outer : i == axis ? v.len : v.inner) *= shape[static_cast<size_t>(i)];
  return v;
}

/// Throws weft::sdk::Error(WEFT_ERR_INVALID_ARGUMENT, message) unless `ok`; for Validate().
inline void CheckParam(bool ok, const std::string& message) {
  if (!ok) throw Error(WEFT_ERR_INVALID_ARGUMENT, message);
}

}  // namespace weft::sdk

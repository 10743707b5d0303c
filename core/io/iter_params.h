// weft io (internal) — the text parameters of registered iterators: their declarations (what
// MXDataIterGetIterInfo shows) and the parsing of MXNet's text values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/io.h"

namespace weft::io_detail {

/// How weft treats a parameter it lists.
enum class ParamUse {
  kUsed,
  kIgnored,      ///< accepted and ignored (MXNet options with no effect in weft: verbose, ctx)
  kDefaultOnly,  ///< not implemented: any value but the default is refused
};

struct ParamSpec {
  std::string name;
  std::string type;  ///< MXNet's type description ("int, optional, default='1'")
  std::optional<std::string> default_value;
  std::string doc;
  ParamUse use = ParamUse::kUsed;
};

/// The given values of one creation, checked against the specs: unknown or missing required
/// parameters and non-default values of kDefaultOnly ones are errors naming the iterator.
class ParamValues {
 public:
  ParamValues(std::string iter, const std::vector<ParamSpec>& specs, const std::map<std::string, std::string>& given);
  /// The text of `name` (given or default); nullopt when it has neither.
  std::optional<std::string> Text(const std::string& name) const;
  std::string Str(const std::string& name) const;
  int Int(const std::string& name) const;
  float Float(const std::string& name) const;
  bool Bool(const std::string& name) const;
  Shape ShapeOf(const std::string& name) const;
  /// nullopt for "None".
  std::optional<int> OptInt(const std::string& name) const;
  /// A dtype name; "None" gives `fallback`.
  DType Dtype(const std::string& name, DType fallback) const;

 private:
  std::string Required(const std::string& name) const;
  [[noreturn]] void Bad(const std::string& name, const std::string& value, const char* expected) const;
  std::string iter_;
  std::map<std::string, std::string> values_;
};

/// Text of a parameter's value in MXNet's spelling, for messages and for comparing with defaults:
/// booleans as 0/1, surrounding quotes removed.
std::string NormalizeParamText(const std::string& text);

}  // namespace weft::io_detail

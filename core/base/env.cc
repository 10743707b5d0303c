#include "weft/env.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "weft/base.h"

namespace weft {

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string GetEnvString(const char* name, const std::string& fallback) { return GetEnv(name).value_or(fallback); }

int64_t GetEnvInt(const char* name, int64_t fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  WEFT_CHECK(ec == std::errc() && p == v->data() + v->size(),
             "environment variable {}='{}' is not an integer; set it to a whole number or unset it", name, *v);
  return out;
}

bool GetEnvBool(const char* name, bool fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  Fail("environment variable {}='{}' is not a boolean; use 1/0, true/false, yes/no or on/off", name, *v);
}

}  // namespace weft

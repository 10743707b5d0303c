// weft core (internal) — input a user or an attacker may have written: bounded excerpts of it in
// error messages, and JSON parsed with bounded nesting.
//
// nlohmann::json parses iteratively, but dump() and the recursive algorithms that callers run on
// the result recurse once per nesting level: a 100 000-level value in a symbol file used to end
// in SIGSEGV while an error message was being built. Every weft format nests a few levels deep,
// so a depth limit loses nothing and keeps every later step bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "weft/base.h"

namespace weft::detail {

/// Deeper than any file weft reads or writes (symbol JSON nests 4 levels, optimizer state 2).
inline constexpr int kMaxJsonDepth = 64;
/// Longest excerpt of a value or of user text quoted in an error message.
inline constexpr size_t kMaxExcerptChars = 160;

/// `text` cut to `max_chars` with a note of how much was left out. For quoting user input in
/// error messages (an attribute can be gigabytes long).
inline std::string Excerpt(std::string_view text, size_t max_chars = kMaxExcerptChars) {
  if (text.size() <= max_chars) return std::string(text);
  return fmt::format("{}... ({} more characters)", text.substr(0, max_chars), text.size() - max_chars);
}

/// A JSON value as text, cut to `max_chars`. Safe on any value ParseJsonBounded returned.
inline std::string JsonExcerpt(const nlohmann::json& v, size_t max_chars = kMaxExcerptChars) {
  return Excerpt(v.dump(), max_chars);
}

/// Parses `text` as JSON nested at most `max_depth` levels. Throws weft::Error starting with
/// `what` when the text nests deeper ("nests deeper than N levels at byte B"; checked by a linear
/// scan before parsing, so nothing deep is ever built) or is not JSON ("not valid JSON (<parser
/// message>)").
inline nlohmann::json ParseJsonBounded(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth) {
  // A scan of the brackets outside strings. Up to the first structural error (where the parser
  // stops too) it counts exactly the parser's depth. nlohmann's depth-aware callback parser is
  // not used: it is quadratic (230 s for a 100 000-node symbol file that parses in 2 s).
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        Fail(
            "{}: the JSON nests deeper than {} levels at byte {}; no weft file does, so the file is corrupt or "
            "hostile",
            what, max_depth, i);
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    Fail("{}: not valid JSON ({})", what, Excerpt(e.what(), 400));
  }
}

}  // namespace weft::detail

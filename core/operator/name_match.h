// weft core — "did you mean" suggestions for unknown op and attribute names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::opdef {

/// Up to `max` names from `candidates` close to `query`, closest first: a case-insensitive
/// edit distance (Levenshtein) of at most max(1, |query| / 3), or a case-insensitive
/// prefix/substring match of at least 3 characters. Pure function; thread-safe.
std::vector<std::string> CloseNames(std::string_view query, const std::vector<std::string>& candidates, size_t max = 3);

}  // namespace weft::opdef

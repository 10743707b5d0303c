#include "operator/name_match.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace weft::opdef {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> CloseNames(std::string_view query, const std::vector<std::string>& candidates, size_t max) {
  std::string q = Lower(query);
  size_t limit = std::max<size_t>(1, q.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    std::string lc = Lower(c);
    size_t d = EditDistance(q, lc);
    // A substring match ranks just after the edit-distance hits of the same distance class.
    bool contains =
        q.size() >= 3 && (lc.find(q) != std::string::npos || q.find(lc) != std::string::npos) && lc.size() >= 3;
    if (d <= limit) {
      scored.emplace_back(d, c);
    } else if (contains) {
      scored.emplace_back(limit + 1, c);
    }
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < max; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace weft::opdef

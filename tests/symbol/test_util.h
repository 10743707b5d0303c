// Helpers shared by the symbol tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace weft::test {

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string Fixture(const std::string& name) { return std::string(WEFT_SHARED_DIR) + "/fixtures/mxnet/" + name; }
inline std::string Expected(const std::string& name) { return std::string(WEFT_SYMBOL_TEST_DATA) + "/" + name; }

}  // namespace weft::test

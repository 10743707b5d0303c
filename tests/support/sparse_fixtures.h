// MXNet 1.9.1's results for sparse storage (tests/operator/data/sparse_update.json, written by
// tests/operator/gen_sparse_update_fixtures.py), parsed once. A test using it defines
// WEFT_SPARSE_DATA as that data directory.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace weft::test {

inline const nlohmann::json& SparseFixtures() {
  static const nlohmann::json j = [] {
    std::ifstream f(std::string(WEFT_SPARSE_DATA) + "/sparse_update.json");
    if (!f) throw std::runtime_error("cannot open sparse_update.json under " WEFT_SPARSE_DATA);
    return nlohmann::json::parse(f);
  }();
  return j;
}

}  // namespace weft::test

// Reading MXNet 1.9.1's recorded fixtures (tests/compat/data): the JSON manifests and the elements
// of a fixture array of any dtype. Shared by compat_test (symbols, zoo networks) and op_calls_test
// (imperative calls). Header-only: each test executable compiles it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "weft/ndarray.h"

namespace weft::compat {

/// The parsed JSON file at `path`; a missing file fails the current test (and parses as empty).
inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

template <typename T>
std::vector<double> ElementsAs(const NDArray& a) {
  std::vector<T> raw(a.Size());
  a.SyncCopyToCPUBytes(raw.data(), a.Bytes());
  return std::vector<double>(raw.begin(), raw.end());
}

/// The elements of `a` (waits for pending writes) as double: float32/64 and the integer dtypes
/// fixtures hold (positions of topk/argsort, _arange, masks) are exact in double.
inline std::vector<double> Elements(const NDArray& a) {
  switch (a.GetDType()) {
    case DType::kFloat64:
      return ElementsAs<double>(a);
    case DType::kInt32:
      return ElementsAs<int32_t>(a);
    case DType::kInt64:
      return ElementsAs<int64_t>(a);
    case DType::kUint8:
      return ElementsAs<uint8_t>(a);
    default:
      return ElementsAs<float>(a);
  }
}

}  // namespace weft::compat

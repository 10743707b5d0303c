// MXNet's imperative calls of the ops its Python frontend uses (issue 28), run through
// weft::Invoke against what MXNet 1.9.1 computed (tests/compat/gen_op_fixtures.py wrote the
// calls_<family>.* fixtures): the outputs, and the arrays MXNet's call changed in place (the out=
// array of x[key] = value, optimizer states). Tolerance as compat_test: |a − b| ≤ 1e-5 + 1e-4·|b|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "compat_support.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace weft {
namespace {

const std::string kData = WEFT_COMPAT_DATA;

// Counts elements outside 1e-5 + 1e-4·|want| (NaN only matches NaN); returns the max abs error.
double Compare(const NDArray& got, const NDArray& want, size_t* bad) {
  const std::vector<double> g = compat::Elements(got), w = compat::Elements(want);
  *bad = g.size() == w.size() ? 0 : 1;
  double worst = 0;
  for (size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    const double d = std::fabs(g[i] - w[i]);
    if (!(d <= 1e-5 + 1e-4 * std::fabs(w[i]))) ++*bad;
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return worst;
}

std::vector<std::string> CallNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kData)) {
    const std::string file = e.path().filename().string();
    if (!file.starts_with("calls_") || !file.ends_with(".json")) continue;
    const std::string stem = file.substr(0, file.size() - 5);
    for (const auto& c : compat::ReadJson(e.path().string()))
      names.push_back(stem + "/" + c["name"].get<std::string>());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class OpCall : public testing::TestWithParam<std::string> {};

TEST_P(OpCall, MatchesMXNet) {
  const std::string stem = GetParam().substr(0, GetParam().find('/'));
  const std::string name = GetParam().substr(stem.size() + 1);
  nlohmann::json call;
  for (const auto& c : compat::ReadJson(kData + "/" + stem + ".json"))
    if (c["name"] == name) call = c;
  ASSERT_FALSE(call.is_null());
  const std::map<std::string, NDArray> arrays = NDArray::LoadToMap(kData + "/" + stem + ".params");
  auto get = [&](const std::string& key) {
    auto it = arrays.find(name + ":" + key);
    EXPECT_NE(it, arrays.end()) << stem << ".params has no " << name << ":" << key;
    return it == arrays.end() ? NDArray() : it->second;
  };

  // Fresh copies: the call may write them.
  std::vector<NDArray> in;
  for (int i = 0; i < call["arrays"].get<int>(); ++i)
    in.push_back(get("in:" + std::to_string(i)).Copy(Context::cpu(0)));
  ImperativeCall c;
  c.op = call["op"].get<std::string>();
  for (const auto& [k, v] : call["attrs"].items()) c.params[k] = v.get<std::string>();
  c.inputs.assign(in.begin(), in.begin() + call["inputs"].get<int>());
  std::vector<NDArray> out;
  if (!call["out"].is_null()) out.push_back(in[call["out"].get<size_t>()]);
  Invoke(c, &out);

  double worst = 0;
  for (int i = 0; i < call["outputs"].get<int>(); ++i) {
    size_t bad = 0;
    const NDArray want = get("out:" + std::to_string(i));
    ASSERT_LT(static_cast<size_t>(i), out.size());
    EXPECT_EQ(out[i].GetShape(), want.GetShape()) << "output " << i;
    EXPECT_EQ(out[i].GetDType(), want.GetDType()) << "output " << i;
    worst = std::max(worst, Compare(out[i], want, &bad));
    EXPECT_EQ(bad, 0u) << "output " << i << " differs from MXNet's";
  }
  for (const auto& m : call["mutated"]) {
    size_t bad = 0;
    const size_t i = m.get<size_t>();
    worst = std::max(worst, Compare(in[i], get("after:" + std::to_string(i)), &bad));
    EXPECT_EQ(bad, 0u) << "array " << i << " after the call differs from MXNet's";
  }
  std::cout << "[compat] call " << name << ": max abs error " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(MXNet191, OpCall, testing::ValuesIn(CallNames()),
                         [](const testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param.substr(6);  // calls_index/_set_value -> index__set_value
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace weft

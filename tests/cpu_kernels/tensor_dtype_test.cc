// The integer and float16 kernels of the arithmetic, scalar, broadcast, comparison, broadcast_to and
// topk / sort / argsort ops, gather_nd / scatter_nd / _scatter_set_nd with indices of every dtype, and the
// float16 gradients of the arithmetic ops (issue 28)
// against MXNet 1.9.1's own outputs on the same inputs (data/mxnet_dtype_ops.json, written by gen_dtype_fixtures.py
// with the real MXNet): integer division truncates, a float scalar is converted to the array's dtype first, uint8
// wraps, rdiv and power go through float, float16 rounds once per op. Every request mode is checked (ExpectOp), with no
// tolerance: these results are exactly defined.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tensor_test_util.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace ttest {
namespace {

int32_t DTypeCode(const std::string& name) {
  if (name == "float32") return WEFT_DTYPE_FLOAT32;
  if (name == "float64") return WEFT_DTYPE_FLOAT64;
  if (name == "float16") return WEFT_DTYPE_FLOAT16;
  if (name == "uint8") return WEFT_DTYPE_UINT8;
  if (name == "int8") return WEFT_DTYPE_INT8;
  if (name == "int32") return WEFT_DTYPE_INT32;
  if (name == "int64") return WEFT_DTYPE_INT64;
  ADD_FAILURE() << "fixture dtype " << name;
  return -1;
}

Buf FromJson(const nlohmann::json& j) {
  return Make(DTypeCode(j.at("dtype").get<std::string>()), j.at("shape").get<Shape>(),
              j.at("values").get<std::vector<double>>());
}

nlohmann::json LoadCases() {
  const std::string path = std::string(WEFT_CPU_KERNELS_DATA) + "/mxnet_dtype_ops.json";
  std::ifstream f(path);
  if (!f) {
    ADD_FAILURE() << "cannot read " << path;
    return nlohmann::json::array();
  }
  return nlohmann::json::parse(f).at("cases");
}

TEST(TensorDType, MatchesMXNet) {
  const nlohmann::json cases = LoadCases();
  ASSERT_GT(cases.size(), 100u);
  std::set<std::string> dtypes;
  for (const nlohmann::json& c : cases) {
    std::vector<Buf> in, want;
    for (const nlohmann::json& j : c.at("inputs")) in.push_back(FromJson(j));
    for (const nlohmann::json& j : c.at("outputs")) want.push_back(FromJson(j));
    const Attrs attrs = c.at("attrs").get<Attrs>();
    std::string label = c.at("op").get<std::string>() + " " + weft::sdk::DTypeName(in[0].dtype);
    for (const auto& [k, v] : attrs) label += " " + k + "=" + v;
    SCOPED_TRACE(label);
    dtypes.insert(weft::sdk::DTypeName(in[0].dtype));
    // Exact, except the float16 gradients: MXNet rounds after each step of a derivative, weft once.
    ExpectOp(c.at("op").get<std::string>(), attrs, in, want, c.value("tol", 0.0));
  }
  // float32 and float64 data come with the nd indexing ops (integer indices, gradients).
  EXPECT_EQ(dtypes, (std::set<std::string>{"float16", "float32", "float64", "int32", "int64", "int8", "uint8"}));
}

// What MXNet's cpu cannot show (it dies of SIGFPE): an integer division by zero gives 0 here, as
// in numpy, and INT_MIN / -1 wraps to INT_MIN instead of trapping.
TEST(TensorDType, IntegerDivisionByZeroIsZero) {
  const Shape s{4};
  const Buf x = Make(WEFT_DTYPE_INT32, s, {-7, 0, 5, -2147483648.0});
  ExpectOp("_div_scalar", {{"scalar", "0.75"}}, {x}, {Make(WEFT_DTYPE_INT32, s, {0, 0, 0, 0})}, 0.0);
  const Buf y = Make(WEFT_DTYPE_INT32, s, {0, 3, 0, -1});
  ExpectOp("elemwise_div", {}, {x, y}, {Make(WEFT_DTYPE_INT32, s, {0, 0, 0, -2147483648.0})}, 0.0);
  const Buf u = Make(WEFT_DTYPE_UINT8, s, {7, 0, 255, 1});
  ExpectOp("broadcast_div", {}, {u, Make(WEFT_DTYPE_UINT8, {1}, {0})}, {Make(WEFT_DTYPE_UINT8, s, {0, 0, 0, 0})}, 0.0);
}

// _contrib_allclose with NaN and infinities (which the JSON fixtures cannot hold). MXNet 1.9.1:
// allclose([1, 2, nan], [1, 2.00001, nan]) = 1, with equal_nan=False 0; inf matches inf only;
// a float16 NaN too.
TEST(TensorDType, AllCloseNaNAndInfinity) {
  const double nan = std::nan(""), inf = HUGE_VAL;
  const Buf yes = Make(WEFT_DTYPE_UINT8, {}, {1}), no = Make(WEFT_DTYPE_UINT8, {}, {0});
  const Buf a = Make(WEFT_DTYPE_FLOAT32, {3}, {1, 2, nan}), b = Make(WEFT_DTYPE_FLOAT32, {3}, {1, 2.00001, nan});
  ExpectOp("_contrib_allclose", {}, {a, b}, {yes}, 0.0);
  ExpectOp("_contrib_allclose", {{"equal_nan", "False"}}, {a, b}, {no}, 0.0);
  ExpectOp("_contrib_allclose", {}, {a, Make(WEFT_DTYPE_FLOAT32, {3}, {1, 2, 3})}, {no}, 0.0);
  const Buf i = Make(WEFT_DTYPE_FLOAT64, {2}, {inf, -inf});
  ExpectOp("_contrib_allclose", {}, {i, i}, {yes}, 0.0);
  ExpectOp("_contrib_allclose", {{"atol", "1e300"}}, {i, Make(WEFT_DTYPE_FLOAT64, {2}, {1e308, -inf})}, {no}, 0.0);
  const Buf h = Make(WEFT_DTYPE_FLOAT16, {2}, {nan, 0.5});
  ExpectOp("_contrib_allclose", {}, {h, h}, {yes}, 0.0);
  std::vector<Buf> out{Buf::Of(WEFT_DTYPE_UINT8, {})};
  EXPECT_NE(RunKernel("_contrib_allclose", {}, {a, Make(WEFT_DTYPE_FLOAT32, {2}, {1, 2})}, out), "");
}

// float16 sort / argsort have no kernel on MXNet's cpu; topk has. The gradients are floating only.
TEST(TensorDType, RegisteredDTypes) {
  const Shape s{2, 3};
  std::vector<Buf> out{Buf::Of(WEFT_DTYPE_FLOAT16, s)};
  EXPECT_NE(RunKernel("sort", {}, {Make(WEFT_DTYPE_FLOAT16, s)}, out), "");
  std::vector<Buf> grad{Buf::Of(WEFT_DTYPE_INT32, s), Buf::Of(WEFT_DTYPE_INT32, s)};
  EXPECT_NE(RunKernel("_backward_elemwise_sub", {}, {Make(WEFT_DTYPE_INT32, s)}, grad), "");
}

}  // namespace
}  // namespace ttest

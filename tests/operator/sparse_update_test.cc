// Lazy optimizer updates on row_sparse gradients (weft/sparse_update.h) and _square_sum, on the
// cpu plugin, against what MXNet 1.9.1 computed (data/sparse_update.json, written by
// gen_sparse_update_fixtures.py): two steps per case with different gradient rows and a weight
// decay, so a row updated where MXNet leaves it shows; then the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sparse_fixtures.h"

#include "test_util.h"
#include "weft/imperative.h"
#include "weft/internal/sparse_update.h"
#include "weft/ndarray.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using Params = std::map<std::string, std::string>;
using nlohmann::json;

const json& Fixtures() { return weft::test::SparseFixtures(); }

std::vector<double> Doubles(const json& j) { return j.get<std::vector<double>>(); }

NDArray Dense(const std::vector<double>& v, const Shape& shape) {
  NDArray a(shape, Context::cpu(0), false, DType::kFloat32);
  std::vector<float> f(v.begin(), v.end());
  a.SyncCopyFromCPU(f);
  return a;
}

// The values as MXNet's case gives them, in storage type `stype`; a row_sparse array of zeros
// stores no row (MXNet's mx.nd.zeros(stype='row_sparse')).
NDArray Make(const std::vector<double>& v, const Shape& shape, const std::string& stype) {
  const StorageType st = StorageTypeFromName(stype);
  bool zeros = true;
  for (double x : v) zeros = zeros && x == 0.0;
  if (st == StorageType::kRowSparse && zeros) return NDArray::CreateSparse(st, shape, Context::cpu(0));
  return CastStorage(Dense(v, shape), st);
}

// A row_sparse gradient storing exactly `rows` of the dense values.
NDArray Grad(const std::vector<double>& v, const std::vector<int64_t>& rows, const Shape& shape) {
  const NDArray full = Dense(v, shape);
  NDArray ids(Shape{static_cast<int64_t>(rows.size())}, Context::cpu(0), false, DType::kInt64);
  ids.SyncCopyFromCPUBytes(rows.data(), rows.size() * sizeof(int64_t));
  NDArray g = NDArray::CreateSparse(StorageType::kRowSparse, shape, Context::cpu(0));
  RetainRowsInto(full, ids, g);
  return g;
}

void ExpectValues(const NDArray& a, const std::vector<double>& want, const std::string& what) {
  std::vector<float> got;
  CastStorage(a, StorageType::kDefault).SyncCopyToCPU(&got);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << what << " element " << i;
}

TEST(LazyUpdate, MatchesMXNet) {
  const Shape shape(Fixtures().at("shape").get<std::vector<int64_t>>());
  for (const json& c : Fixtures().at("updates")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::string op = c.at("op");
    const Params params = c.at("attrs").get<Params>();
    NDArray weight = Make(Doubles(c.at("weight")), shape, c.at("weight_stype").get<std::string>());
    std::vector<NDArray> states;
    for (size_t i = 0; i < c.at("states").size(); ++i)
      states.push_back(Make(Doubles(c.at("states")[i]), shape, c.at("state_stypes")[i].get<std::string>()));
    const bool lazy = params.count("lazy_update") == 0 || params.at("lazy_update") == "True";
    for (const json& step : c.at("steps")) {
      const NDArray grad = Grad(Doubles(step.at("grad")), step.at("rows").get<std::vector<int64_t>>(), shape);
      std::vector<NDArray> inputs{weight, grad};
      inputs.insert(inputs.end(), states.begin(), states.end());
      ASSERT_EQ(IsLazyUpdate(op, params, inputs), lazy);
      if (lazy) {
        LazyUpdate(op, params, weight, grad, states);
      } else {
        // MXNet's non-lazy update of a row_sparse gradient: every row, as with the dense gradient.
        ImperativeCall call;
        call.op = op;
        call.params = params;
        call.inputs = {weight, CastStorage(grad, StorageType::kDefault)};
        call.inputs.insert(call.inputs.end(), states.begin(), states.end());
        std::vector<NDArray> out{weight};
        Invoke(call, &out);
      }
      ExpectValues(weight, Doubles(step.at("weight")), "weight");
      for (size_t i = 0; i < states.size(); ++i) ExpectValues(states[i], Doubles(step.at("states")[i]), "state");
    }
    EXPECT_EQ(weight.storage_type(), StorageTypeFromName(c.at("weight_stype").get<std::string>()));
    for (size_t i = 0; i < states.size(); ++i)
      EXPECT_EQ(states[i].storage_type(), StorageTypeFromName(c.at("state_stypes")[i].get<std::string>()));
  }
}

TEST(LazyUpdate, DispatchFollowsMXNet) {
  const Shape shape{4, 2};
  const NDArray w(shape, Context::cpu(0), false), dense_g(shape, Context::cpu(0), false);
  const NDArray g = NDArray::CreateSparse(StorageType::kRowSparse, shape, Context::cpu(0));
  const NDArray rsp = NDArray::CreateSparse(StorageType::kRowSparse, shape, Context::cpu(0));
  EXPECT_TRUE(IsLazyUpdate("sgd_update", {{"lr", "0.1"}}, {w, g}));
  EXPECT_FALSE(IsLazyUpdate("sgd_update", {{"lr", "0.1"}, {"lazy_update", "False"}}, {w, g}));
  EXPECT_FALSE(IsLazyUpdate("sgd_update", {{"lr", "0.1"}}, {w, dense_g}));
  // MXNet has no lazy nag_mom_update: it updates every row.
  EXPECT_FALSE(IsLazyUpdate("nag_mom_update", {{"lr", "0.1"}}, {w, g, w}));
  // ftrl_update is lazy on row_sparse arrays only (ElemwiseStorageType), sparse adagrad always.
  EXPECT_FALSE(IsLazyUpdate("ftrl_update", {{"lr", "0.1"}}, {w, g, w, w}));
  EXPECT_TRUE(IsLazyUpdate("ftrl_update", {{"lr", "0.1"}}, {rsp, g, rsp, rsp}));
  EXPECT_TRUE(IsLazyUpdate("_sparse_adagrad_update", {{"lr", "0.1"}}, {w, g, w}));
}

TEST(LazyUpdate, EmptyGradientChangesNothing) {
  NDArray w = Dense({1, 2, 3, 4}, Shape{2, 2});
  NDArray mom = Dense({5, 6, 7, 8}, Shape{2, 2});
  const NDArray g = NDArray::CreateSparse(StorageType::kRowSparse, Shape{2, 2}, Context::cpu(0));
  LazyUpdate("sgd_mom_update", {{"lr", "0.5"}, {"momentum", "0.9"}, {"wd", "0.1"}}, w, g, {mom});
  ExpectValues(w, {1, 2, 3, 4}, "weight");
  ExpectValues(mom, {5, 6, 7, 8}, "mom");
}

TEST(LazyUpdate, Refusals) {
  const Shape shape{4, 2};
  const NDArray g = Grad({1, 1, 0, 0, 0, 0, 0, 0}, {0}, shape);
  // A row_sparse weight must store every row (MXNet's CHECK_RSP_ALL_ROWS_NON_ZERO).
  const NDArray partial = Grad({1, 1, 2, 2, 0, 0, 0, 0}, {0, 1}, shape);
  test::ExpectContains(test::ErrorOf([&] {
                         LazyUpdate("sgd_update", {{"lr", "0.1"}}, partial, g, {});
                       }),
                       {"sgd_update", "stores 2 of its 4 rows"});
  const NDArray w(shape, Context::cpu(0), false);
  test::ExpectContains(test::ErrorOf([&] {
                         LazyUpdate("sgd_update", {{"lr", "0.1"}}, w, w, {});
                       }),
                       {"row_sparse gradient"});
  test::ExpectContains(test::ErrorOf([&] {
                         LazyUpdate("sgd_mom_update", {{"lr", "0.1"}}, w, g, {});
                       }),
                       {"0 states given, the op has 1"});
  // MXNet's sparse adagrad has no weight decay.
  test::ExpectContains(
      test::ErrorOf([&] {
        LazyUpdate("_sparse_adagrad_update", {{"lr", "0.1"}, {"wd", "0.1"}}, w, g, {NDArray(shape, Context::cpu(0))});
      }),
      {"weight decay"});
}

TEST(SquareSum, MatchesMXNet) {
  const json& s = Fixtures().at("square_sum");
  const Shape shape(Fixtures().at("shape").get<std::vector<int64_t>>());
  const NDArray x = Dense(Doubles(s.at("input")), shape);
  for (const json& c : s.at("cases")) {
    const NDArray y = InvokeOne("_square_sum", {x}, c.at("attrs").get<Params>());
    EXPECT_EQ(y.GetShape(), Shape(c.at("shape").get<std::vector<int64_t>>()));
    ExpectValues(y, Doubles(c.at("value")), "_square_sum " + c.at("attrs").dump());
  }
}

}  // namespace
}  // namespace weft

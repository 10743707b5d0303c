// Lazy optimizer updates on row_sparse gradients (weft/sparse_update.h) and _square_sum, on the
// cpu plugin, against what MXNet 1.9.1 computed (data/sparse_update.json, written by
// gen_sparse_update_fixtures.py): two steps per case with different gradient rows and a weight
// decay, so a row updated where MXNet leaves it shows; then the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
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

// The cpu's one-pass lazy kernels (plugins/cpu/kernels/optimizer_sparse.cc) against the dense
// update of the same op restricted to the gradient's rows: every row the gradient stores takes the
// dense kernel's values (weight and states), every other row keeps its own.
struct KernelCase {
  std::string op;
  Params params;
  int states;
};

std::vector<KernelCase> KernelCases() {
  const Params common{{"lr", "0.05"}, {"wd", "0.1"}, {"rescale_grad", "0.5"}, {"clip_gradient", "0.8"}};
  auto with = [&](Params extra) {
    extra.insert(common.begin(), common.end());
    return extra;
  };
  return {{"sgd_update", common, 0},
          {"sgd_mom_update", with({{"momentum", "0.9"}}), 1},
          {"adam_update", with({{"beta1", "0.8"}, {"beta2", "0.95"}, {"epsilon", "1e-6"}}), 2}};
}

NDArray Random(const Shape& shape, DType dtype, uint64_t seed, double lo, double hi) {
  std::vector<double> v(shape.Size());
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (double& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + (hi - lo) * static_cast<double>(x >> 11) / static_cast<double>(1ull << 53);
  }
  const NDArray f = Dense(v, shape);
  return dtype == DType::kFloat32 ? f : InvokeOne("Cast", {f}, {{"dtype", std::string(DTypeName(dtype))}});
}

std::vector<double> HostDoubles(const NDArray& a) {
  const NDArray d = InvokeOne("Cast", {a}, {{"dtype", "float64"}});
  std::vector<double> v(d.Size());
  d.SyncCopyToCPUBytes(v.data(), v.size() * sizeof(double));
  return v;
}

// A row_sparse gradient of `values` (dense, shape of the weight) storing `rows` (in the given
// order: the refusal test passes them unsorted), its indices of dtype `index`.
NDArray RowsOf(const NDArray& values, const std::vector<int64_t>& rows, DType index) {
  const int64_t k = values.GetShape()[1];
  NDArray ids(Shape{static_cast<int64_t>(rows.size())}, Context::cpu(0), false, DType::kInt64);
  if (!rows.empty()) ids.SyncCopyFromCPUBytes(rows.data(), rows.size() * sizeof(int64_t));
  const NDArray part = rows.empty() ? NDArray(Shape{0, k}, Context::cpu(0), false, values.GetDType())
                                    : InvokeOne("take", {values, ids}, {{"axis", "0"}});
  if (index != DType::kInt64) ids = InvokeOne("Cast", {ids}, {{"dtype", std::string(DTypeName(index))}});
  return NDArray::FromSparseParts(StorageType::kRowSparse, values.GetShape(), part, {ids});
}

namespace {

// The lazy kernel of `kc` on a gradient storing `rows` of `shape` against the dense update (see
// above), in `dtype` with `index` indices.
void ExpectLazyMatchesDense(const KernelCase& kc, const Shape& shape, const std::vector<int64_t>& rows, DType dtype,
                            DType index, uint64_t seed) {
  SCOPED_TRACE(kc.op + " " + std::string(DTypeName(dtype)) + " indices " + std::string(DTypeName(index)) + " rows " +
               std::to_string(rows.size()));
  const NDArray w0 = Random(shape, dtype, seed, -1, 1), g = Random(shape, dtype, seed + 1, -3, 3);
  std::vector<NDArray> s0;
  for (int i = 0; i < kc.states; ++i) s0.push_back(Random(shape, dtype, seed + 2 + i, 0.1, 1));
  // The dense update of every row, on copies.
  ImperativeCall dense;
  dense.op = kc.op;
  dense.params = kc.params;
  dense.inputs = {w0.Copy(Context::cpu(0)), g};
  for (const NDArray& s : s0) dense.inputs.push_back(s.Copy(Context::cpu(0)));
  std::vector<NDArray> dense_out{dense.inputs[0]};
  Invoke(dense, &dense_out);
  // The lazy kernel, in place on copies.
  const NDArray w = w0.Copy(Context::cpu(0)), grad = RowsOf(g, rows, index);
  std::vector<NDArray> states;
  for (const NDArray& s : s0) states.push_back(s.Copy(Context::cpu(0)));
  ImperativeCall lazy;
  lazy.op = kc.op;
  lazy.params = kc.params;
  lazy.inputs = {w, grad};
  lazy.inputs.insert(lazy.inputs.end(), states.begin(), states.end());
  ASSERT_TRUE(SparseKernelClaims(lazy, {w})) << "the cpu has a lazy kernel for " << kc.op;
  LazyUpdate(kc.op, kc.params, w, grad, states);
  std::vector<bool> stored(static_cast<size_t>(shape[0]), false);
  for (int64_t r : rows) stored[static_cast<size_t>(r)] = true;
  auto expect = [&](const NDArray& got, const NDArray& updated, const NDArray& before, const char* what) {
    const std::vector<double> a = HostDoubles(got), u = HostDoubles(updated), b = HostDoubles(before);
    for (size_t e = 0; e < a.size(); ++e) {
      const double want = stored[e / static_cast<size_t>(shape[1])] ? u[e] : b[e];
      ASSERT_NEAR(a[e], want, 1e-6 * (1 + std::fabs(want))) << what << " element " << e;
    }
  };
  expect(w, dense.inputs[0], w0, "weight");
  for (int i = 0; i < kc.states; ++i) expect(states[i], dense.inputs[2 + i], s0[i], "state");
}

}  // namespace

TEST(LazyUpdateKernel, MatchesTheDenseUpdateOnItsRows) {
  const Shape shape{40, 3};
  const std::vector<std::vector<int64_t>> row_sets = {{}, {0, 7, 8, 21, 39}, {}};
  for (const KernelCase& kc : KernelCases())
    for (DType dtype : {DType::kFloat32, DType::kFloat64})
      for (DType index : {DType::kInt64, DType::kInt32})
        for (size_t set = 0; set < 3; ++set) {
          std::vector<int64_t> rows = row_sets[set];
          if (set == 2)
            for (int64_t r = 0; r < shape[0]; ++r) rows.push_back(r);  // every row
          ExpectLazyMatchesDense(kc, shape, rows, dtype, index, set + 10 * static_cast<uint64_t>(kc.states));
        }
}

// Enough rows for the kernel to split them over the thread plan's team, in pieces the threads take
// in turn: every stored row updated once, dense ones (consecutive rows) and sparse ones alike.
TEST(LazyUpdateKernel, ManyRowsSplitIntoPiecesMatchTheDenseUpdate) {
  const Shape shape{200000, 1};
  std::vector<int64_t> rows;
  std::mt19937_64 rng(5);
  for (int64_t r = 0; r < shape[0]; ++r)
    if (r < 20000 || rng() % 8 == 0) rows.push_back(r);  // a dense head, then one row in 8
  for (const KernelCase& kc : KernelCases())
    ExpectLazyMatchesDense(kc, shape, rows, DType::kFloat32, DType::kInt64, 77);
}

TEST(LazyUpdateKernel, RefusesUnsortedOrOutOfRangeIndicesAndWritesNothing) {
  const Shape shape{6, 2};
  const NDArray w0 = Random(shape, DType::kFloat32, 3, -1, 1), g = Random(shape, DType::kFloat32, 4, -1, 1);
  for (const std::vector<int64_t>& rows : std::vector<std::vector<int64_t>>{{1, 4, 2}, {2, 2}, {0, 6}}) {
    const NDArray w = w0.Copy(Context::cpu(0)), mom = Random(shape, DType::kFloat32, 5, 0, 1);
    const std::vector<double> mom0 = HostDoubles(mom);
    const std::string e = test::ErrorOf([&] {
      LazyUpdate("sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}}, w, RowsOf(g, rows, DType::kInt64), {mom});
      w.WaitToRead();
    });
    test::ExpectContains(e, {"sgd_mom_update", "row_sparse gradient's index", "sorted and distinct"});
    EXPECT_EQ(HostDoubles(w), HostDoubles(w0));
    EXPECT_EQ(HostDoubles(mom), mom0);
  }
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

// Sparse kernels (SDK 2.1) through imperative invoke: the cpu plugin's dot of a csr lhs against
// the dense dot of the same values (random csr with empty rows, float32 and float64, int64 and
// int32 aux arrays, sizes that split over threads), the row_sparse result of csrᵀ·dense storing
// exactly the csr's columns (sorted, unique), malformed indices refused; and placement: the dense
// lookup never yields a sparse kernel, a device whose plugin claims no sparse kernel (simdev)
// refuses the call by name, as does a storage pattern the cpu plugin does not claim. Autograd
// records the sparse kernels' calls: gradients through _sparse_retain, _square_sum and dot with a
// csr operand, in the storage types MXNet gives them, into sparse and dense variables, through
// dense ops, summed, added (grad_req add), on dense copies where no sparse backward kernel claims
// the storage types; create_graph through a sparse op is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sparse_values.h"
#include "test_util.h"
#include "weft/autograd.h"
#include "weft/engine.h"
#include "weft/imperative.h"
#include "weft/internal/runtime.h"
#include "weft/ndarray.h"
#include "weft/runtime.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using Params = std::map<std::string, std::string>;
using test::ErrorOf;
using test::ExpectContains;
using test::Indices;
using test::Values;

// A dense (rows, cols) matrix where about `density` of the entries are non-zero and every third
// row is empty, as float64 values (the reference computes in double).
std::vector<double> RandomSparse(int64_t rows, int64_t cols, double density, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0), v(-1.0, 1.0);
  std::vector<double> m(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (i % 3 != 1 && u(gen) < density) m[static_cast<size_t>(i * cols + j)] = v(gen);
  return m;
}

NDArray Dense(const std::vector<double>& v, const Shape& shape, DType dtype, const Context& ctx = Context::cpu(0)) {
  NDArray d(shape, Context::cpu(0), false, DType::kFloat64);
  d.SyncCopyFromCPUBytes(v.data(), v.size() * sizeof(double));
  NDArray out = InvokeOne("Cast", {d}, {{"dtype", std::string(DTypeName(dtype))}});
  return ctx == Context::cpu(0) ? out : out.Copy(ctx);
}

// The csr with its aux arrays narrowed to int32 (MXNet allows either index type).
NDArray WithInt32Aux(const NDArray& csr) {
  std::vector<NDArray> aux;
  for (size_t i = 0; i < csr.num_aux_data(); ++i)
    aux.push_back(InvokeOne("Cast", {csr.aux_ndarray(i)}, {{"dtype", "int32"}}));
  return NDArray::FromSparseParts(StorageType::kCSR, csr.GetShape(), csr.data_ndarray(), aux);
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
}

struct DotCase {
  int64_t m, n, k;
  double density;
  DType dtype;
  bool int32_aux;
};

class CsrDot : public ::testing::TestWithParam<DotCase> {};

TEST_P(CsrDot, MatchesTheDenseDotOfTheSameValues) {
  const DotCase c = GetParam();
  const std::vector<double> lhs = RandomSparse(c.m, c.n, c.density, 7);
  NDArray csr = CastStorage(Dense(lhs, Shape{c.m, c.n}, c.dtype), StorageType::kCSR);
  if (c.int32_aux) csr = WithInt32Aux(csr);
  const double tol = c.dtype == DType::kFloat32 ? 1e-4 : 1e-10;
  const NDArray dense_lhs = Dense(lhs, Shape{c.m, c.n}, c.dtype);

  const NDArray rhs = Dense(RandomSparse(c.n, c.k, 1.0, 8), Shape{c.n, c.k}, c.dtype);
  const NDArray out = InvokeOne("dot", {csr, rhs});
  EXPECT_EQ(out.storage_type(), StorageType::kDefault);
  ExpectNear(Values(out), Values(InvokeOne("dot", {dense_lhs, rhs})), tol);

  // csrᵀ · dense: row_sparse storing the csr's stored columns, sorted and unique.
  const NDArray grad = Dense(RandomSparse(c.m, c.k, 1.0, 9), Shape{c.m, c.k}, c.dtype);
  const NDArray t = InvokeOne("dot", {csr, grad}, {{"transpose_a", "True"}});
  ASSERT_EQ(t.storage_type(), StorageType::kRowSparse);
  const std::vector<int64_t> rows = Indices(t.aux_ndarray(kRowSparseIndices));
  const std::vector<int64_t> cols = Indices(csr.aux_ndarray(kCSRIndices));
  const std::set<int64_t> want_rows(cols.begin(), cols.end());
  EXPECT_EQ(rows, std::vector<int64_t>(want_rows.begin(), want_rows.end()));
  EXPECT_EQ(t.storage_shape(), (Shape{static_cast<int64_t>(rows.size()), c.k}));
  const NDArray reference = InvokeOne("dot", {dense_lhs, grad}, {{"transpose_a", "True"}});
  ExpectNear(Values(t), Values(reference), tol);
  t.SyncCheckFormat(true);

  // forward_stype='default' asks for the dense result of the same product.
  const NDArray td = InvokeOne("dot", {csr, grad}, {{"transpose_a", "True"}, {"forward_stype", "default"}});
  EXPECT_EQ(td.storage_type(), StorageType::kDefault);
  ExpectNear(Values(td), Values(reference), tol);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CsrDot,
    ::testing::Values(DotCase{7, 5, 3, 0.4, DType::kFloat32, false},
                      DotCase{1, 9, 1, 0.5, DType::kFloat64, false},            // one row, a vector rhs
                      DotCase{30, 40, 1, 0.0, DType::kFloat32, false},          // no stored value at all
                      DotCase{300, 1000, 1, 0.1, DType::kFloat32, false},       // a linear model's vector rhs
                      DotCase{64, 300, 9, 0.05, DType::kFloat64, true},         // int32 indptr and indices
                      DotCase{2000, 500, 24, 0.03, DType::kFloat32, false},     // splits rows and columns
                      DotCase{40, 200000, 1, 0.0005, DType::kFloat32, false}),  // a few columns in each 64
    [](const ::testing::TestParamInfo<DotCase>& i) {
      const DotCase& c = i.param;
      return fmt::format("m{}n{}k{}_{}{}", c.m, c.n, c.k, DTypeName(c.dtype), c.int32_aux ? "_int32aux" : "");
    });

// The row_sparse result of csrᵀ·dense gets its parts while the kernel runs. The call returns
// before that (a training loop's frontend then runs ahead of the engine, as on MXNet), and a
// reader of the parts waits for the kernel instead of taking the empty parts it replaces.
TEST(SparseKernel, ARowSparseResultIsAsynchronousAndItsReadersWaitForIt) {
  const std::vector<double> lhs = RandomSparse(6, 4, 0.5, 3);
  const NDArray csr = CastStorage(Dense(lhs, Shape{6, 4}, DType::kFloat32), StorageType::kCSR);
  const NDArray g = Dense(RandomSparse(6, 2, 1.0, 4), Shape{6, 2}, DType::kFloat32);
  const NDArray reference = InvokeOne("dot", {Dense(lhs, Shape{6, 4}, DType::kFloat32), g}, {{"transpose_a", "True"}});
  // An engine operation holding g until the test releases it (a deadline instead of a hang when
  // the call waits for the kernel).
  std::atomic<bool> release{false}, gave_up{false};
  Engine::Get()->PushSync(
      [&](RunContext) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!release.load()) {
          if (std::chrono::steady_clock::now() > deadline) {
            gave_up = true;
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      },
      Context::cpu(0), {}, {g.var()}, FnProperty::kNormal, 0, "test_hold");
  const NDArray t = InvokeOne("dot", {csr, g}, {{"transpose_a", "True"}});
  EXPECT_FALSE(gave_up.load()) << "the call waited for its kernel";
  EXPECT_TRUE(t.PartsWritePending());
  auto rows = std::async(std::launch::async, [&] { return Indices(t.aux_ndarray(kRowSparseIndices)); });
  EXPECT_EQ(rows.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
      << "a reader took the parts before the kernel ran";
  release = true;
  const std::vector<int64_t> cols = Indices(csr.aux_ndarray(kCSRIndices));
  const std::set<int64_t> want(cols.begin(), cols.end());
  EXPECT_EQ(rows.get(), std::vector<int64_t>(want.begin(), want.end()));
  EXPECT_FALSE(t.PartsWritePending());
  ExpectNear(Values(t), Values(reference), 1e-5);
}

TEST(SparseKernel, OutIntoAGivenRowSparseArrayAndRefusedIntoACsrOne) {
  const std::vector<double> lhs = RandomSparse(6, 4, 0.5, 3);
  const NDArray csr = CastStorage(Dense(lhs, Shape{6, 4}, DType::kFloat32), StorageType::kCSR);
  const NDArray g = Dense(RandomSparse(6, 2, 1.0, 4), Shape{6, 2}, DType::kFloat32);
  std::vector<NDArray> out{NDArray::CreateSparse(StorageType::kRowSparse, Shape{4, 2}, Context::cpu(0))};
  Invoke(ImperativeCall{"dot", {{"transpose_a", "True"}}, {csr, g}, {}, false, std::nullopt}, &out);
  ExpectNear(Values(out[0]),
             Values(InvokeOne("dot", {Dense(lhs, Shape{6, 4}, DType::kFloat32), g}, {{"transpose_a", "True"}})), 1e-5);
  std::vector<NDArray> wrong{NDArray::CreateSparse(StorageType::kCSR, Shape{4, 2}, Context::cpu(0))};
  const std::string e = ErrorOf([&] {
    Invoke(ImperativeCall{"dot", {{"transpose_a", "True"}}, {csr, g}, {}, false, {}}, &wrong);
  });
  EXPECT_NE(e.find("no kernel on cpu(0) takes inputs of storage types (csr, default)"), std::string::npos) << e;
}

TEST(SparseKernel, MalformedIndicesAreRefusedNotRead) {
  const NDArray csr = CastStorage(Dense(RandomSparse(4, 6, 0.6, 5), Shape{4, 6}, DType::kFloat32), StorageType::kCSR);
  ASSERT_GT(csr.storage_shape()[0], 0);
  NDArray bad = csr.Copy(Context::cpu(0));
  std::vector<int64_t> cols = Indices(bad.aux_ndarray(kCSRIndices));
  cols.back() = 1000;  // past the 6 columns
  NDArray idx(Shape{static_cast<int64_t>(cols.size())}, Context::cpu(0), false, DType::kInt64);
  idx.SyncCopyFromCPUBytes(cols.data(), cols.size() * sizeof(int64_t));
  bad.SyncCopyFromNDArray(idx, kCSRIndices);
  const NDArray rhs = Dense(RandomSparse(6, 2, 1.0, 6), Shape{6, 2}, DType::kFloat32);
  std::string e = ErrorOf([&] { InvokeOne("dot", {bad, rhs}).WaitToRead(); });
  EXPECT_NE(e.find("the csr lhs is malformed at row"), std::string::npos) << e;
  const NDArray g = Dense(RandomSparse(4, 2, 1.0, 6), Shape{4, 2}, DType::kFloat32);
  e = ErrorOf([&] { InvokeOne("dot", {bad, g}, {{"transpose_a", "True"}}).WaitToRead(); });
  EXPECT_NE(e.find("the csr lhs is malformed at row"), std::string::npos) << e;
}

TEST(SparseKernel, DenseLookupsNeverYieldTheSparseKernel) {
  const KernelInfo* dense = internal::FindKernel(Runtime::Get(), "dot", "cpu", DType::kFloat32);
  ASSERT_NE(dense, nullptr);
  EXPECT_FALSE(internal::IsSparseKernel(*dense->def));
  bool found = false;
  for (const KernelInfo& k : internal::Kernels(Runtime::Get(), "cpu")) {
    if (std::string(k.def->op_name) != "dot" || !internal::IsSparseKernel(*k.def)) continue;
    found = true;
    EXPECT_NE(k.def->infer_storage, nullptr);
    EXPECT_TRUE(k.def->storage_types & WEFT_STYPE_BIT(WEFT_STYPE_CSR));
  }
  EXPECT_TRUE(found) << "the cpu plugin registers a sparse dot";
}

TEST(SparseKernel, AnUnclaimedPatternIsRefusedByName) {
  // dense · csrᵀ: the cpu plugin claims no kernel for it, as MXNet has none (the MXNet binding
  // falls back to dense).
  const NDArray a = Dense(RandomSparse(3, 5, 1.0, 1), Shape{3, 5}, DType::kFloat32);
  const NDArray b = CastStorage(Dense(RandomSparse(4, 5, 0.5, 2), Shape{4, 5}, DType::kFloat32), StorageType::kCSR);
  ImperativeCall call{"dot", {}, {a, b}, {}, false, std::nullopt};
  call.params = {{"transpose_b", "True"}};
  EXPECT_FALSE(SparseKernelClaims(call, {}));
  const std::string e = ErrorOf([&] { Invoke(call); });
  EXPECT_NE(e.find("dot: no kernel on cpu(0) takes inputs of storage types (default, csr)"), std::string::npos) << e;
  call.params.clear();
  call.inputs = {b, a.Reshape(Shape{5, 3})};
  EXPECT_TRUE(SparseKernelClaims(call, {}));
}

TEST(SparseKernel, ADeviceWithoutSparseKernelsRefusesByName) {
  if (Runtime::Get().DeviceCount("simdev") == 0) GTEST_SKIP() << "the simdev test plugin is not loaded";
  const Context sim("simdev", 0);
  const std::vector<double> lhs = RandomSparse(5, 4, 0.5, 11);
  const NDArray csr = CastStorage(Dense(lhs, Shape{5, 4}, DType::kFloat32, sim), StorageType::kCSR);
  ASSERT_EQ(csr.GetContext(), sim);
  const NDArray rhs = Dense(RandomSparse(4, 3, 1.0, 12), Shape{4, 3}, DType::kFloat32, sim);
  ImperativeCall call{"dot", {}, {csr, rhs}, {}, false, std::nullopt};
  EXPECT_FALSE(SparseKernelClaims(call, {})) << "simdev reuses the CPU kernels but claims no sparse storage";
  const std::string e = ErrorOf([&] { Invoke(call); });
  EXPECT_NE(e.find("dot: no kernel on simdev(0) takes inputs of storage types (csr, default)"), std::string::npos) << e;
  // What MXNet's fallback does instead: the dense copy on the same device gives the right values.
  const NDArray out = InvokeOne("dot", {CastStorage(csr, StorageType::kDefault), rhs});
  ExpectNear(Values(out.Copy(Context::cpu(0))),
             Values(InvokeOne("dot", {Dense(lhs, Shape{5, 4}, DType::kFloat32), rhs.Copy(Context::cpu(0))})), 1e-5);
}

// ---- autograd through the sparse kernels --------------------------------------------------------

// A row_sparse (rows, cols) array storing `stored` (row r holds r + 1, r + 2, ...) and its dense
// values.
NDArray RowSparse(int64_t rows, int64_t cols, const std::vector<int64_t>& stored, std::vector<double>* dense) {
  dense->assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r : stored)
    for (int64_t j = 0; j < cols; ++j) (*dense)[static_cast<size_t>(r * cols + j)] = static_cast<double>(r + 1 + j);
  return CastStorage(Dense(*dense, Shape{rows, cols}, DType::kFloat32), StorageType::kRowSparse);
}

NDArray Ids(const std::vector<double>& ids) {
  return Dense(ids, Shape{static_cast<int64_t>(ids.size())}, DType::kFloat32);
}

TEST(SparseAutograd, RetainThenSquareSumGiveRowSparseGradients) {
  std::vector<double> x;
  NDArray data = RowSparse(6, 3, {0, 1, 4}, &x);
  NDArray grad = NDArray::CreateSparse(StorageType::kRowSparse, Shape{6, 3}, Context::cpu(0));
  autograd::MarkVariables({&data}, {kWriteTo}, {grad});
  const std::vector<double> head{1, 2, 3, 4, 5, 6};
  NDArray y;
  {
    auto record = autograd::Record();
    const NDArray kept = InvokeOne("_sparse_retain", {data, Ids({0, 2, 4})});
    ASSERT_EQ(kept.storage_type(), StorageType::kRowSparse);
    y = InvokeOne("_square_sum", {kept}, {{"axis", "1"}, {"keepdims", "True"}});
  }
  ASSERT_EQ(y.storage_type(), StorageType::kRowSparse);
  ASSERT_NE(y.autograd_node(), nullptr) << "the sparse kernel's call was not recorded";
  autograd::Backward({y}, {Dense(head, Shape{6, 1}, DType::kFloat32)});
  // 2·x·head on the retained rows, zero elsewhere; the gradient stays row_sparse, storing the
  // retained rows (MXNet's _backward_sparse_retain).
  const NDArray g = autograd::GetGrad(data);
  ASSERT_EQ(g.storage_type(), StorageType::kRowSparse);
  EXPECT_EQ(Indices(g.aux_ndarray(kRowSparseIndices)), (std::vector<int64_t>{0, 2, 4}));
  std::vector<double> want(x.size(), 0.0);
  for (int64_t r : {0, 2, 4})
    for (int64_t j = 0; j < 3; ++j) {
      const auto at = static_cast<size_t>(r * 3 + j);
      want[at] = 2 * x[at] * head[static_cast<size_t>(r)];
    }
  ExpectNear(Values(g), want, 1e-4);
}

// dot(csr, w) reaches a dense w twice, once through w·2: the row_sparse gradient of the rhs is
// handed to _mul_scalar's backward and summed with the other term densely; with grad_req add a
// second pass adds the same again.
TEST(SparseAutograd, CsrDotGradientsReachADenseVariableThroughDenseOps) {
  const std::vector<double> lhs = RandomSparse(5, 4, 0.5, 21), wv = RandomSparse(4, 3, 1.0, 22);
  const std::vector<double> head = RandomSparse(5, 3, 1.0, 23);
  const NDArray csr = CastStorage(Dense(lhs, Shape{5, 4}, DType::kFloat32), StorageType::kCSR);
  NDArray w = Dense(wv, Shape{4, 3}, DType::kFloat32);
  NDArray buffer(Shape{4, 3}, Context::cpu(0), false, DType::kFloat32);
  buffer = 0.0f;
  autograd::MarkVariables({&w}, {kAddTo}, {buffer});
  const NDArray h = Dense(head, Shape{5, 3}, DType::kFloat32);
  const std::vector<double> once =
      Values(InvokeOne("dot", {Dense(lhs, Shape{5, 4}, DType::kFloat32), h}, {{"transpose_a", "True"}}));
  for (int pass = 1; pass <= 2; ++pass) {
    NDArray loss;
    {
      auto record = autograd::Record();
      const NDArray scaled = InvokeOne("dot", {csr, w * 2.0f});
      loss = InvokeOne("elemwise_add", {scaled, InvokeOne("dot", {csr, w})});
    }
    autograd::Backward({loss}, {h});
    std::vector<double> want(once);
    for (double& v : want) v *= 3.0 * pass;
    ExpectNear(Values(autograd::GetGrad(w)), want, 1e-4);
  }
}

// No sparse kernel claims dot(csrᵀ, dense)'s backward: it runs on a dense copy of the csr.
TEST(SparseAutograd, UnclaimedSparseBackwardRunsOnDenseCopies) {
  const std::vector<double> lhs = RandomSparse(6, 4, 0.5, 31), head = RandomSparse(4, 2, 1.0, 33);
  const NDArray csr = CastStorage(Dense(lhs, Shape{6, 4}, DType::kFloat32), StorageType::kCSR);
  NDArray w = Dense(RandomSparse(6, 2, 1.0, 32), Shape{6, 2}, DType::kFloat32);
  autograd::AttachGrad(&w);
  NDArray y;
  {
    auto record = autograd::Record();
    y = InvokeOne("dot", {csr, w}, {{"transpose_a", "True"}});
  }
  ASSERT_EQ(y.storage_type(), StorageType::kRowSparse);
  const NDArray h = Dense(head, Shape{4, 2}, DType::kFloat32);
  autograd::Backward({y}, {h});
  ExpectNear(Values(autograd::GetGrad(w)), Values(InvokeOne("dot", {Dense(lhs, Shape{6, 4}, DType::kFloat32), h})),
             1e-4);
}

TEST(SparseAutograd, CreateGraphThroughASparseOpIsRefusedByName) {
  std::vector<double> x;
  NDArray data = RowSparse(4, 2, {1, 3}, &x);
  autograd::AttachGrad(&data);
  NDArray y;
  {
    auto record = autograd::Record();
    y = InvokeOne("_square_sum", {data}, {{"axis", "1"}});
  }
  const std::string e = ErrorOf([&] { autograd::Grad({y}, {data}, {}, std::nullopt, /*create_graph=*/true); });
  ExpectContains(e, {"(_square_sum) ran on sparse arrays", "create_graph"});
}

// Two Embedding(sparse_grad) terms reach one row_sparse buffer: the sum stays row_sparse over the
// union of the looked-up rows, a row whose head gradient is zero included (MXNet 1.9.1 stores
// rows 0, 2, 3 here, row 0 with zeros); grad_req add sums a second pass into the stored rows.
TEST(SparseAutograd, RowSparseTermsSumToTheUnionOfTheirRows) {
  std::vector<double> wv(20);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<double>(i);
  NDArray w = Dense(wv, Shape{5, 4}, DType::kFloat32);
  const std::map<std::string, std::string> emb{{"input_dim", "5"}, {"output_dim", "4"}, {"sparse_grad", "True"}};
  for (OpReqType req : {kWriteTo, kAddTo}) {
    NDArray grad = NDArray::CreateSparse(StorageType::kRowSparse, Shape{5, 4}, Context::cpu(0));
    autograd::MarkVariables({&w}, {req}, {grad});
    const int passes = req == kAddTo ? 2 : 1;
    for (int pass = 0; pass < passes; ++pass) {
      NDArray y;
      {
        auto record = autograd::Record();
        const NDArray a = InvokeOne("Embedding", {Ids({0, 2}), w}, emb);
        const NDArray b = InvokeOne("Embedding", {Ids({2, 3}), w}, emb);
        y = InvokeOne("elemwise_add", {a * 0.0f, b});
      }
      autograd::Backward({y}, {});
    }
    const NDArray g = autograd::GetGrad(w);
    ASSERT_EQ(g.storage_type(), StorageType::kRowSparse);
    EXPECT_EQ(Indices(g.aux_ndarray(kRowSparseIndices)), (std::vector<int64_t>{0, 2, 3})) << "req " << req;
    std::vector<double> want(20, 0.0);
    for (size_t j = 0; j < 4; ++j) want[8 + j] = want[12 + j] = passes;
    ExpectNear(Values(g), want, 0.0);
  }
}

}  // namespace
}  // namespace weft

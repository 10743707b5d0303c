// The cpu plugin's sparse kernels for dot(dense, csr), dot(csr, row_sparse), _sparse_retain and
// _square_sum on row_sparse arrays, and their backward ops, against what MXNet 1.9.1 computed
// (data/sparse_ops.json, written by gen_sparse_ops_fixtures.py): the output's storage type, its
// stored rows / indptr and indices exactly, its values; calls MXNet runs through its storage
// fallback (with its warning) are not claimed by any sparse kernel here (the C API's fallback then
// runs them, warning as MXNet does). The gradients are the backward ops invoked as autograd would,
// (out_grad, inputs...) into outputs of the storage types MXNet gives the gradients. Malformed
// sparse inputs and bad indices are refused naming the array and the position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sparse_values.h"
#include "test_util.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"
#include "weft/op_info.h"
#include "weft/sparse.h"

namespace weft {
namespace {

using nlohmann::json;
using Params = std::map<std::string, std::string>;
using test::ErrorOf;
using test::ExpectContains;
using test::Indices;
using test::Values;

const json& Fixtures() {
  static const json j = [] {
    std::ifstream f(std::string(WEFT_SPARSE_DATA) + "/sparse_ops.json");
    if (!f) throw std::runtime_error("cannot open sparse_ops.json under " WEFT_SPARSE_DATA);
    return json::parse(f);
  }();
  return j;
}

DType DTypeOf(const json& d) { return d.at("dtype") == "float64" ? DType::kFloat64 : DType::kFloat32; }
Shape ShapeOf(const json& d) { return Shape(d.at("shape").get<std::vector<int64_t>>()); }

NDArray FromDoubles(const std::vector<double>& v, const Shape& shape, DType dtype) {
  NDArray d(shape, Context::cpu(0), false, DType::kFloat64);
  if (!v.empty()) d.SyncCopyFromCPUBytes(v.data(), v.size() * sizeof(double));
  return InvokeOne("Cast", {d}, {{"dtype", std::string(DTypeName(dtype))}});
}

NDArray Int64s(const std::vector<int64_t>& v) {
  NDArray a(Shape{static_cast<int64_t>(v.size())}, Context::cpu(0), false, DType::kInt64);
  if (!v.empty()) a.SyncCopyFromCPUBytes(v.data(), v.size() * sizeof(int64_t));
  return a;
}

// The array a fixture describes, made from its parts as MXNet stored them.
NDArray Make(const json& d) {
  const Shape shape = ShapeOf(d);
  const DType dtype = d.at("dtype") == "int64" ? DType::kInt64 : DTypeOf(d);
  const std::string stype = d.at("stype");
  if (stype == "default") return FromDoubles(d.at("dense").get<std::vector<double>>(), shape, dtype);
  const auto indices = d.at("indices").get<std::vector<int64_t>>();
  const std::vector<double> values = d.at("data").get<std::vector<double>>();
  if (stype == "csr")
    return NDArray::FromSparseParts(StorageType::kCSR, shape,
                                    FromDoubles(values, Shape{static_cast<int64_t>(values.size())}, dtype),
                                    {Int64s(d.at("indptr").get<std::vector<int64_t>>()), Int64s(indices)});
  Shape stored = shape;
  stored[0] = static_cast<int64_t>(indices.size());
  return NDArray::FromSparseParts(StorageType::kRowSparse, shape, FromDoubles(values, stored, dtype),
                                  {Int64s(indices)});
}

// `got` equals MXNet's array `want`: storage type, shape, stored rows / indptr and indices, values.
void ExpectLike(const NDArray& got, const json& want, const std::string& what) {
  ASSERT_EQ(std::string(StorageTypeName(got.storage_type())), want.at("stype").get<std::string>()) << what;
  ASSERT_EQ(got.GetShape(), ShapeOf(want)) << what;
  if (got.storage_type() == StorageType::kRowSparse) {
    EXPECT_EQ(Indices(got.aux_ndarray(kRowSparseIndices)), want.at("indices").get<std::vector<int64_t>>()) << what;
    got.SyncCheckFormat(true);
  }
  if (got.storage_type() == StorageType::kCSR) {
    EXPECT_EQ(Indices(got.aux_ndarray(kCSRIndPtr)), want.at("indptr").get<std::vector<int64_t>>()) << what;
    EXPECT_EQ(Indices(got.aux_ndarray(kCSRIndices)), want.at("indices").get<std::vector<int64_t>>()) << what;
    got.SyncCheckFormat(true);
  }
  const std::vector<double> v = Values(got), w = want.at("dense").get<std::vector<double>>();
  ASSERT_EQ(v.size(), w.size()) << what;
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(v[i], w[i], 1e-5 * (1 + std::fabs(w[i]))) << what << " [" << i << "]";
}

Params AttrsOf(const json& c) { return c.at("attrs").get<Params>(); }

TEST(SparseOps, ForwardMatchesMXNet) {
  int claimed = 0;
  for (const json& c : Fixtures().at("forward")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    std::vector<NDArray> in;
    for (const json& d : c.at("inputs")) in.push_back(Make(d));
    ImperativeCall call;
    call.op = c.at("op");
    call.params = AttrsOf(c);
    call.inputs = in;
    // MXNet warns exactly where it has no kernel for the storage types: no sparse kernel of
    // weft's may claim those, and every other case must be claimed (no fallback, no warning).
    ASSERT_EQ(SparseKernelClaims(call, {}), !c.at("warns").get<bool>());
    if (c.at("warns").get<bool>()) continue;
    ExpectLike(InvokeOne(call.op, in, call.params), c.at("output"), name);
    ++claimed;
  }
  EXPECT_GE(claimed, 15);
}

// The gradient op of a fixture's op and its outputs: one per input, of the storage type MXNet
// gave that input's gradient (dense where the case has no gradient buffer, as weft's backward
// ops write every input's gradient).
std::string BackwardOp(const std::string& op) {
  return op.starts_with("_") ? "_backward" + op : "_backward_" + op;  // MXNet's names
}

TEST(SparseOps, GradientsMatchMXNet) {
  for (const json& c : Fixtures().at("backward")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    ImperativeCall call;
    call.op = BackwardOp(c.at("op"));
    call.params = AttrsOf(c);
    call.inputs.push_back(Make(c.at("head_grad")));
    std::vector<NDArray> in;
    for (const json& d : c.at("inputs")) in.push_back(Make(d));
    call.inputs.insert(call.inputs.end(), in.begin(), in.end());
    std::vector<NDArray> grads;
    for (size_t i = 0; i < in.size(); ++i) {
      const json& g = c.at("grads")[i];
      const StorageType st =
          g.is_null() ? StorageType::kDefault : StorageTypeFromName(g.at("stype").get<std::string>());
      grads.push_back(st == StorageType::kDefault
                          ? NDArray(in[i].GetShape(), Context::cpu(0), false, in[i].GetDType())
                          : NDArray::CreateSparse(st, in[i].GetShape(), Context::cpu(0), in[i].GetDType()));
    }
    Invoke(call, &grads);  // throws when no sparse kernel claims the storage types
    // A given sparse output receives its parts when the kernel runs: wait before reading them.
    for (const NDArray& g : grads) g.WaitToRead();
    const auto zero = c.at("mxnet_zero").get<std::vector<size_t>>();
    for (size_t i = 0; i < in.size(); ++i) {
      const json& g = c.at("grads")[i];
      if (g.is_null() || std::find(zero.begin(), zero.end(), i) != zero.end()) continue;
      ExpectLike(grads[i], g, name + " gradient " + std::to_string(i));
    }
  }
}

// dot(dense, csr)'s rhs gradient, which MXNet leaves zero: lhsᵀ · out_grad, as the dense dot's.
TEST(SparseOps, DenseCsrRhsGradientIsTheTrueOne) {
  for (const json& c : Fixtures().at("backward")) {
    if (c.at("mxnet_zero").empty()) continue;
    const NDArray head = Make(c.at("head_grad")), lhs = Make(c.at("inputs")[0]), rhs = Make(c.at("inputs")[1]);
    std::vector<NDArray> grads = {NDArray(lhs.GetShape(), Context::cpu(0), false, lhs.GetDType()),
                                  NDArray(rhs.GetShape(), Context::cpu(0), false, rhs.GetDType())};
    ImperativeCall call;
    call.op = "_backward_dot";
    call.params = AttrsOf(c);
    call.inputs = {head, lhs, rhs};
    Invoke(call, &grads);
    const std::vector<double> want = Values(InvokeOne("dot", {lhs, head}, {{"transpose_a", "True"}}));
    const std::vector<double> got = Values(grads[1]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])));
    return;
  }
  FAIL() << "no case with MXNet's zero rhs gradient";
}

NDArray Rsp(const std::vector<double>& values, const std::vector<int64_t>& rows, const Shape& shape) {
  Shape stored = shape;
  stored[0] = static_cast<int64_t>(rows.size());
  return NDArray::FromSparseParts(StorageType::kRowSparse, shape, FromDoubles(values, stored, DType::kFloat32),
                                  {Int64s(rows)});
}

NDArray Csr(const std::vector<double>& values, const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices,
            const Shape& shape) {
  return NDArray::FromSparseParts(StorageType::kCSR, shape,
                                  FromDoubles(values, Shape{static_cast<int64_t>(values.size())}, DType::kFloat32),
                                  {Int64s(indptr), Int64s(indices)});
}

// The op's result, computed (a kernel's error surfaces when the result is read).
void Computed(const std::string& op, const std::vector<NDArray>& in, const Params& params = {}) {
  InvokeOne(op, in, params).WaitToRead();
}

TEST(SparseOps, MalformedInputsAreRefusedByNameAndPosition) {
  const NDArray unsorted = Rsp({1, 2, 3, 4}, {3, 1}, Shape{5, 2});
  const NDArray idx = FromDoubles({1, 3}, Shape{2}, DType::kFloat32);
  ExpectContains(ErrorOf([&] {
                   Computed("_sparse_retain", {unsorted, idx});
                 }),
                 {"_sparse_retain", "row_sparse data", "index 1 at position 1", "sorted"});
  ExpectContains(ErrorOf([&] {
                   Computed("_square_sum", {unsorted}, {{"axis", "1"}});
                 }),
                 {"_square_sum", "row_sparse data", "position 1"});
  ExpectContains(ErrorOf([&] {
                   Computed("dot", {Csr({1, 2}, {0, 1, 2}, {0, 1}, Shape{2, 5}), unsorted});
                 }),
                 {"dot", "row_sparse rhs", "position 1"});
  // A csr whose columns fall within a row, and one with a column outside the matrix.
  const NDArray x = FromDoubles({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::kFloat32);
  ExpectContains(ErrorOf([&] {
                   Computed("dot", {x, Csr({1, 2}, {0, 2, 2, 2}, {2, 0}, Shape{3, 4})});
                 }),
                 {"dot", "csr rhs", "row 0", "not sorted", "position 1"});
  ExpectContains(ErrorOf([&] {
                   Computed("dot", {x, Csr({1}, {0, 1, 1, 1}, {7}, Shape{3, 4})});
                 }),
                 {"dot", "csr rhs", "column index 7 at position 0", "outside [0, 4)"});
  // Retained rows outside data, and shapes that do not fit.
  const NDArray data = Rsp({1, 2}, {1}, Shape{4, 2});
  ExpectContains(ErrorOf([&] {
                   Computed("_sparse_retain", {data, FromDoubles({0, 4}, Shape{2}, DType::kFloat32)});
                 }),
                 {"_sparse_retain", "indices[1] = 4", "not a row of data"});
  ExpectContains(
      ErrorOf([&] {
        Computed("dot", {FromDoubles({1, 2}, Shape{1, 2}, DType::kFloat32), Csr({1}, {0, 1, 1, 1}, {0}, Shape{3, 4})});
      }),
      {"dot", "lhs", "rhs"});
}

TEST(SparseOps, RetainSortsAndDeduplicatesIndices) {
  // MXNet stores unsorted or repeated indices as given (a malformed array); weft stores them
  // sorted and once, with the same dense values.
  const NDArray data = Rsp({1, 2, 3, 4, 5, 6}, {0, 2, 3}, Shape{5, 2});
  const NDArray y = InvokeOne("_sparse_retain", {data, FromDoubles({3, 1, 3, 0}, Shape{4}, DType::kInt64)});
  EXPECT_EQ(Indices(y.aux_ndarray(kRowSparseIndices)), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(Values(y), (std::vector<double>{1, 2, 0, 0, 0, 0, 5, 6, 0, 0}));
  y.SyncCheckFormat(true);
}

TEST(SparseOps, RetainTruncatesFloatIndicesAsMXNet) {
  // MXNet casts float indices toward zero (its numeric gradient checks move them by ±eps/2).
  const NDArray data = Rsp({1, 2, 3, 4, 5, 6}, {0, 2, 3}, Shape{5, 2});
  const NDArray y = InvokeOne("_sparse_retain", {data, FromDoubles({0.4, 2.6, 3.9995}, Shape{3}, DType::kFloat32)});
  EXPECT_EQ(Indices(y.aux_ndarray(kRowSparseIndices)), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(Values(y), (std::vector<double>{1, 2, 0, 0, 3, 4, 5, 6, 0, 0}));
}

TEST(SparseOps, DenseRetainKeepsTheIndexedRows) {
  // A bound graph of the MXNet binding runs its sparse arrays as dense copies: _sparse_retain and
  // its gradient then run dense, zero outside the indexed rows.
  const NDArray data = FromDoubles({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2}, DType::kFloat32);
  const NDArray idx = FromDoubles({1, 3.5}, Shape{2}, DType::kFloat32);
  const NDArray y = InvokeOne("_sparse_retain", {data, idx});
  EXPECT_EQ(y.storage_type(), StorageType::kDefault);
  EXPECT_EQ(Values(y), (std::vector<double>{0, 0, 3, 4, 0, 0, 7, 8}));
  const NDArray head = FromDoubles({-1, -2, -3, -4, -5, -6, -7, -8}, Shape{4, 2}, DType::kFloat32);
  std::vector<NDArray> grads = {FromDoubles({9, 9, 9, 9, 9, 9, 9, 9}, Shape{4, 2}, DType::kFloat32),
                                FromDoubles({9, 9}, Shape{2}, DType::kFloat32)};
  ImperativeCall call;
  call.op = "_backward_sparse_retain";
  call.inputs = {head, data, idx};
  Invoke(call, &grads);
  EXPECT_EQ(Values(grads[0]), (std::vector<double>{0, 0, -3, -4, 0, 0, -7, -8}));
  EXPECT_EQ(Values(grads[1]), (std::vector<double>{0, 0}));
}

TEST(SparseOps, ScatterOpsOnDenseArraysAreThePlainOps) {
  const NDArray x = FromDoubles({1, 0, -2, 4}, Shape{2, 2}, DType::kFloat32);
  const NDArray y = FromDoubles({2, 0, 4, -8}, Shape{2, 2}, DType::kFloat32);
  EXPECT_EQ(Values(InvokeOne("_scatter_plus_scalar", {x}, {{"scalar", "1.5"}})),
            (std::vector<double>{2.5, 1.5, -0.5, 5.5}));
  EXPECT_EQ(Values(InvokeOne("_scatter_minus_scalar", {x}, {{"scalar", "1"}})), (std::vector<double>{0, -1, -3, 3}));
  const std::vector<double> q = Values(InvokeOne("_scatter_elemwise_div", {x, y}));
  EXPECT_EQ(q[0], 0.5);
  EXPECT_TRUE(std::isnan(q[1]));  // 0 / 0 over every element, as elemwise_div
  EXPECT_EQ(q[2], -0.5);
  EXPECT_EQ(q[3], -0.5);
}

TEST(SparseOps, ScatterAndCastStorageAreDescribedAsInMXNet) {
  const std::optional<OpInfo> plus = FindOpInfo("_scatter_plus_scalar");
  ASSERT_TRUE(plus);
  EXPECT_EQ(plus->inputs, (std::vector<std::string>{"data"}));
  std::vector<std::string> attrs;
  for (const OpAttrInfo& a : plus->attrs) attrs.push_back(a.name);
  EXPECT_EQ(attrs, (std::vector<std::string>{"scalar", "is_int"}));
  const std::optional<OpInfo> div = FindOpInfo("_scatter_elemwise_div");
  ASSERT_TRUE(div);
  EXPECT_EQ(div->inputs, (std::vector<std::string>{"lhs", "rhs"}));
  const std::optional<OpInfo> cast = FindOpInfo("cast_storage");
  ASSERT_TRUE(cast);
  ASSERT_EQ(cast->attrs.size(), 1u);
  EXPECT_EQ(cast->attrs[0].name, "stype");
  EXPECT_FALSE(cast->attrs[0].default_value);  // required, as in MXNet
  EXPECT_EQ(cast->attrs[0].choices, (std::vector<std::string>{"csr", "default", "row_sparse"}));
}

}  // namespace
}  // namespace weft

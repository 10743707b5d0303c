// Sparse storage (row_sparse, csr): files MXNet 1.9.1 wrote (tests/ndarray/data, from
// gen_sparse_fixtures.py) load with MXNet's values and are rewritten byte for byte; conversions,
// parts, check_format and copies behave as MXNet documents them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ndarray_read.h"
#include "weft/ndarray.h"
#include "weft/ndarray_format.h"
#include "weft/runtime.h"
#include "weft/sparse.h"

namespace weft {
namespace {

const std::string kData = WEFT_NDARRAY_DATA;

class SparseTest : public ::testing::Test {};

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> Bytes(const NDArray& a) {
  std::vector<uint8_t> out(a.Bytes());
  if (!out.empty()) a.SyncCopyToCPUBytes(out.data(), out.size());
  return out;
}

std::vector<double> AsDoubles(const NDArray& a) {
  const std::vector<uint8_t> b = Bytes(a);
  std::vector<double> out;
  for (size_t i = 0; i < a.Size(); ++i) {
    if (a.GetDType() == DType::kInt64) {
      int64_t v;
      std::memcpy(&v, b.data() + i * 8, 8);
      out.push_back(static_cast<double>(v));
    } else if (a.GetDType() == DType::kFloat64) {
      double v;
      std::memcpy(&v, b.data() + i * 8, 8);
      out.push_back(v);
    } else {
      out.push_back(static_cast<double>(a.At(i)));
    }
  }
  return out;
}

NDArray Dense(const std::vector<float>& v, const Shape& shape) { return NDArray(v, shape, Context::cpu(0)); }

NDArray Int64(const std::vector<int64_t>& v) {
  NDArray a(Shape{static_cast<int64_t>(v.size())}, Context::cpu(0), false, DType::kInt64);
  if (!v.empty()) a.SyncCopyFromCPUBytes(v.data(), v.size() * 8);
  return a;
}

TEST_F(SparseTest, MXNetWrittenFileLoadsWithMXNetsValues) {
  const auto sparse = NDArray::LoadToMap(kData + "/sparse_mxnet.params");
  const auto dense = NDArray::LoadToMap(kData + "/sparse_dense.params");
  std::ifstream jf(kData + "/sparse_parts.json");
  const auto parts = nlohmann::json::parse(jf);
  ASSERT_EQ(sparse.size(), dense.size());
  size_t checked = 0;
  for (const auto& [name, a] : sparse) {
    SCOPED_TRACE(name);
    const NDArray& want = dense.at(name);
    EXPECT_EQ(a.GetShape(), want.GetShape());
    EXPECT_EQ(a.GetDType(), want.GetDType());
    // MXNet's own dense conversion is the reference for every element.
    EXPECT_EQ(Bytes(CastStorage(a, StorageType::kDefault)), Bytes(want));
    if (!parts.contains(name)) {
      EXPECT_EQ(a.storage_type(), StorageType::kDefault);
      continue;
    }
    const auto& p = parts.at(name);
    EXPECT_EQ(StorageTypeName(a.storage_type()), p.at("stype").get<std::string>());
    EXPECT_EQ(AsDoubles(a.data_ndarray()), p.at("data").get<std::vector<double>>());
    const size_t idx = a.storage_type() == StorageType::kCSR ? kCSRIndices : kRowSparseIndices;
    EXPECT_EQ(AsDoubles(a.aux_ndarray(idx)), p.at("indices").get<std::vector<double>>());
    if (a.storage_type() == StorageType::kCSR) {
      EXPECT_EQ(AsDoubles(a.aux_ndarray(kCSRIndPtr)), p.at("indptr").get<std::vector<double>>());
    }
    a.SyncCheckFormat(true);
    ++checked;
  }
  EXPECT_EQ(checked, parts.size());
}

TEST_F(SparseTest, RewritingMXNetsFileGivesItsBytes) {
  const std::string src = kData + "/sparse_mxnet.params";
  const auto arrays = NDArray::LoadToMap(src);
  const auto out = std::filesystem::temp_directory_path() / "weft_sparse_rewrite.params";
  NDArray::Save(out.string(), arrays);
  EXPECT_EQ(ReadFile(out.string()), ReadFile(src));
  std::filesystem::remove(out);
}

TEST_F(SparseTest, DenseToRowSparseKeepsRowsWithANonZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  NDArray d = Dense({0, 0, 1, -0.0f, 0, 0, 0, nan, 0, 2, 3, 0}, Shape{4, 3});
  NDArray r = CastStorage(d, StorageType::kRowSparse);
  EXPECT_EQ(r.storage_type(), StorageType::kRowSparse);
  EXPECT_EQ(r.storage_shape(), (Shape{3, 3}));  // row 1 holds only -0.0: a zero row
  EXPECT_EQ(AsDoubles(r.aux_ndarray(0)), (std::vector<double>{0, 2, 3}));
  NDArray back = CastStorage(r, StorageType::kDefault);
  const auto v = test::Read(back);
  EXPECT_EQ(v[2], 1);
  EXPECT_EQ(v[3], 0);
  EXPECT_TRUE(std::isnan(v[7]));
  EXPECT_EQ(v[10], 3);
}

TEST_F(SparseTest, DenseToCsrAndBetweenSparseTypes) {
  NDArray d = Dense({0, 5, 0, 0, 0, 0, 7, 0, 8}, Shape{3, 3});
  NDArray c = CastStorage(d, StorageType::kCSR);
  EXPECT_EQ(AsDoubles(c.aux_ndarray(kCSRIndPtr)), (std::vector<double>{0, 1, 1, 3}));
  EXPECT_EQ(AsDoubles(c.aux_ndarray(kCSRIndices)), (std::vector<double>{1, 0, 2}));
  EXPECT_EQ(test::Read(c.data_ndarray()), (std::vector<float>{5, 7, 8}));
  NDArray r = CastStorage(c, StorageType::kRowSparse);
  EXPECT_EQ(AsDoubles(r.aux_ndarray(0)), (std::vector<double>{0, 2}));
  EXPECT_EQ(test::Read(CastStorage(r, StorageType::kDefault)), test::Read(d));
  EXPECT_THROW(CastStorage(Dense({1, 2}, Shape{2}), StorageType::kCSR), Error);
  EXPECT_EQ(AsDoubles(GetNNZ(c, std::nullopt)), (std::vector<double>{3}));
  EXPECT_EQ(AsDoubles(GetNNZ(c, 1)), (std::vector<double>{1, 0, 2}));
  EXPECT_THROW(GetNNZ(c, 0), Error);  // as MXNet: not supported
  EXPECT_THROW(GetNNZ(d, std::nullopt), Error);
}

TEST_F(SparseTest, FromPartsCopiesAndViewsShareReplacedParts) {
  NDArray values = Dense({1, 2, 3, 4}, Shape{2, 2});
  NDArray r = NDArray::FromSparseParts(StorageType::kRowSparse, Shape{5, 2}, values, {Int64({1, 3})});
  values = 9.0f;  // the parts were copied
  NDArray view = r;
  EXPECT_EQ(test::Read(CastStorage(view, StorageType::kDefault)), (std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  r.SyncCopyFromNDArray(Dense({6, 7}, Shape{1, 2}), -1);
  r.SyncCopyFromNDArray(Int64({4}), 0);
  EXPECT_EQ(view.storage_shape(), (Shape{1, 2}));
  EXPECT_EQ(test::Read(CastStorage(view, StorageType::kDefault)), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 6, 7}));
  NDArray copy = r.Copy(Context::cpu(0));
  r.SyncCopyFromNDArray(Int64({0}), 0);
  EXPECT_EQ(AsDoubles(copy.aux_ndarray(0)), (std::vector<double>{4}));
  NDArray dense(Shape{5, 2}, Context::cpu(0), false);
  NDArray::CopyFromTo(copy, dense);
  EXPECT_EQ(test::Read(dense)[8], 6);
  // To another device and back (the simulated device of the test plugins, when loaded).
  if (Runtime::Get().HasDevice(Context("simdev", 0))) {
    NDArray there = copy.Copy(Context("simdev", 0));
    EXPECT_EQ(there.GetContext(), Context("simdev", 0));
    EXPECT_EQ(there.data_ndarray().GetContext(), Context("simdev", 0));
    EXPECT_EQ(test::Read(CastStorage(there.Copy(Context::cpu(0)), StorageType::kDefault)), test::Read(dense));
  }
}

TEST_F(SparseTest, CheckFormatNamesTheProblemAndPosition) {
  auto expect_error = [](const NDArray& a, bool full, const std::string& text) {
    try {
      a.SyncCheckFormat(full);
      ADD_FAILURE() << "no error, expected: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  NDArray unsorted =
      NDArray::FromSparseParts(StorageType::kRowSparse, Shape{4, 1}, Dense({1, 2}, Shape{2, 1}), {Int64({2, 1})});
  expect_error(unsorted, true, "indices[1] = 1 after 2");
  unsorted.SyncCheckFormat(false);  // shapes are fine
  NDArray range = NDArray::FromSparseParts(StorageType::kRowSparse, Shape{4, 1}, Dense({1}, Shape{1, 1}), {Int64({4})});
  expect_error(range, true, "less than the size of first dimension");
  NDArray indptr = NDArray::FromSparseParts(StorageType::kCSR, Shape{2, 3}, Dense({1, 2}, Shape{2}),
                                            {Int64({0, 2, 1}), Int64({0, 1})});
  expect_error(indptr, true, "indptr[2] = 1 after 2");
  NDArray cols = NDArray::FromSparseParts(StorageType::kCSR, Shape{2, 3}, Dense({1, 2}, Shape{2}),
                                          {Int64({0, 2, 2}), Int64({1, 1})});
  expect_error(cols, true, "row 0: indices[1] = 1 after 1");
  EXPECT_THROW(
      NDArray::FromSparseParts(StorageType::kCSR, Shape{2, 3}, Dense({1, 2}, Shape{2}), {Int64({0, 2}), Int64({1, 1})}),
      Error);  // indptr has 2 entries for 2 rows
  // A conversion refuses malformed indices instead of writing through them.
  EXPECT_THROW(CastStorage(range, StorageType::kDefault), Error);
}

TEST_F(SparseTest, DenseOnlyFunctionsNameTheStorageType) {
  NDArray r = NDArray::CreateSparse(StorageType::kRowSparse, Shape{3, 2}, Context::cpu(0));
  EXPECT_EQ(r.storage_shape(), (Shape{0, 2}));
  std::vector<float> out;
  try {
    r.SyncCopyToCPU(&out);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row_sparse"), std::string::npos) << e.what();
  }
  EXPECT_THROW(r.Reshape(Shape{6}), Error);
  std::ostringstream printed;
  printed << NDArray::FromSparseParts(StorageType::kRowSparse, Shape{2, 1}, Dense({4}, Shape{1, 1}), {Int64({1})});
  EXPECT_EQ(printed.str(), "[0, 4, ]");
  EXPECT_THROW(Dense({1}, Shape{1}).data_ndarray(), Error);
  EXPECT_EQ(NDArray().storage_type(), StorageType::kUndefined);
}

// row_sparse_pull's gather: requested rows sorted and unique, from a dense or a sparse source, with
// zeros for rows the source does not store; ids of any dtype, checked against the row count.
TEST_F(SparseTest, RetainRowsTakesTheRequestedRows) {
  NDArray d = Dense({1, 1, 2, 2, 3, 3, 4, 4}, Shape{4, 2});
  NDArray out = NDArray::CreateSparse(StorageType::kRowSparse, Shape{4, 2}, Context::cpu(0));
  RetainRowsInto(d, Dense({3, 1, 3}, Shape{3}), out);
  EXPECT_EQ(AsDoubles(out.aux_ndarray(0)), (std::vector<double>{1, 3}));
  EXPECT_EQ(test::Read(out.data_ndarray()), (std::vector<float>{2, 2, 4, 4}));
  NDArray r = NDArray::FromSparseParts(StorageType::kRowSparse, Shape{4, 2}, Dense({5, 6}, Shape{1, 2}), {Int64({2})});
  RetainRowsInto(r, Int64({0, 2}), out);
  EXPECT_EQ(test::Read(CastStorage(out, StorageType::kDefault)), (std::vector<float>{0, 0, 0, 0, 5, 6, 0, 0}));
  EXPECT_THROW(RetainRowsInto(d, Int64({4}), out), Error);
  EXPECT_THROW(RetainRowsInto(d, Int64({0}), d), Error);  // the output must be row_sparse
}

// A file with an unsorted row_sparse index or a csr column out of range is refused at load, with
// the record and the position named.
TEST_F(SparseTest, LoadRefusesMalformedSparseRecords) {
  auto list_with = [](NDArrayRecord r) {
    NDArrayListData list;
    list.arrays.push_back(std::move(r));
    return SerializeNDArrayList(list);
  };
  auto i64 = [](std::vector<int64_t> v) {
    NDArrayAuxRecord a;
    a.shape = Shape{static_cast<int64_t>(v.size())};
    a.data.resize(v.size() * 8);
    if (!v.empty()) std::memcpy(a.data.data(), v.data(), a.data.size());
    return a;
  };
  NDArrayRecord r;
  r.stype = StorageType::kRowSparse;
  r.shape = Shape{3, 1};
  r.storage_shape = Shape{2, 1};
  r.data.resize(8);
  r.aux = {i64({2, 0})};
  auto bytes = list_with(r);
  try {
    ParseNDArrayList(bytes, "bad.params");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.params: record 0 of 1"), std::string::npos) << what;
    EXPECT_NE(what.find("indices[1] = 0 after 2"), std::string::npos) << what;
  }
  r.stype = StorageType::kCSR;
  r.shape = Shape{1, 4};
  r.storage_shape = Shape{2};
  r.aux = {i64({0, 2}), i64({1, 4})};
  bytes = list_with(r);
  EXPECT_THROW(ParseNDArrayList(bytes, "bad.params"), Error);
  r.aux = {i64({0, 2}), i64({1, 3})};
  bytes = list_with(r);
  EXPECT_EQ(ParseNDArrayList(bytes, "good.params").arrays.at(0).aux.at(1).data, r.aux[1].data);
  // A full shape no data backs: its element count must still be representable (found by the
  // params fuzzer, where Shape::Size overflowed).
  r.stype = StorageType::kRowSparse;
  r.shape = Shape{int64_t{1} << 40, int64_t{1} << 40};
  r.storage_shape = Shape{0, int64_t{1} << 40};
  r.data.clear();
  r.aux = {i64({})};
  bytes = list_with(r);
  EXPECT_THROW(ParseNDArrayList(bytes, "huge.params"), Error);
  EXPECT_THROW(NDArray::CreateSparse(StorageType::kRowSparse, r.shape, Context::cpu(0)), Error);
}

}  // namespace
}  // namespace weft

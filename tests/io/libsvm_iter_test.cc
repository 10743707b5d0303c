// LibSVMIter: csr batches, MXNet's round-batch wrap and epoch carry, labels from a second file,
// byte-range parts, directories, and errors naming file and line. The expected batches of the
// four-line file are the ones MXNet 1.9.1's LibSVMIter gives for it (its documented example, run on
// libmxnet: indptr, indices, labels, pad and index per batch).
#include <gtest/gtest.h>

#include <set>

#include "io_test_util.h"
#include "weft/libsvm_iter.h"
#include "weft/storage_type.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::TempDir;
using test::WriteFileBytes;

// MXNet's documented example (LibSVMIter's docstring and test_io.py).
constexpr const char* kData = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n";
constexpr const char* kLabel = "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n";

template <typename T>
std::vector<T> Values(const NDArray& a) {
  std::vector<T> v(a.GetShape().Size());
  a.SyncCopyToCPUBytes(v.data(), v.size() * sizeof(T));
  return v;
}

struct Csr {
  std::vector<int64_t> indptr, indices;
  std::vector<float> values;
  bool operator==(const Csr&) const = default;
};

Csr PartsOf(const NDArray& a) {
  EXPECT_EQ(a.storage_type(), StorageType::kCSR);
  a.SyncCheckFormat(true);
  return {Values<int64_t>(a.aux_ndarray(0)), Values<int64_t>(a.aux_ndarray(1)), Values<float>(a.data_ndarray())};
}

struct Batch {
  Csr data;
  std::vector<float> label;
  int pad;
  std::vector<int> index;
};

Batch Take(DataIter& it) {
  EXPECT_TRUE(it.Next());
  return {PartsOf(it.GetData()), Values<float>(it.GetLabel()), it.GetPadNum(), it.GetIndex()};
}

TEST(LibSVMIter, MXNetsExampleBatchesAndEpochs) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  LibSVMIter it({.data_libsvm = dir / "data.t", .data_shape = Shape(3), .batch_size = 3});
  EXPECT_EQ(it.ProvideData()[0].shape, Shape(3, 3));
  EXPECT_EQ(it.ProvideLabel()[0].shape, Shape(3));
  Batch b = Take(it);
  EXPECT_EQ(b.data, (Csr{{0, 2, 2, 5}, {0, 2, 0, 1, 2}, {0.5f, 1.2f, 0.6f, 2.4f, 1.2f}}));
  EXPECT_EQ(b.label, (std::vector<float>{1, -2, -3}));
  EXPECT_EQ(b.pad, 0);
  EXPECT_EQ(b.index, (std::vector<int>{0, 1, 2}));
  b = Take(it);  // line 3, then lines 0 and 1 again
  EXPECT_EQ(b.data, (Csr{{0, 1, 3, 3}, {2, 0, 2}, {-1.2f, 0.5f, 1.2f}}));
  EXPECT_EQ(b.label, (std::vector<float>{4, 1, -2}));
  EXPECT_EQ(b.pad, 2);
  EXPECT_EQ(b.index, (std::vector<int>{3, 0, 1}));
  EXPECT_FALSE(it.Next());
  // The next epoch goes on after the two lines the wrapped batch took, as MXNet's does.
  it.BeforeFirst();
  b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{-3, 4, 1}));
  EXPECT_EQ(b.pad, 1);
  EXPECT_FALSE(it.Next());
  it.BeforeFirst();
  b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{-2, -3, 4}));
  EXPECT_EQ(b.pad, 0);
  EXPECT_FALSE(it.Next());
}

TEST(LibSVMIter, LabelsFromASecondFileAreCsr) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  WriteFileBytes(dir / "label.t", kLabel);
  LibSVMIter it({.data_libsvm = dir / "data.t",
                 .data_shape = Shape(3),
                 .label_libsvm = dir / "label.t",
                 .label_shape = Shape(3),
                 .batch_size = 3});
  EXPECT_EQ(it.ProvideLabel()[0].shape, Shape(3, 3));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(PartsOf(it.GetLabel()), (Csr{{0, 0, 1, 2}, {0, 2}, {0.125f, 1.2f}}));
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(PartsOf(it.GetLabel()), (Csr{{0, 2, 2, 3}, {1, 2, 0}, {1.0f, -1.2f, 0.125f}}));
  EXPECT_EQ(it.GetPadNum(), 2);
}

// Lines of different lengths; line i has label i. Each part's examples, read with batch_size 1
// (no wrap), must together be every line exactly once.
TEST(LibSVMIter, PartsCoverEveryLineOnce) {
  TempDir dir("libsvm");
  std::string text;
  for (int i = 0; i < 101; ++i) {
    text += std::to_string(i);
    for (int j = 0; j < i % 7; ++j) text += fmt::format(" {}:{}", j * 3, i);
    text += i % 10 == 5 ? "\n\n" : "\n";  // blank lines are skipped
  }
  WriteFileBytes(dir / "data.t", text);
  for (int parts : {1, 2, 3, 8}) {
    std::multiset<float> seen;
    for (int p = 0; p < parts; ++p) {
      LibSVMIter it({.data_libsvm = dir / "data.t",
                     .data_shape = Shape(20),
                     .num_parts = parts,
                     .part_index = p,
                     .batch_size = 1});
      while (it.Next()) seen.insert(Values<float>(it.GetLabel())[0]);
    }
    ASSERT_EQ(seen.size(), 101u) << parts << " parts";
    for (int i = 0; i < 101; ++i) EXPECT_EQ(seen.count(static_cast<float>(i)), 1u) << i << " of " << parts;
  }
  // MXNet's split of the four-line file in two: the second part holds only the last line.
  WriteFileBytes(dir / "four.t", kData);
  LibSVMIter second(
      {.data_libsvm = dir / "four.t", .data_shape = Shape(3), .num_parts = 2, .part_index = 1, .batch_size = 2});
  Batch b = Take(second);
  EXPECT_EQ(b.label, (std::vector<float>{4, 4}));
  EXPECT_EQ(b.pad, 1);
}

TEST(LibSVMIter, ADirectoryIsItsFilesInNameOrder) {
  TempDir dir("libsvm");
  std::filesystem::create_directories(dir / "d");
  WriteFileBytes(dir / "d/b.t", "3 1:1\n4\n");
  WriteFileBytes(dir / "d/a.t", "1 0:1\n2 2:5");  // no newline at the end
  LibSVMIter it({.data_libsvm = dir / "d", .data_shape = Shape(3), .batch_size = 4});
  Batch b = Take(it);
  EXPECT_EQ(b.label, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(b.data, (Csr{{0, 1, 2, 3, 3}, {0, 2, 1}, {1, 5, 1}}));
}

// The reader splits lines in blocks of 1 MiB: a line longer than a block, lines that straddle
// block ends, CRLF endings and blank lines must read as if line by line.
TEST(LibSVMIter, LinesLongerThanTheReadBlockAndAcrossBlockEnds) {
  TempDir dir("libsvm");
  const int64_t features = 200000;  // "i:1 " of each: about 1.3 MB in one line
  std::string text = "7";
  for (int64_t i = 0; i < features; ++i) text += " " + std::to_string(i) + ":1";
  text += "\r\n\n";
  std::vector<float> labels{7};
  for (int r = 0; r < 40000; ++r) {  // short lines over the next blocks
    text += std::to_string(r % 5) + " " + std::to_string(r % features) + ":2\n";
    labels.push_back(static_cast<float>(r % 5));
  }
  WriteFileBytes(dir / "long.t", text);
  LibSVMIter it({.data_libsvm = dir / "long.t", .data_shape = Shape(features), .batch_size = 40001});
  const Batch b = Take(it);
  EXPECT_EQ(b.label, labels);
  ASSERT_EQ(b.data.indptr.size(), 40002u);
  EXPECT_EQ(b.data.indptr[1], features);
  EXPECT_EQ(b.data.indptr.back(), features + 40000);
  EXPECT_EQ(b.data.indices[features - 1], features - 1);
  EXPECT_EQ(b.data.indices[features + 39999], 39999);
  EXPECT_EQ(b.data.values[features + 39999], 2.0f);
}

TEST(LibSVMIter, BadInputNamesFileLineAndToken) {
  TempDir dir("libsvm");
  auto first_error = [&](const std::string& text, int64_t columns = 3) {
    WriteFileBytes(dir / "bad.t", text);
    return ErrorOf([&] {
      LibSVMIter it({.data_libsvm = dir / "bad.t", .data_shape = Shape(columns), .batch_size = 1});
      while (it.Next()) {
      }
    });
  };
  // MXNet's test_io.py: a negative index is an error.
  EXPECT_NE(first_error("1 0:1\n-3.0 -1:0.6 1:2.4\n").find("bad.t' line 2 token '-1:0.6'"), std::string::npos);
  EXPECT_NE(first_error("1 3:1\n").find("outside [0, 3)"), std::string::npos);
  EXPECT_NE(first_error("1 2:1 1:1\n").find("ascending"), std::string::npos);
  EXPECT_NE(first_error("1 2=1\n").find("is not index:value"), std::string::npos);
  EXPECT_NE(first_error("x 0:1\n").find("is not a label"), std::string::npos);
  WriteFileBytes(dir / "data.t", kData);
  WriteFileBytes(dir / "short.t", "1\n2\n");
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter it({.data_libsvm = dir / "data.t",
                             .data_shape = Shape(3),
                             .label_libsvm = dir / "short.t",
                             .label_shape = Shape(3),
                             .batch_size = 3});
              it.Next();
            }).find("has fewer lines than"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(3, 2), .batch_size = 1});
            }).find("must be 1-d"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] {
        LibSVMIter({.data_libsvm = dir / "data.t", .data_shape = Shape(3), .batch_size = 1, .round_batch = false});
      }).find("round_batch"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              LibSVMIter({.data_libsvm = dir / "none.t", .data_shape = Shape(3), .batch_size = 1});
            }).find("does not exist"),
            std::string::npos);
  // After an error the iterator works again from the start (ThreadedDataIter's rule).
  WriteFileBytes(dir / "bad.t", "1 0:1\n2 5:1\n");
  LibSVMIter it({.data_libsvm = dir / "bad.t", .data_shape = Shape(3), .batch_size = 1});
  ASSERT_TRUE(it.Next());
  EXPECT_NE(ErrorOf([&] { it.Next(); }).find("line 2"), std::string::npos);
  it.BeforeFirst();
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(Values<float>(it.GetLabel())[0], 1.0f);
}

TEST(LibSVMIter, CreatedFromTextParameters) {
  TempDir dir("libsvm");
  WriteFileBytes(dir / "data.t", kData);
  auto it =
      CreateDataIter("LibSVMIter", {{"data_libsvm", dir / "data.t"}, {"data_shape", "(3,)"}, {"batch_size", "2"}});
  ASSERT_TRUE(it->Next());
  EXPECT_EQ(it->GetData().GetShape(), Shape(2, 3));
  EXPECT_EQ(it->GetData().storage_type(), StorageType::kCSR);
  EXPECT_NE(ErrorOf([&] {
              CreateDataIter(
                  "LibSVMIter",
                  {{"data_libsvm", dir / "data.t"}, {"data_shape", "(3,)"}, {"batch_size", "2"}, {"dtype", "float64"}});
            }).find("dtype must be float32"),
            std::string::npos);
}

}  // namespace
}  // namespace weft

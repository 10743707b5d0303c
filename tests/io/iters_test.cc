// CSVIter, NDArrayIter and the iterator registry (with mxnet-cpp's MXDataIter).
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

#include "io_test_util.h"
#include "ndarray_read.h"
#include "weft/csv_iter.h"
#include "weft/io.h"
#include "weft/ndarray_iter.h"

namespace weft {
namespace {

using test::DataPath;
using test::ErrorOf;
using test::TempDir;

using test::Read;

// Rows i = 0..n-1 of `width` values i*10 + j; labels i.
void WriteCsv(const TempDir& dir, int n, int width, int label_rows) {
  std::ofstream d(dir / "data.csv"), l(dir / "label.csv");
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < width; ++j) d << (j ? ", " : "") << i * 10 + j;
    d << (i == 2 ? "\n\n" : "\n");  // a blank line is skipped
  }
  for (int i = 0; i < label_rows; ++i) l << i << "\n";
}

std::vector<std::vector<float>> FirstColumn(DataIter& it) {
  std::vector<std::vector<float>> out;
  while (it.Next()) {
    const auto d = Read(it.GetData());
    const size_t w = d.size() / static_cast<size_t>(it.GetData().GetShape()[0]);
    std::vector<float> col;
    for (size_t i = 0; i < d.size(); i += w) col.push_back(d[i] / 10);
    col.push_back(static_cast<float>(it.GetPadNum()));
    out.push_back(col);
    EXPECT_EQ(Read(it.GetLabel()).size(), static_cast<size_t>(it.GetData().GetShape()[0]));
  }
  return out;
}

using Rows = std::vector<std::vector<float>>;

TEST(CSVIter, BatchesAndRoundBatch) {
  TempDir dir("csv");
  WriteCsv(dir, 7, 4, 7);
  CSVIter it(
      {.data_csv = dir / "data.csv", .data_shape = Shape(2, 2), .label_csv = dir / "label.csv", .batch_size = 3});
  EXPECT_EQ(it.ProvideData()[0].shape, Shape(3, 2, 2));
  EXPECT_EQ(it.ProvideLabel()[0].shape, Shape(3));
  // Rows 0..6 in threes; the last batch takes 0 and 1 again (pad 2); the next epoch goes on after
  // them (MXNet's BatchLoader); the column after the rows is the pad.
  EXPECT_EQ(FirstColumn(it), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}, {6, 0, 1, 2}}));
  it.BeforeFirst();
  EXPECT_EQ(FirstColumn(it), (Rows{{2, 3, 4, 0}, {5, 6, 0, 1}}));
  it.BeforeFirst();
  EXPECT_EQ(FirstColumn(it), (Rows{{1, 2, 3, 0}, {4, 5, 6, 0}}));
  CSVIter short_batch({.data_csv = dir / "data.csv", .data_shape = Shape(4), .batch_size = 3, .round_batch = false});
  EXPECT_EQ(FirstColumn(short_batch), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}, {6, 0, 0, 2}}));
  ASSERT_TRUE((short_batch.BeforeFirst(), short_batch.Next()));
  EXPECT_EQ(Read(short_batch.GetLabel()), (std::vector<float>{0, 0, 0}));  // label_csv NULL: zeros
  EXPECT_EQ(short_batch.GetIndex(), (std::vector<int>{0, 1, 2}));
  CSVIter ints({.data_csv = dir / "data.csv", .data_shape = Shape(4), .batch_size = 7, .dtype = DType::kInt64});
  ASSERT_TRUE(ints.Next());
  std::vector<int64_t> v(28);
  ints.GetData().SyncCopyToCPUBytes(v.data(), v.size() * 8);
  EXPECT_EQ(v[27], 63);
}

TEST(CSVIter, ErrorsReachNext) {
  // MXNet's exception-handling example: fewer labels than examples fails in the loader thread;
  // the error is raised by the Next() whose batch needs the missing label.
  TempDir dir("csv-errors");
  WriteCsv(dir, 8, 10, 7);
  CSVIter it({.data_csv = dir / "data.csv", .data_shape = Shape(10), .label_csv = dir / "label.csv", .batch_size = 4});
  ASSERT_TRUE(it.Next());
  const std::string msg = ErrorOf([&] { it.Next(); });
  EXPECT_NE(msg.find("label.csv' has fewer examples"), std::string::npos) << msg;
  EXPECT_FALSE(it.Next());
  std::ofstream(dir / "bad.csv") << "1,2,3\n4,x,6\n";
  CSVIter bad({.data_csv = dir / "bad.csv", .data_shape = Shape(3), .batch_size = 1});
  ASSERT_TRUE(bad.Next());
  EXPECT_NE(ErrorOf([&] { bad.Next(); }).find("line 2 value 2: 'x' is not a number"), std::string::npos);
  CSVIter wide({.data_csv = dir / "bad.csv", .data_shape = Shape(4), .batch_size = 1});
  EXPECT_NE(ErrorOf([&] { wide.Next(); }).find("line 1 has 3 values; the shape asks for 4"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              CSVIter x({.data_csv = dir / "none.csv", .data_shape = Shape(3), .batch_size = 1});
            }).find("none.csv"),
            std::string::npos);
}

TEST(NDArrayIter, LastBatchHandlesAndViews) {
  std::vector<float> xs(7 * 2);
  std::iota(xs.begin(), xs.end(), 0.f);
  const NDArray x(xs, Shape(7, 2), Context::cpu(0));
  const NDArray y(std::vector<float>{0, 1, 2, 3, 4, 5, 6}, Shape(7), Context::cpu(0));
  auto rows = [](NDArrayIter& it) {
    Rows out;
    while (it.Next()) {
      std::vector<float> r;
      for (float v : Read(it.GetLabel())) r.push_back(v);
      r.push_back(static_cast<float>(it.GetPadNum()));
      out.push_back(r);
    }
    it.BeforeFirst();
    return out;
  };
  NDArrayIter pad(x, y, {.batch_size = 3});
  EXPECT_EQ(rows(pad), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}, {6, 0, 1, 2}}));
  EXPECT_EQ(rows(pad), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}, {6, 0, 1, 2}}));
  NDArrayIter discard(x, y, {.batch_size = 3, .last_batch_handle = "discard"});
  EXPECT_EQ(rows(discard), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}}));
  NDArrayIter roll(x, y, {.batch_size = 3, .last_batch_handle = "roll_over"});
  EXPECT_EQ(rows(roll), (Rows{{0, 1, 2, 0}, {3, 4, 5, 0}}));
  EXPECT_EQ(rows(roll), (Rows{{6, 0, 1, 0}, {2, 3, 4, 0}}));
  // Unshuffled batches inside the array are views; the data rows follow the labels.
  NDArrayIter view(x, y, {.batch_size = 3});
  ASSERT_TRUE(view.Next());
  ASSERT_TRUE(view.Next());
  EXPECT_TRUE(view.GetData().SharesChunkWith(x));
  EXPECT_EQ(Read(view.GetData()), (std::vector<float>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(view.ProvideData()[0].shape, Shape(3, 2));
  // Shuffled: every epoch a permutation, repeatable by seed.
  auto epochs = [&](uint32_t seed) {
    NDArrayIter it(x, y, {.batch_size = 7, .shuffle = true, .seed = seed});
    Rows out = rows(it);
    for (const auto& r : rows(it)) out.push_back(r);
    return out;
  };
  const Rows a = epochs(3);
  EXPECT_EQ(a, epochs(3));
  EXPECT_NE(a[0], a[1]);
  EXPECT_EQ(std::set<float>(a[1].begin(), a[1].end() - 1).size(), 7u);
  NDArrayIter nolabel(x, NDArray(), {.batch_size = 2});
  EXPECT_TRUE(nolabel.ProvideLabel().empty());
  ASSERT_TRUE(nolabel.Next());
  EXPECT_TRUE(nolabel.GetLabel().is_none());
  EXPECT_NE(ErrorOf([&] { NDArrayIter z(x, y, {.last_batch_handle = "wrap"}); }).find("'wrap'"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { NDArrayIter z(x, NDArray(Shape(6), Context::cpu(0))); }).find("7 rows"), std::string::npos);
}

TEST(DataIterRegistry, ListsMXNetsIteratorsAndParameters) {
  std::vector<std::string> names;
  for (const auto& info : ListDataIters()) names.push_back(info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"CSVIter", "ImageRecordIter", "ImageRecordUInt8Iter", "LibSVMIter",
                                             "MNISTIter"}));
  const auto img = FindDataIter("ImageRecordIter");
  ASSERT_TRUE(img.has_value());
  auto param = [&](const std::string& name) {
    for (const auto& p : img->params)
      if (p.name == name) return p;
    ADD_FAILURE() << "no parameter " << name;
    return DataIterParamInfo{};
  };
  // MXNet 1.9.1's type descriptions, as MXDataIterGetIterInfo gives them.
  EXPECT_EQ(param("data_shape").type, "Shape(tuple), required");
  EXPECT_FALSE(param("data_shape").default_value.has_value());
  EXPECT_EQ(param("batch_size").type, "int (non-negative), required");
  EXPECT_EQ(param("label_width").type, "int, optional, default='1'");
  EXPECT_EQ(param("round_batch").type, "boolean, optional, default=1");
  EXPECT_EQ(param("prefetch_buffer").type, "long (non-negative), optional, default=4");
  EXPECT_EQ(param("ctx").type, "{'cpu', 'gpu'},optional, default='gpu'");
  EXPECT_EQ(param("seed_aug").type, "int or None, optional, default='None'");
  EXPECT_EQ(param("mean_r").default_value, "0");
  EXPECT_FALSE(FindDataIter("ImageDetRecordIter").has_value());
  std::set<std::string> unique;
  for (const auto& p : img->params) EXPECT_TRUE(unique.insert(p.name).second) << p.name;
}

TEST(DataIterRegistry, CreatesFromTextParameters) {
  auto it = CreateDataIter("ImageRecordIter", {{"path_imgrec", DataPath("jpg.rec")},
                                               {"data_shape", "[3,16,16]"},
                                               {"batch_size", "4"},
                                               {"rand_mirror", "True"},
                                               {"verbose", "False"},
                                               {"ctx", "cpu"},
                                               {"dtype", "uint8"}});
  ASSERT_TRUE(it->Next());
  EXPECT_EQ(it->GetData().GetShape(), Shape(4, 3, 16, 16));
  EXPECT_EQ(it->GetData().GetDType(), DType::kUint8);
  EXPECT_EQ(it->ProvideLabel()[0].name, "softmax_label");
  auto u8 = CreateDataIter("ImageRecordUInt8Iter",
                           {{"path_imgrec", DataPath("png.rec")}, {"data_shape", "(1, 8, 8)"}, {"batch_size", "16"}});
  ASSERT_TRUE(u8->Next());
  EXPECT_EQ(u8->GetData().GetDType(), DType::kUint8);
  auto msg = ErrorOf([] { CreateDataIter("NoIter", {}); });
  EXPECT_NE(msg.find("known: CSVIter, ImageRecordIter"), std::string::npos) << msg;
  msg = ErrorOf([] { CreateDataIter("ImageRecordIter", {{"path_imgrec", "x.rec"}, {"batch_size", "4"}}); });
  EXPECT_NE(msg.find("'data_shape' is required"), std::string::npos) << msg;
  msg = ErrorOf([] { CreateDataIter("CSVIter", {{"data_csv", "x"}, {"data_shape", "(2)"}, {"batchsize", "4"}}); });
  EXPECT_NE(msg.find("unknown parameter 'batchsize'"), std::string::npos) << msg;
  msg = ErrorOf([] { CreateDataIter("CSVIter", {{"data_csv", "x"}, {"data_shape", "(2, a)"}, {"batch_size", "4"}}); });
  EXPECT_NE(msg.find("'data_shape' = '(2, a)' is not a shape"), std::string::npos) << msg;
  msg = ErrorOf([] { CreateDataIter("CSVIter", {{"data_csv", "x"}, {"data_shape", "(2)"}, {"batch_size", "4x"}}); });
  EXPECT_NE(msg.find("'batch_size' = '4x' is not an integer"), std::string::npos) << msg;
  // mxnet-cpp's spelling on the registry.
  auto mx = MXDataIter("ImageRecordIter")
                .SetParam("path_imgrec", DataPath("jpg.rec"))
                .SetParam("data_shape", "(3, 8, 8)")
                .SetParam("batch_size", 8)
                .CreateDataIter();
  int n = 0;
  while (mx.Next()) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(mx.ProvideData()[0].shape, Shape(8, 3, 8, 8));
}

}  // namespace
}  // namespace weft

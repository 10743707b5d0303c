// Initializers, metrics and the MNIST reader/iterator.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "ndarray_read.h"
#include "require.h"
#include "weft/initializer.h"
#include "weft/io.h"
#include "weft/metric.h"
#include "weft/runtime.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

using weft::test::Read;

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() / fmt::format("weft-train-{}-{}", ::getpid(), name)).string();
}

TEST(Initializer, NameDispatch) {
  Xavier xavier;
  std::map<std::string, float> expected{{"fc1_bias", 0.0f},       {"bn_gamma", 1.0f},      {"bn_beta", 0.0f},
                                        {"bn_moving_mean", 0.0f}, {"bn_moving_var", 1.0f}, {"bn_moving_inv_var", 0.0f}};
  for (const auto& [name, value] : expected) {
    NDArray a(std::vector<float>(6, 7.0f), Shape(2, 3), Context::cpu(0));
    xavier(name, &a);
    for (float v : Read(a)) EXPECT_EQ(v, value) << name;
  }
  NDArray data(Shape(2, 3), Context::cpu(0));
  const std::string msg = ErrorOf([&] { xavier("data", &data); });
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown initialization pattern"), std::string::npos) << msg;
}

TEST(Initializer, XavierScaleAndDeterminism) {
  // (out 50, in 20, 5, 5): fan_in 500, fan_out 1250, avg 875 -> scale sqrt(3/875).
  const float scale = std::sqrt(3.0f / 875.0f);
  Xavier xavier;
  NDArray w(Shape(50, 20, 5, 5), Context::cpu(0));
  xavier.Seed(7);
  xavier("conv2_weight", &w);
  const std::vector<float> v = Read(w);
  float lo = 1, hi = -1;
  double mean = 0;
  for (float x : v) lo = std::min(lo, x), hi = std::max(hi, x), mean += x;
  mean /= static_cast<double>(v.size());
  EXPECT_GE(lo, -scale);
  EXPECT_LE(hi, scale);
  EXPECT_LT(lo, -0.9f * scale);  // 25000 draws fill the range
  EXPECT_GT(hi, 0.9f * scale);
  EXPECT_NEAR(mean, 0.0, 0.01 * scale);
  NDArray again(Shape(50, 20, 5, 5), Context::cpu(1));
  xavier.Seed(7);
  xavier("conv2_weight", &again);
  EXPECT_EQ(Read(again), v);  // same seed, same values, any device

  Xavier gaussian(Xavier::gaussian, Xavier::in, 2.0f);
  NDArray g(Shape(200, 100), Context::cpu(0));
  gaussian("fc_weight", &g);
  double var = 0;
  for (float x : Read(g)) var += static_cast<double>(x) * x;
  var /= 20000.0;
  EXPECT_NEAR(var, 2.0 / 100.0, 0.002);  // sigma² = magnitude / fan_in
  NDArray vec(Shape(5), Context::cpu(0));
  EXPECT_NE(ErrorOf([&] { xavier("x_weight", &vec); }).find("at least 2 dimensions"), std::string::npos);
}

TEST(Initializer, UniformNormalConstant) {
  Uniform u(0.5f);
  NDArray a(Shape(1000), Context::cpu(0));
  u("w_weight", &a);
  for (float x : Read(a)) {
    EXPECT_GE(x, -0.5f);
    EXPECT_LT(x, 0.5f);
  }
  Normal n(3.0f, 0.1f);
  n("w_weight", &a);
  double mean = 0;
  for (float x : Read(a)) mean += x;
  EXPECT_NEAR(mean / 1000.0, 3.0, 0.02);
  Constant c(2.5f);
  c("w_weight", &a);
  for (float x : Read(a)) EXPECT_EQ(x, 2.5f);
  One one;
  one("w_weight", &a);
  EXPECT_EQ(Read(a)[0], 1.0f);
  one("w_bias", &a);  // the dispatch still makes biases zero
  EXPECT_EQ(Read(a)[0], 0.0f);
  Zero zero;
  zero("w_weight", &a);
  EXPECT_EQ(Read(a)[999], 0.0f);
}

TEST(Metric, AccuracyTopKCrossEntropy) {
  NDArray labels(std::vector<float>{0, 1, 2, 1}, Shape(4), Context::cpu(0));
  NDArray preds(std::vector<float>{0.7f, 0.2f, 0.1f,   // right
                                   0.5f, 0.3f, 0.2f,   // wrong, label second
                                   0.1f, 0.1f, 0.8f,   // right
                                   0.2f, 0.2f, 0.6f},  // wrong, label tied second (loses the tie to class 0)
                Shape(4, 3), Context::cpu(0));
  Accuracy acc;
  EXPECT_TRUE(std::isnan(acc.Get()));
  acc.Update(labels, preds);
  EXPECT_FLOAT_EQ(acc.Get(), 0.5f);
  acc.Update(labels, preds);
  EXPECT_FLOAT_EQ(acc.Get(), 0.5f);
  EXPECT_EQ(acc.num_inst(), 8);
  acc.Reset();
  EXPECT_EQ(acc.num_inst(), 0);

  TopKAccuracy top2(2);
  EXPECT_EQ(top2.name(), "top_k_accuracy_2");
  top2.Update(labels, preds);
  EXPECT_FLOAT_EQ(top2.Get(), 0.75f);

  CrossEntropy ce;
  ce.Update(labels, preds);
  const double want = -(std::log(0.7) + std::log(0.3) + std::log(0.8) + std::log(0.2)) / 4;
  EXPECT_NEAR(ce.Get(), want, 1e-5);

  NDArray bad(std::vector<float>{0, 5, 1, 1}, Shape(4), Context::cpu(0));
  EXPECT_NE(ErrorOf([&] { acc.Update(bad, preds); }).find("not a class index"), std::string::npos);
  NDArray short_labels(std::vector<float>{0, 1}, Shape(2), Context::cpu(0));
  EXPECT_NE(ErrorOf([&] { acc.Update(short_labels, preds); }).find("do not match"), std::string::npos);
}

// Writes an idx file (gzip when `gz`) with the given dims and bytes.
void WriteIdx(const std::string& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data, bool gz) {
  std::vector<uint8_t> bytes{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<uint8_t>(d >> s));
  bytes.insert(bytes.end(), data.begin(), data.end());
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

TEST(MNISTIter, ReadsIdxAndBatches) {
  // 10 images of 2x3 pixels; image i has every pixel = 10·i, label i % 4.
  std::vector<uint8_t> pixels, labels;
  for (uint8_t i = 0; i < 10; ++i) {
    for (int p = 0; p < 6; ++p) pixels.push_back(static_cast<uint8_t>(10 * i));
    labels.push_back(i % 4);
  }
  const std::string img = TempPath("img.gz"), lab = TempPath("lab");
  WriteIdx(img, {10, 2, 3}, pixels, true);
  WriteIdx(lab, {10}, labels, false);

  MNISTIter plain(img, lab, {.batch_size = 4, .shuffle = false});
  EXPECT_EQ(plain.num_batches(), 2u);  // the last 2 samples are dropped, as MXNet's MNISTIter
  int batches = 0;
  NDArray first;
  while (plain.Next()) {
    DataBatch b = plain.GetDataBatch();
    // Unshuffled cpu batches are views of one copy of the set (documented in io.h).
    if (first.is_none()) first = b.data;
    EXPECT_TRUE(b.data.SharesChunkWith(first));
    EXPECT_EQ(b.data.GetShape(), Shape(4, 1, 2, 3));
    const std::vector<float> d = Read(b.data), l = Read(b.label);
    for (int r = 0; r < 4; ++r) {
      const int s = batches * 4 + r;
      EXPECT_EQ(b.index[static_cast<size_t>(r)], s);
      EXPECT_FLOAT_EQ(d[static_cast<size_t>(r) * 6 + 5], 10.0f * s / 255.0f);
      EXPECT_EQ(l[static_cast<size_t>(r)], s % 4);
    }
    ++batches;
  }
  EXPECT_EQ(batches, 2);

  MNISTIter shuffled(img, lab, {.batch_size = 5, .shuffle = true, .flat = true, .seed = 3});
  std::set<int> seen;
  std::vector<int> first_epoch;
  while (shuffled.Next()) {
    EXPECT_EQ(shuffled.GetData().GetShape(), Shape(5, 6));
    const std::vector<float> d = Read(shuffled.GetData()), l = Read(shuffled.GetLabel());
    for (size_t r = 0; r < 5; ++r) {
      const int s = shuffled.GetIndex()[r];
      EXPECT_FLOAT_EQ(d[r * 6], 10.0f * s / 255.0f);  // rows and labels stay paired
      EXPECT_EQ(l[r], s % 4);
      seen.insert(s);
      first_epoch.push_back(s);
    }
  }
  EXPECT_EQ(seen.size(), 10u);
  shuffled.Reset();
  std::vector<int> second_epoch;
  while (shuffled.Next())
    for (int s : shuffled.GetIndex()) second_epoch.push_back(s);
  EXPECT_EQ(first_epoch, second_epoch);  // MXNet's MNISTIter keeps its order

  // reshuffle_each_epoch: a new order per epoch, the same sequence of orders for the same seed.
  auto epochs = [&](uint32_t seed) {
    MNISTIter it(img, lab, {.batch_size = 10, .shuffle = true, .seed = seed, .reshuffle_each_epoch = true});
    std::vector<std::vector<int>> orders;
    for (int e = 0; e < 3; ++e) {
      it.Reset();
      EXPECT_TRUE(it.Next());
      orders.push_back(it.GetIndex());
      EXPECT_EQ(std::set<int>(orders.back().begin(), orders.back().end()).size(), 10u);
    }
    return orders;
  };
  const auto orders = epochs(3);
  EXPECT_EQ(orders, epochs(3));
  EXPECT_NE(orders[0], orders[1]);
  EXPECT_NE(orders[1], orders[2]);

  auto it = MXDataIter("MNISTIter")
                .SetParam("image", img)
                .SetParam("label", lab)
                .SetParam("batch_size", 2)
                .SetParam("flat", 1)
                .SetParam("shuffle", 0)
                .CreateDataIter();
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.GetData().GetShape(), Shape(2, 6));
  EXPECT_NE(ErrorOf([&] { (void)MXDataIter("NoSuchIter"); }).find("MNISTIter"), std::string::npos);
  EXPECT_NE(
      ErrorOf([&] {
        MXDataIter("MNISTIter").SetParam("image", img).SetParam("label", lab).SetParam("colour", 1).CreateDataIter();
      }).find("'colour'"),
      std::string::npos);
  // A typo in a number is a weft::Error naming the parameter, not std::invalid_argument.
  EXPECT_NE(ErrorOf([&] {
              MXDataIter("MNISTIter")
                  .SetParam("image", img)
                  .SetParam("label", lab)
                  .SetParam("batch_size", "2x")
                  .CreateDataIter();
            }).find("'batch_size' = '2x'"),
            std::string::npos);

  // Errors name the file.
  EXPECT_NE(ErrorOf([&] { (void)MNISTIter(img + ".missing", lab); }).find(".missing"), std::string::npos);
  WriteIdx(TempPath("lab9"), {9}, std::vector<uint8_t>(9, 0), false);
  EXPECT_NE(ErrorOf([&] { (void)MNISTIter(img, TempPath("lab9")); }).find("9 labels"), std::string::npos);
  std::ofstream(TempPath("trunc"), std::ios::binary) << std::string("\0\0\x08\x03\0\0\0\x0a", 8);
  EXPECT_NE(ErrorOf([&] { ReadIdxFile(TempPath("trunc")); }).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { (void)MNISTIter(img, lab, {.batch_size = 11}); }).find("larger than"), std::string::npos);
  for (const char* f : {"img.gz", "lab", "lab9", "trunc"}) fs::remove(TempPath(f));
}

TEST(MNISTIter, ReadsFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!fs::exists(dir + "t10k-images-idx3-ubyte.gz"))
    WEFT_SKIP_UNLESS_REQUIRED() << "Fashion-MNIST is not installed at " << dir;
  MNISTIter test(dir + "t10k-images-idx3-ubyte.gz", dir + "t10k-labels-idx1-ubyte.gz",
                 {.batch_size = 1000, .shuffle = false, .flat = true});
  EXPECT_EQ(test.num_samples(), 10000u);
  std::vector<int> counts(10, 0);
  while (test.Next())
    for (float l : Read(test.GetLabel())) counts[static_cast<size_t>(l)]++;
  for (int c : counts) EXPECT_EQ(c, 1000);  // the test set is balanced
}

}  // namespace
}  // namespace weft

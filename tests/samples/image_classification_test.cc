// samples/image_classification (issue 34) on a zoo export of the compatibility fixtures (whose
// outputs tests/compat checks against MXNet 1.9.1): the printed classes and probabilities equal
// a softmax of the network's output computed here, and --benchmark prints a line per batch size.
// A one-colour image makes the preprocessed input exact whatever the resize: every pixel is
// (colour - mean) / std.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "run_command.h"
#include "weft/executor.h"
#include "weft/image.h"
#include "weft/model.h"

namespace weft {
namespace {

const std::string kModel = std::string(WEFT_COMPAT_DATA) + "/zoo_resnet18_v1";

using wtest::RunCommand;

TEST(ImageClassificationSample, PrintsTheSoftmaxOfTheNetworksOutput) {
  Image img;
  img.width = 300;
  img.height = 200;
  img.channels = 3;
  const uint8_t rgb[3] = {200, 90, 30};
  for (int i = 0; i < img.width * img.height; ++i) img.data.insert(img.data.end(), rgb, rgb + 3);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("weft-imgcls-" + std::to_string(getpid()) + ".png")).string();
  const std::vector<uint8_t> png = EncodePng(img);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(png.data()), png.size());

  int status = 0;
  const std::string out = RunCommand(
      std::string(WEFT_IMAGE_CLASSIFICATION) + " --model " + kModel + " --image " + path + " --top-k 3", &status);
  std::filesystem::remove(path);
  ASSERT_EQ(status, 0) << out;

  // The same input built here: ImageNet's mean and std (the sample's defaults), one value a plane.
  const float mean[3] = {123.675f, 116.28f, 103.53f}, stdev[3] = {58.395f, 57.12f, 57.375f};
  const Checkpoint ck = LoadCheckpoint(kModel, 0);
  std::unique_ptr<Executor> ex =
      Executor::SimpleBind(ck.symbol, Context::cpu(0), {{"data", Shape(1, 3, 224, 224)}}, "null");
  ex->CopyParamsFrom(ck.arg_params, ck.aux_params, true);
  std::vector<float> x(3 * 224 * 224);
  for (int c = 0; c < 3; ++c)
    std::fill(x.begin() + c * 224 * 224, x.begin() + (c + 1) * 224 * 224, (rgb[c] - mean[c]) / stdev[c]);
  ex->arg_dict().at("data").SyncCopyFromCPU(x);
  ex->Forward(false);
  std::vector<float> p;
  ex->outputs[0].SyncCopyToCPU(&p);
  const float top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (float& v : p) sum += v = std::exp(v - top);
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::string expected;
  for (size_t i = 0; i < 3; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "probability=%.6f, class=%zu\n", p[order[i]] / sum, order[i]);
    expected += line;
  }
  EXPECT_EQ(out, expected);
}

TEST(ImageClassificationSample, BenchmarkPrintsEachBatchSize) {
  int status = 0;
  const std::string out = RunCommand(std::string(WEFT_IMAGE_CLASSIFICATION) + " --model " + kModel +
                                         " --benchmark --batch-sizes 1,3 --runs 2 --warmup 1",
                                     &status);
  ASSERT_EQ(status, 0) << out;
  for (int batch : {1, 3}) {
    // "batch size B: X ms per batch, Y images/s (median of 2 runs; fastest Z ms; cpu C ms)" with
    // positive X, Y, Z and C, Z at most X.
    const std::string head = "batch size " + std::to_string(batch) + ": ";
    const size_t at = out.find(head);
    ASSERT_NE(at, std::string::npos) << out;
    const std::string line = out.substr(at, out.find('\n', at) - at);
    double ms = 0, images = 0;
    ASSERT_EQ(std::sscanf(line.c_str() + head.size(), "%lf ms per batch, %lf images/s", &ms, &images), 2) << line;
    EXPECT_GT(ms, 0);
    EXPECT_GT(images, 0);
    const size_t tail = line.find("(median of 2 runs; fastest ");
    ASSERT_NE(tail, std::string::npos) << line;
    double fastest = 0, cpu = 0;
    ASSERT_EQ(std::sscanf(line.c_str() + tail, "(median of 2 runs; fastest %lf ms; cpu %lf ms)", &fastest, &cpu), 2)
        << line;
    EXPECT_GT(fastest, 0);
    EXPECT_LE(fastest, ms);
    EXPECT_GT(cpu, 0);
  }
  EXPECT_NE(RunCommand(std::string(WEFT_IMAGE_CLASSIFICATION) + " --model " + kModel + " 2>&1", &status)
                .find("give --image FILE to classify, or --benchmark"),
            std::string::npos);
  EXPECT_NE(status, 0);
}

}  // namespace
}  // namespace weft

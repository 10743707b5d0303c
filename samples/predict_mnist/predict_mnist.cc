// predict_mnist — loads a checkpoint (<prefix>-symbol.json, <prefix>-%04d.params; written by
// train_mnist or by MXNet's save_checkpoint) and reports its accuracy on the Fashion-MNIST test set
// and the inference speed (forward passes, input copies and the metric included).
//
//   predict_mnist --model-prefix /tmp/lenet --epoch 10
//   predict_mnist --model-prefix /tmp/lenet --epoch 10 --repeat 5   # speed of a warm process
//
// The first pass over the test set also pays one-time costs (page faults on fresh pooled memory,
// oneDNN primitive creation, OpenBLAS/OpenMP thread start-up), so --repeat N > 1 reports the
// median of passes 2..N, the speed a serving process sees; the first pass is printed beside it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "weft/module.h"

int main(int argc, char** argv) {
  CLI::App app{"Test accuracy of an MNIST checkpoint on Fashion-MNIST"};
  std::string prefix, device = "cpu", data_dir = "/usr/share/datasets/fashion-mnist";
  int epoch = 1, batch_size = 100, repeat = 1;
  app.add_option("--model-prefix", prefix, "checkpoint prefix")->required();
  app.add_option("--epoch", epoch, "checkpoint epoch (the %04d in the params file name)");
  app.add_option("--device", device, "device type to run on (device 0)");
  app.add_option("--batch-size", batch_size, "samples per forward pass")->check(CLI::PositiveNumber);
  app.add_option("--data-dir", data_dir, "directory with the t10k-*-idx*-ubyte.gz files");
  app.add_option("--repeat", repeat, "passes over the test set; > 1 reports the median speed of passes 2..N")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    using namespace weft;
    const Context ctx(device, 0);
    Module mod = Module::Load(prefix, epoch, false, {"data"}, {"softmax_label"}, {ctx});
    // FullyConnected flattens its input, so one image layout serves both MLPs and conv nets.
    mod.Bind({{"data", Shape(batch_size, 1, 28, 28)}}, {{"softmax_label", Shape(batch_size)}}, /*for_training=*/false);
    MNISTIter test(data_dir + "/t10k-images-idx3-ubyte.gz", data_dir + "/t10k-labels-idx1-ubyte.gz",
                   {.batch_size = batch_size, .shuffle = false, .flat = false});
    Accuracy acc;
    std::vector<double> speeds;  // samples/s of each pass, in pass order
    for (int pass = 0; pass < repeat; ++pass) {
      acc.Reset();
      const auto t0 = std::chrono::steady_clock::now();
      mod.Score(test, acc);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      speeds.push_back(static_cast<double>(acc.num_inst()) / seconds);
    }
    std::vector<double> warm(speeds.begin() + (repeat > 1 ? 1 : 0), speeds.end());
    std::sort(warm.begin(), warm.end());
    std::printf("%s epoch %d: test accuracy %.4f on %ld images (%s), %.0f samples/s", prefix.c_str(), epoch,
                static_cast<double>(acc.Get()), acc.num_inst(), ctx.ToString().c_str(), warm[warm.size() / 2]);
    if (repeat > 1) std::printf(" (median of %d warm passes; first pass %.0f samples/s)", repeat - 1, speeds[0]);
    std::printf("\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "predict_mnist: %s\n", e.what());
    return 1;
  }
}

// predict_mnist — loads a checkpoint (<prefix>-symbol.json, <prefix>-%04d.params; written by
// train_mnist or by MXNet's save_checkpoint) and reports its accuracy on the Fashion-MNIST test set.
//
//   predict_mnist --model-prefix /tmp/lenet --epoch 10
#include <CLI/CLI.hpp>
#include <cstdio>

#include "train/checkpoint.h"
#include "weft/executor.h"
#include "weft/io.h"
#include "weft/metric.h"
#include "weft/runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"Test accuracy of an MNIST checkpoint on Fashion-MNIST"};
  std::string prefix, device = "cpu", data_dir = "/usr/share/datasets/fashion-mnist";
  int epoch = 1, batch_size = 100;
  app.add_option("--model-prefix", prefix, "checkpoint prefix")->required();
  app.add_option("--epoch", epoch, "checkpoint epoch (the %04d in the params file name)");
  app.add_option("--device", device, "device type to run on (device 0)");
  app.add_option("--batch-size", batch_size, "samples per forward pass")->check(CLI::PositiveNumber);
  app.add_option("--data-dir", data_dir, "directory with the t10k-*-idx*-ubyte.gz files");
  CLI11_PARSE(app, argc, argv);
  try {
    using namespace weft;
    train::Checkpoint ck = train::LoadCheckpoint(prefix, epoch);
    // FullyConnected flattens its input, so one image layout serves both MLPs and conv nets.
    const Context ctx(device, 0);
    const int64_t b = batch_size;
    std::unique_ptr<Executor> exec =
        Executor::SimpleBind(ck.symbol, ctx, {{"data", Shape(b, 1, 28, 28)}, {"softmax_label", Shape(b)}}, "null");
    // Strict, as MXNet's set_params(allow_missing=False): a weight missing from the file would
    // otherwise stay at its initial value and the accuracy would be silently wrong.
    std::vector<std::string> params;
    for (const std::string& n : ck.symbol.ListArguments())
      if (n != "data" && n != "softmax_label") params.push_back(n);
    train::RequireAllParams(params, ck.symbol.ListAuxiliaryStates(), ck.arg_params, ck.aux_params,
                            train::ParamsFile(prefix, epoch));
    exec->CopyParamsFrom(ck.arg_params, ck.aux_params, /*allow_extra_params=*/true);
    MNISTIter test(data_dir + "/t10k-images-idx3-ubyte.gz", data_dir + "/t10k-labels-idx1-ubyte.gz",
                   {.batch_size = batch_size, .shuffle = false, .flat = false});
    Accuracy acc;
    NDArray data = exec->arg_dict().at("data");
    while (test.Next()) {
      NDArray::CopyFromTo(test.GetData(), data);
      exec->Forward(false);
      acc.Update(test.GetLabel(), exec->outputs[0]);
    }
    std::printf("%s epoch %d: test accuracy %.4f on %ld images (%s)\n", prefix.c_str(), epoch,
                static_cast<double>(acc.Get()), acc.num_inst(), ctx.ToString().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "predict_mnist: %s\n", e.what());
    return 1;
  }
}

// train_lenet_autograd — trains LeNet (or the MNIST MLP) on Fashion-MNIST the way a Gluon program
// does, with no Symbol and no executor: the layers are ops called on NDArrays inside
// autograd::Record, the gradients come from autograd::Backward, and the optimizer updates each
// parameter in place. Same initialisation, data order, optimizer and schedule as train_mnist, so
// the two reach the same accuracy after the same epochs. --hybridize runs the same network as one
// CachedOp (Gluon's net.hybridize()).
//
//   train_lenet_autograd --network lenet --epochs 10
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "weft/autograd.h"
#include "weft/cached_op.h"
#include "weft/imperative.h"
#include "weft/initializer.h"
#include "weft/io.h"
#include "weft/metric.h"
#include "weft/module.h"
#include "weft/networks.h"
#include "weft/optimizer.h"

using namespace weft;

namespace {

// The network's parameters, in the order MXNet's symbol lists them (the order train_mnist's
// Module initialises them in, so that both draw the same initial values).
struct Param {
  std::string name;
  NDArray value;
};

std::vector<Param> MakeParams(const std::string& network, const Context& ctx) {
  const std::vector<std::pair<std::string, Shape>> shapes =
      network == "lenet"
          ? std::vector<std::pair<std::string, Shape>>{{"conv1_weight", {20, 1, 5, 5}},  {"conv1_bias", {20}},
                                                       {"conv2_weight", {50, 20, 5, 5}}, {"conv2_bias", {50}},
                                                       {"fc1_weight", {500, 800}},       {"fc1_bias", {500}},
                                                       {"fc2_weight", {10, 500}},        {"fc2_bias", {10}}}
          : std::vector<std::pair<std::string, Shape>>{{"fc1_weight", {128, 784}}, {"fc1_bias", {128}},
                                                       {"fc2_weight", {64, 128}},  {"fc2_bias", {64}},
                                                       {"fc3_weight", {10, 64}},   {"fc3_bias", {10}}};
  std::vector<Param> params;
  for (const auto& [name, shape] : shapes) params.push_back({name, NDArray(shape, ctx, false)});
  return params;
}

NDArray FullyConnected(const NDArray& x, const Param& w, const Param& b, int hidden) {
  return InvokeOne("FullyConnected", {x, w.value, b.value}, {{"num_hidden", std::to_string(hidden)}});
}
NDArray Act(const NDArray& x, const char* type) { return InvokeOne("Activation", {x}, {{"act_type", type}}); }

// The forward pass, op by op; returns SoftmaxOutput's output (class probabilities), whose
// backward is the cross-entropy gradient (MXNet's loss op, as train_mnist's symbol uses it).
NDArray Forward(const std::string& network, const std::vector<Param>& p, const NDArray& data, const NDArray& label) {
  NDArray x = data;
  if (network == "lenet") {
    const std::map<std::string, std::string> pool = {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}};
    x = InvokeOne("Convolution", {x, p[0].value, p[1].value}, {{"kernel", "(5, 5)"}, {"num_filter", "20"}});
    x = InvokeOne("Pooling", {Act(x, "tanh")}, pool);
    x = InvokeOne("Convolution", {x, p[2].value, p[3].value}, {{"kernel", "(5, 5)"}, {"num_filter", "50"}});
    x = InvokeOne("Pooling", {Act(x, "tanh")}, pool);
    x = Act(FullyConnected(InvokeOne("Flatten", {x}), p[4], p[5], 500), "tanh");
    x = FullyConnected(x, p[6], p[7], 10);
  } else {
    x = Act(FullyConnected(x, p[0], p[1], 128), "relu");
    x = Act(FullyConnected(x, p[2], p[3], 64), "relu");
    x = FullyConnected(x, p[4], p[5], 10);
  }
  return InvokeOne("SoftmaxOutput", {x, label});
}

// The Fashion-MNIST set `name` ("train", "t10k") in `dir`.
MNISTIter OpenSet(const std::string& dir, const std::string& name, const MNISTIterOptions& options) {
  return MNISTIter(dir + "/" + name + "-images-idx3-ubyte.gz", dir + "/" + name + "-labels-idx1-ubyte.gz", options);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train LeNet (or the MLP) on Fashion-MNIST imperatively with weft's autograd"};
  std::string network = "lenet", device = "cpu", data_dir = "/usr/share/datasets/fashion-mnist";
  int epochs = 10, batch_size = 100;
  float lr = 0.05f, momentum = 0.9f, wd = 0.0f, lr_factor = 0.1f;
  std::vector<int> lr_step_epochs{6};
  uint32_t seed = 0;
  size_t num_examples = 0;
  bool hybridize = false;
  app.add_option("--network", network, "lenet or mlp")->check(CLI::IsMember({"mlp", "lenet"}));
  app.add_option("--device", device, "device type of a loaded plugin (cpu, simdev, cuda, ...)");
  app.add_option("--epochs", epochs, "epochs to train")->check(CLI::Range(1, 9999));
  app.add_option("--batch-size", batch_size, "samples per step")->check(CLI::Range(1, 60000));
  app.add_option("--lr", lr, "learning rate");
  app.add_option("--momentum", momentum, "SGD momentum");
  app.add_option("--wd", wd, "weight decay");
  app.add_option("--lr-factor", lr_factor, "multiply the learning rate by this at each --lr-step-epochs epoch");
  app.add_option("--lr-step-epochs", lr_step_epochs, "epochs at which the learning rate drops")->delimiter(',');
  app.add_option("--seed", seed, "seed for initialisation and shuffling (as train_mnist's)");
  app.add_option("--data-dir", data_dir, "directory with the *-idx*-ubyte.gz files");
  app.add_option("--num-examples", num_examples, "train on the first N examples only (0 = all)");
  app.add_flag("--hybridize", hybridize, "run the network as one CachedOp (Gluon's hybridize) instead of op by op");
  CLI11_PARSE(app, argc, argv);

  try {
    const Context ctx = RequireDevices(device, 1).at(0);
    // Batches straight on the device; the training set shuffled anew each epoch.
    MNISTIterOptions train_options;
    train_options.batch_size = batch_size;
    train_options.flat = network == "mlp";
    train_options.seed = seed;
    train_options.context = ctx;
    train_options.max_samples = num_examples;
    train_options.reshuffle_each_epoch = true;
    MNISTIterOptions val_options = train_options;
    val_options.shuffle = false;
    val_options.max_samples = 0;
    MNISTIter train_iter = OpenSet(data_dir, "train", train_options), val_iter = OpenSet(data_dir, "t10k", val_options);

    std::vector<Param> params = MakeParams(network, ctx);
    Xavier init(Xavier::gaussian, Xavier::in, 2.0f);  // MXNet's fit.py, as train_mnist
    init.Seed(seed);
    for (Param& p : params) {
      init(p.name, &p.value);
      autograd::AttachGrad(&p.value);  // NDArray.attach_grad(): a zero buffer, grad_req write
    }
    auto opt = OptimizerRegistry::Create("sgd");
    opt->SetParam("lr", lr)->SetParam("wd", wd)->SetParam("momentum", momentum);
    opt->SetParam("rescale_grad", 1.0f / static_cast<float>(batch_size));
    opt->SetLRScheduler(EpochStepScheduler(lr_step_epochs, train_iter.num_batches(), lr_factor));

    // --hybridize: the same network as one graph; its inputs are data, the parameters, the label.
    std::unique_ptr<CachedOp> cached;
    if (hybridize) {
      const std::vector<std::pair<std::string, std::string>> flags = {{"static_alloc", "True"},
                                                                      {"static_shape", "True"}};
      cached = std::make_unique<CachedOp>(MnistNetwork(network), flags);
    }
    auto run = [&](const NDArray& data, const NDArray& label) {
      if (!cached) return Forward(network, params, data, label);
      std::vector<NDArray> in{data};
      for (const Param& p : params) in.push_back(p.value);
      in.push_back(label);
      return cached->Invoke(in).at(0);
    };

    std::printf("Training %s imperatively (%s) on %s, batch %d, %zu samples, sgd lr %g\n", network.c_str(),
                hybridize ? "one CachedOp" : "op by op", ctx.ToString().c_str(), batch_size, train_iter.num_samples(),
                static_cast<double>(lr));
    const BatchEndCallback progress = ProgressBar(train_iter.num_batches(), static_cast<size_t>(batch_size));
    Accuracy train_acc, val_acc;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      train_iter.BeforeFirst();
      train_acc.Reset();
      size_t nbatch = 0;
      while (train_iter.Next()) {
        const NDArray data = train_iter.GetData(), label = train_iter.GetLabel();
        NDArray out;
        {
          auto record = autograd::Record();  // with autograd.record():
          out = run(data, label);
        }
        autograd::Backward({out});  // loss.backward()
        for (size_t i = 0; i < params.size(); ++i)
          opt->Update(static_cast<int>(i), params[i].value, autograd::GetGrad(params[i].value));
        train_acc.Update(label, out);
        progress(BatchEndParam{epoch, ++nbatch, train_acc});
      }
      NDArray::WaitAll();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      val_iter.BeforeFirst();
      val_acc.Reset();
      while (val_iter.Next()) val_acc.Update(val_iter.GetLabel(), run(val_iter.GetData(), val_iter.GetLabel()));
      std::printf("Epoch[%d] Train-accuracy=%.4f Validation-accuracy=%.4f Speed=%.0f samples/s Time=%.1fs\n", epoch,
                  train_acc.Get(), val_acc.Get(),
                  static_cast<double>(train_acc.num_inst()) / (seconds > 0 ? seconds : 1), seconds);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_lenet_autograd: %s\n", e.what());
    return 1;
  }
}

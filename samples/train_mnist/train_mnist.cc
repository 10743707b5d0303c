// train_mnist — trains MXNet's MNIST networks (mlp, lenet) on Fashion-MNIST, data parallel over
// --num-devices devices of any loaded device type, with a KVStore summing the gradients and
// running the optimizer. Writes an MXNet-compatible checkpoint per epoch with --model-prefix and
// resumes from one with --load-epoch.
//
//   train_mnist --network lenet --device cpu --num-devices 2 --epochs 10 --model-prefix /tmp/lenet
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/networks.h"
#include "weft/initializer.h"
#include "weft/io.h"
#include "weft/kvstore.h"
#include "weft/metric.h"
#include "weft/optimizer.h"
#include "weft/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Duration(double s) {
  const int t = static_cast<int>(s + 0.5);
  return fmt::format("{:02d}:{:02d}", t / 60, t % 60);
}

// A progress display for one epoch: a redrawn bar on a terminal, a line every ~10% otherwise.
class Progress {
 public:
  Progress(int epoch, size_t total, size_t batch) : epoch_(epoch), total_(total), batch_(batch) {}
  void Step(size_t done) {
    const double elapsed = Seconds(Clock::now() - start_);
    const double rate = elapsed > 0 ? static_cast<double>(done * batch_) / elapsed : 0;
    const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
    if (tty_) {
      const int width = 30, filled = static_cast<int>(width * done / total_);
      std::printf("\rEpoch[%d] %5zu/%zu [%s%s] %8.0f samples/s ETA %s ", epoch_, done, total_,
                  std::string(static_cast<size_t>(filled), '=').c_str(),
                  std::string(static_cast<size_t>(width - filled), ' ').c_str(), rate, Duration(eta).c_str());
      std::fflush(stdout);
    } else if (done * 10 / total_ != last_decile_ && done < total_) {
      last_decile_ = done * 10 / total_;
      std::printf("Epoch[%d] Batch [%zu/%zu]\tSpeed: %.0f samples/sec\tETA %s\n", epoch_, done, total_, rate,
                  Duration(eta).c_str());
      std::fflush(stdout);
    }
  }
  void Finish() {
    if (tty_) std::printf("\r%*s\r", 90, "");
  }

 private:
  int epoch_;
  size_t total_, batch_;
  size_t last_decile_ = 0;
  bool tty_ = ::isatty(STDOUT_FILENO) != 0;
  Clock::time_point start_ = Clock::now();
};

// SIGINT asks the training loop to stop between steps, so a checkpoint being written is finished
// (a second SIGINT ends the process at once).
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void OnInterrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

// Parameters are checked for NaN/Inf this often (and at each epoch's end): a read of the weights.
constexpr size_t kNanCheckEvery = 100;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train MXNet's MNIST networks on Fashion-MNIST with weft"};
  std::string network = "mlp", device = "cpu", kvstore = "local", optimizer = "sgd", model_prefix;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int num_devices = 1, epochs = 10, batch_size = 100, load_epoch = 0;
  float lr = 0.05f, momentum = 0.9f, wd = 0.0f, lr_factor = 0.1f;
  std::vector<int> lr_step_epochs{6};
  uint32_t seed = 0;
  size_t num_examples = 0;
  bool replace_network = false, reset_optimizer = false, no_nan_check = false;
  app.add_option("--network", network, "mlp or lenet")->check(CLI::IsMember({"mlp", "lenet"}));
  app.add_option("--device", device, "device type of a loaded plugin (cpu, simdev, cuda, ...)");
  app.add_option("--num-devices", num_devices, "devices to train on, data parallel")->check(CLI::Range(1, 4096));
  app.add_option("--kvstore", kvstore, "local or device");
  app.add_option("--epochs", epochs, "epochs to train (in total, counting resumed ones)")->check(CLI::Range(1, 9999));
  app.add_option("--batch-size", batch_size, "samples per step, split over the devices")->check(CLI::Range(1, 60000));
  app.add_option("--lr", lr, "learning rate");
  app.add_option("--momentum", momentum, "momentum (sgd, nag)");
  app.add_option("--wd", wd, "weight decay");
  app.add_option("--lr-factor", lr_factor, "multiply the learning rate by this at each --lr-step-epochs epoch");
  app.add_option("--lr-step-epochs", lr_step_epochs, "epochs at which the learning rate drops (MXNet fit.py)")
      ->delimiter(',');
  app.add_option("--optimizer", optimizer, "sgd, nag, adam or rmsprop");
  app.add_option("--model-prefix", model_prefix, "checkpoint prefix: <prefix>-symbol.json, <prefix>-%04d.params");
  app.add_option("--load-epoch", load_epoch, "resume from the checkpoint of this epoch (needs --model-prefix)")
      ->check(CLI::Range(0, 9999));
  app.add_flag("--replace-network", replace_network,
               "allow --model-prefix to hold another network (its older params files then no longer load)");
  app.add_flag("--reset-optimizer", reset_optimizer,
               "resume with fresh optimizer states when the checkpoint has no .states file");
  app.add_flag("--no-nan-check", no_nan_check, "do not stop when a parameter becomes NaN or infinite");
  app.add_option("--seed", seed, "seed for initialisation and shuffling");
  app.add_option("--data-dir", data_dir, "directory with the *-idx*-ubyte.gz files");
  app.add_option("--num-examples", num_examples, "train on the first N examples only (0 = all)");
  CLI11_PARSE(app, argc, argv);

  try {
    using namespace weft;
    const int available = Runtime::Get().DeviceCount(device);
    WEFT_CHECK(available >= num_devices,
               "--device {} --num-devices {}: {} {} device(s) are loaded (weft-info lists the plugins)", device,
               num_devices, available, device);
    WEFT_CHECK(load_epoch == 0 || !model_prefix.empty(), "--load-epoch needs --model-prefix");
    WEFT_CHECK(load_epoch < epochs, "--load-epoch {} is not below --epochs {}: there is nothing to train", load_epoch,
               epochs);
    for (auto [name, v] : {std::pair{"--lr", lr}, {"--wd", wd}, {"--momentum", momentum}, {"--lr-factor", lr_factor}})
      WEFT_CHECK(std::isfinite(v), "{} must be a finite number, got {}", name, v);
    Symbol net = train::MnistNetwork(network);
    // Before any long work: a read-only directory or a prefix holding another network.
    if (!model_prefix.empty()) train::CheckCheckpointPrefix(model_prefix, net, replace_network);
    const std::string states_in = load_epoch > 0 ? train::StatesFile(model_prefix, load_epoch) : "";
    const bool load_states = load_epoch > 0 && std::filesystem::exists(states_in);
    WEFT_CHECK(load_epoch == 0 || load_states || reset_optimizer,
               "{} has no optimizer states ({} is missing); resuming would silently reset the optimizer: pass "
               "--reset-optimizer to resume with fresh states",
               train::ParamsFile(model_prefix, load_epoch), states_in);
    train::DataParallelOptions dp;
    dp.contexts.clear();
    for (int i = 0; i < num_devices; ++i) dp.contexts.emplace_back(device, i);
    dp.kvstore = kvstore;

    const bool flat = network == "mlp";
    const std::string d = data_dir + "/";
    MNISTIter train_iter(d + "train-images-idx3-ubyte.gz", d + "train-labels-idx1-ubyte.gz",
                         {.batch_size = batch_size,
                          .shuffle = true,
                          .flat = flat,
                          .seed = seed,
                          .max_samples = num_examples,
                          .reshuffle_each_epoch = true});
    MNISTIter val_iter(d + "t10k-images-idx3-ubyte.gz", d + "t10k-labels-idx1-ubyte.gz",
                       {.batch_size = batch_size, .shuffle = false, .flat = flat});

    const Shape data_shape = flat ? Shape(batch_size, 784) : Shape(batch_size, 1, 28, 28);
    train::DataParallelTrainer trainer(net, data_shape, dp);
    if (load_epoch > 0) {
      train::Checkpoint ck = train::LoadCheckpoint(model_prefix, load_epoch);
      train::RequireAllParams(trainer.param_names(), trainer.aux_names(), ck.arg_params, ck.aux_params,
                              train::ParamsFile(model_prefix, load_epoch));
      trainer.SetParams(ck.arg_params, ck.aux_params);
      std::printf("Loaded %s (epoch %d)\n", train::ParamsFile(model_prefix, load_epoch).c_str(), load_epoch);
    } else {
      Xavier init(Xavier::gaussian, Xavier::in, 2.0f);  // MXNet's fit.py
      init.Seed(seed);
      trainer.InitParams(init);
    }
    auto opt = OptimizerRegistry::Create(optimizer);
    opt->SetParam("lr", lr)->SetParam("wd", wd)->SetParam("rescale_grad", 1.0f / static_cast<float>(batch_size));
    if (optimizer == "sgd" || optimizer == "nag") opt->SetParam("momentum", momentum);
    if (!lr_step_epochs.empty() && lr_factor != 1.0f) {
      // As MXNet's fit.py: steps in updates; the optimizer's count resumes from the loaded states.
      std::vector<int> steps;
      for (int e : lr_step_epochs) steps.push_back(e * static_cast<int>(train_iter.num_batches()));
      opt->SetLRScheduler(std::make_unique<MultiFactorScheduler>(steps, lr_factor));
    }
    trainer.SetOptimizer(std::move(opt));
    if (load_states) trainer.kvstore().LoadOptimizerStates(states_in);
    std::signal(SIGINT, OnInterrupt);
    // Stops training naming where a parameter became NaN or infinite (MXNet users add a Monitor).
    auto check_finite = [&](int epoch, size_t batch) {
      if (no_nan_check) return;
      const std::string bad = trainer.FirstNonFiniteParam();
      WEFT_CHECK(bad.empty(),
                 "epoch {} batch {}: parameter '{}' became NaN or infinite; training stopped (no checkpoint of this "
                 "epoch was written). Lower --lr, or pass --no-nan-check to continue anyway",
                 epoch, batch, bad);
    };

    std::printf("Training %s on %d %s device(s), kvstore %s, batch %d, %zu samples, %s lr %g\n", network.c_str(),
                num_devices, device.c_str(), kvstore.c_str(), batch_size, train_iter.num_samples(), optimizer.c_str(),
                static_cast<double>(lr));
    for (int epoch = load_epoch; epoch < epochs; ++epoch) {
      Accuracy train_acc, val_acc;
      Progress progress(epoch, train_iter.num_batches(), static_cast<size_t>(batch_size));
      const auto t0 = Clock::now();
      size_t done = 0;
      train_iter.Reset();
      while (!g_interrupted && train_iter.Next()) {
        DataBatch b = train_iter.GetDataBatch();
        trainer.TrainStep(b.data, b.label);
        trainer.UpdateMetric(train_acc, b.label);
        progress.Step(++done);
        if (done % kNanCheckEvery == 0) check_finite(epoch, done);
      }
      NDArray::WaitAll();
      if (g_interrupted) {
        const std::string last = model_prefix.empty() ? std::string("none (no --model-prefix)")
                                 : epoch == 0         ? std::string("none yet")
                                                      : train::ParamsFile(model_prefix, epoch);
        std::printf("\nInterrupted in epoch %d; the last complete checkpoint: %s\n", epoch, last.c_str());
        return 130;
      }
      check_finite(epoch, done);
      const double train_s = Seconds(Clock::now() - t0);
      progress.Finish();
      val_iter.Reset();
      while (val_iter.Next()) {
        DataBatch b = val_iter.GetDataBatch();
        trainer.Forward(b.data);
        trainer.UpdateMetric(val_acc, b.label);
      }
      std::printf("Epoch[%d] Train-accuracy=%.4f Validation-accuracy=%.4f Speed=%.0f samples/s Time=%.1fs\n", epoch,
                  static_cast<double>(train_acc.Get()), static_cast<double>(val_acc.Get()),
                  static_cast<double>(done) * batch_size / train_s, train_s);
      std::fflush(stdout);
      if (!model_prefix.empty()) {
        train::SaveCheckpointOptions save;
        save.replace_network = replace_network;
        save.write_states = [&](const std::string& file) { trainer.kvstore().SaveOptimizerStates(file, true); };
        train::SaveCheckpoint(model_prefix, epoch + 1, net, trainer.ArgParams(), trainer.AuxParams(), save);
        std::printf("Saved checkpoint to \"%s\"\n", train::ParamsFile(model_prefix, epoch + 1).c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_mnist: %s\n", e.what());
    return 1;
  }
}

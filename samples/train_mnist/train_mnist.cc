// train_mnist — trains MXNet's MNIST networks (mlp, lenet) on Fashion-MNIST, data parallel over
// --num-devices devices of any loaded device type, with a KVStore summing the gradients and
// running the optimizer (weft::Module). Writes an MXNet-compatible checkpoint per epoch with
// --model-prefix and resumes from one with --load-epoch.
//
//   train_mnist --network lenet --device cpu --num-devices 2 --epochs 10 --model-prefix /tmp/lenet
#include <CLI/CLI.hpp>
#include <cstdio>

#include "weft/image_iter.h"
#include "weft/interrupt.h"
#include "weft/module.h"
#include "weft/networks.h"

int main(int argc, char** argv) {
  CLI::App app{"Train MXNet's MNIST networks on Fashion-MNIST with weft"};
  std::string network = "mlp", device = "cpu", kvstore = "local", optimizer = "sgd", model_prefix;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int num_devices = 1, epochs = 10, batch_size = 100, load_epoch = 0;
  float lr = 0.05f, momentum = 0.9f, wd = 0.0f, lr_factor = 0.1f;
  std::vector<int> lr_step_epochs{6};
  uint32_t seed = 0;
  size_t num_examples = 0;
  app.add_option("--network", network, "mlp or lenet")->check(CLI::IsMember({"mlp", "lenet"}));
  app.add_option("--device", device, "device type of a loaded plugin (cpu, simdev, cuda, ...)");
  app.add_option("--num-devices", num_devices, "devices to train on, data parallel")->check(CLI::Range(1, 4096));
  app.add_option("--kvstore", kvstore,
                 "local or device (one process); dist_sync or dist_device_sync (Gloo), dist_async (parameter "
                 "servers: weft-launch -s S) (one worker per process, started by weft-launch; each reads its share "
                 "of the data)");
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
  app.add_option("--seed", seed, "seed for initialisation and shuffling");
  app.add_option("--data-dir", data_dir, "directory with the *-idx*-ubyte.gz files");
  app.add_option("--num-examples", num_examples, "train on the first N examples only (0 = all)");
  std::string train_rec, val_rec;
  int decode_threads = 1;
  app.add_option("--train-rec", train_rec, "read the training images from <prefix>.rec/.idx instead of --data-dir");
  app.add_option("--val-rec", val_rec, "read the validation images from <prefix>.rec/.idx")->needs("--train-rec");
  app.add_option("--decode-threads", decode_threads, "image decoding threads with --train-rec")
      ->check(CLI::Range(1, 64));
  bool decode_on_engine = false;
  app.add_flag("--decode-on-engine", decode_on_engine,
               "with --train-rec: decode each batch as an engine operation between the training's operations, on "
               "the compute threads (the decoding threads then only read the records)");
  bool replace_network = false, reset_optimizer = false, no_nan_check = false;
  app.add_flag("--replace-network", replace_network, "let --model-prefix replace checkpoints of another network");
  app.add_flag("--reset-optimizer", reset_optimizer, "resume with fresh optimizer states (needed without .states)");
  app.add_flag("--no-nan-check", no_nan_check, "do not stop when a parameter becomes NaN or infinite");
  CLI11_PARSE(app, argc, argv);

  try {
    using namespace weft;
    // Before any long work: missing devices, a read-only directory, a prefix of another network.
    const std::vector<Context> contexts = RequireDevices(device, num_devices);
    const Symbol net = MnistNetwork(network);
    CheckTrainingCheckpoints(model_prefix, load_epoch, epochs, net, replace_network);

    // The store first: a dist store joins the job, which gives this worker's share of the data.
    std::unique_ptr<KVStore> kv = KVStore::Create(kvstore);
    const int rank = kv->rank(), workers = kv->num_workers();
    const bool flat = network == "mlp";
    const std::string d = data_dir + "/";
    std::unique_ptr<DataIter> train_iter, val_iter;
    size_t train_samples = 0, train_batches = 0;
    if (train_rec.empty()) {
      auto train = std::make_unique<MNISTIter>(d + "train-images-idx3-ubyte.gz", d + "train-labels-idx1-ubyte.gz",
                                               MNISTIterOptions{.batch_size = batch_size,
                                                                .shuffle = true,
                                                                .flat = flat,
                                                                .seed = seed,
                                                                .max_samples = num_examples,
                                                                .reshuffle_each_epoch = true,
                                                                .num_parts = workers,
                                                                .part_index = rank});
      train_samples = train->num_samples();
      train_batches = train->num_batches();
      train_iter = std::move(train);
      val_iter =
          std::make_unique<MNISTIter>(d + "t10k-images-idx3-ubyte.gz", d + "t10k-labels-idx1-ubyte.gz",
                                      MNISTIterOptions{.batch_size = batch_size, .shuffle = false, .flat = flat});
    } else {
      if (num_examples != 0) throw Error("--num-examples works with the idx files only, not with --train-rec");
      // Pixels scaled to [0, 1] as MNISTIter does; a new order every epoch.
      ImageRecordIterOptions o;
      o.data_shape = Shape(1, 28, 28);
      o.batch_size = batch_size;
      o.scale = 1.0f / 255;
      o.preprocess_threads = decode_threads;
      o.decode_on_engine = decode_on_engine;
      o.num_parts = workers;
      o.part_index = rank;
      o.path_imgrec = train_rec + ".rec";
      o.path_imgidx = train_rec + ".idx";
      o.shuffle = true;
      o.seed = static_cast<int>(seed);
      auto train = std::make_unique<ImageRecordIter>(o);
      train_samples = train->num_records();
      train_batches = train->num_batches();
      train_iter = std::move(train);
      if (!val_rec.empty()) {
        o.path_imgrec = val_rec + ".rec";
        o.path_imgidx = val_rec + ".idx";
        o.shuffle = false;
        o.num_parts = 1;
        o.part_index = 0;
        val_iter = std::make_unique<ImageRecordIter>(o);
      }
    }

    const bool resume = load_epoch > 0;
    Module mod = resume
                     ? Module::Load(model_prefix, load_epoch, !reset_optimizer, {"data"}, {"softmax_label"}, contexts)
                     : Module(net, {"data"}, {"softmax_label"}, contexts);
    // FullyConnected flattens (batch, 1, 28, 28) as MXNet's does, so the MLP takes the images too.
    const Shape data_shape = train_rec.empty() && flat ? Shape(batch_size, 784) : Shape(batch_size, 1, 28, 28);
    mod.Bind({{"data", data_shape}}, {{"softmax_label", Shape(batch_size)}});
    if (resume) std::printf("Loaded %s (epoch %d)\n", mod.last_checkpoint().c_str(), load_epoch);
    Xavier init(Xavier::gaussian, Xavier::in, 2.0f);  // MXNet's fit.py; a loaded module keeps its parameters
    init.Seed(seed);
    mod.InitParams(init);
    auto opt = OptimizerRegistry::Create(optimizer);  // its SetParam refuses NaN/Inf values
    opt->SetParam("lr", lr)->SetParam("wd", wd)->SetParam("rescale_grad", DefaultRescaleGrad(*kv, batch_size));
    if (optimizer == "sgd" || optimizer == "nag") opt->SetParam("momentum", momentum);
    opt->SetLRScheduler(EpochStepScheduler(lr_step_epochs, train_batches, lr_factor));
    mod.InitOptimizer(std::move(kv), std::move(opt));

    std::printf("Training %s on %d %s device(s), kvstore %s (worker %d of %d), batch %d, %zu samples, %s lr %g\n",
                network.c_str(), num_devices, device.c_str(), kvstore.c_str(), rank, workers, batch_size, train_samples,
                optimizer.c_str(), static_cast<double>(lr));
    FitOptions fit;
    fit.begin_epoch = load_epoch;
    fit.num_epoch = epochs;
    fit.batch_end_callback = ProgressBar(train_batches, static_cast<size_t>(batch_size));
    fit.nan_check_every = no_nan_check ? 0 : 100;
    const EpochEndCallback log = LogEpoch(), save = DoCheckpoint(model_prefix, 1, /*save_optimizer_states=*/true);
    fit.epoch_end_callback = [&](const EpochEndParam& p) {
      log(p);
      if (!model_prefix.empty()) save(p);  // on worker 0 of a dist store
    };
    // Ctrl-C or SIGTERM (weft-launch stopping the job) stops between steps (a checkpoint in
    // progress is finished; checkpoint files are replaced atomically).
    const InterruptGuard interrupt;
    fit.stop_requested = interrupt.StopRequested();
    if (mod.Fit(*train_iter, val_iter.get(), fit)) return 0;
    const std::string& last = mod.last_checkpoint();
    std::printf("\nInterrupted (signal %d); the last complete checkpoint: %s\n", interrupt.signal_number(),
                last.empty() ? "none" : last.c_str());
    if (workers > 1) {
      // The other workers may have stopped at another step, so this worker's pending collectives
      // would wait for them until the op deadline: leave at once (the checkpoint is complete; the
      // peers see this process go and stop too).
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(128 + interrupt.signal_number());
    }
    return 128 + interrupt.signal_number();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_mnist: %s\n", e.what());
    return 1;
  }
}

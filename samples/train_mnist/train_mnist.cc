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

namespace {

// The command line (MXNet's example/image-classification/train_mnist.py and fit.py names).
struct Args {
  std::string network = "mlp", device = "cpu", kvstore = "local", optimizer = "sgd", model_prefix;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int num_devices = 1, epochs = 10, batch_size = 100, load_epoch = 0;
  float lr = 0.05f, momentum = 0.9f, wd = 0.0f, lr_factor = 0.1f;
  std::vector<int> lr_step_epochs{6};
  uint32_t seed = 0;
  size_t num_examples = 0;
  std::string train_rec, val_rec;
  int decode_threads = 1;
  bool decode_on_engine = false, replace_network = false, reset_optimizer = false, no_nan_check = false;
};

void AddOptions(CLI::App& app, Args& a) {
  app.add_option("--network", a.network, "mlp or lenet")->check(CLI::IsMember({"mlp", "lenet"}));
  app.add_option("--device", a.device, "device type of a loaded plugin (cpu, simdev, cuda, ...)");
  app.add_option("--num-devices", a.num_devices, "devices to train on, data parallel")->check(CLI::Range(1, 4096));
  app.add_option("--kvstore", a.kvstore,
                 "local or device (one process); dist_sync or dist_device_sync (Gloo), dist_async (parameter "
                 "servers: weft-launch -s S) (one worker per process, started by weft-launch; each reads its share "
                 "of the data)");
  app.add_option("--epochs", a.epochs, "epochs to train (in total, counting resumed ones)")->check(CLI::Range(1, 9999));
  app.add_option("--batch-size", a.batch_size, "samples per step, split over the devices")->check(CLI::Range(1, 60000));
  app.add_option("--lr", a.lr, "learning rate");
  app.add_option("--momentum", a.momentum, "momentum (sgd, nag)");
  app.add_option("--wd", a.wd, "weight decay");
  app.add_option("--lr-factor", a.lr_factor, "multiply the learning rate by this at each --lr-step-epochs epoch");
  app.add_option("--lr-step-epochs", a.lr_step_epochs, "epochs at which the learning rate drops (MXNet fit.py)")
      ->delimiter(',');
  app.add_option("--optimizer", a.optimizer, "sgd, nag, adam or rmsprop");
  app.add_option("--model-prefix", a.model_prefix, "checkpoint prefix: <prefix>-symbol.json, <prefix>-%04d.params");
  app.add_option("--load-epoch", a.load_epoch, "resume from the checkpoint of this epoch (needs --model-prefix)")
      ->check(CLI::Range(0, 9999));
  app.add_option("--seed", a.seed, "seed for initialisation and shuffling");
  app.add_option("--data-dir", a.data_dir, "directory with the *-idx*-ubyte.gz files");
  app.add_option("--num-examples", a.num_examples, "train on the first N examples only (0 = all)");
  app.add_option("--train-rec", a.train_rec, "read the training images from <prefix>.rec/.idx instead of --data-dir");
  app.add_option("--val-rec", a.val_rec, "read the validation images from <prefix>.rec/.idx")->needs("--train-rec");
  app.add_option("--decode-threads", a.decode_threads, "image decoding threads with --train-rec")
      ->check(CLI::Range(1, 64));
  app.add_flag("--decode-on-engine", a.decode_on_engine,
               "with --train-rec: decode each batch as an engine operation between the training's operations, on "
               "the compute threads (the decoding threads then only read the records)");
  app.add_flag("--replace-network", a.replace_network, "let --model-prefix replace checkpoints of another network");
  app.add_flag("--reset-optimizer", a.reset_optimizer, "resume with fresh optimizer states (needed without .states)");
  app.add_flag("--no-nan-check", a.no_nan_check, "do not stop when a parameter becomes NaN or infinite");
}

// The training and validation iterators; this worker (`rank` of `workers`) reads its share of the
// training data.
struct Data {
  std::unique_ptr<weft::DataIter> train, val;
  size_t train_samples = 0, train_batches = 0;
};

Data MakeData(const Args& a, int rank, int workers) {
  using namespace weft;
  Data data;
  const bool flat = a.network == "mlp";
  const std::string d = a.data_dir + "/";
  if (a.train_rec.empty()) {
    auto train = std::make_unique<MNISTIter>(d + "train-images-idx3-ubyte.gz", d + "train-labels-idx1-ubyte.gz",
                                             MNISTIterOptions{.batch_size = a.batch_size,
                                                              .shuffle = true,
                                                              .flat = flat,
                                                              .seed = a.seed,
                                                              .max_samples = a.num_examples,
                                                              .reshuffle_each_epoch = true,
                                                              .num_parts = workers,
                                                              .part_index = rank});
    data.train_samples = train->num_samples();
    data.train_batches = train->num_batches();
    data.train = std::move(train);
    data.val =
        std::make_unique<MNISTIter>(d + "t10k-images-idx3-ubyte.gz", d + "t10k-labels-idx1-ubyte.gz",
                                    MNISTIterOptions{.batch_size = a.batch_size, .shuffle = false, .flat = flat});
    return data;
  }
  if (a.num_examples != 0) throw Error("--num-examples works with the idx files only, not with --train-rec");
  // Pixels scaled to [0, 1] as MNISTIter does; a new order every epoch.
  ImageRecordIterOptions o;
  o.data_shape = Shape(1, 28, 28);
  o.batch_size = a.batch_size;
  o.scale = 1.0f / 255;
  o.preprocess_threads = a.decode_threads;
  o.decode_on_engine = a.decode_on_engine;
  o.num_parts = workers;
  o.part_index = rank;
  o.path_imgrec = a.train_rec + ".rec";
  o.path_imgidx = a.train_rec + ".idx";
  o.shuffle = true;
  o.seed = static_cast<int>(a.seed);
  auto train = std::make_unique<ImageRecordIter>(o);
  data.train_samples = train->num_records();
  data.train_batches = train->num_batches();
  data.train = std::move(train);
  if (!a.val_rec.empty()) {
    o.path_imgrec = a.val_rec + ".rec";
    o.path_imgidx = a.val_rec + ".idx";
    o.shuffle = false;
    o.num_parts = 1;
    o.part_index = 0;
    data.val = std::make_unique<ImageRecordIter>(o);
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train MXNet's MNIST networks on Fashion-MNIST with weft"};
  Args a;
  AddOptions(app, a);
  CLI11_PARSE(app, argc, argv);

  try {
    using namespace weft;
    // Before any long work: missing devices, a read-only directory, a prefix of another network.
    const std::vector<Context> contexts = RequireDevices(a.device, a.num_devices);
    const Symbol net = MnistNetwork(a.network);
    CheckTrainingCheckpoints(a.model_prefix, a.load_epoch, a.epochs, net, a.replace_network);

    // The store first: a dist store joins the job, which gives this worker's share of the data.
    std::unique_ptr<KVStore> kv = KVStore::Create(a.kvstore);
    const int rank = kv->rank(), workers = kv->num_workers();
    Data data = MakeData(a, rank, workers);

    const bool resume = a.load_epoch > 0;
    Module mod =
        resume ? Module::Load(a.model_prefix, a.load_epoch, !a.reset_optimizer, {"data"}, {"softmax_label"}, contexts)
               : Module(net, {"data"}, {"softmax_label"}, contexts);
    // FullyConnected flattens (batch, 1, 28, 28) as MXNet's does, so the MLP takes the images too.
    const Shape data_shape =
        a.train_rec.empty() && a.network == "mlp" ? Shape(a.batch_size, 784) : Shape(a.batch_size, 1, 28, 28);
    mod.Bind({{"data", data_shape}}, {{"softmax_label", Shape(a.batch_size)}});
    if (resume) std::printf("Loaded %s (epoch %d)\n", mod.last_checkpoint().c_str(), a.load_epoch);
    Xavier init(Xavier::gaussian, Xavier::in, 2.0f);  // MXNet's fit.py; a loaded module keeps its parameters
    init.Seed(a.seed);
    mod.InitParams(init);
    auto opt = OptimizerRegistry::Create(a.optimizer);  // its SetParam refuses NaN/Inf values
    opt->SetParam("lr", a.lr)->SetParam("wd", a.wd)->SetParam("rescale_grad", DefaultRescaleGrad(*kv, a.batch_size));
    if (a.optimizer == "sgd" || a.optimizer == "nag") opt->SetParam("momentum", a.momentum);
    opt->SetLRScheduler(EpochStepScheduler(a.lr_step_epochs, data.train_batches, a.lr_factor));
    mod.InitOptimizer(std::move(kv), std::move(opt));

    std::printf("Training %s on %d %s device(s), kvstore %s (worker %d of %d), batch %d, %zu samples, %s lr %g\n",
                a.network.c_str(), a.num_devices, a.device.c_str(), a.kvstore.c_str(), rank, workers, a.batch_size,
                data.train_samples, a.optimizer.c_str(), static_cast<double>(a.lr));
    FitOptions fit;
    fit.begin_epoch = a.load_epoch;
    fit.num_epoch = a.epochs;
    fit.batch_end_callback = ProgressBar(data.train_batches, static_cast<size_t>(a.batch_size));
    fit.nan_check_every = a.no_nan_check ? 0 : 100;
    const EpochEndCallback log = LogEpoch(), save = DoCheckpoint(a.model_prefix, 1, /*save_optimizer_states=*/true);
    fit.epoch_end_callback = [&](const EpochEndParam& p) {
      log(p);
      if (!a.model_prefix.empty()) save(p);  // on worker 0 of a dist store
    };
    // Ctrl-C or SIGTERM (weft-launch stopping the job) stops between steps (a checkpoint in
    // progress is finished; checkpoint files are replaced atomically).
    const InterruptGuard interrupt;
    fit.stop_requested = interrupt.StopRequested();
    if (mod.Fit(*data.train, data.val.get(), fit)) return 0;
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

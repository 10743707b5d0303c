// weft — Module: train, score and run one symbol on one or more devices, after MXNet's
// mx.mod.Module (python/mxnet/module/module.py) on one DataParallelExecutorGroup
// (weft/executor_group.h): the batch is split over the devices (MXNet's _split_input_slice),
// gradients are summed and the optimizer runs in a KVStore ("local" or "device"), whose updated
// weights are pulled back into every device.
//
//   Module mod(net, {"data"}, {"softmax_label"}, {Context::cpu(0), Context::cpu(1)});
//   mod.Bind({{"data", Shape(100, 784)}}, {{"softmax_label", Shape(100)}});
//   mod.InitParams(Xavier(Xavier::gaussian, Xavier::in, 2.0f));
//   mod.InitOptimizer("local", OptimizerRegistry::Create("sgd"));
//   mod.Fit(train_iter, &val_iter, {.num_epoch = 10, .batch_end_callback = ProgressBar(...)});
//   mod.SaveCheckpoint("/tmp/mlp", 10, /*save_optimizer_states=*/true);
//
//   Module loaded = Module::Load("/tmp/mlp", 10);   // then Bind(for_training=false) + Predict
//
// State machine (as MXNet's): Bind, then InitParams (or SetParams), then InitOptimizer for
// training. Calling a step out of order throws weft::Error saying which step is missing.
// Parameters are the arguments that are neither data nor labels; their keys in the KVStore are
// their indices in that order, and pushes/pulls use priority -index (the first layers, needed
// first by the next forward pass, are updated first, as in MXNet).
//
// Thread-safety: a Module belongs to one thread. Errors: weft::Error with the name of what is
// wrong (unknown data name, shape mismatch, missing parameter, ...).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/executor_group.h"
#include "weft/export.h"
#include "weft/initializer.h"
#include "weft/io.h"
#include "weft/kvstore.h"
#include "weft/lr_scheduler.h"
#include "weft/metric.h"
#include "weft/model.h"
#include "weft/monitor.h"
#include "weft/optimizer.h"
#include "weft/symbol.h"

namespace weft {

class Module;

/// What a batch-end callback sees (MXNet's BatchEndParam): the epoch, the batches done in it
/// (1 after the first) and the training metric so far.
struct BatchEndParam {
  int epoch;
  size_t nbatch;
  const EvalMetric& eval_metric;
};
using BatchEndCallback = std::function<void(const BatchEndParam&)>;

/// What an epoch-end callback sees: the epoch just finished, its training metric, the
/// validation metric (nullptr without validation data), the samples trained on and the training
/// time in seconds (validation excluded), and the module (to save a checkpoint, read params).
struct EpochEndParam {
  int epoch;
  const EvalMetric& train_metric;
  const EvalMetric* eval_metric;
  size_t num_samples;
  double train_seconds;
  Module& module;
};
using EpochEndCallback = std::function<void(const EpochEndParam&)>;

/// Options of Module::Fit (MXNet's fit arguments that apply).
struct FitOptions {
  /// Epochs [begin_epoch, num_epoch) are trained; begin_epoch > 0 when resuming.
  int begin_epoch = 0;
  int num_epoch = 1;
  /// Metric for training and validation: "accuracy", "top_k_accuracy_<k>" or "ce".
  std::string eval_metric = "accuracy";
  /// Used only by the steps Fit has to do itself: InitParams when no parameters are set yet
  /// (nullptr = Uniform(0.01), MXNet's default), InitOptimizer when none is installed (kvstore,
  /// optimizer name, and parameters set through Optimizer::SetParamString; rescale_grad
  /// defaults to 1/batch).
  Initializer* initializer = nullptr;
  std::string kvstore = "local";
  std::string optimizer = "sgd";
  std::map<std::string, std::string> optimizer_params;
  BatchEndCallback batch_end_callback;
  EpochEndCallback epoch_end_callback;
  /// Every this many batches of an epoch, and at each epoch's end before validation and the
  /// epoch-end callback, Fit stops with a weft::Error naming the epoch, the batch and the first
  /// parameter that became NaN or infinite (Module::FirstNonFiniteParam), so no checkpoint of
  /// that epoch is written. Each check reads every weight to the host; 0 = no checks.
  size_t nan_check_every = 0;
  /// Asked before every batch (e.g. a flag a SIGINT handler sets; it may be called often, keep
  /// it cheap): when it returns true, Fit returns false after the step in progress, without
  /// validating or calling the epoch-end callback for the unfinished epoch. Empty = never stop.
  std::function<bool()> stop_requested;
};

class WEFT_API Module {
 public:
  /// `data_names` / `label_names`: the symbol's arguments fed from batches (at least one data
  /// input; DataBatch, Fit, Score and Predict feed one data input and at most one label, the
  /// vector form of Forward any number); every other argument is a parameter.
  /// `contexts`: one executor each, data parallel; `work_load_list`: relative share of the batch
  /// per context (empty = equal). Throws weft::Error when a name is not an argument of the
  /// symbol or no data name is given.
  explicit Module(Symbol symbol, std::vector<std::string> data_names = {"data"},
                  std::vector<std::string> label_names = {"softmax_label"},
                  std::vector<Context> contexts = {Context::cpu(0)}, std::vector<double> work_load_list = {});
  ~Module();
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;

  /// MXNet's Module.load: the checkpoint <prefix>-symbol.json + <prefix>-%04d.params (weft's
  /// or MXNet's) as a module whose parameters are set at Bind; with load_optimizer_states,
  /// <prefix>-%04d.states is loaded at InitOptimizer; it must then exist (a weft::Error names the
  /// missing file: resuming without states would silently reset the optimizer; pass
  /// load_optimizer_states=false to resume with fresh states on purpose).
  static Module Load(const std::string& prefix, int epoch, bool load_optimizer_states = false,
                     std::vector<std::string> data_names = {"data"},
                     std::vector<std::string> label_names = {"softmax_label"},
                     std::vector<Context> contexts = {Context::cpu(0)});

  /// Binds the executors for full-batch shapes (axis 0 = batch, split over the devices).
  /// `label_shapes` may be empty for prediction (labels are then fed zeros where the symbol needs
  /// them). for_training=false allocates no gradients. A second Bind is ignored unless
  /// force_rebind (parameters are kept). `shared_module` (MXNet's bind(shared_module=...), what
  /// BucketingModule does per bucket): a bound module whose parameters, gradients, aux states
  /// and memory pool this one uses (DataParallelExecutorGroup's shared_group); it must outlive
  /// this module, run on the same contexts with the same parameter shapes, and the two must not
  /// run at once; this module's parameters count as initialised when the shared module's are.
  /// Throws weft::Error for names that are not data/labels, an unbound shared module, or as
  /// Executor::SimpleBind.
  void Bind(const std::map<std::string, Shape>& data_shapes, const std::map<std::string, Shape>& label_shapes = {},
            bool for_training = true, bool force_rebind = false, Module* shared_module = nullptr);
  /// Initialises every parameter and aux state with `init` (by name), except those found in
  /// arg_params / aux_params, which are copied. allow_missing=false makes a parameter missing
  /// from non-empty maps an error. Without force_init a second call does nothing.
  void InitParams(Initializer& init, const std::map<std::string, NDArray>& arg_params = {},
                  const std::map<std::string, NDArray>& aux_params = {}, bool allow_missing = false,
                  bool force_init = false);
  /// Sets parameters from maps (every parameter must be present unless allow_missing; names that
  /// are not parameters are an error unless allow_extra).
  void SetParams(const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params,
                 bool allow_missing = false, bool allow_extra = false);
  /// Parameters and aux states, copied to cpu(0) (averaged over devices, MXNet's get_params).
  std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>> GetParams() const;

  /// Creates the KVStore `kvstore` ("local", "device") holding the current weights, with
  /// `optimizer` running in it (used as given: set its rescale_grad, usually 1/batch, yourself).
  /// Loads the optimizer states of Module::Load(load_optimizer_states).
  /// Without force_init a second call does nothing.
  void InitOptimizer(const std::string& kvstore, std::unique_ptr<Optimizer> optimizer, bool force_init = false);
  /// As above with a store the caller created (e.g. a dist store created early to learn this
  /// worker's rank and num_workers; it must hold no keys yet). In a dist store rank 0's weights
  /// win (KVStore::Init). Throws weft::Error when `kv` is null.
  void InitOptimizer(std::unique_ptr<KVStore> kv, std::unique_ptr<Optimizer> optimizer, bool force_init = false);

  /// Feeds `batch` (data, and label when bound with labels) and runs forward. Throws weft::Error
  /// for a module with several data inputs or labels (use the vector form).
  void Forward(const DataBatch& batch, bool is_train);
  /// MXNet's forward with a batch of several inputs: `data` in data_names order, `labels` in
  /// label_names order (all of them, or none for prediction), each with the full-batch shape
  /// given at Bind. Throws weft::Error for other counts or shapes.
  void Forward(const std::vector<NDArray>& data, const std::vector<NDArray>& labels, bool is_train);
  /// Backward on every device (after Forward(is_train=true)).
  void Backward();
  /// Pushes the gradients to the KVStore and pulls the updated weights (returns once pushed).
  void Update();
  /// Updates `metric` with the outputs of the last Forward against `labels` (full batch).
  void UpdateMetric(EvalMetric& metric, const NDArray& labels) const;
  /// MXNet's update_metric with several labels: label i against output i (full batch each).
  /// Throws weft::Error when there are more labels than outputs.
  void UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const;
  /// The outputs of the last Forward, merged over devices on cpu(0) (batch rows in order).
  std::vector<NDArray> GetOutputs() const;
  /// MXNet's install_monitor: installs `monitor` on every device's executor (Monitor::Install).
  /// Throws weft::Error before Bind.
  void InstallMonitor(Monitor& monitor);

  /// Trains on `train_data` for options.num_epoch epochs (see FitOptions), validating on
  /// `eval_data` after each epoch when given. Binds / initialises what is not yet done. Returns
  /// true when every epoch was trained, false when options.stop_requested stopped it. Throws
  /// weft::Error for a parameter that became NaN/Inf (options.nan_check_every) or
  /// begin_epoch > num_epoch.
  bool Fit(DataIter& train_data, DataIter* eval_data, const FitOptions& options = {});
  /// Runs forward over at most num_batch batches (0 = all) of `data` (reset first) and returns
  /// the metric value. Batch n's forward is queued before the metric reads batch n-1 (from
  /// copies of its labels and outputs, queued behind its forward), so the device does not wait
  /// for the host between batches; the metric sees every batch once, in order.
  float Score(DataIter& data, EvalMetric& metric, size_t num_batch = 0);
  /// Forward over at most num_batch batches (0 = all) of `data`; the first output of every
  /// batch, concatenated on cpu(0) (rows in iteration order, padding removed). Reads batch n-1's
  /// output back while batch n runs, as Score does.
  NDArray Predict(DataIter& data, size_t num_batch = 0);

  /// The name of the first parameter, then aux state (param_names(), aux_names() order), on the
  /// first device holding a NaN or an infinity; "" when all are finite. Waits for pending
  /// updates and copies every array to the host (one read of the weights), so call it every so
  /// many steps, not every step. Arrays whose dtype is not float32 are skipped. Throws
  /// weft::Error before Bind.
  std::string FirstNonFiniteParam() const;

  /// MXNet's save_checkpoint: <prefix>-symbol.json, <prefix>-%04d.params and, with
  /// save_optimizer_states, <prefix>-%04d.states (all written atomically).
  void SaveCheckpoint(const std::string& prefix, int epoch, bool save_optimizer_states = false) const;
  /// The params file this module last saved completely (SaveCheckpoint) or was loaded from
  /// (Module::Load); "" when neither. What to resume from after an interrupted Fit.
  const std::string& last_checkpoint() const { return last_checkpoint_; }

  const Symbol& symbol() const { return symbol_; }
  const std::vector<std::string>& param_names() const { return param_names_; }
  const std::vector<std::string>& aux_names() const { return aux_names_; }
  bool binded() const { return group_ != nullptr; }
  bool params_initialized() const { return params_initialized_; }
  bool optimizer_initialized() const { return kv_ != nullptr; }
  /// The KVStore of InitOptimizer. Throws weft::Error before it.
  KVStore& kvstore() const;
  /// The executor group of Bind. Throws weft::Error before it.
  DataParallelExecutorGroup& exec_group() const;

 private:
  void CheckBound(const char* what) const;
  /// Feeds the batch to the executors; `in_place` reads it where it is (see
  /// DataParallelExecutorGroup::LoadDataBatch), which Fit's own loop may do; otherwise the
  /// group's default applies (in place only for a module bound without training).
  void LoadBatch(const std::vector<NDArray>& data, const std::vector<NDArray>& labels, bool in_place);
  /// Forward's checks: bound, parameters set, is_train only when bound for training.
  void CheckForward(bool is_train) const;
  /// Forward's checks, then LoadBatch(batch, in_place) and the group's forward.
  void ForwardBatch(const DataBatch& batch, bool is_train, bool in_place);

  Symbol symbol_;
  std::vector<std::string> data_names_, label_names_;
  std::vector<Context> contexts_;
  std::vector<double> work_load_list_;
  std::vector<std::string> param_names_, aux_names_;
  std::map<std::string, Shape> data_shapes_, label_shapes_;
  bool for_training_ = false;
  bool params_initialized_ = false;
  Module* shared_module_ = nullptr;  // Bind's shared_module: its parameters are this module's
  std::unique_ptr<DataParallelExecutorGroup> group_;
  std::unique_ptr<KVStore> kv_;
  // Module::Load: parameters applied at Bind, optimizer states at InitOptimizer.
  std::optional<Checkpoint> preload_;
  std::string preload_states_;
  mutable std::string last_checkpoint_;  // a record of SaveCheckpoint, which does not change the module
};

/// MXNet's callback.do_checkpoint: an epoch-end callback saving <prefix> every `period` epochs
/// (as epoch + 1, MXNet's numbering), with the optimizer states when asked, and printing
/// `Saved checkpoint to "<params file>"` to stdout (as MXNet's save_checkpoint logs). With a dist
/// KVStore only the worker of rank 0 saves: the weights are the same on every worker.
WEFT_API EpochEndCallback DoCheckpoint(const std::string& prefix, int period = 1, bool save_optimizer_states = false);

/// An epoch-end callback printing one line per epoch to stdout, flushed (what MXNet's fit logs):
///   Epoch[3] Train-accuracy=0.8533 Validation-accuracy=0.8391 Speed=12034 samples/s Time=4.9s
/// with the metric's name; no Validation part without validation data. Speed counts the
/// samples trained on in the epoch over its training time (validation excluded).
WEFT_API EpochEndCallback LogEpoch();

/// Contexts device_type(0) .. device_type(count - 1) for a Module on `count` devices of a type a
/// user named (a --device flag). Throws weft::Error, before any work, when fewer are present:
/// "no cuda device is present: <why>" where <why> is the plugin's device note (e.g. which driver
/// is missing) or, when no loaded plugin provides the type, the device types that are loaded;
/// "only 2 cpu device(s) are present, 4 requested" when some are. count < 1 is an error too.
WEFT_API std::vector<Context> RequireDevices(const std::string& device_type, int count);

/// MXNet fit.py's --lr-step-epochs / --lr-factor: a MultiFactorScheduler (weft/lr_scheduler.h)
/// that multiplies the rate by `factor` once each epoch of `step_epochs` has been trained, i.e.
/// after update number epoch · batches_per_epoch (the optimizer's update count, which resumes
/// with its saved states). nullptr (a constant rate, for Optimizer::SetLRScheduler) when
/// step_epochs is empty or factor is 1. Throws weft::Error as MultiFactorScheduler (epochs must
/// increase from 1, factor <= 1), for batches_per_epoch 0, or when a step exceeds the int range.
WEFT_API std::unique_ptr<LRScheduler> EpochStepScheduler(const std::vector<int>& step_epochs, size_t batches_per_epoch,
                                                         float factor);

/// MXNet Module.init_optimizer's rescale_grad for a store `kv` and `batch_size` samples per step
/// (all devices): 1 / (batch_size · workers), where workers is kv.num_workers() for a dist *_sync
/// store (a push sums every worker's gradients) and 1 otherwise. Throws weft::Error for batch 0.
WEFT_API float DefaultRescaleGrad(const KVStore& kv, size_t batch_size);

/// A batch-end callback drawing MXNet-style progress for an epoch of `total_batches` batches of
/// `batch_size`: a redrawn bar with samples/s and ETA on a terminal, otherwise a line
/// "Epoch[e] Batch [n/N]  Speed: s samples/sec  ETA mm:ss" every ~10% (MXNet's Speedometer).
/// Writes to stdout; clears the bar at the last batch.
WEFT_API BatchEndCallback ProgressBar(size_t total_batches, size_t batch_size);

}  // namespace weft

// weft core — Module (see weft/module.h).
#include "weft/module.h"

#include "weft/internal/runtime.h"

#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

namespace weft {

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::unique_ptr<EvalMetric> CreateMetric(const std::string& name) {
  if (name == "accuracy" || name == "acc") return std::make_unique<Accuracy>();
  if (name == "ce" || name == "cross-entropy") return std::make_unique<CrossEntropy>();
  const std::string topk = "top_k_accuracy_";
  if (name.rfind(topk, 0) == 0) {
    const std::string digits = name.substr(topk.size());
    int k = 0;
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
    WEFT_CHECK(!digits.empty() && ec == std::errc() && p == digits.data() + digits.size() && k > 0,
               "Module::Fit: eval_metric '{}' needs a positive k, e.g. top_k_accuracy_5", name);
    return std::make_unique<TopKAccuracy>(k);
  }
  Fail("Module::Fit: unknown eval_metric '{}'; known: accuracy, ce, top_k_accuracy_<k>", name);
}

// A batch's labels as the metric takes them: (batch,) as given, anything else flattened to that.
NDArray BatchLabels(const NDArray& labels) {
  return labels.GetShape().ndim() == 1 ? labels : labels.Reshape(Shape(labels.GetShape()[0]));
}

}  // namespace

Module::Module(Symbol symbol, std::vector<std::string> data_names, std::vector<std::string> label_names,
               std::vector<Context> contexts, std::vector<double> work_load_list)
    : symbol_(std::move(symbol)),
      data_names_(std::move(data_names)),
      label_names_(std::move(label_names)),
      contexts_(std::move(contexts)),
      work_load_list_(std::move(work_load_list)) {
  WEFT_CHECK(!contexts_.empty(), "Module: no contexts given");
  WEFT_CHECK(!data_names_.empty(), "Module: no data names given; name the symbol's data inputs");
  const std::vector<std::string> args = symbol_.ListArguments();
  for (const auto* names : {&data_names_, &label_names_})
    for (const std::string& n : *names)
      WEFT_CHECK(Contains(args, n), "Module: '{}' is not an argument of the symbol; arguments: {}", n,
                 fmt::join(args, ", "));
  for (const std::string& a : args)
    if (!Contains(data_names_, a) && !Contains(label_names_, a)) param_names_.push_back(a);
  aux_names_ = symbol_.ListAuxiliaryStates();
}

Module::~Module() = default;
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;

Module Module::Load(const std::string& prefix, int epoch, bool load_optimizer_states,
                    std::vector<std::string> data_names, std::vector<std::string> label_names,
                    std::vector<Context> contexts) {
  Checkpoint ck = LoadCheckpoint(prefix, epoch);
  Module m(ck.symbol, std::move(data_names), std::move(label_names), std::move(contexts));
  m.preload_ = std::move(ck);
  m.last_checkpoint_ = CheckpointParamsFile(prefix, epoch);
  if (load_optimizer_states) {
    m.preload_states_ = CheckpointStatesFile(prefix, epoch);
    // Checked here, before any training: InitOptimizer would fail only after Bind and the data.
    WEFT_CHECK(std::filesystem::exists(m.preload_states_),
               "Module::Load: {} has no optimizer states ({} is missing); resuming would reset the optimizer. Load "
               "with load_optimizer_states=false to resume with fresh states (train_mnist: --reset-optimizer)",
               CheckpointParamsFile(prefix, epoch), m.preload_states_);
  }
  return m;
}

void Module::CheckBound(const char* what) const { WEFT_CHECK(group_ != nullptr, "Module::{}: call Bind first", what); }

void Module::Bind(const std::map<std::string, Shape>& data_shapes, const std::map<std::string, Shape>& label_shapes,
                  bool for_training, bool force_rebind, Module* shared_module) {
  if (group_ && !force_rebind) return;
  WEFT_CHECK(shared_module == nullptr || shared_module->binded(),
             "Module::Bind: the shared module is not bound; bind it first");
  std::map<std::string, Shape> shapes;
  for (const auto* m : {&data_shapes, &label_shapes})
    for (const auto& [name, shape] : *m) {
      WEFT_CHECK(Contains(data_names_, name) || Contains(label_names_, name),
                 "Module::Bind: '{}' is neither a data name ({}) nor a label name ({})", name,
                 fmt::join(data_names_, ", "), fmt::join(label_names_, ", "));
      shapes[name] = shape;
    }
  for (const std::string& n : data_names_)
    WEFT_CHECK(data_shapes.count(n), "Module::Bind: no shape given for the data input '{}'", n);
  // Keep the current parameters over a rebind.
  std::optional<std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>>> kept;
  if (group_ && params_initialized_) kept = GetParams();
  group_ = std::make_unique<DataParallelExecutorGroup>(symbol_, contexts_, shapes, param_names_, work_load_list_,
                                                       std::map<std::string, DType>{}, for_training,
                                                       shared_module ? shared_module->group_.get() : nullptr);
  data_shapes_ = data_shapes;
  label_shapes_ = label_shapes;
  for_training_ = for_training;
  shared_module_ = shared_module;
  if (shared_module) {
    params_initialized_ = shared_module->params_initialized_;  // the same arrays
  } else if (kept) {
    group_->SetParams(kept->first, kept->second);
  } else if (preload_) {
    SetParams(preload_->arg_params, preload_->aux_params, false, true);
  }
}

void Module::InitParams(Initializer& init, const std::map<std::string, NDArray>& arg_params,
                        const std::map<std::string, NDArray>& aux_params, bool allow_missing, bool force_init) {
  CheckBound("InitParams");
  if (params_initialized_ && !force_init) return;
  auto fill = [&](const std::vector<std::string>& names, const std::vector<std::vector<NDArray>>& arrays,
                  const std::map<std::string, NDArray>& given) {
    for (size_t i = 0; i < names.size(); ++i) {
      NDArray first = arrays[i][0];
      auto it = given.find(names[i]);
      if (it != given.end()) {
        WEFT_CHECK(it->second.GetShape() == first.GetShape(), "Module::InitParams: '{}' has shape {}, expected {}",
                   names[i], it->second.GetShape().ToString(), first.GetShape().ToString());
        NDArray::CopyFromTo(it->second, first);
      } else {
        WEFT_CHECK(given.empty() || allow_missing,
                   "Module::InitParams: '{}' is missing from the given parameters (allow_missing=true initialises "
                   "it instead)",
                   names[i]);
        init(names[i], &first);
      }
      for (size_t d = 1; d < arrays[i].size(); ++d) NDArray::CopyFromTo(first, arrays[i][d]);
    }
  };
  fill(group_->param_names(), group_->param_arrays(), arg_params);
  fill(group_->aux_names(), group_->aux_arrays(), aux_params);
  params_initialized_ = true;
}

void Module::SetParams(const std::map<std::string, NDArray>& arg_params,
                       const std::map<std::string, NDArray>& aux_params, bool allow_missing, bool allow_extra) {
  CheckBound("SetParams");
  WEFT_CHECK(kv_ == nullptr, "Module::SetParams: call it before InitOptimizer (the KVStore holds the weights)");
  if (!allow_missing) {
    for (const std::string& p : param_names_)
      WEFT_CHECK(arg_params.count(p), "Module::SetParams: parameter '{}' is missing", p);
    for (const std::string& a : aux_names_)
      WEFT_CHECK(aux_params.count(a), "Module::SetParams: aux state '{}' is missing", a);
  }
  group_->SetParams(arg_params, aux_params, allow_extra);
  params_initialized_ = true;
}

std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>> Module::GetParams() const {
  CheckBound("GetParams");
  std::map<std::string, NDArray> args, aux;
  for (size_t i = 0; i < param_names_.size(); ++i)
    args[param_names_[i]] = NDArray(group_->param_arrays()[i][0].GetShape(), Context::cpu(0), false);
  for (size_t i = 0; i < aux_names_.size(); ++i)
    aux[aux_names_[i]] = NDArray(group_->aux_arrays()[i][0].GetShape(), Context::cpu(0), false);
  group_->CopyTo(&args, &aux);
  return {args, aux};
}

void Module::InitOptimizer(const std::string& kvstore, std::unique_ptr<Optimizer> optimizer, bool force_init) {
  if (kv_ && !force_init) return;
  InitOptimizer(KVStore::Create(kvstore), std::move(optimizer), force_init);
}

void Module::InitOptimizer(std::unique_ptr<KVStore> kv, std::unique_ptr<Optimizer> optimizer, bool force_init) {
  CheckBound("InitOptimizer");
  WEFT_CHECK(params_initialized_, "Module::InitOptimizer: call InitParams or SetParams first");
  WEFT_CHECK(for_training_, "Module::InitOptimizer: the module was bound with for_training=false");
  if (kv_ && !force_init) return;
  WEFT_CHECK(optimizer != nullptr, "Module::InitOptimizer: no optimizer given");
  std::map<int, std::string> idx2name;
  for (size_t k = 0; k < param_names_.size(); ++k) idx2name[static_cast<int>(k)] = param_names_[k];
  optimizer->SetParamNames(idx2name, &symbol_);
  WEFT_CHECK(kv != nullptr, "Module::InitOptimizer: no KVStore given");
  kv_ = std::move(kv);
  // One device and a local store: the store keeps the executor's weights themselves, as MXNet's
  // Module updates them without a KVStore then (one copy per weight and step less).
  const bool in_place = group_->num_devices() == 1 && kv_->type() == "local";
  for (size_t k = 0; k < param_names_.size(); ++k) {
    if (in_place)
      kv_->InitInPlace(static_cast<int>(k), group_->param_arrays()[k][0]);
    else
      kv_->Init(static_cast<int>(k), group_->param_arrays()[k][0]);
  }
  kv_->SetOptimizer(std::move(optimizer));
  if (!preload_states_.empty()) {
    kv_->LoadOptimizerStates(preload_states_);
    preload_states_.clear();
    // Parameter servers: every worker's states are on the servers before any worker pushes again
    // (dist_async applies pushes as they come). Every worker resumes from the same checkpoint.
    if (kv_->num_workers() > 1) kv_->Barrier();
  }
}

KVStore& Module::kvstore() const {
  WEFT_CHECK(kv_ != nullptr, "Module::kvstore: call InitOptimizer first");
  return *kv_;
}

DataParallelExecutorGroup& Module::exec_group() const {
  CheckBound("exec_group");
  return *group_;
}

void Module::LoadBatch(const std::vector<NDArray>& data, const std::vector<NDArray>& labels, bool in_place) {
  WEFT_CHECK(data.size() == data_names_.size(), "Module::Forward: {} data arrays for the data inputs [{}]", data.size(),
             fmt::join(data_names_, ", "));
  WEFT_CHECK(labels.empty() || labels.size() == label_names_.size(),
             "Module::Forward: {} label arrays for the labels [{}] (give all or none)", labels.size(),
             fmt::join(label_names_, ", "));
  std::map<std::string, NDArray> feed;
  for (size_t i = 0; i < data.size(); ++i) feed[data_names_[i]] = data[i];
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!label_shapes_.count(label_names_[i]) || labels[i].is_none()) continue;
    const Shape& want = label_shapes_.at(label_names_[i]);
    feed[label_names_[i]] = labels[i].GetShape() == want ? labels[i] : labels[i].Reshape(want);
  }
  // Without in_place the group decides: an inference group reads batches in place anyway.
  if (in_place)
    group_->LoadDataBatch(feed, true);
  else
    group_->LoadDataBatch(feed);
}

void Module::Forward(const DataBatch& batch, bool is_train) { ForwardBatch(batch, is_train, false); }

void Module::Forward(const std::vector<NDArray>& data, const std::vector<NDArray>& labels, bool is_train) {
  CheckForward(is_train);
  LoadBatch(data, labels, false);
  group_->Forward(is_train);
}

void Module::CheckForward(bool is_train) const {
  CheckBound("Forward");
  WEFT_CHECK(params_initialized_ || (shared_module_ && shared_module_->params_initialized_),
             "Module::Forward: call InitParams or SetParams first");
  WEFT_CHECK(!is_train || for_training_, "Module::Forward: is_train on a module bound with for_training=false");
}

void Module::ForwardBatch(const DataBatch& batch, bool is_train, bool in_place) {
  CheckForward(is_train);
  WEFT_CHECK(data_names_.size() == 1 && label_names_.size() <= 1,
             "Module: a DataBatch holds one data array and one label; this module has data [{}] and labels [{}]: "
             "use Forward(data, labels, is_train)",
             fmt::join(data_names_, ", "), fmt::join(label_names_, ", "));
  std::vector<NDArray> labels;
  if (!label_names_.empty()) labels.push_back(batch.label);
  LoadBatch({batch.data}, labels, in_place);
  group_->Forward(is_train);
}

void Module::Backward() {
  CheckBound("Backward");
  WEFT_CHECK(for_training_, "Module::Backward: the module was bound with for_training=false");
  group_->Backward();
}

void Module::Update() {
  WEFT_CHECK(kv_ != nullptr, "Module::Update: call InitOptimizer first");
  // Every push first, then every pull (MXNet pushes and pulls each key in turn; the result is the
  // same): a distributed store fuses the pushes of small keys into buckets, and a pull of a key
  // still in the open bucket would issue it early.
  for (size_t k = 0; k < param_names_.size(); ++k)
    kv_->Push(static_cast<int>(k), group_->grad_arrays()[k], -static_cast<int>(k));
  for (size_t k = 0; k < param_names_.size(); ++k)
    kv_->Pull(static_cast<int>(k), group_->param_arrays()[k], -static_cast<int>(k));
}

void Module::InstallMonitor(Monitor& monitor) {
  CheckBound("InstallMonitor");
  for (size_t d = 0; d < group_->num_devices(); ++d) monitor.Install(group_->executor(d));
}

void Module::UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels) const {
  CheckBound("UpdateMetric");
  group_->UpdateMetric(metric, labels);
}

void Module::UpdateMetric(EvalMetric& metric, const NDArray& labels) const {
  CheckBound("UpdateMetric");
  group_->UpdateMetric(metric, BatchLabels(labels));
}

std::vector<NDArray> Module::GetOutputs() const {
  CheckBound("GetOutputs");
  return group_->GetOutputs();
}

bool Module::Fit(DataIter& train_data, DataIter* eval_data, const FitOptions& options) {
  WEFT_CHECK(options.begin_epoch >= 0 && options.begin_epoch <= options.num_epoch,
             "Module::Fit: begin_epoch {} must be in 0..num_epoch ({})", options.begin_epoch, options.num_epoch);
  if (!group_) {  // shapes from the first batch (only then: a Reset may reshuffle the data)
    train_data.Reset();
    WEFT_CHECK(train_data.Next(), "Module::Fit: the training data has no batch");
    DataBatch first = train_data.GetDataBatch();
    std::map<std::string, Shape> labels;
    if (!label_names_.empty()) labels[label_names_[0]] = Shape(first.label.GetShape()[0]);
    Bind({{data_names_[0], first.data.GetShape()}}, labels, true);
  }
  WEFT_CHECK(for_training_, "Module::Fit: the module was bound with for_training=false");
  if (!params_initialized_) {
    Uniform fallback(0.01f);
    InitParams(options.initializer ? *options.initializer : fallback);
  }
  if (!kv_) {
    auto opt = OptimizerRegistry::Create(options.optimizer);
    // MXNet's init_optimizer for an optimizer given by name: gradients summed over the batch.
    opt->SetParam("rescale_grad", 1.0 / static_cast<double>(group_->batch_size()));
    for (const auto& [k, v] : options.optimizer_params) opt->SetParamString(k, v);
    InitOptimizer(options.kvstore, std::move(opt));
  }
  // A NaN learning step poisons every later one silently (MXNet users add a Monitor): stop and
  // say where, before a checkpoint of the epoch is written.
  auto check_finite = [&](int epoch, size_t nbatch) {
    if (options.nan_check_every == 0) return;
    const std::string bad = FirstNonFiniteParam();
    WEFT_CHECK(bad.empty(),
               "epoch {} batch {}: parameter '{}' became NaN or infinite; training stopped (no checkpoint of this "
               "epoch was written). Lower the learning rate, or turn the check off (FitOptions::nan_check_every=0; "
               "train_mnist: --no-nan-check)",
               epoch, nbatch, bad);
  };
  auto stop = [&] { return options.stop_requested && options.stop_requested(); };
  using Clock = std::chrono::steady_clock;
  for (int epoch = options.begin_epoch; epoch < options.num_epoch; ++epoch) {
    auto train_metric = CreateMetric(options.eval_metric);
    const auto t0 = Clock::now();
    size_t nbatch = 0;
    train_data.Reset();
    bool more = !stop() && train_data.Next();
    while (more) {
      DataBatch b = train_data.GetDataBatch();
      // Read in place: nothing writes the batch before this step's passes are pushed (the next
      // Next() is ordered after them by the engine), so the copy into the executor is not needed.
      ForwardBatch(b, true, /*in_place=*/true);
      Backward();
      Update();
      // MXNet's order: the next batch is fetched before the metric waits for this one's outputs,
      // so the device loads it meanwhile. The labels are copied first: an iterator may write the
      // next batch into the same array.
      const NDArray labels = b.label.Copy(b.label.GetContext());
      const bool next = train_data.Next();
      UpdateMetric(*train_metric, labels);
      ++nbatch;
      if (options.batch_end_callback) options.batch_end_callback({epoch, nbatch, *train_metric});
      if (options.nan_check_every > 0 && nbatch % options.nan_check_every == 0) check_finite(epoch, nbatch);
      more = next && !stop();  // asked after the step's callbacks, as before the prefetch
    }
    NDArray::WaitAll();
    if (stop()) return false;  // the epoch is unfinished: no validation, no checkpoint of it
    check_finite(epoch, nbatch);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::unique_ptr<EvalMetric> eval_metric;
    if (eval_data) {
      eval_metric = CreateMetric(options.eval_metric);
      Score(*eval_data, *eval_metric);
    }
    if (options.epoch_end_callback)
      options.epoch_end_callback(
          {epoch, *train_metric, eval_metric.get(), nbatch * group_->batch_size(), seconds, *this});
  }
  return true;
}

float Module::Score(DataIter& data, EvalMetric& metric, size_t num_batch) {
  CheckBound("Score");
  // One batch in flight: batch n's forward is queued before the host reads batch n-1's outputs
  // for the metric, so the device never waits for the host's comparison and the next batch's
  // bookkeeping (about 8 % of an MNIST MLP pass at 1 thread). The metric reads copies, queued
  // behind the forward: the next forward and the iterator may overwrite the originals.
  std::vector<std::pair<NDArray, NDArray>> pending;  // (labels, outputs) per device, batch n-1
  auto update = [&metric](const std::vector<std::pair<NDArray, NDArray>>& inputs) {
    for (const auto& [labels, outputs] : inputs) metric.Update(labels, outputs);
  };
  data.Reset();
  for (size_t n = 0; (num_batch == 0 || n < num_batch) && data.Next(); ++n) {
    DataBatch b = data.GetDataBatch();
    ForwardBatch(b, false, /*in_place=*/true);  // nothing writes b before the pass is pushed
    auto copies = group_->CopyMetricInputs(BatchLabels(b.label));
    update(pending);
    pending = std::move(copies);
  }
  update(pending);
  return metric.Get();
}

NDArray Module::Predict(DataIter& data, size_t num_batch) {
  CheckBound("Predict");
  std::vector<std::vector<float>> parts;
  Shape row;
  size_t rows = 0;
  // As Score: batch n is queued before batch n-1's output (a merged copy) is read back.
  NDArray pending;
  size_t pending_keep = 0;
  auto collect = [&] {
    if (pending.is_none()) return;
    std::vector<float> values;
    pending.SyncCopyToCPU(&values);
    values.resize(pending_keep * (pending.Size() / static_cast<size_t>(pending.GetShape()[0])));
    parts.push_back(std::move(values));
    row = pending.GetShape();
    rows += pending_keep;
  };
  data.Reset();
  for (size_t n = 0; (num_batch == 0 || n < num_batch) && data.Next(); ++n) {
    DataBatch b = data.GetDataBatch();
    ForwardBatch(b, false, /*in_place=*/true);  // nothing writes b before the pass is pushed
    NDArray out = GetOutputs()[0];
    collect();
    pending = out;
    pending_keep = static_cast<size_t>(out.GetShape()[0] - b.pad_num);
  }
  collect();
  WEFT_CHECK(rows > 0, "Module::Predict: the data has no batch");
  std::vector<float> all;
  for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  row[0] = static_cast<int64_t>(rows);
  return NDArray(all, row, Context::cpu(0));
}

std::string Module::FirstNonFiniteParam() const {
  CheckBound("FirstNonFiniteParam");
  std::vector<float> host;
  auto bad = [&](const NDArray& a) {
    if (a.GetDType() != DType::kFloat32) return false;
    a.SyncCopyToCPU(&host);
    return std::any_of(host.begin(), host.end(), [](float v) { return !std::isfinite(v); });
  };
  for (size_t k = 0; k < param_names_.size(); ++k)
    if (bad(group_->param_arrays()[k][0])) return param_names_[k];
  for (size_t k = 0; k < aux_names_.size(); ++k)
    if (bad(group_->aux_arrays()[k][0])) return aux_names_[k];
  return "";
}

void Module::SaveCheckpoint(const std::string& prefix, int epoch, bool save_optimizer_states) const {
  auto [args, aux] = GetParams();
  SaveCheckpointOptions options;
  if (save_optimizer_states)
    options.write_states = [this](const std::string& file) { kvstore().SaveOptimizerStates(file, true); };
  weft::SaveCheckpoint(prefix, epoch, symbol_, args, aux, options);
  last_checkpoint_ = CheckpointParamsFile(prefix, epoch);
}

BatchEndCallback ProgressBar(size_t total_batches, size_t batch_size) {
  WEFT_CHECK(total_batches > 0 && batch_size > 0, "ProgressBar: {} batches of {}: both must be positive", total_batches,
             batch_size);
  struct State {
    int epoch = -1;
    size_t last_decile = 0;
    std::chrono::steady_clock::time_point start;
  };
  auto state = std::make_shared<State>();
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  return [=](const BatchEndParam& p) {
    if (p.epoch != state->epoch) *state = {p.epoch, 0, std::chrono::steady_clock::now()};
    const size_t done = std::min(p.nbatch, total_batches);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - state->start).count();
    const double rate = elapsed > 0 ? static_cast<double>(done * batch_size) / elapsed : 0;
    const auto eta =
        static_cast<int>(elapsed * static_cast<double>(total_batches - done) / static_cast<double>(done) + 0.5);
    if (tty) {
      const size_t width = 30, filled = width * done / total_batches;
      std::printf("\rEpoch[%d] %5zu/%zu [%s%s] %8.0f samples/s ETA %02d:%02d ", p.epoch, done, total_batches,
                  std::string(filled, '=').c_str(), std::string(width - filled, ' ').c_str(), rate, eta / 60, eta % 60);
      if (done == total_batches) std::printf("\r%*s\r", 90, "");
    } else if (done * 10 / total_batches != state->last_decile && done < total_batches) {
      state->last_decile = done * 10 / total_batches;
      std::printf("Epoch[%d] Batch [%zu/%zu]\tSpeed: %.0f samples/sec\tETA %02d:%02d\n", p.epoch, done, total_batches,
                  rate, eta / 60, eta % 60);
    }
    std::fflush(stdout);
  };
}

EpochEndCallback DoCheckpoint(const std::string& prefix, int period, bool save_optimizer_states) {
  WEFT_CHECK(period >= 1, "DoCheckpoint: period must be at least 1, got {}", period);
  return [=](const EpochEndParam& p) {
    if ((p.epoch + 1) % period != 0) return;
    if (p.module.optimizer_initialized() && p.module.kvstore().rank() != 0) return;
    p.module.SaveCheckpoint(prefix, p.epoch + 1, save_optimizer_states);
    std::printf("Saved checkpoint to \"%s\"\n", p.module.last_checkpoint().c_str());
    std::fflush(stdout);
  };
}

EpochEndCallback LogEpoch() {
  return [](const EpochEndParam& p) {
    std::string line = fmt::format("Epoch[{}] Train-{}={:.4f}", p.epoch, p.train_metric.name(), p.train_metric.Get());
    if (p.eval_metric) line += fmt::format(" Validation-{}={:.4f}", p.eval_metric->name(), p.eval_metric->Get());
    const double speed = p.train_seconds > 0 ? static_cast<double>(p.num_samples) / p.train_seconds : 0.0;
    std::printf("%s Speed=%.0f samples/s Time=%.1fs\n", line.c_str(), speed, p.train_seconds);
    std::fflush(stdout);
  };
}

std::vector<Context> RequireDevices(const std::string& device_type, int count) {
  WEFT_CHECK(count >= 1, "{} devices of type {} requested: ask for at least 1", count, device_type);
  Runtime& rt = Runtime::Get();
  const int available = rt.DeviceCount(device_type);
  if (available == 0) {
    // A plugin that found no hardware says why (e.g. "CUDA driver not found ...: install ...").
    std::string why;
    for (const Plugin* p : internal::Plugins(rt))
      if (p->device_type() == device_type && !p->device_note().empty()) why = p->device_note();
    if (why.empty()) {
      const std::vector<std::string> types = rt.DeviceTypes();
      why = fmt::format(
          "no loaded plugin provides it (device types: {}); weft-info lists the plugins found and why "
          "any was rejected",
          types.empty() ? "none" : fmt::format("{}", fmt::join(types, ", ")));
    }
    Fail("no {} device is present: {}", device_type, why);
  }
  WEFT_CHECK(available >= count, "only {} {} device(s) are present, {} requested", available, device_type, count);
  std::vector<Context> contexts;
  for (int i = 0; i < count; ++i) contexts.emplace_back(device_type, i);
  return contexts;
}

std::unique_ptr<LRScheduler> EpochStepScheduler(const std::vector<int>& step_epochs, size_t batches_per_epoch,
                                                float factor) {
  if (step_epochs.empty() || factor == 1.0f) return nullptr;
  WEFT_CHECK(batches_per_epoch >= 1, "EpochStepScheduler: batches_per_epoch must be at least 1");
  std::vector<int> steps;
  for (int epoch : step_epochs) {
    WEFT_CHECK(epoch >= 1, "EpochStepScheduler: step epoch {} must be >= 1", epoch);
    const size_t step = static_cast<size_t>(epoch) * batches_per_epoch;
    WEFT_CHECK(step / batches_per_epoch == static_cast<size_t>(epoch) &&
                   step <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "EpochStepScheduler: epoch {} of {} batches is beyond the update count's range", epoch,
               batches_per_epoch);
    steps.push_back(static_cast<int>(step));
  }
  return std::make_unique<MultiFactorScheduler>(steps, factor);
}

float DefaultRescaleGrad(const KVStore& kv, size_t batch_size) {
  WEFT_CHECK(batch_size > 0, "DefaultRescaleGrad: the batch size must be positive");
  // MXNet's test: 'dist' in kvstore.type and '_sync' in kvstore.type.
  const std::string& type = kv.type();
  const bool sums_workers = type.find("dist") != std::string::npos && type.find("_sync") != std::string::npos;
  const size_t total = batch_size * static_cast<size_t>(sums_workers ? kv.num_workers() : 1);
  return 1.0f / static_cast<float>(total);
}

}  // namespace weft

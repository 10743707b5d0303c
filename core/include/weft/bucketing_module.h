// weft — BucketingModule: one network over inputs of several shapes (e.g. sentences padded to a
// few lengths), after MXNet's mx.mod.BucketingModule (python/mxnet/module/bucketing_module.py).
// `sym_gen` builds the symbol of a bucket key; the default bucket is bound first and owns the
// parameters, their gradients, the aux states, the optimizer and the memory pool; every other
// bucket is a Module bound against it (Module::Bind's shared_module), so all buckets train the
// same weights and memory grows to the largest bucket's, not the sum. As in MXNet, make the
// default bucket the largest: a bucket's intermediate values go into the default bucket's planned
// blocks where they fit, and only what does not fit is allocated.
//
//   BucketingModule mod([](int len) { return BucketSymbol{MakeNet(len)}; }, /*default_bucket_key=*/30);
//   mod.Bind({{"data", Shape(32, 30)}}, {{"softmax_label", Shape(32)}});
//   mod.InitParams(Xavier());
//   mod.InitOptimizer("local", OptimizerRegistry::Create("sgd"));
//   for (each batch b with b.bucket_key = its padded length) {
//     mod.Forward(b, true); mod.Backward(); mod.Update(); mod.UpdateMetric(acc, b.label);
//   }
//
// Thread-safety: a BucketingModule belongs to one thread (its buckets share memory and must not
// run at once). Errors: weft::Error naming what is wrong, as Module.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/export.h"
#include "weft/module.h"

namespace weft {

/// What sym_gen returns for a bucket key: MXNet's (symbol, data_names, label_names).
struct BucketSymbol {
  Symbol symbol;
  std::vector<std::string> data_names{"data"};
  std::vector<std::string> label_names{"softmax_label"};
};

/// Builds the network of a bucket key. Called once per key, when the key is first bound.
using SymGen = std::function<BucketSymbol(int bucket_key)>;

class WEFT_API BucketingModule {
 public:
  /// `default_bucket_key` >= 0: the bucket Bind binds (give it the largest shapes).
  /// `contexts` / `work_load_list` as Module's, for every bucket. Throws weft::Error for a
  /// negative default key or an empty sym_gen.
  BucketingModule(SymGen sym_gen, int default_bucket_key, std::vector<Context> contexts = {Context::cpu(0)},
                  std::vector<double> work_load_list = {});
  ~BucketingModule();
  BucketingModule(const BucketingModule&) = delete;
  BucketingModule& operator=(const BucketingModule&) = delete;

  /// Binds the default bucket for these full-batch shapes (Module::Bind). A second Bind is
  /// ignored unless force_rebind, which drops every bucket (parameters are kept).
  void Bind(const std::map<std::string, Shape>& data_shapes, const std::map<std::string, Shape>& label_shapes = {},
            bool for_training = true, bool force_rebind = false);
  /// Makes `bucket_key` current, binding it against the default bucket on first use with these
  /// shapes (MXNet's switch_bucket; a bound bucket keeps its first shapes). Throws weft::Error
  /// before Bind, for a negative key, or as Module::Bind (e.g. a parameter whose shape differs
  /// from the default bucket's).
  void SwitchBucket(int bucket_key, const std::map<std::string, Shape>& data_shapes,
                    const std::map<std::string, Shape>& label_shapes = {});

  /// Module::InitParams / SetParams / GetParams / InitOptimizer on the default bucket (whose
  /// arrays and optimizer every bucket uses).
  void InitParams(Initializer& init, const std::map<std::string, NDArray>& arg_params = {},
                  const std::map<std::string, NDArray>& aux_params = {}, bool allow_missing = false,
                  bool force_init = false);
  void SetParams(const std::map<std::string, NDArray>& arg_params, const std::map<std::string, NDArray>& aux_params,
                 bool allow_missing = false, bool allow_extra = false);
  std::pair<std::map<std::string, NDArray>, std::map<std::string, NDArray>> GetParams() const;
  void InitOptimizer(const std::string& kvstore, std::unique_ptr<Optimizer> optimizer, bool force_init = false);

  /// Switches to batch.bucket_key (-1 = the default bucket), binding it for the shapes of
  /// batch.data and batch.label on first use, then Module::Forward.
  void Forward(const DataBatch& batch, bool is_train);
  /// Backward of the current bucket: gradients land in the shared gradient arrays.
  void Backward();
  /// The optimizer step on the shared parameters (the default bucket's Module::Update).
  void Update();
  /// Module::UpdateMetric / GetOutputs of the current bucket.
  void UpdateMetric(EvalMetric& metric, const NDArray& labels) const;
  std::vector<NDArray> GetOutputs() const;

  int default_bucket_key() const { return default_key_; }
  /// The current bucket's key (the default one after Bind).
  int bucket_key() const { return current_key_; }
  /// Bucket keys bound so far (the default one first, then in key order).
  std::vector<int> bucket_keys() const;
  /// The Module of a bound bucket. Throws weft::Error for a key not bound yet.
  Module& module(int bucket_key) const;
  bool binded() const { return !buckets_.empty(); }

 private:
  void CheckBound(const char* what) const;
  /// Creates bucket `key`'s module from its symbol and binds it against the default bucket.
  Module& BindBucket(int key, BucketSymbol b, const std::map<std::string, Shape>& data_shapes,
                     const std::map<std::string, Shape>& label_shapes);
  std::unique_ptr<Module> MakeModule(int key, BucketSymbol b) const;

  SymGen sym_gen_;
  int default_key_, current_key_;
  std::vector<Context> contexts_;
  std::vector<double> work_load_list_;
  bool for_training_ = true;
  std::map<int, std::unique_ptr<Module>> buckets_;
};

}  // namespace weft

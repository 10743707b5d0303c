// weft — optimizers, following mxnet-cpp's Optimizer (include/mxnet-cpp/optimizer.h) with MXNet 1.9's
// update rules (python/mxnet/optimizer/optimizer.py and the *_update operators).
//
//   Optimizer* opt = OptimizerRegistry::Find("sgd");      // caller owns it (mxnet-cpp)
//   opt->SetParam("lr", 0.1)->SetParam("momentum", 0.9)->SetParam("rescale_grad", 1.0 / batch);
//   opt->Update(i, exec->arg_arrays[i], exec->grad_arrays[i]);
//
// Update rules (g = clip(rescale_grad · grad, ±clip_gradient), clip_gradient < 0 or 0 = no
// clipping; lr and wd already multiplied by the index's lr_mult / wd_mult; t = the index's update
// count). Each update is one operator, run by the weight's device plugin (weft/imperative.h), with
// the arguments MXNet 1.9's Python optimizer passes:
//   sgd      momentum 0: w = w − lr·(g + wd·w)                      [sgd_update]
//            else:       m = momentum·m − lr·(g + wd·w); w += m     [sgd_mom_update]
//   nag      momentum 0: as sgd                                     [sgd_update]
//            else: g' = g + wd·w; m = momentum·m − lr·g'; w += momentum·m − lr·g'   [nag_mom_update]
//            (the state is MXNet's: −lr times the textbook momentum, so saved states match MXNet's)
//   adam     lr_t = lr·sqrt(1 − beta2^t)/(1 − beta1^t); g' = clip(rescale·grad + wd·w);
//            mean = β1·mean + (1−β1)·g'; var = β2·var + (1−β2)·g'²;
//            w −= lr_t·mean/(sqrt(var) + epsilon)                  [adam_update]
//   rmsprop  g' = clip(rescale·grad + wd·w); n = (1−γ1)·g'² + γ1·n;
//            centered False: w −= lr·g'/sqrt(n + ε)                 [rmsprop_update]
//            centered True:  gm = (1−γ1)·g' + γ1·gm; Δ = γ2·Δ − lr·g'/sqrt(n − gm² + ε); w += Δ
//                                                                   [rmspropalex_update]
//            clip_weights > 0 then clips w to ±clip_weights.
// Adam and RMSProp clip after adding the weight decay, SGD and NAG before (MXNet's kernels).
//
// Parameters (SetParam; names as MXNet's, "learning_rate" is accepted for "lr"):
//   all:     lr (0.01; adam and rmsprop 0.001), wd (0), rescale_grad (1), clip_gradient (-1)
//   sgd/nag: momentum (0)
//   adam:    beta1 (0.9), beta2 (0.999), epsilon (1e-8)
//   rmsprop: gamma1 (0.9), gamma2 (0.9), epsilon (1e-8), centered (false), clip_weights (-1)
// An unknown name, or a value that is not a finite number (NaN and infinities are refused; bools:
// true/false/1/0), raises weft::Error at SetParam naming the parameter and the accepted names.
//
// Multipliers: SetLRMult / SetWDMult by index; SetParamNames(idx2name, symbol) sets them the
// way MXNet's Module does: from the symbol's __lr_mult__ / __wd_mult__ attributes, and wd_mult 0
// for every parameter whose name does not end in "_weight" or "_gamma" (biases, betas).
//
// State: per index, created on the weight's device at the index's first update. Update is
// asynchronous (engine operations on the arrays), like every NDArray operation.
//
// Thread-safety: an Optimizer belongs to one thread (the KVStore serialises its calls).
#pragma once

#include "weft/export.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "weft/lr_scheduler.h"
#include "weft/ndarray.h"

namespace weft {

class Symbol;

class WEFT_API Optimizer {
 public:
  /// `begin_num_update`: the update count to start from (resuming training).
  explicit Optimizer(unsigned begin_num_update = 0);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// "sgd", "nag", "adam", "rmsprop".
  virtual std::string GetType() const = 0;

  /// Sets parameter `name` (see the file comment) from a number, bool or string. Returns this
  /// for chaining, as mxnet-cpp. Throws weft::Error for an unknown name or a bad value.
  template <typename T>
  Optimizer* SetParam(const std::string& name, const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      return SetParamString(name, value ? "true" : "false");
    } else {
      return SetParamString(name, fmt::format("{}", value));
    }
  }
  Optimizer* SetParamString(const std::string& name, const std::string& value);
  /// The parameter's current value (defaults included) as a string. Throws for an unknown name.
  std::string GetParam(const std::string& name) const;
  /// Installs a learning-rate schedule; its base rate becomes the "lr" parameter (as mxnet-cpp).
  Optimizer* SetLRScheduler(std::unique_ptr<LRScheduler> scheduler);

  /// Per-index multipliers (replace earlier ones for the indices given).
  void SetLRMult(const std::map<int, float>& lr_mult);
  void SetWDMult(const std::map<int, float>& wd_mult);
  /// MXNet Module's rule (see the file comment). `symbol` may be null (names only).
  void SetParamNames(const std::map<int, std::string>& idx2name, const Symbol* symbol = nullptr);

  /// Updates `weight` with `grad` (same shape, float32, same device; weft::Error naming the index
  /// otherwise). Pushed; returns at once.
  void Update(int index, NDArray weight, NDArray grad);

  /// Learning rate / weight decay the next update of `index` would use (after this index's count
  /// is taken into account by Update, i.e. the values Update passes to the rule).
  float GetLR(int index);
  float GetWD(int index) const;
  /// Update count of `index` (0 before its first update) and the highest count of any index.
  unsigned UpdateCount(int index) const;
  unsigned num_update() const { return num_update_; }

  /// Type, parameters and counts as JSON: {"type": "sgd", "params": {...}, "counts": {...},
  /// "num_update": n, "lr_mult": {...}, "wd_mult": {...}}. The LR scheduler is not included.
  std::string Serialize() const;
  /// Restores parameters, counts and multipliers from Serialize() output of the same type.
  /// Throws weft::Error on malformed JSON or another optimizer type.
  void Deserialize(const std::string& json);

  /// The states as named arrays ("<index>:<k>"), for saving. Waits for nothing (the arrays are
  /// saved by NDArray::Save, which waits).
  std::map<std::string, NDArray> GetStates() const;
  /// Replaces the states with `states` (names as GetStates). Arrays are copied onto the weight's
  /// device at the index's next update. Throws weft::Error for a malformed name.
  void SetStates(const std::map<std::string, NDArray>& states);

 protected:
  /// Known parameters and their defaults (what SetParam accepts).
  virtual std::map<std::string, std::string> Defaults() const;
  /// Number of state arrays per index (each of the weight's shape, zero-initialised).
  virtual int NumStates() const = 0;
  /// Applies the rule. `states` has NumStates() arrays on the weight's device.
  virtual void UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                          float wd) = 0;
  float Param(const std::string& name) const;
  bool BoolParam(const std::string& name) const;
  /// The attributes every update op takes: lr, wd, rescale_grad, clip_gradient (0 passed as -1).
  std::map<std::string, std::string> UpdateParams(float lr, float wd) const;

 private:
  std::map<std::string, std::string> params_;
  std::unique_ptr<LRScheduler> lr_scheduler_;
  std::map<int, unsigned> count_;
  unsigned begin_num_update_, num_update_;
  std::map<int, float> lr_mult_, wd_mult_;
  std::map<int, std::vector<NDArray>> states_;

  void EnsureParams();
};

class WEFT_API SGDOptimizer : public Optimizer {
 public:
  using Optimizer::Optimizer;
  std::string GetType() const override { return "sgd"; }

 protected:
  std::map<std::string, std::string> Defaults() const override;
  int NumStates() const override;
  void UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                  float wd) override;
};

class WEFT_API NAGOptimizer : public Optimizer {
 public:
  using Optimizer::Optimizer;
  std::string GetType() const override { return "nag"; }

 protected:
  std::map<std::string, std::string> Defaults() const override;
  int NumStates() const override;
  void UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                  float wd) override;
};

class WEFT_API AdamOptimizer : public Optimizer {
 public:
  using Optimizer::Optimizer;
  std::string GetType() const override { return "adam"; }

 protected:
  std::map<std::string, std::string> Defaults() const override;
  int NumStates() const override { return 2; }
  void UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                  float wd) override;
};

class WEFT_API RMSPropOptimizer : public Optimizer {
 public:
  using Optimizer::Optimizer;
  std::string GetType() const override { return "rmsprop"; }

 protected:
  std::map<std::string, std::string> Defaults() const override;
  int NumStates() const override;
  void UpdateImpl(int index, NDArray& weight, const NDArray& grad, std::vector<NDArray>& states, float lr,
                  float wd) override;
};

/// mxnet-cpp's registry.
class WEFT_API OptimizerRegistry {
 public:
  /// A new optimizer of type `name` (case-insensitive: sgd, nag, adam, rmsprop; "ccsgd" is
  /// accepted as sgd, as mxnet-cpp). The caller owns it (mxnet-cpp returns a raw pointer; wrap it
  /// in a unique_ptr). Throws weft::Error listing the known names for an unknown one.
  static Optimizer* Find(const std::string& name);
  /// Same, owned.
  static std::unique_ptr<Optimizer> Create(const std::string& name);
};

}  // namespace weft

// weft — learning-rate schedules, following mxnet-cpp's LRScheduler (include/mxnet-cpp/lr_scheduler.h)
// with MXNet 1.9's Python semantics (python/mxnet/lr_scheduler.py).
//
// An optimizer owns its scheduler (Optimizer::SetLRScheduler) and asks it for the rate of update
// number `num_update` (1 for the first update; the optimizer's count is the highest update count
// of any parameter index). Schedulers keep state (the decayed rate) and expect non-decreasing
// `num_update` values, as MXNet's do.
//
// Thread-safety: none; a scheduler belongs to one optimizer.
#pragma once

#include "weft/export.h"

#include <memory>
#include <vector>

namespace weft {

class WEFT_API LRScheduler {
 public:
  /// `base_lr` is the rate before any decay; Optimizer::SetLRScheduler overwrites it with the
  /// optimizer's "lr" parameter.
  explicit LRScheduler(float base_lr = 0.01f) : base_lr_(base_lr) {}
  virtual ~LRScheduler() = default;
  /// Restarts the schedule from `lr`.
  virtual void SetLR(float lr) { base_lr_ = lr; }
  /// The learning rate for update number `num_update`.
  virtual float GetLR(unsigned num_update) = 0;
  /// A copy in its current state.
  virtual std::unique_ptr<LRScheduler> Clone() const = 0;

 protected:
  float base_lr_;
};

/// lr = base_lr · factor^k after every `step` updates (MXNet's FactorScheduler): the rate drops
/// when num_update exceeds count + step, never below stop_factor_lr.
/// Throws weft::Error for step < 1 or factor > 1.
class WEFT_API FactorScheduler : public LRScheduler {
 public:
  explicit FactorScheduler(int step, float factor = 1.0f, float stop_factor_lr = 1e-8f);
  void SetLR(float lr) override;
  float GetLR(unsigned num_update) override;
  std::unique_ptr<LRScheduler> Clone() const override;

 private:
  int step_;
  float factor_, stop_factor_lr_;
  unsigned count_ = 0;
};

/// lr = base_lr · factor^k where k is the number of entries of `steps` that num_update has
/// passed (MXNet's MultiFactorScheduler). Throws weft::Error unless steps are increasing and
/// >= 1, and factor <= 1.
class WEFT_API MultiFactorScheduler : public LRScheduler {
 public:
  explicit MultiFactorScheduler(const std::vector<int>& steps, float factor = 1.0f);
  void SetLR(float lr) override;
  float GetLR(unsigned num_update) override;
  std::unique_ptr<LRScheduler> Clone() const override;

 private:
  std::vector<int> steps_;
  float factor_;
  size_t cur_step_ = 0;
};

}  // namespace weft

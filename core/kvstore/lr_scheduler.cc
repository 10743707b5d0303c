// weft core — learning-rate schedules (see weft/lr_scheduler.h; MXNet 1.9 lr_scheduler.py).
#include "weft/lr_scheduler.h"

#include "weft/base.h"

#include <cmath>

namespace weft {

FactorScheduler::FactorScheduler(int step, float factor, float stop_factor_lr)
    : step_(step), factor_(factor), stop_factor_lr_(stop_factor_lr) {
  WEFT_CHECK(step >= 1, "FactorScheduler: step must be >= 1 (updates between decays), got {}", step);
  WEFT_CHECK(factor <= 1.0f, "FactorScheduler: factor must be <= 1 so the rate decays, got {}", factor);
}

void FactorScheduler::SetLR(float lr) {
  base_lr_ = lr;
  count_ = 0;
}

float FactorScheduler::GetLR(unsigned num_update) {
  while (num_update > count_ + static_cast<unsigned>(step_)) {
    count_ += static_cast<unsigned>(step_);
    base_lr_ *= factor_;
    if (base_lr_ < stop_factor_lr_) base_lr_ = stop_factor_lr_;
  }
  return base_lr_;
}

std::unique_ptr<LRScheduler> FactorScheduler::Clone() const { return std::make_unique<FactorScheduler>(*this); }

MultiFactorScheduler::MultiFactorScheduler(const std::vector<int>& steps, float factor)
    : steps_(steps), factor_(factor) {
  WEFT_CHECK(!steps.empty(), "MultiFactorScheduler: steps is empty");
  for (size_t i = 0; i < steps.size(); ++i) {
    WEFT_CHECK(steps[i] >= 1, "MultiFactorScheduler: step {} is {}; steps must be >= 1", i, steps[i]);
    WEFT_CHECK(i == 0 || steps[i] > steps[i - 1], "MultiFactorScheduler: steps must increase ({} then {})",
               i == 0 ? 0 : steps[i - 1], steps[i]);
  }
  WEFT_CHECK(std::isfinite(factor) && factor <= 1.0f,
             "MultiFactorScheduler: factor must be a finite number <= 1 so the rate decays, got {}", factor);
}

void MultiFactorScheduler::SetLR(float lr) {
  base_lr_ = lr;
  cur_step_ = 0;
}

float MultiFactorScheduler::GetLR(unsigned num_update) {
  while (cur_step_ < steps_.size() && num_update > static_cast<unsigned>(steps_[cur_step_])) {
    ++cur_step_;
    base_lr_ *= factor_;
  }
  return base_lr_;
}

std::unique_ptr<LRScheduler> MultiFactorScheduler::Clone() const {
  return std::make_unique<MultiFactorScheduler>(*this);
}

}  // namespace weft

// Batches of an epoch (io/batch_plan.h).
#include "io/batch_plan.h"

#include <algorithm>
#include <numeric>

#include "weft/base.h"

namespace weft::io_detail {

BatchPlan::BatchPlan(uint64_t n, int batch_size, LastBatch mode, bool shuffle, uint32_t seed)
    : n_(n), batch_(static_cast<uint64_t>(batch_size)), mode_(mode), shuffle_(shuffle), rng_(seed) {
  WEFT_CHECK(batch_size >= 1, "batch_size must be at least 1, got {}", batch_size);
  WEFT_CHECK(!(mode == LastBatch::kRoundBatch || mode == LastBatch::kPad) || n >= batch_ || n == 0,
             "batch_size {} is larger than the {} samples: the last batch cannot be completed by wrapping around "
             "(lower batch_size, or set round_batch=0 / last_batch_handle='discard')",
             batch_size, n);
  MakeOrders(1);
}

void BatchPlan::MakeOrders(uint64_t up_to) {
  if (!shuffle_) return;
  const uint64_t first = orders_.empty() ? 0 : orders_.rbegin()->first + 1;
  for (uint64_t i = first; i <= up_to; ++i) {
    std::vector<uint32_t> order(n_);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng_);
    orders_.emplace(i, std::move(order));
  }
  // Orders before the previous epoch's can no longer be reached.
  while (!orders_.empty() && orders_.begin()->first + 1 < epoch_) orders_.erase(orders_.begin());
}

const std::vector<uint32_t>& BatchPlan::Order(uint64_t index) const { return orders_.at(index); }

uint64_t BatchPlan::num_batches() const noexcept {
  const uint64_t span = (epoch_ + 1) * n_ - begin_;
  const uint64_t full = span / batch_, rest = span % batch_;
  const bool short_batch = rest != 0 && mode_ != LastBatch::kDiscard && mode_ != LastBatch::kRollOver;
  return full + (short_batch ? 1 : 0);
}

bool BatchPlan::GetBatch(uint64_t k, Batch* out) const {
  if (k >= num_batches()) return false;
  const uint64_t end = (epoch_ + 1) * n_;
  const uint64_t from = begin_ + k * batch_;
  uint64_t to = from + batch_;
  out->pad = 0;
  if (to > end) {  // the short last batch
    out->pad = static_cast<int>(to - end);
    if (mode_ == LastBatch::kPartial) to = end;
  }
  out->samples.clear();
  out->positions.clear();
  for (uint64_t g = from; g < to; ++g) {
    const uint64_t order = g / n_, at = g % n_;
    out->samples.push_back(shuffle_ ? Order(order)[at] : static_cast<uint32_t>(at));
    out->positions.push_back(g);
  }
  return true;
}

void BatchPlan::BeginEpoch(uint64_t delivered) {
  if (delivered == 0) return;
  const bool last_delivered = delivered >= num_batches();
  const uint64_t end = (epoch_ + 1) * n_;
  const uint64_t rest = (end - begin_) % batch_;
  uint64_t next = end;
  if (rest != 0 && mode_ == LastBatch::kRoundBatch && last_delivered) next = end + (batch_ - rest);
  if (rest != 0 && mode_ == LastBatch::kRollOver) next = end - rest;
  ++epoch_;
  begin_ = next;
  MakeOrders(epoch_ + 1);
}

}  // namespace weft::io_detail

// weft io (internal) — which samples form each batch of each epoch, with MXNet's ways of ending
// an epoch, and the shuffled orders.
//
// Samples are 0..n-1 (records of a partition, rows of an array). Each epoch E has an order: the
// identity, or with shuffling a permutation drawn by std::shuffle(identity, rng) with one
// std::mt19937(seed) advancing from epoch to epoch (dmlc-core's IndexedRecordIOSplitter does the
// same with seed 111 + MXNet's seed). The orders are laid end to end; the sample at global
// position g is order_{g / n}[g % n]. Epoch E nominally covers the positions up to (E + 1) * n
// from where it begins; its batches are consecutive runs of batch_size positions. A last run
// shorter than batch_size (r positions) ends the epoch according to the mode:
//   kRoundBatch  MXNet's round_batch=1 (ImageRecordIter, CSVIter): the batch is completed from
//                the next order's first positions, pad = batch_size - r, and the next epoch
//                begins after them if that batch was delivered (else at the next order's start);
//   kPartial     round_batch=0: the batch holds the r samples, pad = batch_size - r (the padding
//                rows are zeros); the next epoch begins at the next order's start;
//   kPad         NDArrayIter's last_batch_handle='pad': completed as kRoundBatch, but the next
//                epoch begins at the next order's start;
//   kDiscard     'discard': the short batch is dropped;
//   kRollOver    'roll_over': the short batch is not delivered; its samples begin the next epoch.
// The global position of a sample also identifies its draw of random augmentation, so that the
// same seed gives the same batches whatever the thread count and timing.
//
// Thread-safety: GetBatch and num_batches may be called from several threads at once; BeginEpoch
// only when no other call runs (the iterators call it with their workers stopped).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace weft::io_detail {

enum class LastBatch { kRoundBatch, kPartial, kPad, kDiscard, kRollOver };

class BatchPlan {
 public:
  struct Batch {
    std::vector<uint32_t> samples;    ///< batch_size - pad sample ids, or batch_size when completed
    std::vector<uint64_t> positions;  ///< global position of each sample (augmentation draws)
    int pad = 0;
  };
  /// Throws weft::Error for batch_size < 1, or n < batch_size with kRoundBatch/kPad (the batch
  /// could not be completed from one order).
  BatchPlan(uint64_t n, int batch_size, LastBatch mode, bool shuffle, uint32_t seed);
  /// Batch k of the current epoch; false when the epoch has fewer batches.
  bool GetBatch(uint64_t k, Batch* out) const;
  /// Moves to the next epoch, the current one having delivered its first `delivered` batches
  /// to the consumer (whether its completed last batch was among them decides kRoundBatch's
  /// carry). With none delivered nothing changes: a reset right after construction or after
  /// another reset keeps the order.
  void BeginEpoch(uint64_t delivered);
  uint64_t num_samples() const noexcept { return n_; }
  /// Batches of the current epoch.
  uint64_t num_batches() const noexcept;

 private:
  const std::vector<uint32_t>& Order(uint64_t index) const;
  void MakeOrders(uint64_t up_to);
  uint64_t n_;
  uint64_t batch_;
  LastBatch mode_;
  bool shuffle_;
  std::mt19937 rng_;
  uint64_t epoch_ = 0;                                // order index of the current epoch
  uint64_t begin_ = 0;                                // global position where it begins
  std::map<uint64_t, std::vector<uint32_t>> orders_;  // by order index (shuffled only)
};

}  // namespace weft::io_detail

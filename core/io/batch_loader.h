// weft io (internal) — MXNet's BatchLoader rule for iterators that stream examples in file order
// (CSVIter, LibSVMIter): batches are filled example by example; with round_batch the epoch's last
// batch is completed from the start of the data (pad = the examples taken from there) and the next
// epoch goes on after them, unless the consumer stopped before that batch.
//
// Thread-safety: one producer's state, used by one worker at a time (Restart with the workers
// stopped), as ThreadedDataIter::Producer is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace weft::io_detail {

class BatchLoader {
 public:
  explicit BatchLoader(bool round_batch) : round_batch_(round_batch) {}

  /// Rewinds the data for the next epoch (the caller's `rewind`) unless the last epoch's wrapped
  /// batch reached the consumer, in which case the data goes on from where it stopped.
  void Restart(uint64_t delivered, const std::function<void()>& rewind);

  /// Fills batch k of `batch` rows: `read(i)` reads the next example into row i (false at the end
  /// of the data), `rewind()` starts the data again. Returns the rows read, or 0 when the epoch has
  /// no batch k. *pad is set to the examples taken from the start again (round_batch) or the rows
  /// left unread (without round_batch: the caller fills them). `what` names the data in errors
  /// ("CSVIter: 'x.csv'"). Throws weft::Error for data with no examples and, with round_batch,
  /// for data with fewer examples than a batch.
  size_t Fill(uint64_t k, size_t batch, int* pad, const std::function<bool(size_t)>& read,
              const std::function<void()>& rewind, const std::string& what);

 private:
  bool round_batch_;
  bool done_ = false;      // the epoch's last batch was made
  int64_t wrap_seq_ = -1;  // the batch completed from the start of the data
};

}  // namespace weft::io_detail

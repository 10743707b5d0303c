// weft — iterators whose batches are made on worker threads (MXNet's PrefetcherIter over
// dmlc-core's ThreadedIter, the "efficient prefetcher" of MXNet's data-loading note):
//
//   ThreadedDataIter  the base of ImageRecordIter, CSVIter, NDArrayIter and PrefetchingIter, and
//                     of a user's own loader: a Producer makes batch k of the epoch on one of the
//                     worker threads; the consumer's Next() takes batches 0, 1, 2, ... in order;
//   PrefetchingIter   any DataIter made asynchronous: one worker calls its Next() ahead of the
//                     consumer (the registry wraps MNISTIter in it, as MXNet does).
//
// Behaviour shared by all of them:
//  - Bounded queue: workers run at most `ahead` batches (made or being made, not yet taken) ahead
//    of the consumer, and start at construction.
//  - Errors: an exception raised while making batch k is rethrown by the Next() that would have
//    returned batch k, after batches 0..k-1, whatever the timing (MXNet's exception-handling note:
//    a loader thread's error reaches the caller at Next or BeforeFirst); that epoch then ends
//    (Next() returns false) and BeforeFirst starts a new one, after which the iterator works as
//    before. An error of the restart itself (reopening a file) is thrown by BeforeFirst.
//  - BeforeFirst drains cleanly: it stops the workers, waits for the batches in production (a
//    Producer may give up early, see Worker::stopping), drops the batches not taken, restarts the
//    producer and the workers. It does nothing when no batch of the current epoch was asked for
//    (the batches made ahead are that epoch's first ones).
//  - Batches are values: a batch stays valid after later Next() calls (weft's producers make new
//    arrays, or views of data they do not change).
// Thread-safety: an iterator belongs to one thread; its Producer runs on the workers.
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <memory>

#include "weft/io.h"

namespace weft {

class WEFT_API ThreadedDataIter : public DataIter {
 public:
  /// Stops and joins the workers, then destroys the producer.
  ~ThreadedDataIter() override;
  ThreadedDataIter(const ThreadedDataIter&) = delete;
  ThreadedDataIter& operator=(const ThreadedDataIter&) = delete;

  void BeforeFirst() override;
  bool Next() override;
  NDArray GetData() override;
  NDArray GetLabel() override;
  int GetPadNum() override;
  std::vector<int> GetIndex() override;

  /// What a Produce call runs on.
  class WEFT_API Worker {
   public:
    /// The worker's number, 0..workers-1 (for per-worker scratch state).
    int index() const noexcept { return index_; }
    /// True once the batch being made is no longer wanted (BeforeFirst or the destructor waits):
    /// a long Produce may return false early; its result is dropped anyway.
    bool stopping() const;

   private:
    friend class ThreadedDataIter;
    Worker(int index, const void* state, uint64_t epoch) : index_(index), state_(state), epoch_(epoch) {}
    int index_;
    const void* state_;
    uint64_t epoch_;
  };

  /// Makes the batches. Owned by the iterator and destroyed after its workers have stopped, so it
  /// may own everything the workers use.
  class WEFT_API Producer {
   public:
    virtual ~Producer() = default;
    /// Makes batch k of the epoch into *out; false when the epoch has no batch k (then it has no
    /// batch after k either). Called on the workers, several at once for different k (one call
    /// per worker at a time). An exception reaches the consumer as described above.
    virtual bool Produce(uint64_t k, DataBatch* out, const Worker& worker) = 0;
    /// Sets up the next epoch, on the consumer's thread with the workers stopped: `delivered` batches
    /// of the epoch that ends reached the consumer.
    virtual void Restart(uint64_t delivered) = 0;
  };

 protected:
  ThreadedDataIter();
  /// Takes the producer and starts `workers` threads (>= 1), `ahead` (>= 1) batches ahead.
  void StartWorkers(std::unique_ptr<Producer> producer, int workers, size_t ahead);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Ends the loader threads of every data iterator for good, each after the batch it is making:
/// for process shutdown (MXNotifyShutdown calls it; an exit handler calls it before the engine and
/// the plugins shut down, so exit() while an iterator is mid-epoch never runs a loader thread
/// against a torn-down engine or device). Afterwards Next() of any iterator, old or new, throws
/// weft::Error saying so; destroying them stays safe. Irreversible, thread-safe, idempotent.
WEFT_API void StopDataIterWorkers() noexcept;

class WEFT_API PrefetchingIter : public ThreadedDataIter {
 public:
  /// Wraps `base`, whose Next() then runs on one worker thread (one call at a time, never during
  /// its BeforeFirst, which runs on the caller's thread with the worker stopped), up to
  /// max(prefetch_buffer, 1) batches ahead. Throws weft::Error for a null iterator or a negative
  /// prefetch_buffer.
  PrefetchingIter(std::unique_ptr<DataIter> base, int prefetch_buffer = 4);
  /// The wrapped iterator's (read at construction).
  std::vector<DataDesc> ProvideData() const override { return data_desc_; }
  std::vector<DataDesc> ProvideLabel() const override { return label_desc_; }

 private:
  std::vector<DataDesc> data_desc_, label_desc_;
};

}  // namespace weft

// weft — PrefetchingIter: any DataIter made asynchronous (MXNet's PrefetcherIter). A worker
// thread calls the wrapped iterator's Next() ahead of the consumer and queues up to
// prefetch_buffer batches; the consumer's Next() takes them in order. Use it for an iterator of
// your own whose Next() reads or computes (the registry wraps MNISTIter in it, as MXNet does).
//
//   PrefetchingIter it(std::make_unique<MyIter>(...), /*prefetch_buffer=*/4);
//
// The wrapped iterator's Next() runs on the worker thread (one call at a time, never
// concurrently with its BeforeFirst, which runs on the caller's thread while the worker is
// stopped); its batches must stay valid after its next Next() (weft's iterators hand out new
// arrays, or views of data they do not change).
// Errors: an exception from the wrapped Next() is rethrown by the Next() that would have returned
// that batch, after the batches before it; the epoch then ends until BeforeFirst. An exception
// from the wrapped BeforeFirst is thrown by BeforeFirst. (MXNet's exception-handling note: errors
// of loader threads reach the caller at Next or BeforeFirst.)
// BeforeFirst drains the queue (waits for the call in progress) and restarts the wrapped iterator;
// it does nothing when no batch of the epoch was taken yet (the queued batches are the first).
// Thread-safety: the iterator belongs to one thread.
#pragma once

#include "weft/export.h"

#include <memory>

#include "weft/io.h"

namespace weft {

class WEFT_API PrefetchingIter : public DataIter {
 public:
  /// Starts the worker, which begins fetching at once. Throws weft::Error for a null iterator or
  /// prefetch_buffer < 0 (0 means 1: one batch ahead).
  PrefetchingIter(std::unique_ptr<DataIter> base, int prefetch_buffer = 4);
  ~PrefetchingIter() override;
  PrefetchingIter(const PrefetchingIter&) = delete;
  PrefetchingIter& operator=(const PrefetchingIter&) = delete;

  void BeforeFirst() override;
  bool Next() override;
  NDArray GetData() override;
  NDArray GetLabel() override;
  int GetPadNum() override;
  std::vector<int> GetIndex() override;
  /// The wrapped iterator's (read before the worker starts).
  std::vector<DataDesc> ProvideData() const override;
  std::vector<DataDesc> ProvideLabel() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

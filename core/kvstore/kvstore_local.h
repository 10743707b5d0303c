// weft core — KVStoreLocal: the single-process KVStore ("local", "device") over a Comm, as MXNet's
// src/kvstore/kvstore_local.h. Per key it keeps the stored value; a push is summed by the Comm
// (CommCPU: on cpu(0); CommDevice: on a device of the pushers), then the updater or optimizer
// updates the stored value with the sum (after the stored value moved to the sum's device, once),
// or, without one, the sum replaces it; a pull broadcasts the stored value to the outs. All of it
// is engine work (copies and device kernels); nothing here reads array data on the host.
//
// The distributed stores (issue #17) derive from this class: they reuse comm() for the local sum
// and Stored() for the worker's copy (see kvstore_impl.h for the hooks they override).
//
// Pulls of a lazily updated value (sparse training: a row_sparse push, an optimizer or updater
// whose lazy update writes only the pushed rows, then a pull of the whole value into the same
// dense out, every batch) copy only the rows written since the out's last pull instead of the
// whole value, when that is provably the same result: the out is the key's latest out (one is
// remembered per key), nothing wrote it since (NDArray::write_count, WritesCounted), and every
// write of the stored value since was one such lazy update (reported through LazyWriteObserver).
// When nothing changed at all, nothing is copied. Anything else copies the whole value, as MXNet.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/comm.h"
#include "kvstore/kvstore_impl.h"
#include "weft/internal/sparse_update.h"

namespace weft::kv {

class KVStoreLocal : public KVStore::Impl {
 public:
  /// `type` as given to KVStore::Create; `comm` the reduction strategy (not null).
  KVStoreLocal(std::string type, std::unique_ptr<Comm> comm);
  ~KVStoreLocal() override;

 protected:
  void InitImpl(const Key& key, const NDArray& value) override;
  bool InitSharedImpl(const Key& key, const NDArray& value) override;
  /// Row_sparse values (every one, with an updater): their row_sparse sum, on the stored value's
  /// device, goes to the updater (the optimizer then updates only those rows: lazy_update).
  bool RowSparsePushes() const override { return true; }
  void PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) override;
  void PullImpl(const Key& key, const std::vector<NDArray>& outs, int priority) override;
  /// Gathers the rows from the stored value (after FlushPending); nothing travels.
  void PullRowSparseImpl(const Key& key, const std::vector<NDArray>& outs,
                         const std::vector<std::vector<int64_t>>& rows, int priority) override;
  void OnGradientCompressionChanged() override;

  Comm& comm() { return *comm_; }
  /// The stored value of an initialised key (weft::Error naming the key otherwise).
  NDArray& Stored(const Key& key);
  /// The end of a push: with an updater, moves the stored value of `key` to `sum`'s device (once)
  /// and applies the update there; without one, copies `sum` into it (nothing when `sum` is the
  /// stored value's memory). Pushed; returns at once.
  void UpdateStored(const Key& key, const NDArray& sum, int priority);

 private:
  // The lazy updates of a key's stored value, consecutive writes of it, oldest first.
  struct LazyWrite {
    uint64_t stored_writes;  // the stored value's write_count() after the write
    NDArray grad;            // row_sparse: its stored rows are the rows written
    uint64_t grad_writes;    // grad.write_count() then (a later write of grad voids the entry)
  };
  struct RowLog {
    NDArray stored;  // the stored value the entries are writes of
    std::deque<LazyWrite> writes;
  };
  // What an out of a pull held: `stored` as of its write count `stored_writes`.
  struct Pulled {
    NDArray out;
    uint64_t out_writes = 0;
    NDArray stored;
    uint64_t stored_writes = 0;
  };
  /// After a row_sparse push's update: logs its writes of `stored` (write count `before` the
  /// update) when they were all lazy updates, else clears the log.
  void LogLazyWrites(const Key& key, const NDArray& stored, uint64_t before,
                     const std::vector<LazyWriteObserver::Write>& reported);
  /// Brings `out` up to `stored` by copying only the rows written since its last pull (`last`: the
  /// record of that pull, or null); pushed. False (nothing done) when that is not known to give
  /// the same result.
  bool PullChangedRows(const Key& key, const NDArray& stored, const NDArray& out, const Pulled* last, int priority);

  std::unique_ptr<Comm> comm_;
  std::map<std::string, NDArray> stored_;  // by Key::id()
  std::map<std::string, RowLog> row_logs_;
  std::map<std::string, std::deque<Pulled>> pulled_;  // by key: its latest outs, the last pulled last
};

}  // namespace weft::kv

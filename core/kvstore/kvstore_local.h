// weft core — KVStoreLocal: the single-process KVStore ("local", "device") over a Comm, as MXNet's
// src/kvstore/kvstore_local.h. Per key it keeps the stored value; a push is summed by the Comm
// (CommCPU: on cpu(0); CommDevice: on a device of the pushers), then the updater or optimizer
// updates the stored value with the sum (after the stored value moved to the sum's device, once),
// or, without one, the sum replaces it; a pull broadcasts the stored value to the outs. All of it
// is engine work (copies and device kernels); nothing here reads array data on the host.
//
// The distributed stores (issue #17) derive from this class: they reuse comm() for the local sum
// and Stored() for the worker's copy (see kvstore_impl.h for the hooks they override).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/comm.h"
#include "kvstore/kvstore_impl.h"

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
  std::unique_ptr<Comm> comm_;
  std::map<std::string, NDArray> stored_;  // by Key::id()
};

}  // namespace weft::kv

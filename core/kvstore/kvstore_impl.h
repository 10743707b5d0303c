// weft core — KVStore::Impl, the interface every KVStore implementation provides, and the part
// they share. MXNet splits its KVStore the same way (include/mxnet/kvstore.h's abstract KVStore;
// src/kvstore/kvstore_local.h, kvstore_dist.h, kvstore_nccl.h; the reduction strategy in
// src/kvstore/comm.h):
//
//   weft::KVStore (weft/kvstore.h)   the public API: forwards every call here
//   KVStore::Impl (this file)        key table and argument checks, the lock, the updater or
//                                    optimizer, compression settings, optimizer-state files;
//                                    calls the hooks below with checked arguments
//   kv::KVStoreLocal                 "local" and "device" (kvstore_local.h): sums pushes through
//                                    a kv::Comm, updates the stored value, broadcasts pulls
//   kv::Comm (comm.h)                how the values of one push are summed: CommCPU on cpu(0),
//                                    CommDevice on a device of the pushers; 2-bit compression
//
// Where the distributed stores of issue #17 plug in: a KVStoreDist derives from KVStoreLocal (as
// MXNet's KVStoreDist derives from KVStoreLocal) and overrides the hooks:
//   rank(), num_workers(), Barrier()     from its transport communicator;
//   InitImpl                             KVStoreLocal's, then rank 0's value is broadcast and a
//                                        Barrier follows (MXNet: rank 0's value wins);
//   PushImpl                             reduces the local devices' values first through comm()
//                                        (the same CommCPU / CommDevice), compresses the sum with
//                                        the _quantize_2bit op when compression() is on, then
//                                        allreduces (dist_sync, dist_device_sync, nccl: every
//                                        worker then applies ApplyUpdate to its copy) or sends it
//                                        to the key's server (dist_async: the server applies the
//                                        optimizer); small keys fused into buckets in key order;
//   PullImpl                             receives the value (parameter server) into the stored
//                                        array, then comm()->Broadcast to the outs;
//   OnOptimizerChanged                   dist_async: sends the optimizer's Serialize() to the
//                                        servers (MXNet's kSetOptimizer command);
//   Gather/ScatterOptimizerStates        server-side optimizers: ask the servers (the file itself
//                                        is written and read here).
// The transport itself (sdk/transport.h) is called only from those overrides.
//
// Thread-safety: the public methods of KVStore::Impl take the store's lock, so the hooks run one
// at a time, under the lock; they push engine operations and return without waiting (except
// Barrier, LoadOptimizerStates and SaveOptimizerStates, which wait by nature).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "weft/kvstore.h"

namespace weft::kv {

/// A key as the store sees it: int and string keys in one table, the kind remembered.
struct Key {
  bool is_string = false;
  int int_key = 0;
  std::string str_key;
  /// Unique across kinds: "i:3", "s:fc1_weight" (what Comm and implementations index by).
  std::string id() const { return is_string ? "s:" + str_key : "i:" + std::to_string(int_key); }
  /// For messages: 3, 'fc1_weight'.
  std::string display() const { return is_string ? "'" + str_key + "'" : std::to_string(int_key); }
};
inline Key IntKey(int k) { return Key{false, k, {}}; }
inline Key StrKey(const std::string& k) { return Key{true, 0, k}; }

/// 2-bit gradient compression settings (KVStore::SetGradientCompression).
struct GradientCompression {
  bool enabled = false;
  float threshold = 0.5f;
};

}  // namespace weft::kv

namespace weft {

// Hidden: a nested class takes KVStore's (exported) visibility unless told otherwise.
class WEFT_HIDDEN KVStore::Impl {
 public:
  explicit Impl(std::string type);
  virtual ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const std::string& type() const { return type_; }

  // ---- the public operations: lock, check, call the hooks (errors as weft/kvstore.h) ----------
  void Init(const kv::Key& key, const NDArray& value, bool in_place = false);
  void Push(const kv::Key& key, const std::vector<NDArray>& values, int priority);
  void Pull(const kv::Key& key, const std::vector<NDArray>& outs, int priority);
  void PushPull(const kv::Key& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs, int priority);
  void PullRowSparse(const kv::Key& key, const std::vector<NDArray>& outs, const std::vector<NDArray>& row_ids,
                     int priority);
  void SetOptimizer(std::unique_ptr<Optimizer> optimizer);
  Optimizer* optimizer() const;
  void SetUpdater(Updater updater);
  void SetUpdater(StrUpdater updater);
  void SetGradientCompression(const std::map<std::string, std::string>& params);
  /// The optimizer-state file (format: weft/kvstore.h); where the states live is the
  /// implementation's (GatherOptimizerStates / ScatterOptimizerStates).
  void SaveOptimizerStates(const std::string& file_name, bool dump_optimizer);
  void LoadOptimizerStates(const std::string& file_name);

  // ---- the process group: single-process stores are rank 0 of 1 and Barrier does nothing -----
  virtual int rank() const { return 0; }
  virtual int num_workers() const { return 1; }
  virtual void Barrier() {}

 protected:
  // ---- hooks, called under the lock with checked arguments ------------------------------------
  /// First Init of `key`: keep a copy of `value` (float32, not none).
  virtual void InitImpl(const kv::Key& key, const NDArray& value) = 0;
  /// First Init of `key` keeping `value` itself as the stored value; false (nothing done) where
  /// the store cannot (then InitImpl copies). Default: false.
  virtual bool InitSharedImpl(const kv::Key&, const NDArray&) { return false; }
  /// Whether PushImpl takes row_sparse values (then it gets them when every value of a push is
  /// row_sparse and an updater is set, and must hand the updater their row_sparse sum; otherwise
  /// sparse values arrive dense). Default: false.
  virtual bool RowSparsePushes() const { return false; }
  /// One push of `key`: 1 or more values of the key's shape and dtype, on any devices.
  virtual void PushImpl(const kv::Key& key, const std::vector<NDArray>& values, int priority) = 0;
  /// One pull of `key` into outs of the key's shape and dtype (possibly none given).
  virtual void PullImpl(const kv::Key& key, const std::vector<NDArray>& outs, int priority) = 0;
  /// A row_sparse_pull of `key` into `outs` (row_sparse, of the key's shape and dtype) of the rows
  /// `rows[i]` (sorted, unique, in range), synchronous.
  virtual void PullRowSparseImpl(const kv::Key& key, const std::vector<NDArray>& outs,
                                 const std::vector<std::vector<int64_t>>& rows, int priority) = 0;
  /// A Push of `values` then a Pull into `outs` (checked as both). Default: PushImpl, PullImpl.
  /// Stores may fuse the two (the Gloo store allreduces into the out).
  virtual void PushPullImpl(const kv::Key& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                            int priority) {
    PushImpl(key, values, priority);
    PullImpl(key, outs, priority);
  }
  /// After SetOptimizer / SetUpdater changed what ApplyUpdate does. Default: nothing.
  virtual void OnUpdaterChanged() {}
  /// After SetGradientCompression changed compression(). Default: nothing.
  virtual void OnGradientCompressionChanged() {}
  /// Issues work the store holds back (pushes waiting in a fusion bucket), before the updater
  /// changes and before optimizer states are saved or loaded. Default: nothing.
  virtual void FlushPending() {}
  /// For SaveOptimizerStates (an optimizer is set; pending work flushed): the states as named
  /// arrays ("<index>:<k>", each of its key's shape) and the optimizer's Serialize() JSON in
  /// `meta_json`. Default: the optimizer set here. Parameter-server stores ask the servers.
  virtual std::map<std::string, NDArray> GatherOptimizerStates(std::string* meta_json);
  /// For LoadOptimizerStates: installs `states` (names as above) and `meta_json` (Serialize()
  /// JSON with "type"). Default: into the optimizer set here. Parameter-server stores send each
  /// server its keys' parts.
  virtual void ScatterOptimizerStates(const std::string& meta_json, const std::map<std::string, NDArray>& states);
  /// FlushPending under the store's lock (for overrides of calls that do not take it: Barrier).
  void FlushPendingLocked() {
    std::lock_guard<std::mutex> lock(mu_);
    FlushPending();
  }

  // ---- for implementations ----------------------------------------------------------------------
  /// True when an optimizer or an updater is set (pushes update the stored value; without one a
  /// push replaces it).
  bool has_updater() const;
  /// Applies the optimizer (index of `key`) or the updater to `stored` with the pushed sum
  /// `merged` (both on one device for optimizers). Throws weft::Error when only an updater of the
  /// other key kind is set.
  void ApplyUpdate(const kv::Key& key, const NDArray& merged, NDArray* stored);
  /// The values a Push hands to PushImpl: as given, or with sparse ones made dense (see
  /// RowSparsePushes).
  std::vector<NDArray> PushedValues(const std::vector<NDArray>& values) const;
  const kv::GradientCompression& compression() const { return compression_; }
  /// The optimizer set (null when none); for stores that run it elsewhere (parameter servers).
  Optimizer* current_optimizer() const { return optimizer_.get(); }
  /// The optimizer index `key` gets (int keys: the key; string keys: in order of first Init).
  /// In InitImpl: the index the key being initialised is about to get.
  int OptIndex(const kv::Key& key) const {
    auto it = keys_.find(key.id());
    return it != keys_.end() ? it->second.opt_index : (key.is_string ? next_index_ : key.int_key);
  }

 private:
  struct KeyInfo {
    Shape shape;
    DType dtype;
    int opt_index;
  };
  void CheckKind(const kv::Key& key);
  void CheckPush(const kv::Key& key, const KeyInfo& info, const std::vector<NDArray>& values, const char* op);
  const KeyInfo& Find(const kv::Key& key, const char* op);
  void CheckArray(const kv::Key& key, const KeyInfo& info, const NDArray& a, const char* op, const char* what,
                  size_t i) const;

  std::string type_;
  mutable std::mutex mu_;
  std::map<std::string, KeyInfo> keys_;
  std::optional<bool> string_keys_;  // set by the first key used
  int next_index_ = 0;               // optimizer index of the next string key
  std::unique_ptr<Optimizer> optimizer_;
  Updater updater_;
  StrUpdater str_updater_;
  kv::GradientCompression compression_;
  bool pushed_ = false;
};

}  // namespace weft

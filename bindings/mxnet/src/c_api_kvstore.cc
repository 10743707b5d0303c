// MXNet C API: KVStore — create, init/push/pull/pushpull with int or string keys, updaters from the
// frontend, gradient compression, rank/size/barrier, node roles.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common.h"
#include "frontend_callback.h"
#include "kvstore_optimizer.h"
#include "weft/env.h"
#include "weft/kvstore.h"
#include "weft/sparse.h"

using namespace weft;
using namespace weft::mx;

namespace {

// A store, or (in a server or scheduler process of a distributed job) the handle MXNet's frontend
// makes before it calls MXKVStoreRunServer, which has no store of its own.
struct KVStoreH : Handle<HandleKind::kKVStore> {
  std::unique_ptr<KVStore> store;
  std::string role;  // "worker", "server" or "scheduler"
  std::string type;  // as the frontend named it (kv.type returns it)
};

// weft's store for one of MXNet's type names: MXNet's local variants (where the reduction and the
// update run) are weft's local (cpu) or device store; a bare "dist" is synchronous.
std::string WeftType(const std::string& mxnet_type) {
  if (mxnet_type == "local_update_cpu" || mxnet_type == "local_allreduce_cpu") return "local";
  if (mxnet_type == "local_allreduce_device") return "device";
  if (mxnet_type == "dist") return "dist_sync";
  return mxnet_type;
}
KVStoreH& KVH(KVStoreHandle h) { return *Handle<HandleKind::kKVStore>::From<KVStoreH>(h); }
KVStore& KV(KVStoreHandle h) {
  KVStoreH& k = KVH(h);
  if (!k.store) Fail("this process is a KVStore {} (DMLC_ROLE / WEFT_ROLE): it has no store to use", k.role);
  return *k.store;
}

// MXNet's command ids (kvstore_server.py's command types).
enum Command { kController = 0, kSetMultiPrecision = 1, kStopServer = 2, kSyncMode = 3, kSetGradientCompression = 4 };

// How Group treats row_sparse and csr arrays. weft's stores hold dense values: a sparse value given
// to init is converted to dense (kValues). Pushed values go to the store as they are
// (kPushValues): KVStore::Push hands row_sparse sums to the updater (lazy updates, as MXNet) or
// makes them dense. A sparse pull target is skipped under ignore_sparse
// (kv.pull's default), as MXNet's GroupKVPairsPull does; without it (kPullAll) it receives the
// whole value through a dense temporary (`sparse_outs` pairs the temporary with the target,
// for PullSparseOuts). pushpull refuses sparse outs (kPullStrict).
enum class SparseUse { kValues, kPushValues, kPullIgnore, kPullAll, kPullStrict };
using SparseOuts = std::vector<std::pair<NDArray, NDArray>>;

bool IsSparse(const NDArray& a) {
  return a.storage_type() == StorageType::kRowSparse || a.storage_type() == StorageType::kCSR;
}

// MXNet's frontends pass one (key, value) pair per device value; pairs with equal keys are one
// key's values (MXNet's GroupKVPairs), kept in the order keys first appear.
template <typename K>
std::pair<std::vector<K>, std::vector<std::vector<NDArray>>> Group(uint32_t num, const K* keys, NDArrayHandle* vals,
                                                                   SparseUse use, SparseOuts* sparse_outs = nullptr) {
  std::vector<K> uniq;
  std::vector<std::vector<NDArray>> grouped;
  if (num > 0) {
    NotNull(keys, "keys");
    NotNull(vals, "vals");
  }
  for (uint32_t i = 0; i < num; ++i) {
    NDArray a = ND(vals[i]);
    if (IsSparse(a)) {
      if (use == SparseUse::kPullIgnore) continue;
      if (use == SparseUse::kPullStrict) {
        Fail("Unexpected storage type detected during kvstore pull: {} (key '{}'); use row_sparse_pull",
             StorageTypeName(a.storage_type()), keys[i]);
      }
      if (use == SparseUse::kPullAll) {
        NDArray temp(a.GetShape(), a.GetContext(), false, a.GetDType());
        NotNull(sparse_outs, "sparse_outs")->emplace_back(temp, a);
        a = temp;
      } else if (use == SparseUse::kValues) {
        a = CastStorage(a, StorageType::kDefault);
      }
    }
    size_t j = 0;
    while (j < uniq.size() && !(uniq[j] == keys[i])) ++j;
    if (j == uniq.size()) {
      uniq.push_back(keys[i]);
      grouped.emplace_back();
    }
    grouped[j].push_back(std::move(a));
  }
  return {std::move(uniq), std::move(grouped)};
}

std::vector<std::string> StrKeys(uint32_t num, const char** keys) {
  std::vector<std::string> out;
  if (num > 0) NotNull(keys, "keys");
  for (uint32_t i = 0; i < num; ++i) out.emplace_back(NotNull(keys[i], "key"));
  return out;
}

// kv.pull(..., ignore_sparse=False): the pulled values go into their sparse targets.
template <typename K>
void Pull(KVStore& kv, uint32_t num, const K* keys, NDArrayHandle* vals, int priority, bool ignore_sparse) {
  SparseOuts sparse_outs;
  auto [k, v] = Group(num, keys, vals, ignore_sparse ? SparseUse::kPullIgnore : SparseUse::kPullAll, &sparse_outs);
  kv.Pull(k, v, priority);
  for (auto& [temp, target] : sparse_outs) CastStorageInto(temp, target);
}

template <typename K>
void Init(KVStore& kv, uint32_t num, const K* keys, NDArrayHandle* vals) {
  auto [uniq, grouped] = Group(num, keys, vals, SparseUse::kValues);
  for (size_t i = 0; i < uniq.size(); ++i) {
    if (grouped[i].size() != 1)
      Fail("KVStore.init: key '{}' is given {} values; init takes one", uniq[i], grouped[i].size());
    kv.Init(uniq[i], grouped[i][0]);
  }
}

template <typename K>
void PushPull(KVStore& kv, uint32_t vnum, const K* vkeys, uint32_t onum, const K* okeys, NDArrayHandle* vals,
              NDArrayHandle* outs, int priority) {
  auto [vk, vg] = Group(vnum, vkeys, vals, SparseUse::kPushValues);
  auto [ok, og] = Group(onum, okeys, outs, SparseUse::kPullStrict);
  if (vk != ok) Fail("KVStore.pushpull: the keys of the values and of the outs differ");
  if (vk.size() == 1) {
    kv.PushPull(vk[0], vg[0], og[0], priority);
  } else {
    // MXNet pushes every key before pulling any: a value array that is also an out of another key
    // is pushed with what it held before this call.
    kv.Push(vk, vg, priority);
    kv.Pull(ok, og, priority);
  }
}

// kv.broadcast: init the keys with `vals`, then pull them into `outs`. On a store of this process
// (local, device) the stored value is then the init value bit for bit, so an out that is the
// value's own array is not written again: Gluon's Trainer broadcasts a parameter's first copy into
// all its copies, also in the middle of a recorded forward pass (a deferred initialisation
// finished there) after the tape kept that copy as an input, and the rewrite would make the
// backward refuse the kept input as overwritten (MXNet rewrites the same bits, which its tape does
// not notice). A dist store's init may come from another worker, so there every out is pulled.
template <typename K>
void Broadcast(KVStore& kv, uint32_t vnum, const K* vkeys, uint32_t onum, const K* okeys, NDArrayHandle* vals,
               NDArrayHandle* outs, int priority) {
  Init(kv, vnum, vkeys, vals);
  auto [k, o] = Group(onum, okeys, outs, SparseUse::kPullIgnore);
  std::string type = kv.type();
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
  if (type == "local" || type == "device") {
    auto [vk, vv] = Group(vnum, vkeys, vals, SparseUse::kValues);
    for (size_t i = 0; i < k.size(); ++i) {
      const size_t j = static_cast<size_t>(std::find(vk.begin(), vk.end(), k[i]) - vk.begin());
      if (j == vk.size()) continue;  // Pull names the key that was not initialised
      const NDArray& v = vv[j][0];
      std::erase_if(o[i], [&](const NDArray& a) {
        return a.SharesChunkWith(v) && a.offset() == v.offset() && a.GetShape() == v.GetShape() &&
               a.GetDType() == v.GetDType();
      });
    }
    for (size_t i = k.size(); i-- > 0;) {
      if (!o[i].empty()) continue;
      k.erase(k.begin() + static_cast<std::ptrdiff_t>(i));
      o.erase(o.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  if (!k.empty()) kv.Pull(k, o, priority);
}

// kv.row_sparse_pull(key, out, row_ids): each out (row_sparse) receives the rows of the key's value
// that its row_ids name (KVStore::PullRowSparse: on the parameter servers only those rows travel).
template <typename K>
void RowSparsePull(KVStore& kv, uint32_t num, const K* keys, NDArrayHandle* vals, const NDArrayHandle* row_ids,
                   int priority) {
  if (num > 0) {
    NotNull(keys, "keys");
    NotNull(vals, "vals");
    NotNull(row_ids, "row_ids");
  }
  for (uint32_t i = 0; i < num; ++i) {
    const NDArray& out = ND(vals[i]);
    if (out.storage_type() != StorageType::kRowSparse)
      Fail("KVStore.row_sparse_pull: key '{}': out must be row_sparse, not {}", keys[i],
           StorageTypeName(out.storage_type()));
    kv.PullRowSparse(keys[i], {out}, {ND(const_cast<NDArrayHandle>(row_ids[i]))}, priority);
  }
}

// The frontend's updater, called with new handles the frontend takes ownership of (it frees them
// when its NDArray wrappers go), as MXNet does.
void SetUpdaters(KVStore& kv, MXKVStoreUpdater* updater, MXKVStoreStrUpdater* str_updater, void* handle) {
  if (updater) {
    kv.SetUpdater(KVStore::Updater([=](int key, const NDArray& recv, NDArray* local) {
      CallFrontend("the KVStore updater", [&] { updater(key, NewND(recv), NewND(*local), handle); });
    }));
  }
  if (str_updater) {
    kv.SetUpdater(KVStore::StrUpdater([=](const std::string& key, const NDArray& recv, NDArray* local) {
      CallFrontend("the KVStore updater", [&] { str_updater(key.c_str(), NewND(recv), NewND(*local), handle); });
    }));
  }
}

// MXNet's node role, from the launcher's environment (DMLC_ROLE, or weft-launch's WEFT_ROLE).
std::string Role() {
  if (auto r = GetEnv("WEFT_ROLE")) return *r;
  if (auto r = GetEnv("DMLC_ROLE")) return *r;
  return "worker";
}

}  // namespace

extern "C" {

int MXKVStoreCreate(const char* type, KVStoreHandle* out) {
  API_BEGIN();
  auto h = std::make_unique<KVStoreH>();
  h->role = Role();
  h->type = NotNull(type, "type");
  if (h->role == "worker") h->store = KVStore::Create(WeftType(h->type));
  *NotNull(out, "out") = h.release();
  API_END();
}

int MXKVStoreFree(KVStoreHandle handle) {
  API_BEGIN();
  delete &KVH(handle);
  API_END();
}

// The frontend's commands to the servers. kController carries the pickled optimizer of
// kv.set_optimizer on a distributed store: it becomes the store's weft optimizer (see
// kvstore_optimizer.h), which the store runs where it updates (servers or every worker).
int MXKVStoreSendCommmandToServers(KVStoreHandle handle, int cmd_id, const char* cmd_body) {
  API_BEGIN();
  KVStore& kv = KV(handle);
  switch (cmd_id) {
    case kController:
      kv.SetOptimizer(OptimizerFromPickle(NotNull(cmd_body, "cmd_body")));
      break;
    case kSetMultiPrecision:
      Fail("KVStore: multi-precision updates are not supported (weft's stores update float32 weights)");
    case kStopServer:
    case kSyncMode:
      break;  // weft's servers stop with their job, and the mode is the store's type
    case kSetGradientCompression:
      Fail("KVStore: set gradient compression with kv.set_gradient_compression on the worker");
    default:
      Fail("KVStore: unknown server command {}", cmd_id);
  }
  API_END();
}

// A server process of the job (MXNet's frontend runs this at import when DMLC_ROLE / WEFT_ROLE is
// "server"): serves the workers until the job ends. The frontend's controller never gets a command:
// workers send weft optimizers, not pickles. A scheduler (ps-lite's third role) has nothing to do
// in weft's jobs and returns at once.
int MXKVStoreRunServer(KVStoreHandle handle, MXKVStoreServerController* /*controller*/, void* /*controller_handle*/) {
  API_BEGIN();
  KVStoreH& k = KVH(handle);
  if (k.role == "server") KVStore::RunServer();
  API_END();
}

int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals) {
  API_BEGIN();
  Init(KV(handle), num, keys, vals);
  API_END();
}

int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals) {
  API_BEGIN();
  const std::vector<std::string> k = StrKeys(num, keys);
  Init(KV(handle), num, k.data(), vals);
  API_END();
}

int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int priority) {
  API_BEGIN();
  auto [k, v] = Group(num, keys, vals, SparseUse::kPushValues);
  KV(handle).Push(k, v, priority);
  API_END();
}

int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int priority) {
  API_BEGIN();
  const std::vector<std::string> sk = StrKeys(num, keys);
  auto [k, v] = Group(num, sk.data(), vals, SparseUse::kPushValues);
  KV(handle).Push(k, v, priority);
  API_END();
}

int MXKVStorePullWithSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int priority,
                            bool ignore_sparse) {
  API_BEGIN();
  Pull(KV(handle), num, keys, vals, priority, ignore_sparse);
  API_END();
}

int MXKVStorePullWithSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int priority,
                              bool ignore_sparse) {
  API_BEGIN();
  const std::vector<std::string> sk = StrKeys(num, keys);
  Pull(KV(handle), num, sk.data(), vals, priority, ignore_sparse);
  API_END();
}

int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int priority) {
  return MXKVStorePullWithSparse(handle, num, keys, vals, priority, true);
}

int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int priority) {
  return MXKVStorePullWithSparseEx(handle, num, keys, vals, priority, true);
}

int MXKVStorePushPull(KVStoreHandle handle, uint32_t vnum, const int* vkeys, uint32_t onum, const int* okeys,
                      NDArrayHandle* vals, NDArrayHandle* outs, int priority) {
  API_BEGIN();
  PushPull(KV(handle), vnum, vkeys, onum, okeys, vals, outs, priority);
  API_END();
}

int MXKVStorePushPullEx(KVStoreHandle handle, uint32_t vnum, const char** vkeys, uint32_t onum, const char** okeys,
                        NDArrayHandle* vals, NDArrayHandle* outs, int priority) {
  API_BEGIN();
  const std::vector<std::string> vk = StrKeys(vnum, vkeys), ok = StrKeys(onum, okeys);
  PushPull(KV(handle), vnum, vk.data(), onum, ok.data(), vals, outs, priority);
  API_END();
}

int MXKVStoreBroadcast(KVStoreHandle handle, uint32_t vnum, const int* vkeys, uint32_t onum, const int* okeys,
                       NDArrayHandle* vals, NDArrayHandle* outs, int priority) {
  API_BEGIN();
  Broadcast(KV(handle), vnum, vkeys, onum, okeys, vals, outs, priority);
  API_END();
}

int MXKVStoreBroadcastEx(KVStoreHandle handle, uint32_t vnum, const char** vkeys, uint32_t onum, const char** okeys,
                         NDArrayHandle* vals, NDArrayHandle* outs, int priority) {
  API_BEGIN();
  const std::vector<std::string> vk = StrKeys(vnum, vkeys), ok = StrKeys(onum, okeys);
  Broadcast(KV(handle), vnum, vk.data(), onum, ok.data(), vals, outs, priority);
  API_END();
}

int MXKVStorePullRowSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
                           const NDArrayHandle* row_ids, int priority) {
  API_BEGIN();
  RowSparsePull(KV(handle), num, keys, vals, row_ids, priority);
  API_END();
}

int MXKVStorePullRowSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                             const NDArrayHandle* row_ids, int priority) {
  API_BEGIN();
  const std::vector<std::string> sk = StrKeys(num, keys);
  RowSparsePull(KV(handle), num, sk.data(), vals, row_ids, priority);
  API_END();
}

int MXKVStoreSetUpdater(KVStoreHandle handle, MXKVStoreUpdater updater, void* updater_handle) {
  API_BEGIN();
  SetUpdaters(KV(handle), updater, nullptr, updater_handle);
  API_END();
}

int MXKVStoreSetUpdaterEx(KVStoreHandle handle, MXKVStoreUpdater updater, MXKVStoreStrUpdater str_updater,
                          void* updater_handle) {
  API_BEGIN();
  SetUpdaters(KV(handle), updater, str_updater, updater_handle);
  API_END();
}

int MXKVStoreSetGradientCompression(KVStoreHandle handle, uint32_t num_params, const char** keys, const char** vals) {
  API_BEGIN();
  KV(handle).SetGradientCompression(KeyValues(static_cast<int>(num_params), keys, vals, "set_gradient_compression"));
  API_END();
}

int MXKVStoreGetType(KVStoreHandle handle, const char** type) {
  API_BEGIN();
  KVStoreH& k = KVH(handle);
  *NotNull(type, "type") = k.type.c_str();
  API_END();
}

int MXKVStoreGetRank(KVStoreHandle handle, int* ret) {
  API_BEGIN();
  *NotNull(ret, "ret") = KV(handle).rank();
  API_END();
}

int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret) {
  API_BEGIN();
  *NotNull(ret, "ret") = KV(handle).num_workers();
  API_END();
}

int MXKVStoreBarrier(KVStoreHandle handle) {
  API_BEGIN();
  KV(handle).Barrier();
  API_END();
}

// weft's stores always synchronise at exit as their transports require; the flag is accepted.
int MXKVStoreSetBarrierBeforeExit(KVStoreHandle handle, const int /*barrier_before_exit*/) {
  API_BEGIN();
  KV(handle);
  API_END();
}

// weft's stores fail naming a dead peer instead of counting them; none is dead while this runs.
int MXKVStoreGetNumDeadNode(KVStoreHandle handle, const int /*node_id*/, int* number, const int /*timeout_sec*/) {
  API_BEGIN();
  KV(handle);
  *NotNull(number, "number") = 0;
  API_END();
}

int MXKVStoreIsWorkerNode(int* ret) {
  API_BEGIN();
  *NotNull(ret, "ret") = Role() == "worker" ? 1 : 0;
  API_END();
}

int MXKVStoreIsServerNode(int* ret) {
  API_BEGIN();
  *NotNull(ret, "ret") = Role() == "server" ? 1 : 0;
  API_END();
}

int MXKVStoreIsSchedulerNode(int* ret) {
  API_BEGIN();
  *NotNull(ret, "ret") = Role() == "scheduler" ? 1 : 0;
  API_END();
}

}  // extern "C"

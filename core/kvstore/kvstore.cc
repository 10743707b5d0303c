// weft core — the public KVStore: forwards to its implementation (kvstore_impl.h); Create picks
// KVStoreLocal over CommCPU ("local") or CommDevice ("device"), KVStoreDist over the same Comms
// ("dist_sync", "dist_device_sync"), KVStoreNccl on a device transport ("nccl", and
// "dist_device_sync" when one reports devices), KVStorePS on parameter servers ("dist_async").
#include "weft/kvstore.h"

#include <algorithm>
#include <cctype>

#include "kvstore/kvstore_dist.h"
#include "kvstore/kvstore_local.h"
#include "kvstore/kvstore_nccl.h"
#include "kvstore/kvstore_ps.h"
#include "weft/env.h"

namespace weft {

using kv::IntKey;
using kv::StrKey;

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  const std::string t = Lower(type);
  // nccl, and dist_device_sync when a device transport reports devices: device communicators
  // (kvstore_nccl.h); dist_device_sync falls back to Gloo below.
  if (t == "nccl" || t == "dist_device_sync")
    if (auto impl = kv::CreateDeviceStore(t)) return std::unique_ptr<KVStore>(new KVStore(std::move(impl)));
  // dist_async always runs on parameter servers; dist_sync too when WEFT_KVSTORE_TRANSPORT names a
  // parameter-server transport (zmq), else on Gloo collectives.
  if (t == "dist_async" ||
      (t == "dist_sync" && kv::IsParameterServerTransport(GetEnvString("WEFT_KVSTORE_TRANSPORT", ""))))
    return std::unique_ptr<KVStore>(new KVStore(std::make_unique<kv::KVStorePS>(type, t == "dist_sync")));
  if (t == "dist_sync" || t == "dist_device_sync") {
    std::unique_ptr<kv::Comm> comm;
    if (t == "dist_sync")
      comm = std::make_unique<kv::CommCPU>();
    else
      comm = std::make_unique<kv::CommDevice>();
    return std::unique_ptr<KVStore>(new KVStore(std::make_unique<kv::KVStoreDist>(type, std::move(comm))));
  }
  WEFT_CHECK(t == "local" || t == "device",
             "KVStore::Create(\"{}\"): unknown type; known types: local, device (in-process), dist_sync, "
             "dist_device_sync (several processes; Gloo transport plugin), dist_async (parameter servers; zmq "
             "transport plugin), nccl (device transport plugin: NCCL on CUDA devices)",
             type);
  std::unique_ptr<kv::Comm> comm;
  if (t == "local")
    comm = std::make_unique<kv::CommCPU>();
  else
    comm = std::make_unique<kv::CommDevice>();
  return std::unique_ptr<KVStore>(new KVStore(std::make_unique<kv::KVStoreLocal>(type, std::move(comm))));
}

KVStore::KVStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KVStore::~KVStore() = default;

void KVStore::RunServer(const std::function<bool()>& stop_requested) { kv::RunServer(stop_requested); }

const std::string& KVStore::type() const { return impl_->type(); }
int KVStore::rank() const { return impl_->rank(); }
int KVStore::num_workers() const { return impl_->num_workers(); }
void KVStore::Barrier() const { impl_->Barrier(); }

void KVStore::Init(int key, const NDArray& value) { impl_->Init(IntKey(key), value); }
void KVStore::Init(const std::string& key, const NDArray& value) { impl_->Init(StrKey(key), value); }
void KVStore::InitInPlace(int key, const NDArray& value) { impl_->Init(IntKey(key), value, true); }

namespace {
template <typename K, typename V>
void CheckCounts(const std::string& type, const char* op, const std::vector<K>& keys, const std::vector<V>& values) {
  WEFT_CHECK(keys.size() == values.size(), "KVStore({}) {}: {} keys but {} value lists", type, op, keys.size(),
             values.size());
}
}  // namespace

void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  CheckCounts(type(), "Init", keys, values);
  for (size_t i = 0; i < keys.size(); ++i) Init(keys[i], values[i]);
}
void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  CheckCounts(type(), "Init", keys, values);
  for (size_t i = 0; i < keys.size(); ++i) Init(keys[i], values[i]);
}

void KVStore::Push(int key, const std::vector<NDArray>& values, int priority) {
  impl_->Push(IntKey(key), values, priority);
}
void KVStore::Push(const std::string& key, const std::vector<NDArray>& values, int priority) {
  impl_->Push(StrKey(key), values, priority);
}

namespace {
// Groups the values of repeated keys (MXNet's GroupKVPairs), keeping first-seen key order.
template <typename K>
std::vector<std::pair<K, std::vector<NDArray>>> Group(const std::vector<K>& keys,
                                                      const std::vector<std::vector<NDArray>>& values) {
  std::vector<std::pair<K, std::vector<NDArray>>> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == keys[i]; });
    if (it == out.end()) it = out.insert(out.end(), {keys[i], {}});
    it->second.insert(it->second.end(), values[i].begin(), values[i].end());
  }
  return out;
}
}  // namespace

void KVStore::Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values, int priority) {
  CheckCounts(type(), "Push", keys, values);
  for (auto& [k, v] : Group(keys, values)) Push(k, v, priority);
}
void KVStore::Push(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& values,
                   int priority) {
  CheckCounts(type(), "Push", keys, values);
  for (auto& [k, v] : Group(keys, values)) Push(k, v, priority);
}

void KVStore::Pull(int key, const std::vector<NDArray>& outs, int priority) {
  impl_->Pull(IntKey(key), outs, priority);
}
void KVStore::Pull(const std::string& key, const std::vector<NDArray>& outs, int priority) {
  impl_->Pull(StrKey(key), outs, priority);
}
void KVStore::Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs, int priority) {
  CheckCounts(type(), "Pull", keys, outs);
  for (size_t i = 0; i < keys.size(); ++i) Pull(keys[i], outs[i], priority);
}
void KVStore::Pull(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& outs, int priority) {
  CheckCounts(type(), "Pull", keys, outs);
  for (size_t i = 0; i < keys.size(); ++i) Pull(keys[i], outs[i], priority);
}

void KVStore::PullRowSparse(int key, const std::vector<NDArray>& outs, const std::vector<NDArray>& row_ids,
                            int priority) {
  impl_->PullRowSparse(IntKey(key), outs, row_ids, priority);
}
void KVStore::PullRowSparse(const std::string& key, const std::vector<NDArray>& outs,
                            const std::vector<NDArray>& row_ids, int priority) {
  impl_->PullRowSparse(StrKey(key), outs, row_ids, priority);
}

void KVStore::PushPull(int key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs, int priority) {
  impl_->PushPull(IntKey(key), values, outs.empty() ? values : outs, priority);
}
void KVStore::PushPull(const std::string& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                       int priority) {
  impl_->PushPull(StrKey(key), values, outs.empty() ? values : outs, priority);
}

void KVStore::SetOptimizer(std::unique_ptr<Optimizer> optimizer) { impl_->SetOptimizer(std::move(optimizer)); }
Optimizer* KVStore::optimizer() const { return impl_->optimizer(); }
void KVStore::SetUpdater(Updater updater) { impl_->SetUpdater(std::move(updater)); }
void KVStore::SetUpdater(StrUpdater updater) { impl_->SetUpdater(std::move(updater)); }

void KVStore::SetGradientCompression(const std::map<std::string, std::string>& params) {
  impl_->SetGradientCompression(params);
}

void KVStore::SaveOptimizerStates(const std::string& file_name, bool dump_optimizer) const {
  impl_->SaveOptimizerStates(file_name, dump_optimizer);
}

void KVStore::LoadOptimizerStates(const std::string& file_name) { impl_->LoadOptimizerStates(file_name); }

}  // namespace weft

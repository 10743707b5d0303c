// weft core — KVStoreNccl (see kvstore_nccl.h).
#include "kvstore/kvstore_nccl.h"

#include <atomic>

#include "weft/engine.h"
#include "weft/env.h"
#include "weft/internal/rendezvous.h"
#include "weft/logging.h"

namespace weft::kv {

namespace {

// Device stores of one process get distinct store prefixes; every rank creates its stores in the
// same order, so the n-th store of each rank meets the n-th of the others.
std::string NextDevicePrefix() {
  static std::atomic<int> count{0};
  return "weft/kvstore-device" + std::to_string(count++);
}

}  // namespace

std::unique_ptr<KVStore::Impl> CreateDeviceStore(const std::string& type) {
  const std::string name = GetEnvString("WEFT_KVSTORE_TRANSPORT", "");
  std::string why;
  std::optional<Transport> t = FindDeviceTransport(type, name, &why);
  if (t) {
    LogInfo("KVStore({}): the '{}' device transport reports devices of type {}: collectives run there", type,
            t->api->name, TransportDeviceType(*t->api));
    return std::make_unique<KVStoreNccl>(type, *t);
  }
  if (type == "nccl")
    Fail(
        "KVStore::Create(\"nccl\"): no device transport can run it: {} ({}). Use \"dist_sync\" or "
        "\"dist_device_sync\" (Gloo allreduce, staged through the host) for several processes, or \"local\" / "
        "\"device\" in one process",
        NcclStatus(), why);
  LogInfo("KVStore({}): no device transport with devices ({}): Gloo collectives, staged through the host", type, why);
  return nullptr;
}

KVStoreNccl::KVStoreNccl(std::string type, const Transport& t)
    : KVStoreLocal(std::move(type), std::make_unique<CommDevice>()), config_(DistConfig::FromEnv()) {
  const std::string prefix = NextDevicePrefix();
  if (!JoinRendezvous(this->type(), config_)) return;
  const int64_t index = GetEnvInt("WEFT_KVSTORE_DEVICE", 0);
  const Context device(TransportDeviceType(*t.api), static_cast<int>(index));
  coll_ = std::make_shared<DeviceCollectives>(this->type(), t, config_, prefix, device);
  LogInfo("KVStore({}): rank {} of {} joined through the '{}' device transport on {}", this->type(), config_.rank,
          config_.num_workers, coll_->transport_name(), device.ToString());
}

KVStoreNccl::~KVStoreNccl() {
  try {
    Engine::Get()->WaitForAll();
  } catch (const std::exception& e) {
    LogWarning("KVStore({}) rank {}: pending work failed while closing: {}", type(), config_.rank, e.what());
  }
  coll_.reset();
}

void KVStoreNccl::Barrier() {
  if (coll_) coll_->Barrier();
}

NDArray KVStoreNccl::OnCommDevice(const NDArray& a, NDArray* staging, int priority) {
  if (a.GetContext() == coll_->device()) return a;
  if (staging->is_none()) *staging = NDArray(a.GetShape(), coll_->device(), false, a.GetDType());
  NDArray::CopyFromTo(a, *staging, priority);
  return *staging;
}

void KVStoreNccl::InitImpl(const Key& key, const NDArray& value) {
  KVStoreLocal::InitImpl(key, value);
  if (!coll_) return;
  // Rank 0's value wins: broadcast it into every worker's copy (through the communicator's device).
  NDArray& stored = Stored(key);
  NDArray on_dev = OnCommDevice(stored, &buf_[key.id()].stored, 0);
  coll_->Issue(Collectives::Kind::kBroadcast, key.display(), on_dev, on_dev, 0);
  if (!on_dev.SharesChunkWith(stored)) NDArray::CopyFromTo(on_dev, stored, 0);
}

void KVStoreNccl::PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) {
  if (!coll_) {
    KVStoreLocal::PushImpl(key, values, priority);
    return;
  }
  NDArray& stored = Stored(key);
  const NDArray merged = comm().Reduce(key.id(), values, priority);
  Buffers& b = buf_[key.id()];
  const NDArray send = OnCommDevice(merged, &b.send, priority);
  if (!has_updater() && stored.GetContext() == coll_->device() && !send.SharesChunkWith(stored)) {
    // The sum replaces the stored value: allreduce straight into it (no copy).
    coll_->Issue(Collectives::Kind::kAllreduce, key.display(), send, stored, priority);
    return;
  }
  if (b.recv.is_none()) b.recv = NDArray(merged.GetShape(), coll_->device(), false, merged.GetDType());
  coll_->Issue(Collectives::Kind::kAllreduce, key.display(), send, b.recv, priority);
  // The update runs where the local sum was made (as KVStoreLocal's).
  NDArray reduced = b.recv;
  if (merged.GetContext() != coll_->device()) {
    if (b.at_sum.is_none() || b.at_sum.GetContext() != merged.GetContext())
      b.at_sum = NDArray(merged.GetShape(), merged.GetContext(), false, merged.GetDType());
    NDArray::CopyFromTo(b.recv, b.at_sum, priority);
    reduced = b.at_sum;
  }
  UpdateStored(key, reduced, priority);
}

}  // namespace weft::kv

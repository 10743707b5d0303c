// weft core — KVStoreNccl: "nccl", and "dist_device_sync" when a device transport with devices is
// loaded, on a device communicator (device_comm.h) — MXNet's KVStoreNCCL across processes.
//
// Which store a type gets (CreateDeviceStore, called by KVStore::Create):
//   nccl              a loaded device transport serving "nccl" (the nccl plugin; a test transport
//                     in tests) that reports at least one device; otherwise Create fails naming
//                     each candidate's reason (e.g. "reports 0 usable devices: the CUDA runtime
//                     finds no usable GPU: ...").
//   dist_device_sync  the same when such a transport serves it and WEFT_KVSTORE_TRANSPORT does not
//                     name another transport; otherwise KVStoreDist on Gloo (kvstore_dist.h),
//                     staging device data through the host. The choice is logged (info).
// The communicator works on device WEFT_KVSTORE_DEVICE (an index, default 0) of the transport's
// device type ("cuda" for NCCL), e.g. cuda(0) in a process that sees one GPU.
//
// Semantics are KVStoreDist's (kvstore_dist.h; the optimizer runs on every worker): Init copies
// the value, then rank 0's value is broadcast into every worker's copy; Push sums this worker's
// devices first (CommDevice, as MXNet), then allreduces the sum on the communicator's device, then
// every worker applies the updater (without one the sum replaces the stored value); Pull is local.
// A sum (or stored value) that is not on the communicator's device is copied there first and the
// result copied back (device-to-device on one plugin, else through the host) — no host staging
// for arrays on that device. No bucket fusion (each key is one collective).
//
// Failures: a collective that fails (a peer dead or stalled: at WEFT_KVSTORE_TIMEOUT at the
// latest, when the watchdog aborts the communicator) stores a weft::Error naming this rank, the
// op, the key and the transport's reason (naming the peer) on the arrays it writes, so the next
// read of a pulled value or Barrier throws it; later collectives fail at once.
// One worker needs no transport: the store then behaves as the local "device" store.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "kvstore/device_comm.h"
#include "kvstore/kvstore_local.h"

namespace weft::kv {

/// The store for `type` on a device transport: KVStoreNccl, or null for "dist_device_sync" when no
/// device transport applies (then Gloo serves it). Throws weft::Error for "nccl" without one (the
/// message names why each device transport was passed over), for a bad environment, or when the
/// rendezvous fails.
std::unique_ptr<KVStore::Impl> CreateDeviceStore(const std::string& type);

class KVStoreNccl final : public KVStoreLocal {
 public:
  /// Joins the job (DistConfig::FromEnv, the rendezvous store from WEFT_RENDEZVOUS) through the
  /// device transport `t`. Throws weft::Error when the environment is incomplete or the
  /// rendezvous fails.
  KVStoreNccl(std::string type, const Transport& t);
  /// Waits for this store's pending work (errors are logged), then leaves the job.
  ~KVStoreNccl() override;

  int rank() const override { return config_.rank; }
  int num_workers() const override { return config_.num_workers; }
  void Barrier() override;

 protected:
  void InitImpl(const Key& key, const NDArray& value) override;
  /// Sparse values arrive dense: NCCL sums dense buffers (every row is updated).
  bool RowSparsePushes() const override { return false; }
  void PushImpl(const Key& key, const std::vector<NDArray>& values, int priority) override;

 private:
  // `a` itself when it is on the communicator's device, else `*staging` (made on first use)
  // holding a copy of it (pushed).
  NDArray OnCommDevice(const NDArray& a, NDArray* staging, int priority);

  struct Buffers {
    NDArray send;    // a sum copied to the communicator's device
    NDArray recv;    // the allreduce result on the communicator's device
    NDArray at_sum;  // the result copied back to the sum's device
    NDArray stored;  // broadcast staging of a stored value elsewhere
  };
  DistConfig config_;
  std::shared_ptr<DeviceCollectives> coll_;  // null for one worker
  std::map<std::string, Buffers> buf_;
};

}  // namespace weft::kv

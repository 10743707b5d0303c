// weft core — DeviceCollectives: a device communicator of a device transport plugin (NCCL;
// sdk/transport.h, device_count > 0) driven by core for the "nccl" and "dist_device_sync" stores.
//
// Rendezvous: comm_init with the transport's device_type and the communicator's device, through
// the same rendezvous store as Gloo (the transport publishes its unique id there).
//
// Each collective is an engine operation on the communicator's device (RunContext::stream): it
// passes the stream and the arrays' device addresses (weft_buffer.data + offset; the transport
// resolves them with the host's native_handle) to the transport, which queues the collective on
// that stream and returns. Order: collectives on one communicator must be issued in the same
// order on every rank (NCCL matches them by order), so every operation of a communicator also
// writes one engine variable (`order`): the engine runs operations sharing a written variable in
// push order, and the store pushes them under its lock, so the transport sees them in the
// program's order whatever order their inputs become ready in (MXNet's KVStoreNCCL serialises
// its NCCL calls the same way). An operation counts as complete only when its queued work has
// completed (an event core records after it), which a watchdog thread checks: it polls each
// pending operation's event and the transport's comm_status; an asynchronous failure, a failed
// event or an operation not done by its deadline (WEFT_KVSTORE_TIMEOUT, plus a tenth of it, 0.1-5 s,
// so that a transport bounding its own waits reports first, naming the peer) aborts the communicator
// (comm_abort) and fails the operation with a weft::Error naming this rank, the op, the key and
// the transport's reason (which names the peer). After the first failure every later operation
// fails at once with it.
//
// Engines without a stream for the device (the naive engine, host-addressable devices): the
// collective is queued on a stream of the communicator's own, with the same completion rule.
//
// Thread-safety: Issue and Barrier may be called from any thread; the store calls Issue under its
// lock (that is what fixes the order).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kvstore/collectives.h"
#include "weft/context.h"
#include "weft/ndarray.h"

namespace weft::kv {

/// The device type a device transport works on: its device_type, or "cuda" for tables from
/// before that field.
std::string TransportDeviceType(const weft_transport_api& t);

/// The first loaded device transport (device_count set) serving `kvstore_type` (named `name`
/// unless empty) that reports at least one device, or nullopt; then `why` (when not null)
/// receives why each candidate was passed over (its 0-device reason), or that none is loaded.
std::optional<Transport> FindDeviceTransport(const std::string& kvstore_type, const std::string& name,
                                             std::string* why);

class DeviceCollectives {
 public:
  /// Joins the job's device communicator through `t` on device `device` (of the transport's
  /// device type) with the rank, size and deadlines of `config`, under store key `prefix` (the
  /// rendezvous store must be set up). Throws weft::Error naming the transport when it fails.
  DeviceCollectives(const std::string& kvstore_type, const Transport& t, const DistConfig& config,
                    const std::string& prefix, const Context& device);
  /// Waits for the operations issued (each bounded by its deadline), then finalizes the
  /// communicator (aborts it first after a failure).
  ~DeviceCollectives();
  DeviceCollectives(const DeviceCollectives&) = delete;
  DeviceCollectives& operator=(const DeviceCollectives&) = delete;

  /// The device the communicator works on.
  const Context& device() const;
  const std::string& transport_name() const;

  /// Pushes the engine operation running collective `kind` (kAllreduce: sum; kBroadcast: from
  /// rank 0) of `key` (for messages) from `send` into `recv`: float32 arrays of one size on
  /// device(); they may be the same array (in place). Returns at once; a failure is stored on
  /// `recv` (engine exception) and logged. Call in the same order on every rank.
  void Issue(Collectives::Kind kind, const std::string& key, const NDArray& send, const NDArray& recv, int priority);
  /// A barrier of the communicator after every operation issued before it; blocks (bounded by
  /// the op deadline). Throws weft::Error (the first failure of the communicator, or the
  /// barrier's).
  void Barrier();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace weft::kv

// weft internal — rendezvous stores for the distributed KVStores: where processes of one job publish
// and find each other's addresses (the host's kv_set / kv_get, sdk/host.h, which the transport
// plugins use in comm_init).
//
//   FileStore       a directory every process can see (one host, or a shared filesystem): one
//                   file per key, written to a temporary name and renamed (atomic for readers).
//   TcpStore        a client of TcpStoreServer (hosts without a shared filesystem). Each request
//                   is one short TCP connection, so a restarted client needs no session.
//   TcpStoreServer  the server, run by weft-launch (or any process of the job) on a port.
//
// WEFT_RENDEZVOUS selects the store of a process: "file:<dir>" or "tcp:<host>:<port>"
// (RendezvousFromEnv). MXNet's DMLC_PS_ROOT_URI + DMLC_PS_ROOT_PORT mean "tcp:uri:port".
//
// Deadlines: Get waits at most its timeout; TcpStore's connects and replies also honour it (plus
// a connect deadline of 10 s for Set), and an unreachable server raises weft::Error naming the
// address. Thread-safety: all classes may be used from several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "weft/internal/host_services.h"

namespace weft {

class WEFT_API FileStore final : public RendezvousStore {
 public:
  /// Uses (and creates when missing) the directory `dir`. Throws weft::Error when it cannot.
  explicit FileStore(std::string dir);
  void Set(const std::string& key, std::string value) override;
  std::optional<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;

 private:
  std::string Path(const std::string& key) const;
  std::string dir_;
};

class WEFT_API TcpStore final : public RendezvousStore {
 public:
  /// A client of the server at host:port (nothing is connected yet).
  TcpStore(std::string host, int port);
  void Set(const std::string& key, std::string value) override;
  std::optional<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;

 private:
  std::string host_;
  int port_;
};

/// The TCP store's server: serves Set/Get from clients on a thread per connection until
/// destroyed. Keys live in memory.
class WEFT_API TcpStoreServer {
 public:
  /// Listens on `bind_host` (e.g. "127.0.0.1" or "0.0.0.0"), port `port` (0: any free port).
  /// Throws weft::Error when it cannot bind.
  TcpStoreServer(const std::string& bind_host, int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  /// The port it listens on.
  int port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The store WEFT_RENDEZVOUS (or DMLC_PS_ROOT_URI/PORT) names, or nullptr when neither is set.
/// Throws weft::Error for a malformed value (naming it and the accepted forms).
WEFT_API std::shared_ptr<RendezvousStore> RendezvousFromEnv();

}  // namespace weft

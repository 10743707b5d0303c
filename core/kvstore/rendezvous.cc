// weft core — rendezvous stores (weft/rendezvous.h).
//
// TCP protocol (one request per connection, integers little-endian as on every host weft runs):
//   set: 'S' u32 key_len key u64 value_len value       -> 'K'
//   get: 'G' u32 key_len key i64 timeout_ms            -> 'V' u64 len value | 'T' (timed out)
#include "weft/internal/rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/base.h"

namespace weft {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// FileStore

FileStore::FileStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  WEFT_CHECK(fs::is_directory(dir_),
             "rendezvous file store: cannot use directory '{}' ({}); set WEFT_RENDEZVOUS "
             "to a directory every process of the job can write",
             dir_, ec ? ec.message() : "not a directory");
}

std::string FileStore::Path(const std::string& key) const {
  // Keys hold '/' and ':'; map every byte outside [A-Za-z0-9._-] to %XX so a key is one file.
  std::string name;
  for (unsigned char ch : key) {
    if (std::isalnum(ch) || ch == '.' || ch == '_' || ch == '-') {
      name += static_cast<char>(ch);
    } else {
      name += fmt::format("%{:02X}", ch);
    }
  }
  return dir_ + "/" + name;
}

void FileStore::Set(const std::string& key, std::string value) {
  const std::string path = Path(key);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    WEFT_CHECK(out.good(), "rendezvous file store: cannot write '{}'", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  WEFT_CHECK(!ec, "rendezvous file store: cannot rename '{}' to '{}': {}", tmp, path, ec.message());
}

std::optional<std::string> FileStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  const std::string path = Path(key);
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (timeout.count() >= 0 && Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

// ---------------------------------------------------------------------------------------------
// socket helpers with deadlines

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// false on timeout, peer close or error.
bool WaitFd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, MsLeft(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool SendAll(int fd, const void* data, size_t n, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!WaitFd(fd, POLLOUT, deadline)) return false;
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool RecvAll(int fd, void* data, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!WaitFd(fd, POLLIN, deadline)) return false;
    ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

template <typename T>
void Append(std::string* s, T v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// A connected socket to host:port, or throws naming the address.
int Connect(const std::string& host, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  WEFT_CHECK(rc == 0, "rendezvous tcp store {}:{}: cannot resolve the host ({})", host, port, gai_strerror(rc));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, ::freeaddrinfo);
  std::string last = "no address";
  // The server may start a little after its clients: retry refused connects until the deadline.
  while (true) {
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 || (errno == EINPROGRESS && WaitFd(fd, POLLOUT, deadline))) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return fd;
        }
        last = std::strerror(err);
      } else {
        last = std::strerror(errno);
      }
      ::close(fd);
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Fail(
      "rendezvous tcp store {}:{}: cannot connect ({}); is weft-launch (or the job's store server) running "
      "there?",
      host, port, last);
}

constexpr auto kSetDeadline = std::chrono::seconds(10);

}  // namespace

// ---------------------------------------------------------------------------------------------
// TcpStore

TcpStore::TcpStore(std::string host, int port) : host_(std::move(host)), port_(port) {}

void TcpStore::Set(const std::string& key, std::string value) {
  const auto deadline = Clock::now() + kSetDeadline;
  Fd fd(Connect(host_, port_, deadline));
  std::string req = "S";
  Append(&req, static_cast<uint32_t>(key.size()));
  req += key;
  Append(&req, static_cast<uint64_t>(value.size()));
  req += value;
  char ack = 0;
  WEFT_CHECK(SendAll(fd.fd, req.data(), req.size(), deadline) && RecvAll(fd.fd, &ack, 1, deadline) && ack == 'K',
             "rendezvous tcp store {}:{}: set of key '{}' got no answer within {} s", host_, port_, key,
             kSetDeadline.count());
}

std::optional<std::string> TcpStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) timeout = std::chrono::hours(24 * 365);
  // The server answers 'T' at the timeout; the client allows a little more for the round trip.
  const auto deadline = Clock::now() + timeout + std::chrono::seconds(5);
  Fd fd(Connect(host_, port_, Clock::now() + std::max<std::chrono::milliseconds>(timeout, kSetDeadline)));
  std::string req = "G";
  Append(&req, static_cast<uint32_t>(key.size()));
  req += key;
  Append(&req, static_cast<int64_t>(timeout.count()));
  char tag = 0;
  WEFT_CHECK(SendAll(fd.fd, req.data(), req.size(), deadline) && RecvAll(fd.fd, &tag, 1, deadline),
             "rendezvous tcp store {}:{}: get of key '{}' got no answer (the server died or is unreachable)", host_,
             port_, key);
  if (tag == 'T') return std::nullopt;
  uint64_t len = 0;
  WEFT_CHECK(tag == 'V' && RecvAll(fd.fd, &len, sizeof(len), deadline), "rendezvous tcp store {}:{}: bad reply", host_,
             port_);
  std::string value(len, '\0');
  WEFT_CHECK(RecvAll(fd.fd, value.data(), len, deadline), "rendezvous tcp store {}:{}: reply for '{}' cut short", host_,
             port_, key);
  return value;
}

// ---------------------------------------------------------------------------------------------
// TcpStoreServer

struct TcpStoreServer::Impl {
  int listen_fd = -1;
  int port = 0;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::string> values;
  std::thread acceptor;
  std::vector<std::thread> handlers;

  void Serve(int fd);
  void Accept() {
    while (!stop.load()) {
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mu);
      handlers.emplace_back([this, fd] { Serve(fd); });
    }
  }
};

void TcpStoreServer::Impl::Serve(int raw) {
  Fd fd(raw);
  const auto deadline = Clock::now() + kSetDeadline;
  char op = 0;
  uint32_t klen = 0;
  if (!RecvAll(fd.fd, &op, 1, deadline) || !RecvAll(fd.fd, &klen, 4, deadline) || klen > (1u << 20)) return;
  std::string key(klen, '\0');
  if (!RecvAll(fd.fd, key.data(), klen, deadline)) return;
  if (op == 'S') {
    uint64_t vlen = 0;
    if (!RecvAll(fd.fd, &vlen, 8, deadline) || vlen > (1ull << 30)) return;
    std::string value(vlen, '\0');
    if (!RecvAll(fd.fd, value.data(), vlen, deadline)) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      values[key] = std::move(value);
    }
    cv.notify_all();
    SendAll(fd.fd, "K", 1, Clock::now() + kSetDeadline);
  } else if (op == 'G') {
    int64_t timeout_ms = 0;
    if (!RecvAll(fd.fd, &timeout_ms, 8, deadline)) return;
    std::unique_lock<std::mutex> lock(mu);
    const bool found = cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0)),
                                   [&] { return stop.load() || values.count(key) != 0; });
    if (!found || stop.load()) {
      lock.unlock();
      SendAll(fd.fd, "T", 1, Clock::now() + kSetDeadline);
      return;
    }
    std::string reply = "V";
    Append(&reply, static_cast<uint64_t>(values[key].size()));
    reply += values[key];
    lock.unlock();
    SendAll(fd.fd, reply.data(), reply.size(), Clock::now() + kSetDeadline);
  }
}

TcpStoreServer::TcpStoreServer(const std::string& bind_host, int port) : impl_(std::make_unique<Impl>()) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  WEFT_CHECK(fd >= 0, "rendezvous tcp store server: socket() failed: {}", std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, bind_host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    Fail("rendezvous tcp store server: '{}' is not an IPv4 address (use e.g. 0.0.0.0 or 127.0.0.1)", bind_host);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 128) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    Fail("rendezvous tcp store server: cannot listen on {}:{}: {}", bind_host, port, why);
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->listen_fd = fd;
  impl_->port = ntohs(addr.sin_port);
  impl_->acceptor = std::thread([this] { impl_->Accept(); });
}

TcpStoreServer::~TcpStoreServer() {
  impl_->stop.store(true);
  impl_->cv.notify_all();
  impl_->acceptor.join();
  for (auto& t : impl_->handlers) t.join();
  ::close(impl_->listen_fd);
}

int TcpStoreServer::port() const { return impl_->port; }

std::shared_ptr<RendezvousStore> RendezvousFromEnv() {
  const char* spec = std::getenv("WEFT_RENDEZVOUS");
  std::string s = spec ? spec : "";
  if (s.empty()) {
    const char* uri = std::getenv("DMLC_PS_ROOT_URI");
    const char* port = std::getenv("DMLC_PS_ROOT_PORT");
    if (uri == nullptr || port == nullptr) return nullptr;
    s = fmt::format("tcp:{}:{}", uri, port);
  }
  if (s.rfind("file:", 0) == 0) return std::make_shared<FileStore>(s.substr(5));
  if (s.rfind("tcp:", 0) == 0) {
    const std::string rest = s.substr(4);
    const size_t colon = rest.rfind(':');
    int port = 0;
    try {
      port = colon == std::string::npos ? 0 : std::stoi(rest.substr(colon + 1));
    } catch (const std::exception&) {
      port = 0;
    }
    WEFT_CHECK(port > 0 && port < 65536, "WEFT_RENDEZVOUS='{}': expected tcp:<host>:<port> with a port in 1..65535", s);
    return std::make_shared<TcpStore>(rest.substr(0, colon), port);
  }
  Fail("WEFT_RENDEZVOUS='{}': expected file:<shared directory> or tcp:<host>:<port>", s);
}

}  // namespace weft

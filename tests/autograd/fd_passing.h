// Sending a file descriptor with a few integers over a Unix socket (SCM_RIGHTS), as Python's
// multiprocessing.reduction.DupFd does for gluon.data.DataLoader's workers; every wait has a
// deadline. For the shared-memory tests and their helper process.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>

namespace weft::test {

struct FdMessage {
  std::array<int, 4> ints{};  // pid, then shape (up to 3 extents)
  int fd = -1;
};

inline void WaitReadable(int sock, int timeout_ms) {
  pollfd p{sock, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) != 1) throw std::runtime_error("fd passing: no message within the deadline");
}

inline void SendFd(int sock, const FdMessage& m) {
  msghdr msg{};
  iovec iov{const_cast<int*>(m.ints.data()), sizeof(m.ints)};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &m.fd, sizeof(int));
  if (sendmsg(sock, &msg, 0) != static_cast<ssize_t>(sizeof(m.ints))) throw std::runtime_error("fd passing: sendmsg");
}

inline FdMessage ReceiveFd(int sock, int timeout_ms) {
  WaitReadable(sock, timeout_ms);
  FdMessage m;
  msghdr msg{};
  iovec iov{m.ints.data(), sizeof(m.ints)};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (recvmsg(sock, &msg, 0) != static_cast<ssize_t>(sizeof(m.ints))) throw std::runtime_error("fd passing: recvmsg");
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) throw std::runtime_error("fd passing: no descriptor received");
  std::memcpy(&m.fd, CMSG_DATA(c), sizeof(int));
  return m;
}

inline void SendByte(int sock, char b) {
  if (write(sock, &b, 1) != 1) throw std::runtime_error("fd passing: write");
}

inline char ReceiveByte(int sock, int timeout_ms) {
  WaitReadable(sock, timeout_ms);
  char b = 0;
  if (read(sock, &b, 1) != 1) throw std::runtime_error("fd passing: the other side closed the socket");
  return b;
}

}  // namespace weft::test

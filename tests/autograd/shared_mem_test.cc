// Shared-memory NDArrays (MXNet's cpu_shared; MXNDArrayCreateFromSharedMemEx /
// MXNDArrayGetSharedMemHandle): ops on them, the handle, and another real process mapping one
// (descriptor passed over a Unix socket as gluon.data.DataLoader's workers do), both directions.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "autograd_util.h"
#include "fd_passing.h"

extern char** environ;

namespace weft {
namespace {

using test::ErrorOf;
using test::Read;

TEST(SharedMem, ArraysWorkWithOpsAndOpenAgainInTheSameProcess) {
  NDArray a = NDArray::CreateSharedMem(Shape{2, 3});
  EXPECT_TRUE(a.IsSharedMem());
  EXPECT_EQ(a.GetContext(), Context::cpu(0));
  EXPECT_EQ(Read(a), std::vector<float>(6, 0.0f));  // a new segment is zeros
  a.SyncCopyFromCPU({1, 2, 3, 4, 5, 6});
  NDArray b = a * 2.0f + a;  // ops take it as any cpu array
  EXPECT_EQ(Read(b), (std::vector<float>{3, 6, 9, 12, 15, 18}));
  int pid = 0, id = -1;
  a.GetSharedMemHandle(&pid, &id);
  EXPECT_EQ(pid, static_cast<int>(getpid()));
  NDArray c = NDArray::FromSharedMem(pid, id, Shape{3, 2});
  c = 7.0f;
  EXPECT_EQ(Read(a), std::vector<float>(6, 7.0f));  // one memory
  EXPECT_FALSE(NDArray(Shape{2}, Context::cpu(0)).IsSharedMem());
}

TEST(SharedMem, RefusesBadHandles) {
  EXPECT_NE(ErrorOf([] {
              NDArray(Shape{2}, Context::cpu(0)).GetSharedMemHandle(nullptr, nullptr);
            }).find("not in shared memory"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { NDArray::FromSharedMem(1, 100000, Shape{2}); }).find("not an open file descriptor"),
            std::string::npos);
  NDArray a = NDArray::CreateSharedMem(Shape{4});
  int pid = 0, id = -1;
  a.GetSharedMemHandle(&pid, &id);
  EXPECT_NE(ErrorOf([&] { NDArray::FromSharedMem(pid, id, Shape{5}); }).find("holds 16 bytes"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { a.Slice(1, 3).GetSharedMemHandle(&pid, &id); }).find("is a view"), std::string::npos);
}

// Runs the helper with one end of a socket pair; `talk` gets the other end. Kills the helper if it
// has not finished 30 s after the talk, and returns its exit status.
int WithHelper(const char* mode, const std::function<void(int)>& talk) {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  fcntl(sv[1], F_SETFD, 0);  // the helper's end survives exec
  const std::string sock = std::to_string(sv[1]);
  char* argv[] = {const_cast<char*>(WEFT_SHM_HELPER), const_cast<char*>(mode), const_cast<char*>(sock.c_str()),
                  nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, WEFT_SHM_HELPER, nullptr, nullptr, argv, environ), 0);
  close(sv[1]);
  try {
    talk(sv[0]);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  close(sv[0]);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "the helper did not finish within 30 s";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SharedMem, AnotherProcessMapsOurArray) {
  NDArray a = NDArray::CreateSharedMem(Shape{2, 5});
  std::vector<float> v(10);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * static_cast<float>(i);
  a.SyncCopyFromCPU(v);
  const int status = WithHelper("recv", [&](int sock) {
    test::FdMessage m;
    a.GetSharedMemHandle(&m.ints[0], &m.fd);
    m.ints[1] = 2;
    m.ints[2] = 5;
    test::SendFd(sock, m);
    EXPECT_EQ(test::ReceiveByte(sock, 20000), 'w');
  });
  EXPECT_EQ(status, 0);
  std::vector<float> got = Read(a);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], -static_cast<float>(i));
}

TEST(SharedMem, WeMapAnotherProcesssArray) {
  std::vector<float> got;
  int creator = 0;
  const int status = WithHelper("send", [&](int sock) {
    const test::FdMessage m = test::ReceiveFd(sock, 20000);
    creator = m.ints[0];
    NDArray a = NDArray::FromSharedMem(m.ints[0], m.fd, Shape{m.ints[1], m.ints[2]});
    got = Read(a);
    test::SendByte(sock, 'd');
  });
  EXPECT_EQ(status, 0);
  EXPECT_NE(creator, static_cast<int>(getpid()));
  ASSERT_EQ(got.size(), 12u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<float>(i + 1));
}

}  // namespace
}  // namespace weft

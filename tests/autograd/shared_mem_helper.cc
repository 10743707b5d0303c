// The other process of shared_mem_test: `send <socket>` creates a shared-memory array holding
// 1, 2, ..., sends its handle and waits for the test to read it; `recv <socket>` maps the array
// the test sends, checks it holds 0.5·i and overwrites it with −i. Exit status 0 = all as expected.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fd_passing.h"
#include "weft/ndarray.h"

using weft::NDArray;
using weft::Shape;

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1];
  const int sock = std::atoi(argv[2]);
  try {
    if (mode == "send") {
      NDArray a = NDArray::CreateSharedMem(Shape{3, 4});
      std::vector<float> v(12);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
      a.SyncCopyFromCPU(v);
      weft::test::FdMessage m;
      a.GetSharedMemHandle(&m.ints[0], &m.fd);
      m.ints[1] = 3;
      m.ints[2] = 4;
      weft::test::SendFd(sock, m);
      // Keep the array until the test has mapped and read it (the segment would survive anyway:
      // the descriptor in flight keeps it).
      return weft::test::ReceiveByte(sock, 20000) == 'd' ? 0 : 3;
    }
    if (mode == "recv") {
      const weft::test::FdMessage m = weft::test::ReceiveFd(sock, 20000);
      NDArray a = NDArray::FromSharedMem(m.ints[0], m.fd, Shape{m.ints[1], m.ints[2]});
      std::vector<float> v;
      a.SyncCopyToCPU(&v);
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i] != 0.5f * static_cast<float>(i)) return 4;
      for (size_t i = 0; i < v.size(); ++i) v[i] = -static_cast<float>(i);
      a.SyncCopyFromCPU(v);
      weft::test::SendByte(sock, 'w');
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_mem_helper %s: %s\n", mode.c_str(), e.what());
    return 5;
  }
  return 2;
}

// libFuzzer target for the MNIST idx reader (plain or gzip). Any input must load with the size
// its header announces or raise weft::Error — never crash, and never inflate more than the
// header announces (run with -malloc_limit_mb to enforce it). The reader takes a path, so each
// input is written to one scratch file in /dev/shm (tmpfs: no disk traffic).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "weft/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/dev/shm/weft-idx-fuzz-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  try {
    weft::IdxFile idx = weft::ReadIdxFile(path);
    uint64_t total = 1;
    for (uint32_t d : idx.dims) total *= d;
    if (idx.data.size() != total) __builtin_trap();  // loaded data must match its header
  } catch (const weft::Error&) {
  }
  return 0;
}

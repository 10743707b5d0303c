// Cost of one Alloc + Free pair on cpu(0), per block size: the Naive and Round pools (after the
// first pair every request is a cache hit) against Unpooled (every pair goes to the device
// plugin, i.e. the system allocator), and the ratio unpooled / pooled measured in the same run.
// Usage: storage_bench [--quick]   (--quick: about 1/10 of the time, for busy machines)
// Each case runs for a fixed time budget (20 ms, 2 ms with --quick), so the whole run is short.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "weft/storage.h"

namespace {

using Clock = std::chrono::steady_clock;

double NsPerPair(weft::Storage& storage, uint64_t bytes, std::chrono::microseconds budget) {
  const weft::Context cpu = weft::Context::cpu(0);
  storage.Free(storage.Alloc(bytes, cpu));  // warm: the pools now hold one block of this size
  uint64_t pairs = 0;
  const auto start = Clock::now();
  auto now = start;
  while (now - start < budget) {
    for (int i = 0; i < 64; ++i) storage.Free(storage.Alloc(bytes, cpu));
    pairs += 64;
    now = Clock::now();
  }
  return std::chrono::duration<double, std::nano>(now - start).count() / static_cast<double>(pairs);
}

weft::PoolConfig Config(weft::PoolType type) {
  weft::PoolConfig c;
  c.type = type;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::chrono::microseconds budget(quick ? 2000 : 20000);
  auto naive = weft::Storage::Create(Config(weft::PoolType::kNaive));
  auto round = weft::Storage::Create(Config(weft::PoolType::kRound));
  auto unpooled = weft::Storage::Create(Config(weft::PoolType::kUnpooled));
  std::printf("storage_bench: ns per Alloc+Free pair on cpu(0)%s\n", quick ? " (quick)" : "");
  std::printf("%10s %12s %12s %12s %16s\n", "block", "naive ns", "round ns", "unpooled ns", "unpooled/naive");
  for (uint64_t kib : {4, 64, 1024, 16384, 65536}) {
    const uint64_t bytes = kib * 1024;
    const double n = NsPerPair(*naive, bytes, budget);
    const double r = NsPerPair(*round, bytes, budget);
    const double u = NsPerPair(*unpooled, bytes, budget);
    std::printf("%7llu KiB %12.1f %12.1f %12.1f %15.1fx\n", static_cast<unsigned long long>(kib), n, r, u, u / n);
  }
  return 0;
}

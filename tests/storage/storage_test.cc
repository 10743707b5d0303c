// Storage pools: MXNet's storage tests (null handles, naive reuse, round buckets) plus rounding
// rules, settings, statistics, concurrency and out-of-memory release-and-retry on simdev.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>

#include "require.h"
#include "weft/internal/runtime.h"
#include "weft/storage.h"

namespace weft {
namespace {

const Context kCpu = Context::cpu(0);

PoolConfig Config(PoolType type) {
  PoolConfig c;
  c.type = type;
  return c;
}

TEST(Storage, ZeroBytesGiveANullHandleAndNullFreesAreNoOps) {
  auto s = Storage::Create(Config(PoolType::kNaive));
  Storage::Handle h = s->Alloc(0, kCpu);
  EXPECT_TRUE(h.is_null());
  EXPECT_EQ(h.size, 0u);
  EXPECT_NO_THROW(s->Free(h));
  EXPECT_NO_THROW(s->DirectFree(Storage::Handle{}));
  EXPECT_NO_THROW(Storage::Get()->Free(Storage::Handle{}));
  EXPECT_EQ(s->Stats(kCpu).misses, 0u);
}

TEST(Storage, NaivePoolReturnsAFreedBlockForTheSameRoundedSize) {
  auto s = Storage::Create(Config(PoolType::kNaive));
  Storage::Handle a = s->Alloc(1000, kCpu);
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a.size, 1000u);
  EXPECT_EQ(a.ctx, kCpu);
  std::memset(reinterpret_cast<void*>(a.dptr), 0xab, 1000);  // cpu memory is host-addressable
  const weft_device_ptr first = a.dptr;
  s->Free(a);
  Storage::Handle b = s->Alloc(1000, kCpu);
  EXPECT_EQ(b.dptr, first);
  s->Free(b);
  Storage::Handle c = s->Alloc(4096, kCpu);  // same 4 KiB page bucket
  EXPECT_EQ(c.dptr, first);
  Storage::Handle d = s->Alloc(4097, kCpu);  // next bucket: a new block
  EXPECT_NE(d.dptr, first);
  const StorageStats st = s->Stats(kCpu);
  EXPECT_EQ(st.hits, 2u);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.bytes_in_use, 4096u + 8192u);
  EXPECT_EQ(st.bytes_cached, 0u);
  s->Free(c);
  s->Free(d);
  EXPECT_EQ(s->Stats(kCpu).bytes_cached, 4096u + 8192u);
  EXPECT_EQ(s->Stats(kCpu).peak_in_use, 4096u + 8192u);
}

TEST(Storage, RoundPoolReusesPowerOfTwoAndLinearBuckets) {
  PoolConfig cfg = Config(PoolType::kRound);
  cfg.round_linear_cutoff = 16;  // 64 KiB: linear steps above it
  auto s = Storage::Create(cfg);
  Storage::Handle a = s->Alloc(5000, kCpu);  // bucket 8 KiB
  const weft_device_ptr p = a.dptr;
  s->Free(a);
  Storage::Handle b = s->Alloc(8000, kCpu);
  EXPECT_EQ(b.dptr, p);
  Storage::Handle c = s->Alloc(70000, kCpu);  // 2 x 64 KiB
  const weft_device_ptr q = c.dptr;
  s->Free(c);
  Storage::Handle d = s->Alloc(131072, kCpu);
  EXPECT_EQ(d.dptr, q);
  Storage::Handle e = s->Alloc(131073, kCpu);  // 3 x 64 KiB: a new block
  EXPECT_NE(e.dptr, q);
  EXPECT_EQ(s->Stats(kCpu).hits, 2u);
  for (auto* h : {&b, &d, &e}) s->Free(*h);
}

TEST(Storage, RoundingRulesFollowMXNet) {
  PoolConfig naive = Config(PoolType::kNaive);
  EXPECT_EQ(naive.RoundedSize(1), 4096u);
  EXPECT_EQ(naive.RoundedSize(4096), 4096u);
  EXPECT_EQ(naive.RoundedSize(4097), 8192u);
  EXPECT_EQ(naive.RoundedSize(2u << 20), 2u << 20);
  EXPECT_EQ(naive.RoundedSize((2u << 20) + 1), 4u << 20);
  EXPECT_EQ(naive.RoundedSize((5u << 20) + 7), 6u << 20);
  PoolConfig round = Config(PoolType::kRound);
  EXPECT_EQ(round.RoundedSize(1), 4096u);
  EXPECT_EQ(round.RoundedSize(4097), 8192u);
  EXPECT_EQ(round.RoundedSize(3u << 20), 4u << 20);
  EXPECT_EQ(round.RoundedSize(16u << 20), 16u << 20);  // 2^24 = the default cutoff
  EXPECT_EQ(round.RoundedSize((16u << 20) + 1), 32u << 20);
  EXPECT_EQ(round.RoundedSize((32u << 20) + 1), 48u << 20);  // linear above the cutoff
  PoolConfig unpooled = Config(PoolType::kUnpooled);
  EXPECT_EQ(unpooled.RoundedSize(1001), 1001u);
  EXPECT_THROW(naive.RoundedSize(~uint64_t{0}), OutOfMemoryError);
}

TEST(Storage, UnpooledPoolCachesNothing) {
  auto s = Storage::Create(Config(PoolType::kUnpooled));
  Storage::Handle a = s->Alloc(1 << 20, kCpu);
  s->Free(a);
  const StorageStats st = s->Stats(kCpu);
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.bytes_in_use, 0u);
  EXPECT_EQ(st.peak_in_use, 1u << 20);
  Storage::Handle b = s->Alloc(1 << 20, kCpu);
  EXPECT_EQ(s->Stats(kCpu).hits, 0u);
  EXPECT_EQ(s->Stats(kCpu).misses, 2u);
  s->Free(b);
}

TEST(Storage, DirectFreeAndReleaseAllReturnMemoryToTheDevice) {
  auto s = Storage::Create(Config(PoolType::kNaive));
  Storage::Handle a = s->Alloc(10000, kCpu);
  Storage::Handle b = s->Alloc(20000, kCpu);
  s->DirectFree(a);
  s->Free(b);
  StorageStats st = s->Stats(kCpu);
  EXPECT_EQ(st.bytes_in_use, 0u);
  EXPECT_EQ(st.bytes_cached, 20480u);
  s->ReleaseAll(kCpu);
  st = s->Stats(kCpu);
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.releases, 1u);
  Storage::Handle c = s->Alloc(20000, kCpu);
  EXPECT_EQ(s->Stats(kCpu).hits, 0u);
  s->Free(c);
  EXPECT_NO_THROW(s->ReleaseAll(Context("nosuchdevice", 0)));
  EXPECT_EQ(s->Stats(Context("nosuchdevice", 0)).misses, 0u);
}

TEST(Storage, UnknownDeviceIsAClearError) {
  try {
    Storage::Get()->Alloc(16, Context("nosuchdevice", 3));
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nosuchdevice(3)"), std::string::npos) << e.what();
  }
}

TEST(Storage, SettingsComeFromTheEnvironmentPerDeviceType) {
  ::setenv("WEFT_TEST_DEV_MEM_POOL_TYPE", "rOuNd", 1);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_PAGE_SIZE", "8192", 1);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_ROUND_LINEAR_CUTOFF", "20", 1);
  PoolConfig c = PoolConfig::FromEnv("test-dev");
  EXPECT_EQ(c.type, PoolType::kRound);
  EXPECT_EQ(c.page_size, 8192u);
  EXPECT_EQ(c.round_linear_cutoff, 20);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_TYPE", "unpooled", 1);
  EXPECT_EQ(PoolConfig::FromEnv("test-dev").type, PoolType::kUnpooled);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_TYPE", "Pooled", 1);
  try {
    PoolConfig::FromEnv("test-dev");
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_TEST_DEV_MEM_POOL_TYPE"), std::string::npos) << e.what();
  }
  ::setenv("WEFT_TEST_DEV_MEM_POOL_TYPE", "Naive", 1);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_PAGE_SIZE", "3000", 1);
  EXPECT_THROW(PoolConfig::FromEnv("test-dev"), Error);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_PAGE_SIZE", "4096", 1);
  ::setenv("WEFT_TEST_DEV_MEM_POOL_ROUND_LINEAR_CUTOFF", "5", 1);  // below log2(page)
  EXPECT_THROW(PoolConfig::FromEnv("test-dev"), Error);
  for (const char* v : {"WEFT_TEST_DEV_MEM_POOL_TYPE", "WEFT_TEST_DEV_MEM_POOL_PAGE_SIZE",
                        "WEFT_TEST_DEV_MEM_POOL_ROUND_LINEAR_CUTOFF"})
    ::unsetenv(v);
  EXPECT_EQ(PoolConfig::FromEnv("test-dev").type, PoolType::kNaive);
}

// Concurrent Alloc/Free of mixed sizes: no block is ever handed to two owners at once (each
// owner stamps its block and checks the stamp before freeing), and the counters balance.
TEST(Storage, ConcurrentAllocFreeNeverSharesABlock) {
  for (PoolType type : {PoolType::kNaive, PoolType::kRound, PoolType::kUnpooled}) {
    SCOPED_TRACE(PoolTypeName(type));
    auto s = Storage::Create(Config(type));
    std::vector<std::thread> threads;
    std::atomic<int> bad{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(t);
        std::vector<Storage::Handle> live;
        for (int i = 0; i < 2000; ++i) {
          if (live.size() < 8 && rng() % 2 == 0) {
            Storage::Handle h = s->Alloc(8 + rng() % 20000, kCpu);
            *reinterpret_cast<uint64_t*>(h.dptr) = h.dptr ^ static_cast<uint64_t>(t);
            live.push_back(h);
          } else if (!live.empty()) {
            Storage::Handle h = live.back();
            live.pop_back();
            if (*reinterpret_cast<uint64_t*>(h.dptr) != (h.dptr ^ static_cast<uint64_t>(t))) ++bad;
            s->Free(h);
          }
        }
        for (auto& h : live) s->Free(h);
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0);
    const StorageStats st = s->Stats(kCpu);
    EXPECT_EQ(st.bytes_in_use, 0u);
    if (type != PoolType::kUnpooled) {
      EXPECT_GT(st.hits, 0u);
    }
  }
}

// The simdev plugin limits each device's memory (WEFT_SIMDEV_MEMORY_MB, asked to be 64 for this
// binary in CMakeLists.txt); the sizes below are fractions of whatever limit it reports.
TEST(Storage, OutOfMemoryReleasesTheCacheAndRetriesThenFailsClearly) {
  const Context dev("simdev", 0);
  if (!Runtime::Get().HasDevice(dev))
    WEFT_SKIP_UNLESS_REQUIRED() << "no simdev plugin loaded; cannot exercise a memory limit";
  const uint64_t total = internal::GetDevice(Runtime::Get(), dev).QueryProperties().total_memory;
  if (total < (16u << 20) || total % (16u << 20) != 0)
    WEFT_SKIP_UNLESS_REQUIRED() << "simdev reports " << total << " bytes; this test needs a multiple of 16 MiB";
  auto s = Storage::Create(Config(PoolType::kNaive));
  const uint64_t five_eighths = total / 8 * 5, three_quarters = total / 4 * 3;
  Storage::Handle a = s->Alloc(five_eighths, dev);
  s->Free(a);
  EXPECT_EQ(s->Stats(dev).bytes_cached, five_eighths);
  // The cached 5/8 plus 3/4 do not fit: the pool must release its cache and retry.
  Storage::Handle b = s->Alloc(three_quarters, dev);
  ASSERT_FALSE(b.is_null());
  StorageStats st = s->Stats(dev);
  EXPECT_EQ(st.oom_retries, 1u);
  EXPECT_EQ(st.bytes_cached, 0u);
  EXPECT_EQ(st.bytes_in_use, three_quarters);
  try {
    s->Alloc(five_eighths, dev);
    FAIL() << "expected weft::OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("simdev(0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(five_eighths) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fmt::format("in use {:.1f} MiB", static_cast<double>(three_quarters) / 1048576.0)),
              std::string::npos)
        << msg;
  }
  EXPECT_EQ(s->Stats(dev).oom_retries, 2u);
  s->Free(b);
  // After freeing, the same request succeeds again (from the cache or the device).
  Storage::Handle c = s->Alloc(five_eighths, dev);
  EXPECT_FALSE(c.is_null());
  s->Free(c);
}

}  // namespace
}  // namespace weft

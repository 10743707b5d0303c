// Pool settings from the environment and the rounding rules of each strategy.
#include <algorithm>
#include <bit>
#include <cctype>

#include "weft/base.h"
#include "weft/env.h"
#include "weft/storage.h"

namespace weft {
namespace {

// Sizes at or above this cannot be rounded without overflow and no device has them.
constexpr uint64_t kMaxRequest = uint64_t{1} << 62;

uint64_t RoundUp(uint64_t bytes, uint64_t multiple) { return (bytes + multiple - 1) / multiple * multiple; }

std::string FormatBytes(uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < (uint64_t{1} << 20)) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < (uint64_t{1} << 30)) return fmt::format("{:.1f} MiB", b / 1048576.0);
  return fmt::format("{:.2f} GiB", b / 1073741824.0);
}

}  // namespace

const char* PoolTypeName(PoolType type) noexcept {
  switch (type) {
    case PoolType::kNaive:
      return "Naive";
    case PoolType::kRound:
      return "Round";
    case PoolType::kUnpooled:
      return "Unpooled";
  }
  return "?";
}

PoolConfig PoolConfig::FromEnv(const std::string& device_type) {
  const std::string prefix = DeviceEnvName(device_type, "MEM_");
  PoolConfig c;
  const std::string type_var = prefix + "POOL_TYPE";
  if (auto v = GetEnv(type_var.c_str())) {
    std::string lower;
    for (char ch : *v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "naive") {
      c.type = PoolType::kNaive;
    } else if (lower == "round") {
      c.type = PoolType::kRound;
    } else if (lower == "unpooled") {
      c.type = PoolType::kUnpooled;
    } else {
      Fail("{}='{}' is not a pool type; use Naive, Round or Unpooled", type_var, *v);
    }
  }
  auto read = [&](const std::string& name, int64_t fallback, int64_t lo, int64_t hi) {
    return GetEnvIntInRange(name.c_str(), fallback, lo, hi, "a value");
  };
  const std::string page_var = prefix + "POOL_PAGE_SIZE";
  c.page_size = static_cast<uint64_t>(read(page_var, 4096, 8, int64_t{1} << 40));
  WEFT_CHECK(std::has_single_bit(c.page_size), "{}={} is not a power of two; use e.g. 4096", page_var, c.page_size);
  c.large_alloc_round_size =
      static_cast<uint64_t>(read(prefix + "LARGE_ALLOC_ROUND_SIZE", 2 << 20, 1, int64_t{1} << 40));
  c.round_linear_cutoff =
      static_cast<int>(read(prefix + "POOL_ROUND_LINEAR_CUTOFF", 24, std::bit_width(c.page_size) - 1, 40));
  return c;
}

void PoolConfig::Validate() const {
  WEFT_CHECK(page_size >= 8 && std::has_single_bit(page_size), "pool page size {} is not a power of two >= 8",
             page_size);
  WEFT_CHECK(large_alloc_round_size > 0, "pool large-alloc round size must be positive");
  const int page_log2 = std::bit_width(page_size) - 1;
  WEFT_CHECK(round_linear_cutoff >= page_log2 && round_linear_cutoff <= 40,
             "pool round linear cutoff {} is out of range [{}, 40]", round_linear_cutoff, page_log2);
}

uint64_t PoolConfig::RoundedSize(uint64_t bytes) const {
  if (bytes >= kMaxRequest)
    throw OutOfMemoryError(fmt::format("cannot allocate {} bytes: no device has that much", bytes));
  switch (type) {
    case PoolType::kUnpooled:
      return bytes;
    case PoolType::kNaive: {
      const uint64_t paged = RoundUp(bytes, page_size);
      return paged > large_alloc_round_size ? RoundUp(bytes, large_alloc_round_size) : paged;
    }
    case PoolType::kRound: {
      if (bytes <= page_size) return page_size;
      const uint64_t linear = uint64_t{1} << round_linear_cutoff;
      if (bytes <= linear) return std::bit_ceil(bytes);
      return RoundUp(bytes, linear);
    }
  }
  return bytes;
}

std::string StorageStats::ToString() const {
  const uint64_t allocs = hits + misses;
  return fmt::format(
      "in use {}, cached {}, peak {}, hits {}, misses {} (hit rate {:.1f}%), releases {}, "
      "out-of-memory retries {}",
      FormatBytes(bytes_in_use), FormatBytes(bytes_cached), FormatBytes(peak_in_use), hits, misses,
      allocs ? 100.0 * static_cast<double>(hits) / static_cast<double>(allocs) : 0.0, releases, oom_retries);
}

}  // namespace weft

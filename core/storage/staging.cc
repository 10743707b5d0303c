#include "storage/staging.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "weft/base.h"
#include "weft/logging.h"

namespace weft::storage_detail {
namespace {

constexpr uint64_t kMinClass = 4096;
constexpr uint64_t kMaxCachedBytes = 64ull << 20;

struct Block {
  void* data;
  bool pinned;
};

struct DevicePoolState {
  std::unordered_map<uint64_t, std::vector<Block>> free;  // size class -> idle blocks
  uint64_t cached = 0;
  StagingStats stats;
};

struct Pools {
  std::mutex mu;
  std::unordered_map<const Device*, DevicePoolState> devices;
};

// Never destroyed: buffers released by engine work at exit must find it.
Pools& GetPools() {
  static Pools* pools = new Pools();
  return *pools;
}

uint64_t SizeClass(uint64_t bytes) { return bytes <= kMinClass ? kMinClass : std::bit_ceil(bytes); }

void FreeBlock(Device* device, const Block& b) {
  if (b.pinned) {
    device->PinnedFree(b.data);
  } else {
    std::free(b.data);
  }
}

}  // namespace

StagingBuffer::~StagingBuffer() {
  Pools& pools = GetPools();
  {
    std::lock_guard<std::mutex> lock(pools.mu);
    DevicePoolState& st = pools.devices[device_];
    if (st.cached + capacity_ <= kMaxCachedBytes) {
      st.free[capacity_].push_back(Block{data_, pinned_});
      st.cached += capacity_;
      return;
    }
  }
  try {
    FreeBlock(device_, Block{data_, pinned_});
  } catch (const std::exception& e) {
    LogWarning("{}: freeing a staging buffer failed: {}", device_->context(), e.what());
  }
}

std::shared_ptr<StagingBuffer> AcquireStaging(Device& device, uint64_t bytes) {
  WEFT_CHECK(bytes > 0, "AcquireStaging: 0 bytes asked for on {}", device.context());
  const uint64_t size = SizeClass(bytes);
  Pools& pools = GetPools();
  {
    std::lock_guard<std::mutex> lock(pools.mu);
    DevicePoolState& st = pools.devices[&device];
    ++st.stats.acquired;
    auto it = st.free.find(size);
    if (it != st.free.end() && !it->second.empty()) {
      Block b = it->second.back();
      it->second.pop_back();
      st.cached -= size;
      ++st.stats.reused;
      if (b.pinned) ++st.stats.pinned;
      return std::make_shared<StagingBuffer>(&device, b.data, size, b.pinned);
    }
  }
  void* p = nullptr;
  bool pinned = false;
  if (device.has_pinned_memory()) {
    try {
      p = device.PinnedAlloc(size);
      pinned = p != nullptr;
    } catch (const std::exception& e) {
      LogWarning("{}: pinned host memory unavailable ({}); staging through pageable memory", device.context(),
                 e.what());
    }
  }
  if (p == nullptr) p = std::aligned_alloc(64, size);
  if (p == nullptr)
    throw OutOfMemoryError(
        fmt::format("{}: cannot allocate a {}-byte host staging buffer for a copy", device.context(), size));
  if (pinned) {
    std::lock_guard<std::mutex> lock(pools.mu);
    ++pools.devices[&device].stats.pinned;
  }
  return std::make_shared<StagingBuffer>(&device, p, size, pinned);
}

StagingStats GetStagingStats(const Device& device) {
  Pools& pools = GetPools();
  std::lock_guard<std::mutex> lock(pools.mu);
  auto it = pools.devices.find(&device);
  return it == pools.devices.end() ? StagingStats{} : it->second.stats;
}

}  // namespace weft::storage_detail

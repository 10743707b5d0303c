#include "device_pool.h"

#include <algorithm>

#include "weft/base.h"
#include "weft/logging.h"

namespace weft::storage_detail {

DevicePool::DevicePool(Device& device, const PoolConfig& config) : device_(device), config_(config) {
  config_.Validate();
}

DevicePool::~DevicePool() {
  if (stats_.bytes_in_use != 0) {
    LogWarning("{}: storage pool destroyed with {} bytes still in use; those blocks stay allocated", device_.context(),
               stats_.bytes_in_use);
  }
  try {
    ReleaseCached();
  } catch (const Error& e) {
    LogWarning("{}: freeing cached blocks: {}", device_.context(), e.what());
  }
}

weft_device_ptr DevicePool::Alloc(uint64_t bytes) {
  const uint64_t rounded = config_.RoundedSize(bytes);
  {
    std::lock_guard lock(mu_);
    auto it = free_lists_.find(rounded);
    if (it != free_lists_.end() && !it->second.empty()) {
      const weft_device_ptr p = it->second.back();
      it->second.pop_back();
      ++stats_.hits;
      stats_.bytes_cached -= rounded;
      stats_.bytes_in_use += rounded;
      stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.bytes_in_use);
      return p;
    }
    ++stats_.misses;
  }
  const weft_device_ptr p = AllocateFromDevice(bytes, rounded);
  std::lock_guard lock(mu_);
  stats_.bytes_in_use += rounded;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.bytes_in_use);
  return p;
}

weft_device_ptr DevicePool::AllocateFromDevice(uint64_t bytes, uint64_t rounded) {
  try {
    return device_.Allocate(rounded);
  } catch (const OutOfMemoryError&) {
    // Cached blocks are memory the device could use: give them back and try once more.
  }
  ReleaseCached();
  StorageStats snapshot;
  {
    std::lock_guard lock(mu_);
    ++stats_.oom_retries;
    snapshot = stats_;
  }
  try {
    return device_.Allocate(rounded);
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(fmt::format(
        "{}: out of memory allocating {} bytes ({} bytes in the {} pool) even after releasing the pool's cached "
        "blocks; pool: {}. Free arrays you no longer need, use smaller batches, or set "
        "a different WEFT_<DEV>_MEM_POOL_TYPE. Device said: {}",
        device_.context(), bytes, rounded, PoolTypeName(config_.type), snapshot.ToString(), e.what()));
  }
}

void DevicePool::Free(weft_device_ptr ptr, uint64_t bytes) {
  const uint64_t rounded = config_.RoundedSize(bytes);
  if (config_.type == PoolType::kUnpooled) {
    DirectFree(ptr, bytes);
    return;
  }
  std::lock_guard lock(mu_);
  free_lists_[rounded].push_back(ptr);
  stats_.bytes_in_use -= rounded;
  stats_.bytes_cached += rounded;
}

void DevicePool::DirectFree(weft_device_ptr ptr, uint64_t bytes) {
  const uint64_t rounded = config_.RoundedSize(bytes);
  device_.Free(ptr);
  std::lock_guard lock(mu_);
  stats_.bytes_in_use -= rounded;
}

void DevicePool::ReleaseAll() { ReleaseCached(); }

void DevicePool::ReleaseCached() {
  std::unordered_map<uint64_t, std::vector<weft_device_ptr>> blocks;
  {
    std::lock_guard lock(mu_);
    blocks.swap(free_lists_);
    stats_.bytes_cached = 0;
    ++stats_.releases;
  }
  for (auto& [size, list] : blocks)
    for (weft_device_ptr p : list) device_.Free(p);
}

StorageStats DevicePool::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace weft::storage_detail

// One device's memory pool: free lists keyed by rounded size over Device::Allocate/Free.
// Internal to the storage module; see weft/storage.h for the behaviour it implements.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "weft/internal/device.h"
#include "weft/storage.h"

namespace weft::storage_detail {

class DevicePool {
 public:
  DevicePool(Device& device, const PoolConfig& config);
  /// Frees the cached blocks; warns about blocks still in use (left allocated).
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  /// `bytes` > 0. Throws weft::OutOfMemoryError after one release-and-retry.
  weft_device_ptr Alloc(uint64_t bytes);
  /// Back to the free list (to the device when unpooled). `bytes` is the size given to Alloc.
  void Free(weft_device_ptr ptr, uint64_t bytes);
  /// Straight to the device.
  void DirectFree(weft_device_ptr ptr, uint64_t bytes);
  /// Frees every cached block to the device.
  void ReleaseAll();
  StorageStats Stats() const;
  const PoolConfig& config() const { return config_; }

 private:
  // Takes the free lists out under the lock and frees them to the device outside it.
  void ReleaseCached();
  // Device allocation with the out-of-memory release-and-retry.
  weft_device_ptr AllocateFromDevice(uint64_t bytes, uint64_t rounded);

  Device& device_;
  const PoolConfig config_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<weft_device_ptr>> free_lists_;  // rounded size -> blocks
  StorageStats stats_;
};

}  // namespace weft::storage_detail

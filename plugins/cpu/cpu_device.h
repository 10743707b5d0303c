// CPU plugin — the "cpu" devices.
//
// As in MXNet, cpu(0), cpu(1), ... are virtual devices that all share host memory: an allocation
// made on any of them is an ordinary, 64-byte aligned host pointer (WEFT_DEVICE_CAP_HOST_ADDRESSABLE
// | UNIFIED_MEMORY), usable from every cpu(i), and a "peer" copy is a memmove. Several cpu devices
// let programs written for several devices (data parallelism, KVStore tests) run unchanged on one
// machine. Their number comes from the configuration key WEFT_CPU_DEVICES (1..1024, default
// kDefaultDevices).
//
// Streams are FIFO queues run by one worker thread each (host_queue.hpp); the NULL stream runs
// work in the caller's thread. Thread-safe as sdk/device.h requires.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "host_info.h"
#include "weft/sdk/cpp/host_queue.hpp"

namespace weft::cpu {

inline constexpr int32_t kDefaultDevices = 4;
/// Every allocation is aligned to at least this many bytes (a cache line; AVX-512 vector width).
inline constexpr uint64_t kMinAlignment = 64;

class CpuDevice final : public sdk::HostQueueDevice {
 public:
  /// `host`: the plugin's host table.
  CpuDevice(int32_t count, const weft_host_api* host);
  ~CpuDevice() override;

  int32_t Count() override { return count_; }
  void Properties(int32_t device, weft_device_props& props) override;
  /// Host memory aligned to max(alignment, 64); size rounded up to the alignment. Requests larger
  /// than RAM + swap, and failed allocations, throw WEFT_ERR_OUT_OF_MEMORY.
  weft_device_ptr Allocate(int32_t device, uint64_t bytes, uint64_t alignment) override;
  /// Only pointers this plugin allocated (on any cpu device) and not yet freed; others throw
  /// WEFT_ERR_INVALID_ARGUMENT instead of corrupting the heap. Waits for the work already queued
  /// on the plugin's streams before releasing the memory.
  void Free(int32_t device, weft_device_ptr ptr) override;
  /// ptr + offset. Host pointers carry no bounds, so only NULL and address overflow are caught.
  void* HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) override;

 private:
  const int32_t count_;
  const HostInfo info_;
  std::vector<std::string> attr_storage_;  // backing strings of attrs_, filled once
  std::vector<weft_kv> attrs_;
  std::mutex mu_;
  std::unordered_map<uint64_t, uint64_t> live_;  // allocation -> bytes
};

}  // namespace weft::cpu

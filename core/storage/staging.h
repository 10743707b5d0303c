// Host staging buffers for copies between host memory and a device (internal to core).
//
// A copy between host memory and a device that is not host-addressable goes through a staging
// buffer: page-locked memory from the device's plugin (Device::PinnedAlloc, cudaHostAlloc on
// CUDA) when it offers some, else 64-byte-aligned host memory. The device copies from/to the
// buffer asynchronously on a stream, so the user's own memory is never read or written by queued
// work, and an H2D copy returns as soon as the data is in the buffer.
//
// Buffers are pooled per device and per size class (powers of two from 4 KiB) and reused: a
// StagingBuffer goes back to its pool when the last reference is dropped. Keep a reference in the
// engine function that queues the copy: the engine destroys a function's captures only after the
// stream has passed the work it queued (engine.h, "Device work"), which is when the buffer is
// free again. At most 64 MiB of idle buffers are kept per device; larger or surplus ones are
// freed.
//
// Thread-safety: AcquireStaging may be called from any thread; a buffer is used by one copy at a
// time (its owner's).
#pragma once

#include <cstdint>
#include <memory>

#include "weft/internal/device.h"

namespace weft::storage_detail {

class StagingBuffer {
 public:
  StagingBuffer(Device* device, void* data, uint64_t capacity, bool pinned)
      : device_(device), data_(data), capacity_(capacity), pinned_(pinned) {}
  /// Returns the memory to the pool of its device.
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  void* data() const noexcept { return data_; }
  /// Bytes usable from data() (at least what was asked for).
  uint64_t capacity() const noexcept { return capacity_; }
  /// True when the memory came from the plugin's pinned_alloc.
  bool pinned() const noexcept { return pinned_; }

 private:
  Device* device_;
  void* data_;
  uint64_t capacity_;
  bool pinned_;
};

/// A buffer of at least `bytes` (> 0) bytes for copies with `device`. Throws
/// weft::OutOfMemoryError when neither the plugin nor the host can provide it.
std::shared_ptr<StagingBuffer> AcquireStaging(Device& device, uint64_t bytes);

/// Staging statistics of `device` (tests): buffers handed out in total, and how many of those
/// were reused from the pool.
struct StagingStats {
  uint64_t acquired = 0, reused = 0, pinned = 0;
};
StagingStats GetStagingStats(const Device& device);

}  // namespace weft::storage_detail

// simdev — the simulated device's private address space.
//
// Memory of simdev(i) is NOT host-addressable: an allocation is a handle, a number in the range
// [Base(i), Base(i) + kSpan) that is never a host pointer value, backed by host memory only the
// plugin sees. Handles are handed out by a bump pointer (never reused, so a stale handle is
// always caught) and every access is checked against the allocation it falls in.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace weft::simdev {

/// Byte value fresh allocations are filled with, so reads of never-written memory are visible.
inline constexpr uint8_t kFreshByte = 0xA5;

class SimMemory {
 public:
  /// Start of simdev(device)'s handle range: 0x5eed'0000'0000 + device TiB.
  static constexpr uint64_t kBase = 0x5eed00000000ull;
  static constexpr uint64_t kSpan = 1ull << 40;
  static constexpr uint64_t Base(int32_t device) { return kBase + static_cast<uint64_t>(device) * kSpan; }

  /// `name`: "simdev(0)" for messages; `limit`: bytes the device may hold at once.
  SimMemory(std::string name, int32_t device, uint64_t limit);
  ~SimMemory();
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  /// A new allocation of `bytes` (> 0) aligned to `alignment` (power of two), filled with
  /// kFreshByte. Throws sdk::Error(WEFT_ERR_OUT_OF_MEMORY) when it would exceed the limit.
  uint64_t Allocate(uint64_t bytes, uint64_t alignment);
  /// Throws sdk::Error(WEFT_ERR_INVALID_ARGUMENT) unless `ptr` is the start of a live allocation.
  void Free(uint64_t ptr);
  /// The check Free makes, without freeing.
  void CheckFree(uint64_t ptr) const;
  /// Host memory behind bytes [offset, offset + bytes) from `ptr`, which may point anywhere inside
  /// a live allocation. Throws sdk::Error(WEFT_ERR_INVALID_ARGUMENT) naming the handle, the range
  /// and the allocation when the range is not inside one live allocation.
  void* Resolve(uint64_t ptr, uint64_t offset, uint64_t bytes) const;

  /// Bytes from ptr + offset to the end of the live allocation containing ptr (0 when none).
  uint64_t BytesFrom(uint64_t ptr, uint64_t offset) const;

  uint64_t used() const;
  uint64_t limit() const { return limit_; }

 private:
  struct AlignedDelete {
    void operator()(std::byte* p) const noexcept;
  };
  struct Block {
    uint64_t bytes;
    std::unique_ptr<std::byte[], AlignedDelete> host;
  };
  // Which device's range `ptr` falls in (for messages), -1 when none.
  static int64_t DeviceOf(uint64_t ptr);
  // Throws unless `ptr` starts a live allocation; mu_ held.
  void CheckFreeLocked(uint64_t ptr) const;

  const std::string name_;
  const int32_t device_;
  const uint64_t limit_;
  mutable std::mutex mu_;
  std::map<uint64_t, Block> blocks_;  // handle -> allocation
  uint64_t next_;                     // bump pointer in [Base, Base + kSpan)
  uint64_t used_ = 0;
};

}  // namespace weft::simdev

// weft core — Storage: pooled device memory, one pool per device (MXNet's StorageManager, see
// src/storage/ in MXNet 1.9; MXNet pooled only GPU memory, weft pools every device type).
//
// Memory comes from the device plugin (Device::Allocate / Device::Free). Freed blocks go back to
// the device's pool and are handed out again for a later request that rounds to the same size.
//
// Pool strategies (per device type, from the environment when the pool is created, i.e. at the
// first Alloc on that device). DEV is the device type upper-cased, with every character other
// than a letter or digit replaced by '_': CPU, SIMDEV, CUDA, HIP, VULKAN.
//   WEFT_<DEV>_MEM_POOL_TYPE = Naive | Round | Unpooled   (any case; default Naive)
//     Naive     sizes round up to a multiple of the page size; above the large-alloc size they
//               round up to a multiple of that instead; free blocks are kept in exact-size
//               buckets (MXNet GPUPooledStorageManager).
//     Round     sizes round up to the page size, then to the next power of two up to 2^cutoff,
//               then to a multiple of 2^cutoff (MXNet GPUPooledRoundedStorageManager). Wastes
//               more memory, reuses more blocks when sizes vary.
//     Unpooled  every Alloc/Free goes to the device, with the exact size (no caching).
//   WEFT_<DEV>_MEM_POOL_PAGE_SIZE = bytes, a power of two >= 8 (default 4096).
//   WEFT_<DEV>_MEM_LARGE_ALLOC_ROUND_SIZE = bytes > 0 (default 2097152 = 2 MiB; Naive only).
//   WEFT_<DEV>_MEM_POOL_ROUND_LINEAR_CUTOFF = c in [log2(page size), 40] (default 24; Round only).
// A malformed value raises weft::Error naming the variable at that first Alloc.
//
// Out of memory: when the device cannot satisfy an allocation, the pool releases every cached
// block of that device and retries once; if that fails too, Alloc throws weft::OutOfMemoryError
// naming the device, the requested and rounded bytes, the pool's statistics and the device's
// own message.
//
// Thread-safety: every method may be called from any thread at the same time. Device
// allocation happens outside the pool's lock.
//
// Lifetime: Storage::Get() is never destroyed (blocks still cached at process exit go with the
// process; this avoids freeing into plugins that have already shut down).
#pragma once

#include "weft/export.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "weft/context.h"
#include "weft/sdk/types.h"

namespace weft {

enum class PoolType { kNaive, kRound, kUnpooled };

/// "Naive", "Round", "Unpooled".
WEFT_API const char* PoolTypeName(PoolType type) noexcept;

/// How one device's pool rounds and caches. See the top of this file.
struct WEFT_API PoolConfig {
  PoolType type = PoolType::kNaive;
  uint64_t page_size = 4096;                  ///< bytes, power of two >= 8
  uint64_t large_alloc_round_size = 2 << 20;  ///< bytes (Naive)
  int round_linear_cutoff = 24;               ///< log2 bytes (Round)

  /// Reads WEFT_<DEV>_MEM_POOL_* for `device_type` ("cpu" reads WEFT_CPU_...). Throws
  /// weft::Error naming the variable for a malformed or out-of-range value.
  static PoolConfig FromEnv(const std::string& device_type);
  /// Throws weft::Error when a field is out of range (as FromEnv would).
  void Validate() const;
  /// The size, in bytes, a request of `bytes` (> 0) occupies in the pool.
  uint64_t RoundedSize(uint64_t bytes) const;
};

/// One pool's counters. All sizes in bytes, counting pool (rounded) sizes.
struct WEFT_API StorageStats {
  uint64_t bytes_in_use = 0;  ///< handed out by Alloc and not yet freed
  uint64_t bytes_cached = 0;  ///< held in the pool's free lists
  uint64_t peak_in_use = 0;   ///< highest bytes_in_use seen
  uint64_t hits = 0;          ///< Allocs served from the free lists
  uint64_t misses = 0;        ///< Allocs that went to the device
  uint64_t releases = 0;      ///< times the cache was emptied (ReleaseAll or out-of-memory)
  uint64_t oom_retries = 0;   ///< allocations retried after an out-of-memory release
  /// "in use 12.0 MiB, cached 4.0 MiB, peak 16.0 MiB, hits 10, misses 3 (hit rate 76.9%), ..."
  std::string ToString() const;
};

class WEFT_API Storage {
 public:
  /// A block of device memory. A default-constructed Handle is null (dptr 0, size 0).
  struct Handle {
    weft_device_ptr dptr = 0;  ///< the device address (a host pointer on host-addressable devices)
    uint64_t size = 0;         ///< bytes requested (the block may be larger: PoolConfig::RoundedSize)
    Context ctx;               ///< the device it lives on
    bool is_null() const noexcept { return dptr == 0; }
  };

  /// The process-wide storage (pools read their configuration from the environment).
  static Storage* Get();
  /// A separate Storage with its own pools (tests, benchmarks): every pool uses `config` when
  /// given, else reads the environment. Destroying it frees its cached blocks; blocks still in
  /// use are reported with a warning and left allocated.
  static std::unique_ptr<Storage> Create(std::optional<PoolConfig> config = std::nullopt);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// At least `bytes` bytes on `ctx`, aligned to the device's min_alignment. 0 bytes returns a
  /// null handle (no device is touched). Throws weft::Error when `ctx` names no loaded device,
  /// weft::OutOfMemoryError as described at the top of this file.
  Handle Alloc(uint64_t bytes, const Context& ctx);
  /// Returns the block to its pool (to the device for an Unpooled pool). Null: no-op. The handle
  /// must come from this Storage's Alloc and not have been freed (not checked).
  void Free(const Handle& handle);
  /// Returns the block straight to the device, bypassing the cache. Null: no-op.
  void DirectFree(const Handle& handle);
  /// Frees every cached (not in-use) block of `ctx`'s pool to the device. No-op for a device
  /// without a pool yet.
  void ReleaseAll(const Context& ctx);
  /// Counters of `ctx`'s pool (all zero when it has none yet).
  StorageStats Stats(const Context& ctx) const;
  /// The configuration of `ctx`'s pool, creating the pool (and reading the environment) if needed.
  /// Throws weft::Error as Alloc when `ctx` names no loaded device.
  PoolConfig GetPoolConfig(const Context& ctx);

  struct Impl;

 private:
  explicit Storage(std::optional<PoolConfig> config);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

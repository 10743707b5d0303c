// The shared part of NDArray views: one storage block and one engine variable. Internal to the
// ndarray module.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>

#include "weft/device.h"
#include "weft/engine.h"
#include "weft/storage.h"

namespace weft::ndarray_detail {

struct Chunk {
  /// Looks the device up (throws weft::Error when `ctx` names none) and creates the variable;
  /// allocates `bytes` now unless delay_alloc.
  Chunk(const Context& ctx, uint64_t bytes, bool delay_alloc);
  /// A chunk over a mapped POSIX shared-memory segment (shared_mem.cc): `ctx` is cpu, the memory
  /// is `mapping` (never from the pool), unmapped and its descriptor closed when the chunk goes.
  struct SharedMem {
    int pid = -1;            // the process that created the segment
    int fd = -1;             // its descriptor in this process (owned)
    void* base = nullptr;    // the mapping
    uint64_t map_bytes = 0;  // the mapping's length (>= bytes)
  };
  Chunk(const Context& ctx, uint64_t bytes, SharedMem mapping);
  /// Frees the block through Engine::DeleteVariable, i.e. after every operation pushed on the
  /// variable has completed.
  ~Chunk();
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  /// Allocates the block if that was delayed. Thread-safe.
  void CheckAndAlloc();
  /// The block (null until allocated). Thread-safe.
  Storage::Handle handle() const;

  const Context ctx;
  const uint64_t bytes;  ///< capacity of the block
  Device* const device;
  const VarHandle var;
  const std::optional<SharedMem> shm;  // set for shared-memory chunks
  std::atomic<uint64_t> writes{0};     // NDArray::NoteWrite count

 private:
  mutable std::mutex mu_;
  bool allocated_ = false;
  Storage::Handle handle_;
};

}  // namespace weft::ndarray_detail

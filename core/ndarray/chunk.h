// The shared part of NDArray views: one storage block and one engine variable. Internal to the
// ndarray module.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "weft/engine.h"
#include "weft/internal/device.h"
#include "weft/storage.h"

namespace weft::ndarray_detail {

struct SparseParts;  // sparse_parts.h

struct Chunk {
  /// Looks the device up (throws weft::Error when `ctx` names none) and creates the variable;
  /// allocates `bytes` now unless delay_alloc.
  Chunk(const Context& ctx, uint64_t bytes, bool delay_alloc);
  /// A chunk over `owner`'s memory (allocated now if it was delayed) with a variable of its own:
  /// operations on it are not ordered with those on `owner`. Keeps `owner` alive; frees nothing.
  explicit Chunk(std::shared_ptr<Chunk> owner);
  /// A chunk over `bytes` of memory the caller owns at `ptr` on `ctx` (a host pointer on cpu);
  /// `release` runs once every operation on the chunk has completed after it is gone.
  Chunk(const Context& ctx, weft_device_ptr ptr, uint64_t bytes, std::function<void()> release);
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
  /// Set for arrays in POSIX shared memory (shared_mem.cc; the memory itself is external: its
  /// release unmaps it and closes the descriptor).
  struct SharedMem {
    int pid = -1;  // the process that created the segment
    int fd = -1;   // its descriptor in this process
  };
  std::optional<SharedMem> shm;
  std::atomic<uint64_t> writes{0};  // NDArray::NoteWrite count
  /// Set when the memory may be written without NoteWrite (NDArray::WritesCounted): external
  /// memory, memory another chunk borrows, a pointer handed out for writing. Never cleared.
  std::atomic<bool> uncounted{false};
  /// Set for a row_sparse or csr array (a chunk of 0 bytes whose variable orders operations on
  /// the array as a whole; the values and aux arrays are in the parts). Set once, at creation.
  std::shared_ptr<SparseParts> sparse;

 private:
  mutable std::mutex mu_;
  bool allocated_ = false;
  Storage::Handle handle_;
  std::shared_ptr<Chunk> owner_;   // set for a borrowing chunk, whose handle_ is the owner's
  std::function<void()> release_;  // set for external memory, which Storage did not allocate
};

}  // namespace weft::ndarray_detail

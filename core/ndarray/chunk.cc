#include "chunk.h"

#include "weft/internal/runtime.h"
#include "weft/logging.h"

namespace weft::ndarray_detail {

Chunk::Chunk(const Context& c, uint64_t b, bool delay_alloc)
    : ctx(c), bytes(b), device(&internal::GetDevice(Runtime::Get(), c)), var(Engine::Get()->NewVariable()) {
  if (!delay_alloc) {
    try {
      CheckAndAlloc();
    } catch (...) {
      Engine::Get()->DeleteVariable(nullptr, ctx, var);
      throw;
    }
  }
}

Chunk::Chunk(std::shared_ptr<Chunk> owner)
    : ctx(owner->ctx), bytes(owner->bytes), device(owner->device), var(Engine::Get()->NewVariable()) {
  owner->CheckAndAlloc();
  handle_ = owner->handle();
  allocated_ = true;
  // Writes through either chunk reach the memory of both but count on one.
  owner->uncounted = true;
  uncounted = true;
  owner_ = std::move(owner);
}

Chunk::Chunk(const Context& c, weft_device_ptr ptr, uint64_t b, std::function<void()> release)
    : ctx(c), bytes(b), device(&internal::GetDevice(Runtime::Get(), c)), var(Engine::Get()->NewVariable()) {
  handle_.dptr = ptr;
  handle_.size = b;
  handle_.ctx = c;
  allocated_ = true;
  release_ = std::move(release);
  uncounted = true;  // its owner may write it
}

Chunk::~Chunk() {
  try {
    // A borrowing chunk gives its owner back once its own operations are done (the owner frees);
    // external memory goes back to whoever lent it.
    Engine::Get()->DeleteVariable(
        [h = handle_, owner = std::move(owner_), release = std::move(release_)](RunContext) {
          if (owner) return;
          if (release) {
            release();
          } else if (!h.is_null()) {
            Storage::Get()->Free(h);
          }
        },
        ctx, var);
  } catch (const std::exception& e) {
    LogError("{}: releasing an array's memory failed: {}", ctx, e.what());
  }
}

void Chunk::CheckAndAlloc() {
  std::lock_guard lock(mu_);
  if (allocated_) return;
  handle_ = Storage::Get()->Alloc(bytes, ctx);
  allocated_ = true;
}

Storage::Handle Chunk::handle() const {
  std::lock_guard lock(mu_);
  return handle_;
}

}  // namespace weft::ndarray_detail

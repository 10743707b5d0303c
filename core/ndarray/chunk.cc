#include "chunk.h"

#include <sys/mman.h>
#include <unistd.h>

#include "weft/logging.h"
#include "weft/runtime.h"

namespace weft::ndarray_detail {

Chunk::Chunk(const Context& c, uint64_t b, bool delay_alloc)
    : ctx(c), bytes(b), device(&Runtime::Get().GetDevice(c)), var(Engine::Get()->NewVariable()) {
  if (!delay_alloc) {
    try {
      CheckAndAlloc();
    } catch (...) {
      Engine::Get()->DeleteVariable(nullptr, ctx, var);
      throw;
    }
  }
}

Chunk::Chunk(const Context& c, uint64_t b, SharedMem mapping)
    : ctx(c), bytes(b), device(&Runtime::Get().GetDevice(c)), var(Engine::Get()->NewVariable()), shm(mapping) {
  handle_.dptr = reinterpret_cast<weft_device_ptr>(mapping.base);
  handle_.size = b;
  handle_.ctx = c;
  allocated_ = true;
}

Chunk::~Chunk() {
  try {
    if (shm) {
      Engine::Get()->DeleteVariable(
          [m = *shm](RunContext) {
            if (munmap(m.base, m.map_bytes) != 0) LogError("munmap of a shared-memory array failed");
            close(m.fd);
          },
          ctx, var);
      return;
    }
    Engine::Get()->DeleteVariable(
        [h = handle_](RunContext) {
          if (!h.is_null()) Storage::Get()->Free(h);
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

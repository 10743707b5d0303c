#include "simdev_memory.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>

#include "weft/sdk/cpp/error.hpp"

namespace weft::simdev {
namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Backing memory is 64-byte aligned, as CPU kernels reused on simdev expect.
constexpr uint64_t kHostAlignment = 64;

}  // namespace

SimMemory::SimMemory(std::string name, int32_t device, uint64_t limit)
    : name_(std::move(name)), device_(device), limit_(limit), next_(Base(device)) {}

SimMemory::~SimMemory() = default;

void SimMemory::AlignedDelete::operator()(std::byte* p) const noexcept {
  ::operator delete[](p, std::align_val_t(kHostAlignment));
}

int64_t SimMemory::DeviceOf(uint64_t ptr) {
  if (ptr < kBase) return -1;
  return static_cast<int64_t>((ptr - kBase) / kSpan);
}

uint64_t SimMemory::Allocate(uint64_t bytes, uint64_t alignment) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > limit_ - used_) {
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, name_ + ": allocate " + std::to_string(bytes) +
                                                 " bytes: " + std::to_string(used_) + " of " + std::to_string(limit_) +
                                                 " bytes in use (limit set by WEFT_SIMDEV_MEMORY_MB)");
  }
  const uint64_t start = (next_ + alignment - 1) & ~(alignment - 1);
  if (start - Base(device_) > kSpan - bytes) {
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, name_ + ": allocate " + std::to_string(bytes) +
                                                 " bytes: the simulated address space is exhausted");
  }
  Block block{bytes, std::unique_ptr<std::byte[], AlignedDelete>(
                         static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(kHostAlignment))))};
  std::memset(block.host.get(), kFreshByte, bytes);
  blocks_.emplace(start, std::move(block));
  next_ = start + bytes;
  used_ += bytes;
  return start;
}

void SimMemory::CheckFreeLocked(uint64_t ptr) const {
  if (blocks_.count(ptr) != 0) return;
  const int64_t owner = DeviceOf(ptr);
  std::string why;
  if (owner < 0 || owner >= 1024) {
    why = "not a simdev handle (a host pointer or another plugin's address?)";
  } else if (owner != device_) {
    why = "it belongs to simdev(" + std::to_string(owner) + ")";
  } else {
    auto after = blocks_.upper_bound(ptr);
    if (after != blocks_.begin() && ptr < std::prev(after)->first + std::prev(after)->second.bytes) {
      why = "it points inside the allocation at " + Hex(std::prev(after)->first) + ", not at its start";
    } else {
      why = "no live allocation starts there (freed twice, or never allocated)";
    }
  }
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, name_ + ": free " + Hex(ptr) + ": " + why);
}

void SimMemory::CheckFree(uint64_t ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  CheckFreeLocked(ptr);
}

void SimMemory::Free(uint64_t ptr) {
  std::unique_ptr<std::byte[], AlignedDelete> host;  // released after the lock (declared first)
  std::lock_guard<std::mutex> lock(mu_);
  CheckFreeLocked(ptr);
  auto it = blocks_.find(ptr);
  used_ -= it->second.bytes;
  host = std::move(it->second.host);
  blocks_.erase(it);
}

void* SimMemory::Resolve(uint64_t ptr, uint64_t offset, uint64_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto after = blocks_.upper_bound(ptr);
  if (after == blocks_.begin() || ptr >= std::prev(after)->first + std::prev(after)->second.bytes) {
    const int64_t owner = DeviceOf(ptr);
    std::string why = owner < 0 || owner >= 1024 ? "not a simdev handle (a host pointer or another plugin's address?)"
                      : owner != device_         ? "it belongs to simdev(" + std::to_string(owner) + ")"
                                                 : "no live allocation contains it (freed, or never allocated)";
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, name_ + ": device pointer " + Hex(ptr) + ": " + why);
  }
  const auto& [base, block] = *std::prev(after);
  const uint64_t start = ptr - base;  // position of ptr inside the block
  if (offset > block.bytes - start || bytes > block.bytes - start - offset) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                     name_ + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                         std::to_string(bytes) + ") from " + Hex(ptr) + " run past the end of its " +
                         std::to_string(block.bytes) + "-byte allocation at " + Hex(base) + " (" +
                         std::to_string(block.bytes - start) + " bytes available from that pointer)");
  }
  return block.host.get() + start + offset;
}

uint64_t SimMemory::BytesFrom(uint64_t ptr, uint64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto after = blocks_.upper_bound(ptr);
  if (after == blocks_.begin()) return 0;
  const auto& [base, block] = *std::prev(after);
  const uint64_t start = ptr - base;
  if (start >= block.bytes || offset > block.bytes - start) return 0;
  return block.bytes - start - offset;
}

uint64_t SimMemory::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

}  // namespace weft::simdev

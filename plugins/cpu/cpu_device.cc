#include "cpu_device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu_kernels.h"

namespace weft::cpu {
namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void CopyString(char* dst, size_t cap, const std::string& s) {
  const size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

}  // namespace

CpuDevice::CpuDevice(int32_t count, const weft_host_api* host)
    : sdk::HostQueueDevice("cpu", host), count_(count), info_(ReadHostInfo()) {
  attr_storage_ = {"model",  info_.model,
                   "isa",    info_.isa,
                   "cores",  std::to_string(info_.cores),
                   "memory", "host memory, shared by every cpu(i)"};
  // The layout the executor's fusion may keep activations in between fused convolutions.
  if (*BlockedActivationFormat() != '\0')
    attr_storage_.insert(attr_storage_.end(), {"blocked_activations", BlockedActivationFormat()});
  // The activations its `_sg_conv` takes beyond relu and clip (weft/sdk/ops/convolution.hpp).
  attr_storage_.insert(attr_storage_.end(), {"fused_activations", "relu,clip,tanh,sigmoid,softrelu"});
  for (size_t i = 0; i + 1 < attr_storage_.size(); i += 2)
    attrs_.push_back(weft_kv{attr_storage_[i].c_str(), attr_storage_[i + 1].c_str()});
}

CpuDevice::~CpuDevice() {
  DrainStreams();
  // Whatever the host did not free goes now: the plugin is being shut down.
  for (const auto& [ptr, bytes] : live_) std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)));
}

void CpuDevice::Properties(int32_t device, weft_device_props& p) {
  CopyString(p.name, sizeof(p.name), info_.model + " (virtual cpu " + std::to_string(device) + ")");
  CopyString(p.vendor, sizeof(p.vendor), info_.vendor);
  p.total_memory = info_.total_memory;
  p.free_memory = AvailableMemory();
  p.capabilities = WEFT_DEVICE_CAP_HOST_ADDRESSABLE | WEFT_DEVICE_CAP_ASYNC_COPY | WEFT_DEVICE_CAP_PEER_COPY |
                   WEFT_DEVICE_CAP_UNIFIED_MEMORY | WEFT_DEVICE_CAP_TIMESTAMPS | WEFT_DEVICE_CAP_NATIVE_HANDLES |
                   WEFT_DEVICE_CAP_HOST_FUNC;
  p.kind = WEFT_DEVICE_KIND_CPU;
  p.min_alignment = kMinAlignment;
  p.compute_units = info_.cores;
  p.num_attributes = static_cast<int32_t>(attrs_.size());
  p.attributes = attrs_.data();
}

weft_device_ptr CpuDevice::Allocate(int32_t device, uint64_t bytes, uint64_t alignment) {
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  // Refuse what the machine cannot hold before asking malloc: a huge request must be an error,
  // also under sanitizers whose allocators abort on absurd sizes.
  const uint64_t limit = info_.total_memory + info_.total_swap;
  if (limit != 0 && bytes > limit) {
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Name(device) + ": allocate " + std::to_string(bytes) +
                                                 " bytes: more than the machine's RAM + swap (" +
                                                 std::to_string(limit) + " bytes)");
  }
  const uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;  // aligned_alloc needs a multiple
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) {
    throw sdk::Error(WEFT_ERR_OUT_OF_MEMORY, Name(device) + ": allocate " + std::to_string(bytes) +
                                                 " bytes (alignment " + std::to_string(alignment) +
                                                 "): host allocation failed");
  }
  const auto ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(ptr, bytes);
  return ptr;
}

void CpuDevice::Free(int32_t device, weft_device_ptr ptr) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.erase(ptr) == 0) {
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": free " + Hex(ptr) +
                                                      ": not an allocation of the cpu plugin (foreign pointer, "
                                                      "interior pointer, or freed twice)");
    }
  }
  WaitForAllStreams();  // work queued on a stream may still use the memory
  std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)));
}

void* CpuDevice::HostAddress(int32_t device, weft_device_ptr ptr, uint64_t offset, uint64_t bytes) {
  if (ptr == 0) throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": NULL device pointer");
  if (offset > UINT64_MAX - ptr || bytes > UINT64_MAX - ptr - offset) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, Name(device) + ": range " + Hex(ptr) + " + " + std::to_string(offset) +
                                                    " (+" + std::to_string(bytes) +
                                                    " bytes) overflows the address space");
  }
  return reinterpret_cast<char*>(static_cast<uintptr_t>(ptr)) + offset;
}

}  // namespace weft::cpu

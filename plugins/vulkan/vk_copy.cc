// vulkan plugin — copies and fills. Stream-ordered host copies go through pooled HOST_VISIBLE
// staging buffers: host->device copies the source into staging at once (so the caller's buffer
// is free on return) and records a buffer copy; device->host records a copy into staging and
// copies out on the completion thread. Synchronous (NULL-stream) copies of mappable memory are
// plain memcpy.
#include <cstring>

#include "vk_device.h"

namespace weft::vk {

void VulkanDevice::Copy(const weft_copy_args& a) {
  switch (a.kind) {
    case WEFT_COPY_HOST_TO_DEVICE: {
      Gpu& g = gpu(a.dst_device);
      auto [dst, at] = g.Locate(a.dst, a.dst_offset, a.bytes, "copy host->device");
      if (a.stream == nullptr && dst->mapped != nullptr) {
        std::memcpy(static_cast<char*>(dst->mapped) + at, a.src_host, a.bytes);
        return;
      }
      OnStream(a.dst_device, a.stream, [&](Gpu& gg, StreamState& s) {
        RawBuffer st = gg.TakeStaging(a.bytes);
        std::memcpy(st.mapped, a.src_host, a.bytes);
        gg.KeepStaging(s, st);
        const VkBuffer r[1] = {st.buffer}, w[1] = {dst->buffer};
        gg.Record(s, r, w, [&](VkCommandBuffer cb) {
          VkBufferCopy region{0, at, a.bytes};
          gg.api().vkCmdCopyBuffer(cb, st.buffer, dst->buffer, 1, &region);
        });
      });
      return;
    }
    case WEFT_COPY_DEVICE_TO_HOST: {
      Gpu& g = gpu(a.src_device);
      auto [src, at] = g.Locate(a.src, a.src_offset, a.bytes, "copy device->host");
      if (a.stream == nullptr && src->mapped != nullptr) {
        std::memcpy(a.dst_host, static_cast<const char*>(src->mapped) + at, a.bytes);
        return;
      }
      OnStream(a.src_device, a.stream, [&](Gpu& gg, StreamState& s) {
        RawBuffer st = gg.TakeStaging(a.bytes);
        gg.KeepStaging(s, st);
        const VkBuffer r[1] = {src->buffer}, w[1] = {st.buffer};
        gg.Record(s, r, w, [&](VkCommandBuffer cb) {
          VkBufferCopy region{at, 0, a.bytes};
          gg.api().vkCmdCopyBuffer(cb, src->buffer, st.buffer, 1, &region);
        });
        void* host = a.dst_host;
        const uint64_t n = a.bytes;
        const void* from = st.mapped;
        gg.After(
            s, [host, from, n] { std::memcpy(host, from, n); }, false);
      });
      return;
    }
    case WEFT_COPY_DEVICE_TO_DEVICE: {
      if (a.src_device != a.dst_device)
        throw sdk::Error(WEFT_ERR_UNSUPPORTED, Name(a.src_device) + " -> " + Name(a.dst_device) +
                                                   ": copies between two Vulkan devices go through the host "
                                                   "(no PEER_COPY capability)");
      Gpu& g = gpu(a.dst_device);
      auto [src, sat] = g.Locate(a.src, a.src_offset, a.bytes, "copy device->device (source)");
      auto [dst, dat] = g.Locate(a.dst, a.dst_offset, a.bytes, "copy device->device (destination)");
      if (src == dst && sat < dat + a.bytes && dat < sat + a.bytes)
        throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, g.name() + ": copy device->device: overlapping ranges");
      OnStream(a.dst_device, a.stream, [&](Gpu& gg, StreamState& s) {
        const VkBuffer r[1] = {src->buffer}, w[1] = {dst->buffer};
        gg.Record(s, r, w, [&](VkCommandBuffer cb) {
          VkBufferCopy region{sat, dat, a.bytes};
          gg.api().vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &region);
        });
      });
      return;
    }
    default:
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "vulkan: copy: unknown kind");
  }
}

void VulkanDevice::Memset(const weft_memset_args& a) {
  Gpu& g = gpu(a.device);
  auto [dst, at] = g.Locate(a.dst, a.offset, a.bytes, "memset");
  if (a.stream == nullptr && dst->mapped != nullptr) {
    std::memset(static_cast<char*>(dst->mapped) + at, a.value, a.bytes);
    return;
  }
  OnStream(a.device, a.stream, [&](Gpu& gg, StreamState& s) {
    // vkCmdFillBuffer needs 4-byte aligned offset and size: fill the aligned middle, copy the
    // (at most 3-byte) edges from a staging buffer holding the byte pattern.
    const uint64_t head = std::min<uint64_t>((4 - at % 4) % 4, a.bytes);
    const uint64_t middle = (a.bytes - head) / 4 * 4;
    const uint64_t tail = a.bytes - head - middle;
    RawBuffer st{};
    if (head + tail > 0) {
      st = gg.TakeStaging(8);
      std::memset(st.mapped, a.value, 8);
      gg.KeepStaging(s, st);
    }
    std::vector<VkBuffer> r;
    if (st.buffer != VK_NULL_HANDLE) r.push_back(st.buffer);
    const VkBuffer w[1] = {dst->buffer};
    gg.Record(s, r, w, [&](VkCommandBuffer cb) {
      if (middle > 0) {
        uint32_t word;
        std::memset(&word, a.value, 4);
        gg.api().vkCmdFillBuffer(cb, dst->buffer, at + head, middle, word);
      }
      VkBufferCopy regions[2];
      uint32_t n = 0;
      if (head > 0) regions[n++] = {0, at, head};
      if (tail > 0) regions[n++] = {0, at + head + middle, tail};
      if (n > 0) gg.api().vkCmdCopyBuffer(cb, st.buffer, dst->buffer, n, regions);
    });
  });
}

}  // namespace weft::vk

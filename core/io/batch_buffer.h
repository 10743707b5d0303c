// weft io (internal) — memory for one batch array that a worker thread fills and the consumer
// receives on the iterator's device, without a host wait.
//
// On a host-addressable device (cpu) the worker writes straight into a new array's memory: no
// operation can have been pushed on a new array, and its memory came back to the pool only after
// every operation of its previous owner completed, so the write needs no engine operation. On
// other devices the worker writes a staging buffer (pinned memory when the plugin offers it) and
// Finish() pushes the copy into the array as an engine operation (kCopyToDevice), which keeps
// the buffer alive until the device has read it; nobody waits for it on the host.
//
// Thread-safety: one buffer per worker at a time.
#pragma once

#include <cstdint>
#include <memory>

#include "weft/ndarray.h"

namespace weft::storage_detail {
class StagingBuffer;
}

namespace weft::io_detail {

class BatchBuffer {
 public:
  BatchBuffer(const Shape& shape, DType dtype, const Context& ctx);
  /// Where to write the array's Bytes() bytes (C order, elements of the dtype).
  uint8_t* host() const noexcept { return host_; }
  size_t bytes() const noexcept { return array_.Bytes(); }
  /// The array; on a device that is not host-addressable, with the copy from the staging buffer
  /// pushed. Call once, after writing.
  NDArray Finish();

 private:
  NDArray array_;
  std::shared_ptr<storage_detail::StagingBuffer> staging_;
  uint8_t* host_ = nullptr;
};

}  // namespace weft::io_detail

// Batch memory filled on worker threads (io/batch_buffer.h).
#include "io/batch_buffer.h"

#include "storage/staging.h"
#include "weft/engine.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

namespace weft::io_detail {

BatchBuffer::BatchBuffer(const Shape& shape, DType dtype, const Context& ctx)
    : array_(shape, ctx, /*delay_alloc=*/false, dtype) {
  Device& dev = internal::GetDevice(Runtime::Get(), ctx);
  if (array_.Bytes() == 0) return;
  if (dev.host_addressable()) {
    host_ = reinterpret_cast<uint8_t*>(array_.dptr() + array_.offset());
  } else {
    staging_ = storage_detail::AcquireStaging(dev, array_.Bytes());
    host_ = static_cast<uint8_t*>(staging_->data());
  }
}

NDArray BatchBuffer::Finish() {
  if (staging_) {
    Device* dev = &internal::GetDevice(Runtime::Get(), array_.GetContext());
    const weft_device_ptr base = array_.dptr();
    const uint64_t off = array_.offset(), bytes = array_.Bytes();
    // The capture keeps the staging buffer until the stream has passed the copy (engine.h).
    Engine::Get()->PushSync([dev, base, off, bytes, stage = std::move(staging_)](
                                RunContext rctx) { dev->CopyFromHost(base, off, stage->data(), bytes, rctx.stream); },
                            array_.GetContext(), {}, {array_.var()}, FnProperty::kCopyToDevice, 0, "DataIterBatchCopy");
  }
  host_ = nullptr;
  return std::move(array_);
}

}  // namespace weft::io_detail

// MXNet's BatchLoader rule (io/batch_loader.h).
#include "io/batch_loader.h"

#include "weft/base.h"

namespace weft::io_detail {

void BatchLoader::Restart(uint64_t delivered, const std::function<void()>& rewind) {
  const bool carry = round_batch_ && wrap_seq_ >= 0 && delivered > static_cast<uint64_t>(wrap_seq_);
  if (!carry) rewind();
  done_ = false;
  wrap_seq_ = -1;
}

size_t BatchLoader::Fill(uint64_t k, size_t batch, int* pad, const std::function<bool(size_t)>& read,
                         const std::function<void()>& rewind, const std::string& what) {
  if (done_) return 0;
  *pad = 0;
  size_t i = 0;
  for (; i < batch; ++i) {
    if (read(i)) continue;
    if (i == 0 && *pad == 0) return 0;  // the epoch ended on a whole batch
    if (!round_batch_ || *pad != 0) break;
    *pad = static_cast<int>(batch - i);  // complete it from the start of the data
    wrap_seq_ = static_cast<int64_t>(k);
    rewind();
    WEFT_CHECK(read(i), "{} has no examples", what);
  }
  if (i < batch) {
    WEFT_CHECK(!round_batch_, "{}: batch_size {} is larger than the {} examples of the data (set round_batch=0)", what,
               batch, i - (batch - static_cast<size_t>(*pad)));
    *pad = static_cast<int>(batch - i);
  }
  if (*pad != 0) done_ = true;
  return i;
}

}  // namespace weft::io_detail

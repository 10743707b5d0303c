// libFuzzer target for the RecordIO reader and what ImageRecordIter does with a record: the input
// is a .rec file. Each input is read three ways — parsed from memory record by record, read
// through RecordIOReader from a scratch file in /dev/shm (tmpfs), and cut into partitions
// (RecordIOPartition: FindRecordStart and SkipRecord from arbitrary offsets) — and the first four
// records' image headers are unpacked and their payloads decoded as JPEG/PNG (as a window, with 3
// and 1 channels), by the decoder as the iterator uses it and by one with libpng only for PNGs,
// which must give the same pixels or the same error (io/png_fast.h must not change results). Any input
// must give records or weft::Error: never a crash, a hang, or a huge allocation (image sizes are
// capped at 4 MiB decoded here; -malloc_limit_mb enforces the rest).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "io/image_decoder.h"
#include "weft/base.h"
#include "weft/image.h"
#include "weft/recordio.h"

namespace {

constexpr uint64_t kMaxDecoded = uint64_t{4} << 20;

// The window's pixels, or the error.
std::string Window(weft::io_detail::ImageDecoder& decoder, std::span<const uint8_t> payload, int channels) {
  try {
    const weft::ImageInfo info = decoder.Open(payload, channels, kMaxDecoded);
    const int w = std::max(1, info.width / 2), h = std::max(1, info.height / 2);
    const weft::io_detail::PixelView v =
        decoder.ReadView(info.width - w, info.height / 3, w, std::min(h, info.height - info.height / 3));
    std::string out;
    for (int r = 0; r < v.height; ++r)
      out.append(reinterpret_cast<const char*>(v.data) + static_cast<size_t>(r) * v.stride,
                 static_cast<size_t>(v.width * v.channels));
    return out;
  } catch (const weft::Error& e) {
    return std::string("error: ") + e.what();
  }
}

void Image(std::span<const uint8_t> record) {
  std::span<const uint8_t> payload;
  weft::UnpackImageRecord(record, &payload);
  static weft::io_detail::ImageDecoder decoder;  // reused, as the iterator's workers do
  static weft::io_detail::ImageDecoder libpng_only(false);
  for (int channels : {3, 1})
    if (Window(decoder, payload, channels) != Window(libpng_only, payload, channels)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  std::string record;
  try {
    for (size_t pos = 0, n = 0; pos < size; ++n) {
      const size_t next = weft::ParseRecordIO(bytes, pos, &record, "fuzz");
      if (next <= pos || next > size) __builtin_trap();  // every record moves forward, inside the data
      pos = next;
      if (n >= 4) continue;  // images decode slowly: the first few records are enough
      try {
        Image({reinterpret_cast<const uint8_t*>(record.data()), record.size()});
      } catch (const weft::Error&) {
      }
    }
  } catch (const weft::Error&) {
  }
  static const std::string path = "/dev/shm/weft-recordio-fuzz-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  const size_t file_size = size / 4 * 4;  // the reader refuses other sizes at once
  if (file_size && std::fwrite(data, 1, file_size, f) != file_size) __builtin_trap();
  std::fclose(f);
  try {
    weft::RecordIOReader reader(path, 64);  // a small buffer: records larger than it too
    while (reader.ReadRecord(&record)) {
    }
  } catch (const weft::Error&) {
  }
  try {
    size_t total = 0;
    for (int p = 0; p < 3; ++p) total += weft::RecordIOPartition(path, "", 3, p).size();
    if (total > file_size / 8) __builtin_trap();  // a record takes at least 8 bytes
  } catch (const weft::Error&) {
  }
  return 0;
}

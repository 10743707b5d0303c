// Device contract helpers (contract_checks.cc, tests/device_contract): byte patterns, buffers,
// streams and events freed at scope exit, error outcomes.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "weft/context.h"
#include "weft/internal/device.h"
#include "weft/internal/runtime.h"

namespace weft::contract {

/// Deterministic byte pattern: byte i of a buffer filled with `seed`.
inline uint8_t PatternByte(uint64_t i, uint32_t seed) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(seed) << 32 | seed);
  x ^= x >> 29;
  return static_cast<uint8_t>(x * 0xBF58476D1CE4E5B9ull >> 56);
}
inline std::vector<uint8_t> Pattern(uint64_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = PatternByte(i, seed);
  return v;
}

/// Index of the first byte where a and b differ, or -1.
inline int64_t FirstMismatch(const uint8_t* a, const uint8_t* b, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return -1;
}

/// The whole content of `bytes` bytes at `ptr` on `dev`, read through the synchronous copy.
inline std::vector<uint8_t> ReadBack(Device& dev, weft_device_ptr ptr, uint64_t bytes) {
  std::vector<uint8_t> out(bytes);
  dev.CopyToHost(out.data(), ptr, 0, bytes);
  return out;
}

/// An allocation freed at scope exit.
class Buffer {
 public:
  Buffer(Device& dev, uint64_t bytes, uint64_t alignment = 0)
      : dev_(&dev), bytes_(bytes), ptr_(dev.Allocate(bytes, alignment)) {}
  ~Buffer() {
    if (ptr_ != 0) dev_->Free(ptr_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  weft_device_ptr ptr() const { return ptr_; }
  uint64_t bytes() const { return bytes_; }

 private:
  Device* dev_;
  uint64_t bytes_;
  weft_device_ptr ptr_;
};

/// A stream destroyed at scope exit (NULL when made with `null_stream`).
class Stream {
 public:
  explicit Stream(Device& dev, bool null_stream = false) : dev_(&dev), s_(null_stream ? nullptr : dev.CreateStream()) {}
  ~Stream() {
    if (s_ != nullptr) dev_->DestroyStream(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  weft_stream get() const { return s_; }
  void Sync() const {
    if (s_ != nullptr) dev_->SynchronizeStream(s_);
  }

 private:
  Device* dev_;
  weft_stream s_;
};

/// An event destroyed at scope exit.
class Event {
 public:
  explicit Event(Device& dev) : dev_(&dev), e_(dev.CreateEvent()) {}
  ~Event() { dev_->DestroyEvent(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  weft_event get() const { return e_; }

 private:
  Device* dev_;
  weft_event e_;
};

/// "cpu_0" for cpu(0): a GoogleTest-safe name.
inline std::string TestName(const Context& c) { return c.GetDeviceType() + "_" + std::to_string(c.GetDeviceId()); }

// Code and message of an error object (which is then released); code 0 for success.
struct Outcome {
  int32_t code = 0;
  std::string message;
};
inline Outcome Take(weft_error* err) {
  Outcome o;
  if (err != nullptr) {
    o.code = ErrorCode(err);
    o.message = std::string(ErrorMessage(err));
    ReleaseError(err);
  }
  return o;
}

}  // namespace weft::contract

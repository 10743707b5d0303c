// weft core — how a KVStore sums the values of one push and hands the result back out: MXNet's
// Comm (src/kvstore/comm.h) with its two strategies,
//   CommCPU     sums on the host: every value is copied to cpu(0) and added there ("local");
//   CommDevice  sums on a device: for each key, the pushing device with the fewest bytes of merged
//               keys so far, chosen at the key's first push ("device"; MXNet's CommDevice picks
//               the least-loaded GPU the same way).
// Everything is engine work on the device where the data lives: copies (NDArray::CopyFromTo) and
// operators run through KernelRunner on the device plugin's kernels — add_n for the sum,
// _quantize_2bit on the pushing device and _dequantize_2bit on the merge device for 2-bit
// compression (MXNet's CommDevice::ReduceCompressed). Core never reads device memory here, so
// the same code serves cpu, simdev and GPU plugins, with streams and events ordering the work.
//
// Buffers (copy targets on the merge device, compression residuals on each pushing device,
// packed words, prepared kernels) are kept per key and per value slot (the position of a value
// in the push) and reused by later pushes. A slot whose device changes gets new buffers; its
// residual is carried over by a copy.
//
// Thread-safety: none; the KVStore calls a Comm under its lock. The work pushed is ordered by the
// engine through the arrays' variables, so results may be read (or pushed to again) at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/kvstore_impl.h"
#include "weft/ndarray.h"

namespace weft {
class KernelRunner;
}

namespace weft::kv {

class Comm {
 public:
  Comm();
  virtual ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  /// "cpu" or "device", for messages.
  virtual const char* name() const = 0;
  /// Where a store keeps a value just initialised from `value` (before any push).
  virtual Context InitContext(const NDArray& value) const = 0;

  /// Sums one push of `key` (values: at least one float32 array, all of one shape, any devices)
  /// and returns the array holding the sum, on the key's merge device. The result may be one of
  /// `values` itself (a single value already on the merge device) or a buffer the Comm reuses at
  /// the key's next push; read it (or copy it) before pushing the key again. With compression
  /// on, each value is quantised on its own device with its slot's residual, the words are
  /// copied to the merge device and decoded there into the sum (MXNet 1.9 refuses compression
  /// for "local"; weft does it the same way on cpu(0)). Pushed; returns at once.
  /// Throws weft::Error when a device has no kernel for an op it needs (the message names op and
  /// device).
  NDArray Reduce(const std::string& key, const std::vector<NDArray>& values, int priority);

  /// Copies `src` into every array of `dsts` (any devices); a dst that is `src` itself (same
  /// memory and offset) is skipped. Pushed; returns at once.
  void Broadcast(const NDArray& src, const std::vector<NDArray>& dsts, int priority);

  /// Compression for later Reduce calls. Residuals already built are kept.
  void SetGradientCompression(const GradientCompression& compression);

  /// The merge device of `key`, or nullptr before its first Reduce.
  const Context* MergeContext(const std::string& key) const;

 protected:
  /// The merge device for a key first pushed with `values`, whose value has `bytes` bytes.
  virtual Context PickMergeContext(const std::vector<NDArray>& values, uint64_t bytes) = 0;

 private:
  struct Slot;
  struct KeyBuffers;
  NDArray ReduceCompressed(KeyBuffers& kb, const std::vector<NDArray>& values, int priority);
  NDArray OnMergeDevice(KeyBuffers& kb, size_t i, const NDArray& value, int priority);
  NDArray Sum(KeyBuffers& kb, const std::vector<NDArray>& values, int priority);

  GradientCompression compression_;
  std::map<std::string, std::unique_ptr<KeyBuffers>> buffers_;
};

/// Sums on cpu(0); values are kept on cpu(0).
class CommCPU final : public Comm {
 public:
  const char* name() const override { return "cpu"; }
  Context InitContext(const NDArray&) const override { return Context::cpu(0); }

 protected:
  Context PickMergeContext(const std::vector<NDArray>&, uint64_t) override { return Context::cpu(0); }
};

/// Sums on the least-loaded pushing device; values stay on their device until the first push.
class CommDevice final : public Comm {
 public:
  const char* name() const override { return "device"; }
  Context InitContext(const NDArray& value) const override { return value.GetContext(); }

 protected:
  Context PickMergeContext(const std::vector<NDArray>& values, uint64_t bytes) override;

 private:
  std::map<Context, uint64_t> load_;  // bytes of the keys merged on each device
};

}  // namespace weft::kv

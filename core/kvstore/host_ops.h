// weft core — host-side array helpers shared by the KVStore and the optimizers: device
// queries, float32 host pointers, summation and 2-bit (de)quantisation pushed as engine operations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "weft/context.h"
#include "weft/ndarray.h"

namespace weft::kv {

/// True when the host can read `ctx`'s memory directly (cpu; not simdev or GPUs).
bool IsHostAddressable(const Context& ctx);

/// Writable float32 pointer to a host-addressable array's data (allocates a delayed array).
/// Only valid inside an engine operation that writes the array.
float* HostFloats(const NDArray& array);

/// Pushes dst = sum(srcs) as one engine operation on cpu work pool kCPUPrioritized. Every array
/// must be float32, host-addressable and of dst's size. No source may share memory with dst.
void PushHostSum(const std::vector<NDArray>& srcs, const NDArray& dst, int priority);

/// Number of 32-bit words holding `n` 2-bit codes (16 per word).
inline size_t TwoBitWords(size_t n) { return (n + 15) / 16; }

/// Quantises `n` floats of `grad` with `residual` (updated in place) into `packed` words with
/// threshold `t` (see KVStore::SetGradientCompression). Plain functions, for tests and the
/// pushed operations.
void QuantizeTwoBit(const float* grad, float* residual, uint32_t* packed, size_t n, float threshold);
/// Decodes `n` values from `packed` into `out` ({+t, -t, 0}).
void DequantizeTwoBit(const uint32_t* packed, float* out, size_t n, float threshold);

/// Pushes QuantizeTwoBit(src, residual, packed) then DequantizeTwoBit(packed, decoded). `src`
/// and `residual` float32 host-addressable arrays of one size; `packed` uint32 of TwoBitWords
/// elements; `decoded` float32 of src's size; all host-addressable.
void PushTwoBitRoundTrip(const NDArray& src, const NDArray& residual, const NDArray& packed, const NDArray& decoded,
                         float threshold, int priority);

/// Runs `rule(n, weight, grad, states)` on float32 data in an engine operation. On a
/// host-addressable device it works in place; otherwise weight, grad and states are staged
/// through cpu(0) copies and the results copied back (all pushed; returns at once).
using HostRule = std::function<void(size_t n, float* weight, const float* grad, const std::vector<float*>& states)>;
void PushHostRule(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& states, HostRule rule,
                  const char* name);

}  // namespace weft::kv

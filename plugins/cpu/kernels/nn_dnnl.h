// What the oneDNN-backed kernel files (nn_conv_dnnl.cc, nn_fc_dnnl.cc) share; internal to
// weft_cpu_kernels.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

namespace weft::cpu {

/// The one CPU engine every oneDNN primitive of the plugin is created and run on.
inline const dnnl::engine& DnnlEngine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

/// Buffers carved for oneDNN (workspace slices, cached operands) start on 64-byte boundaries.
inline constexpr uint64_t kDnnlAlign = 64;
inline uint64_t DnnlRoundUp(uint64_t bytes) { return (bytes + kDnnlAlign - 1) / kDnnlAlign * kDnnlAlign; }

}  // namespace weft::cpu

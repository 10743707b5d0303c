// The executor's blocked activations (oneDNN's nChw8c / nChw16c, core/executor/fuse_conv.h) as the
// cpu kernels that read or write them see them: descriptions, relayouts, and Pooling's forward on
// them (nn_blocked_act.cc); internal to weft_cpu_kernels. The fused convolution is
// nn_conv_fused.cc, Concat's blocked join tensor_concat.cc.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <mutex>

#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::cpu {

/// The tensor's description: `plain` (NCHW) itself, or its dims in blocked format `f`.
dnnl::memory::desc ActDesc(const dnnl::memory::desc& plain, weft::sdk::ActFormat f);

/// The channel block of `f` (1 for plain) for `data`, which an element-wise kernel (BatchNorm,
/// Dropout) reads in that layout. Throws WEFT_ERR_INVALID_ARGUMENT naming the op (Invalid) unless
/// `data` is plain, or 4-D with a multiple of the block's channels.
int64_t CheckBlockedData(const weft::sdk::KernelSetup& s, const weft::sdk::TensorDesc& data, weft::sdk::ActFormat f);

/// `from` (description from_md) rewritten into `to` (to_md: the same dims, another layout).
void Relayout(const dnnl::memory::desc& from_md, const float* from, const dnnl::memory::desc& to_md, float* to);

/// Forward of a 2-D float32 Pooling whose data is blocked (PoolingParam data_format; the output in
/// out_format: the same, or plain for a 1x1 output, which lies alike in both): one oneDNN
/// inference pooling on the blocked tensors where its windows are MXNet's (max; avg dividing by
/// the window cut at in + pad, or by its real cells without count_include_pad; no window wholly in
/// the padding), otherwise, and for add-to requests, `plain` (the plain kernel) between relayouts.
/// oneDNN's avg sums a window in its own order, so results may differ from the plain kernel's by
/// float rounding; each path is deterministic.
class BlockedPooling {
 public:
  /// (x, y, req): the plain kernel on NCHW tensors.
  using PlainRun = std::function<void(const float*, float*, int32_t)>;

  BlockedPooling(const weft::sdk::PoolGeometry& g, weft::sdk::ActFormat data, weft::sdk::ActFormat out);
  void Run(const float* x, float* y, int32_t req, const PlainRun& plain) const;
  /// Whether oneDNN runs it (else the relayouts and the plain kernel).
  bool native() const { return native_; }

 private:
  dnnl::memory::desc x_plain_, y_plain_, x_md_, y_md_, y_run_;  // y_run_: the dst the primitive writes
  dnnl::pooling_forward prim_;
  bool native_ = false;
  mutable std::mutex mu_;  // a primitive with its own scratchpad runs once at a time
};

}  // namespace weft::cpu

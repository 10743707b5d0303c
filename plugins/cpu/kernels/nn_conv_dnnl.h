// oneDNN's view of a convolution geometry, shared by the Convolution algorithm on oneDNN
// (nn_conv_dnnl.cc) and the fused inference convolution (nn_conv_fused_dnnl.cc); internal to
// weft_cpu_kernels.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "nn_conv.h"
#include "nn_dnnl.h"

namespace weft::cpu {

/// A ConvGeom as oneDNN descriptions: weft's plain tensors (data and output NCHW / NCDHW, weights
/// OIHW or GOIHW, bias X; 1-D runs as 2-D with h = 1), the hyper-parameters, and the layout choice
/// (DnnlBlockedConv: oneDNN picks the layouts; nhwc activations when a channel count is not a
/// multiple of 16).
struct DnnlConvDescs {
  bool vol = false;                        // 3-D
  dnnl::memory::desc src, dst, wei, bias;  // bias empty without one
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  bool blocked = false;    // forward and weight gradient on layouts oneDNN picks
  bool blocked_x = false;  // the data gradient too (16 input channels or more)
  bool nhwc = false;       // activations in nhwc rather than oneDNN's choice
  explicit DnnlConvDescs(const ConvGeom& g);
  /// `md` as a blocked primitive takes it (format any, or nhwc for activations when `nhwc`); `md`
  /// itself unless `blocked`.
  dnnl::memory::desc Any(const dnnl::memory::desc& md, bool weights = false) const;
};

/// Images per chunk for g when a blocked convolution runs best in chunks of images whose
/// blocked operands stay in the L2 cache (nn_conv_dnnl.cc, ChunkedConv), or 0 when the whole
/// batch's are small enough. The defaults are the cache's sizes: a whole batch up to
/// `whole_batch_bytes` per operand, else chunks of about `chunk_bytes` (at least one image).
int64_t DnnlConvChunk(const ConvGeom& g, uint64_t whole_batch_bytes = uint64_t{4} << 20,
                      uint64_t chunk_bytes = uint64_t{512} << 10);

}  // namespace weft::cpu

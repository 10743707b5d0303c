// Convolution geometry and the two CPU algorithms behind the Convolution kernels
// (nn_convolution.cc): im2col + OpenBLAS sgemm (nn_conv_im2col.cc) and oneDNN
// (nn_conv_dnnl.cc). Internal to weft_cpu_kernels.
#pragma once

#include <cstdint>
#include <memory>

#include "nn_common.h"
#include "weft/sdk/ops/convolution.hpp"

namespace weft::cpu {

/// 1-D (NCW), 2-D (NCHW) or 3-D (NCDHW) convolution as one 3-D geometry: the SDK's, which every
/// backend shares (weft/sdk/ops/convolution.hpp).
using ConvGeom = weft::sdk::ConvGeometry;

/// One convolution algorithm, set up for one geometry. All pointers are host memory of T (float
/// or double); `req` is WEFT_REQ_*; passes whose req is null are skipped by the caller.
/// Thread-safe (const).
template <typename T>
class ConvAlgoT {
 public:
  virtual ~ConvAlgoT() = default;
  virtual uint64_t ForwardWorkspace() const = 0;
  virtual uint64_t BackwardWorkspace() const = 0;
  virtual void Forward(const T* x, const T* w, const T* b, T* y, int32_t req, void* ws) const = 0;
  /// Forward for calls whose weights stay constant between calls (is_train false: inference,
  /// evaluation): an algorithm may keep `w` transformed (oneDNN's layout) and reuse it while
  /// `w_stamp` (the weights' content stamp, SDK input_stamps; 0 = unknown) and `w` are those it
  /// transformed. Same results as Forward. Default: Forward.
  virtual void ForwardConstWeights(const T* x, const T* w, uint64_t w_stamp, const T* b, T* y, int32_t req,
                                   void* ws) const {
    (void)w_stamp;
    Forward(x, w, b, y, req, ws);
  }
  /// Any of gx/gw/gb may be skipped with req null (gb absent without bias).
  virtual void Backward(const T* gy, const T* x, const T* w, T* gx, int32_t req_x, T* gw, int32_t req_w, T* gb,
                        int32_t req_b, void* ws) const = 0;
};
using ConvAlgo = ConvAlgoT<float>;

/// True when the oneDNN algorithm runs the forward and the weight gradient on layouts oneDNN
/// picks (one group, at least 16 filters): blocked, or nhwc activations when a channel count is not
/// a multiple of 16; the data gradient also needs 16 input channels (nn_conv_dnnl.cc).
inline bool DnnlBlockedConv(const ConvGeom& g) { return g.groups == 1 && g.f >= 16; }

/// True when oneDNN's effective ISA includes AVX-512 (avx512_core): the CPU has it and
/// ONEDNN_MAX_CPU_ISA does not cap it. Thread-safe (nn_conv_dnnl.cc).
bool DnnlRunsAvx512();

/// im2col + GEMM, float (sgemm) or double (dgemm), 1-D to 3-D.
template <typename T = float>
std::unique_ptr<ConvAlgoT<T>> MakeIm2colConv(const ConvGeom& g);
/// True for the geometries oneDNN may run as Winograd F(4x4, 3x3): 2-D, one group, 3x3, stride and
/// dilation 1, whole 16-channel blocks in and out (nn_conv_dnnl.cc).
bool DnnlWinogradConv(const ConvGeom& g);
/// The WEFT_CPU_CONV_WINOGRAD setting (host config, else environment) for the convolution kernel
/// being set up by `s`: false for "0", true for "1" or unset. Any other value is an error naming
/// the setting (Invalid). One reader for the plain and the fused (`_sg_conv`) kernels.
bool ConvWinogradSetting(const KernelSetup& s);
/// nullptr when oneDNN has no implementation for the geometry. `winograd`: Winograd for the
/// DnnlWinogradConv geometries where oneDNN has the kernel (AVX-512), else weft's own Winograd
/// where it fits and pays (WinogradTrainFits, nn_conv_winograd.h), the direct kernels otherwise.
std::unique_ptr<ConvAlgo> MakeDnnlConv(const ConvGeom& g, const weft_host_api* host, bool winograd = false);

}  // namespace weft::cpu

// CUDA plugin — cuDNN descriptors for one convolution geometry (plugins/gpu_common/gpu_nn_conv.h's
// ConvGeometry, MXNet's attributes). Plain host code: cuDNN creates and fills descriptors without a
// device or handle, so tests/gpu/cudnn_desc_test checks them on machines without a GPU.
//
// Layout: NCHW float32, fully packed; a 1-D convolution (NCW) is the 2-D one with h = kh = 1.
// Groups: the filter descriptor holds (F, C/groups, kh, kw) and the convolution descriptor the group
// count (cudnnSetConvolutionGroupCount), as cuDNN's grouped convolution expects.
// Not thread-safe to build; const use from several threads is safe (cuDNN reads descriptors only).
#pragma once

#include <cudnn.h>

#include <array>
#include <string>

#include "gpu_nn_conv.h"

namespace weft::cuda {

/// Throws sdk::Error "<what>: <cudnnGetErrorString>" (WEFT_ERR_UNSUPPORTED for NOT_SUPPORTED and
/// BAD_PARAM, as cuDNN uses them for geometries it rejects; WEFT_ERR_UNAVAILABLE otherwise) unless
/// status is CUDNN_STATUS_SUCCESS.
void CheckCudnn(cudnnStatus_t status, const std::string& what);

/// The path of cudnn_conv.cc (its __FILE__), listed with the cuDNN convolution kernels'
/// weft_kernel_def.math_files.
const char* CudnnConvSource();

class CudnnConvDescriptors {
 public:
  /// Builds every descriptor of `g` and checks that cuDNN's output shape is MXNet's (oh, ow);
  /// throws (CheckCudnn) when cuDNN rejects a parameter.
  explicit CudnnConvDescriptors(const ConvGeometry& g);
  ~CudnnConvDescriptors();
  CudnnConvDescriptors(const CudnnConvDescriptors&) = delete;
  CudnnConvDescriptors& operator=(const CudnnConvDescriptors&) = delete;

  cudnnTensorDescriptor_t x() const { return x_; }     // data (n, c, h, w)
  cudnnTensorDescriptor_t y() const { return y_; }     // output (n, f, oh, ow)
  cudnnTensorDescriptor_t bias() const { return b_; }  // (1, f, 1, 1), broadcast over y
  cudnnFilterDescriptor_t w() const { return w_; }     // (f, c/groups, kh, kw)
  cudnnConvolutionDescriptor_t conv() const { return conv_; }
  /// cuDNN's forward output dims (n, f, oh, ow) for these descriptors.
  std::array<int, 4> OutputDims() const;

 private:
  void Release() noexcept;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

}  // namespace weft::cuda

// weft GPU kernel layer — the one registration list of the layer. The CUDA plugin, the HIP plugin
// and the gpuhost test plugin all call RegisterGpuLayer<L>, so their op sets (and dtype claims)
// cannot diverge; a plugin's own faster kernel for an op (cuDNN convolution, LRN) replaces the layer's
// through `options`, and launcher hooks (DeviceLaunch::vendor_gemm: cuBLAS) change how a shared
// kernel class runs, not which ops exist.
#pragma once

#include "gpu_batch_norm.h"
#include "gpu_conv.h"
#include "gpu_nn_extra.h"
#include "gpu_ops.h"
#include "gpu_pool.h"
#include "gpu_random.h"
#include "gpu_tensor_ops.h"

namespace weft::WEFT_GPU_NS {

struct GpuLayerOptions {
  /// false: the plugin registers Convolution / _backward_Convolution itself (cuDNN).
  bool im2col_convolution = true;
  /// false: the plugin registers LRN / _backward_LRN itself (cuDNN).
  bool lrn = true;
  /// false: the plugin registers Activation, softmax, log_softmax, Pooling, BatchNorm and their
  /// backward ops itself (cuDNN, with the layer's classes as the per-node fallback).
  bool nn_basics = true;
};

/// Registers every op of the GPU kernel layer for launcher L in `t`.
template <class L>
void RegisterGpuLayer(sdk::KernelTable& t, const GpuLayerOptions& options = {}) {
  RegisterGpuKernels<L>(t);
  RegisterTensorKernels<L>(t);
  if (options.im2col_convolution) RegisterIm2colConvolution<L>(t);
  RegisterDeconvolution<L>(t);
  if (options.nn_basics) {
    RegisterActivationSoftmax<L>(t);
    RegisterPooling<L>(t);
    RegisterBatchNorm<L>(t);
  }
  {
    sdk::KernelTable::SourceScope nn_extra(t, {kGpuNnExtraSource});  // the classes' file
    t.Add<LeakyKernel<L>>("LeakyReLU", kF32);
    t.Add<LeakyKernel<L>>("_backward_LeakyReLU", kF32);
    t.Add<DropoutKernel<L>>("Dropout", kF32);
    t.Add<DropoutKernel<L>>("_backward_Dropout", kF32);
    if (options.lrn) {
      t.Add<LrnKernel<L>>("LRN", kF32);
      t.Add<LrnKernel<L>>("_backward_LRN", kF32);
    }
    t.Add<RegressionBackwardKernel<L>>("_backward_LinearRegressionOutput", kF32);
  }
  {
    sdk::KernelTable::SourceScope tensor_ops(t, {kGpuTensorOpsSource});  // the classes' file
    t.Add<CopyKernel<L>>("LinearRegressionOutput", kF32);
    t.Add<CopyKernel<L>>("MakeLoss", kF32);
    t.Add<FillKernel<L, 0>>("_backward_MakeLoss", kF32);
  }
  RegisterRandomKernels<L>(t);
}

}  // namespace weft::WEFT_GPU_NS

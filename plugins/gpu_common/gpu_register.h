// weft GPU kernel layer — the one registration list of the layer. The CUDA plugin, the HIP plugin
// and the gpuhost test plugin all call RegisterGpuLayer<L>, so their op sets (and dtype claims)
// cannot diverge; a plugin's own faster kernel for an op (cuDNN convolution, LRN) replaces the layer's
// through `options`, and launcher hooks (DeviceLaunch::vendor_gemm: cuBLAS) change how a shared
// kernel class runs, not which ops exist. Each family's file (gpu_<family>[_<part>].h, the family
// table of docs/adding-an-op.md) registers its own ops, so every kernel records its family's file.
#pragma once

#include "gpu_elemwise_binary.h"
#include "gpu_elemwise_unary.h"
#include "gpu_gradient_compression.h"
#include "gpu_index.h"
#include "gpu_loss.h"
#include "gpu_nn_activation.h"
#include "gpu_nn_conv.h"
#include "gpu_nn_dropout.h"
#include "gpu_nn_fully_connected.h"
#include "gpu_nn_pooling.h"
#include "gpu_norm_batch_norm.h"
#include "gpu_norm_lrn.h"
#include "gpu_optimizer.h"
#include "gpu_random.h"
#include "gpu_reduce.h"
#include "gpu_softmax.h"
#include "gpu_tensor_copy.h"
#include "gpu_tensor_dot.h"
#include "gpu_tensor_slice.h"
#include "gpu_tensor_transpose.h"

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
  RegisterElemwiseUnaryKernels<L>(t);
  RegisterElemwiseBinaryKernels<L>(t);
  RegisterReduceKernels<L>(t);
  RegisterTensorCopyKernels<L>(t);
  RegisterTensorTransposeKernels<L>(t);
  RegisterTensorSliceKernels<L>(t);
  RegisterTensorDotKernels<L>(t);
  RegisterIndexKernels<L>(t);
  RegisterSoftmaxOutputKernels<L>(t);
  RegisterFullyConnectedKernels<L>(t);
  RegisterOptimizerKernels<L>(t);
  RegisterGradientCompressionKernels<L>(t);
  if (options.im2col_convolution) RegisterIm2colConvolution<L>(t);
  RegisterDeconvolution<L>(t);
  if (options.nn_basics) {
    RegisterActivationKernels<L>(t);
    RegisterSoftmaxKernels<L>(t);
    RegisterPooling<L>(t);
    RegisterBatchNorm<L>(t);
  }
  RegisterLeakyReLUKernels<L>(t);
  RegisterDropoutKernels<L>(t);
  if (options.lrn) RegisterLrnKernels<L>(t);
  RegisterLossKernels<L>(t);
  RegisterRandomKernels<L>(t);
}

}  // namespace weft::WEFT_GPU_NS

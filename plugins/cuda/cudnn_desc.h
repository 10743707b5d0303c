// CUDA plugin — what cuDNN is told for Pooling, Activation, softmax / log_softmax and BatchNorm,
// and the per-shape cache of convolution algorithms. Plain host code (g++), tested on the host by
// tests/gpu/cudnn_desc_test: cuDNN creates and fills descriptors without a device.
//
// Two layers:
//   - parameter functions (the layer's parsed geometry -> the numbers cuDNN takes, or "cannot",
//     with the reason): PoolParamsFor, ActModeFor, SoftmaxDimsFor, BnDimsFor. Where cuDNN cannot
//     express MXNet's semantics they return nullopt and the CUDA plugin runs the shared layer's
//     kernel for that node (the cases are listed at each function);
//   - RAII descriptors built from those numbers (DnnTensor, DnnPooling, DnnActivation), which
//     throw sdk::Error (CheckCudnn) when cuDNN rejects a value.
// All tensors are packed NCHW float32. Descriptors are immutable after construction: const use
// from several threads is safe.
#pragma once

#include <cudnn.h>

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "cudnn_conv.h"
#include "gpu_nn_activation.h"
#include "gpu_nn_pooling.h"
#include "gpu_norm_batch_norm.h"
#include "gpu_softmax.h"

namespace weft::cuda {

/// A packed NCHW shape in cuDNN's int sizes.
struct Dims4 {
  int n = 1, c = 1, h = 1, w = 1;
  bool operator==(const Dims4&) const = default;
};

/// (n, c, h, w) if every extent is in [1, INT_MAX] (cuDNN rejects empty tensors); else nullopt.
std::optional<Dims4> MakeDims4(int64_t n, int64_t c, int64_t h, int64_t w);

// ---- Pooling ----------------------------------------------------------------------------------

struct PoolParams {
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  int kh = 1, kw = 1, ph = 0, pw = 0, sh = 1, sw = 1;
  Dims4 x, y;  // data (n, c, ih, iw) and output (n, c, oh, ow); 1-D pooling has h = 1
};

/// cuDNN's pooling for `g`, or nullopt with `why` when the layer's kernel must run:
///   - pool_type sum (cuDNN pools max and avg only);
///   - an output extent other than cuDNN's floor((in + 2·pad − k) / stride) + 1, i.e.
///     pooling_convention 'full' where it adds a window;
///   - pad >= kernel on an axis (a window could lie wholly in the padding: MXNet yields 0 there);
///   - extents beyond int or empty tensors.
/// max -> MAX_DETERMINISTIC (the gradient goes to one maximum per window), avg ->
/// AVERAGE_COUNT_INCLUDE/EXCLUDE_PADDING per count_include_pad. NaNs are not propagated (the
/// layer's fmaxf ignores them too).
std::optional<PoolParams> PoolParamsFor(const PoolGeometry& g, std::string* why = nullptr);

// ---- Activation -------------------------------------------------------------------------------

/// CUDNN_ACTIVATION_RELU / SIGMOID / TANH for relu, sigmoid, tanh; nullopt for softrelu and
/// softsign (cuDNN's legacy activations have neither softplus nor softsign) and LeakyReLU's.
std::optional<cudnnActivationMode_t> ActModeFor(Act act);

/// An element-wise op's tensor of `shape` as cuDNN sees it: (dim0, rest, 1, 1) (MXNet's view);
/// nullopt for 0-d / empty tensors or extents beyond int.
std::optional<Dims4> FlatDims(const std::vector<int64_t>& shape);

// ---- softmax ----------------------------------------------------------------------------------

/// softmax over the axis of `v` as cuDNN's CHANNEL mode on (outer, len, inner, 1); nullopt when
/// the temperature is not 1 (cuDNN scales outputs, not inputs) or extents exceed int.
std::optional<Dims4> SoftmaxDimsFor(const AxisView& v, float inv_temperature);

// ---- BatchNorm --------------------------------------------------------------------------------

/// BatchNorm over the channel axis as cuDNN's SPATIAL mode on (outer, C, inner, 1) (any axis: the
/// data viewed as (outer, C, inner) is packed NCHW with W = 1); nullopt when eps <
/// CUDNN_BN_MIN_EPSILON, fewer than 2 values per channel, or extents beyond int.
std::optional<Dims4> BnDimsFor(const BnShape& p);

// ---- descriptors ------------------------------------------------------------------------------

class DnnTensor {
 public:
  explicit DnnTensor(const Dims4& d);
  ~DnnTensor();
  DnnTensor(const DnnTensor&) = delete;
  DnnTensor& operator=(const DnnTensor&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class DnnPooling {
 public:
  explicit DnnPooling(const PoolParams& p);
  ~DnnPooling();
  DnnPooling(const DnnPooling&) = delete;
  DnnPooling& operator=(const DnnPooling&) = delete;
  cudnnPoolingDescriptor_t get() const { return d_; }
  /// cuDNN's output dims for data `x` (checked against MXNet's by the constructor of the kernel).
  Dims4 OutputDims(const DnnTensor& x) const;

 private:
  cudnnPoolingDescriptor_t d_ = nullptr;
};

class DnnActivation {
 public:
  explicit DnnActivation(cudnnActivationMode_t mode);
  ~DnnActivation();
  DnnActivation(const DnnActivation&) = delete;
  DnnActivation& operator=(const DnnActivation&) = delete;
  cudnnActivationDescriptor_t get() const { return d_; }

 private:
  cudnnActivationDescriptor_t d_ = nullptr;
};

/// The (1, C, 1, 1) descriptor of BatchNorm's per-channel tensors (scale, bias, mean, variance),
/// derived by cuDNN from the data's for SPATIAL mode.
class DnnBnParams {
 public:
  explicit DnnBnParams(const DnnTensor& x);
  ~DnnBnParams();
  DnnBnParams(const DnnBnParams&) = delete;
  DnnBnParams& operator=(const DnnBnParams&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

// ---- convolution algorithm cache --------------------------------------------------------------

/// cuDNN's choice for one convolution geometry: forward, or backward data + filter (as ints of
/// the cudnnConvolution*Algo_t enums) and the workspace bytes the pair needs.
struct ConvAlgoChoice {
  int first = 0, second = 0;
  uint64_t workspace = 0;
};

/// Algorithm choices per (device, direction, geometry), shared by every node of the plugin: a
/// second executor or a rebind with a seen shape skips cuDNN's heuristics. Thread-safe; a choice
/// that throws is not cached (the caller falls back to the layer's kernel for that node).
class ConvAlgoCache {
 public:
  using Key = std::array<int64_t, 20>;
  static Key KeyOf(int32_t device, bool backward, const ConvGeometry& g);
  /// The cached choice for `key`, else choose() (called without the lock held; when two threads
  /// choose one key at once, the first stored wins and both return it).
  ConvAlgoChoice Get(const Key& key, const std::function<ConvAlgoChoice()>& choose);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<Key, ConvAlgoChoice> choices_;
};

}  // namespace weft::cuda

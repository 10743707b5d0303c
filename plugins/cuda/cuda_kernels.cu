// CUDA plugin — the kernels half (see cuda_kernels.h).
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "cublas_api.h"
#include "cuda_kernels.h"
#include "cudnn_conv.h"
#include "cudnn_desc.h"
#include "gpu_launch_device.h"
#include "gpu_register.h"

namespace weft::cuda {
namespace {

cublasHandle_t NewHandle(int32_t device) {
  cublasHandle_t h = nullptr;
  const cublasStatus_t st = Cublas().Create(&h);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE,
                     "cuda(" + std::to_string(device) + "): cublasCreate failed: " + Cublas().GetStatusString(st));
  return h;
}

// Row-major C = op(A)·op(B) + beta·C is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands.
// Returns false (the caller falls back to the tiled kernel) for sizes beyond cuBLAS' 32-bit
// arguments and for argument combinations cuBLAS rejects (e.g. a leading dimension of 0 when k = 0).
bool CublasGemm(const sdk::DeviceCall& c, gpuStream_t stream, const GemmArgs& g) {
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch})
    if (v > INT_MAX) return false;
  if (g.k == 0 || g.lda == 0 || g.ldb == 0) return false;
  GpuStream* s = reinterpret_cast<GpuStream*>(c.stream);
  cublasHandle_t h = nullptr;
  if (s != nullptr) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->blas == nullptr) s->blas = NewHandle(c.device);
    h = static_cast<cublasHandle_t>(s->blas);
  } else {
    h = NewHandle(c.device);  // the NULL stream (naive engine): a handle for this call only
  }
  const float alpha = 1.0f;
  const CublasApi& blas = Cublas();
  blas.SetStream(h, stream);
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  // batch_dot: one strided-batched call (the strides are those of the row-major operands).
  const cublasStatus_t st =
      g.batch == 1 ? blas.Sgemm(h, op_b, op_a, n, m, k, &alpha, g.b, static_cast<int>(g.ldb), g.a,
                                static_cast<int>(g.lda), &g.beta, g.c, static_cast<int>(g.ldc))
                   : blas.SgemmStridedBatched(h, op_b, op_a, n, m, k, &alpha, g.b, static_cast<int>(g.ldb), g.stride_b,
                                              g.a, static_cast<int>(g.lda), g.stride_a, &g.beta, g.c,
                                              static_cast<int>(g.ldc), g.stride_c, static_cast<int>(g.batch));
  if (s == nullptr) {
    cudaStreamSynchronize(stream);
    blas.Destroy(h);
  }
  if (st == CUBLAS_STATUS_INVALID_VALUE || st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  if (st != CUBLAS_STATUS_SUCCESS)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "cuda(" + std::to_string(c.device) + "): cublasSgemm " +
                                               std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                                               std::to_string(g.k) + " failed: " + blas.GetStatusString(st));
  return true;
}

// ---- cuDNN convolution --------------------------------------------------------------------------

// The cuDNN handle bound to the call's stream (made on first use; one per stream, as a handle must
// not be used by two threads at once). The NULL stream gets a handle for this call only, which
// the caller destroys (`temporary`).
cudnnHandle_t DnnHandle(const sdk::DeviceCall& c, gpuStream_t stream, bool& temporary) {
  GpuStream* s = reinterpret_cast<GpuStream*>(c.stream);
  cudnnHandle_t h = nullptr;
  temporary = s == nullptr;
  if (s != nullptr) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->dnn == nullptr) {
      CheckCudnn(cudnnCreate(&h), "cuda(" + std::to_string(c.device) + "): cudnnCreate");
      s->dnn = h;
    }
    h = static_cast<cudnnHandle_t>(s->dnn);
  } else {
    CheckCudnn(cudnnCreate(&h), "cuda(" + std::to_string(c.device) + "): cudnnCreate");
  }
  CheckCudnn(cudnnSetStream(h, stream), "cudnnSetStream");
  return h;
}

// A handle for choosing algorithms at setup (the device exists: kernels are set up for devices).
struct SetupHandle {
  cudnnHandle_t h = nullptr;
  explicit SetupHandle(int32_t device) {
    Check(cudaSetDevice(device), "cuda(" + std::to_string(device) + "): set device");
    CheckCudnn(cudnnCreate(&h), "cuda(" + std::to_string(device) + "): cudnnCreate");
  }
  ~SetupHandle() { cudnnDestroy(h); }
};

// The first algorithm cuDNN's heuristics rank as usable (perf results are sorted best first).
template <typename Perf>
Perf FirstUsable(const Perf* perf, int n, const char* what) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) return perf[i];
  throw sdk::Error(WEFT_ERR_UNSUPPORTED, std::string("cuDNN has no ") + what + " algorithm for this geometry");
}

// Runs body(handle) on the call's stream; synchronous on the NULL stream.
template <typename F>
void WithDnn(const sdk::DeviceCall& c, F&& body) {
  const gpuStream_t stream = DeviceLaunch::Begin(c);
  bool temporary = false;
  cudnnHandle_t h = DnnHandle(c, stream, temporary);
  try {
    body(h);
  } catch (...) {
    if (temporary) cudnnDestroy(h);
    throw;
  }
  if (temporary) {
    Check(cudaStreamSynchronize(stream), "cuDNN convolution failed");
    cudnnDestroy(h);
  }
}

float Beta(int32_t req) { return req == WEFT_REQ_ADD ? 1.0f : 0.0f; }

// cuDNN's convolution algorithms per (device, direction, geometry), for every node of the plugin.
ConvAlgoCache& AlgoCache() {
  static ConvAlgoCache cache;
  return cache;
}

// Convolution through cuDNN with the algorithm chosen by cuDNN's heuristics once per (device,
// geometry) for the whole plugin (AlgoCache) and the workspace from the core's pool (the call's
// workspace, WorkspaceBytes()); geometries cuDNN rejects run the layer's im2col kernel.
class CudnnConvolution {
 public:
  explicit CudnnConvolution(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    fallback_.g =
        ParseConvolution(s, s.inputs[0], s.inputs[1], s.inputs.size() > 2 ? &s.inputs[2] : nullptr, s.outputs[0]);
    s.ExpectCounts(fallback_.g.bias ? 3 : 2, 1);
    try {
      d_ = std::make_unique<CudnnConvDescriptors>(fallback_.g);
      const ConvAlgoChoice choice = AlgoCache().Get(ConvAlgoCache::KeyOf(s.device, false, fallback_.g), [&] {
        SetupHandle h(s.device);
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int n = 0;
        CheckCudnn(cudnnGetConvolutionForwardAlgorithm_v7(h.h, d_->x(), d_->w(), d_->conv(), d_->y(),
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf),
                   "cudnnGetConvolutionForwardAlgorithm_v7");
        const cudnnConvolutionFwdAlgoPerf_t best = FirstUsable(perf, n, "forward convolution");
        return ConvAlgoChoice{static_cast<int>(best.algo), 0, best.memory};
      });
      algo_ = static_cast<cudnnConvolutionFwdAlgo_t>(choice.first);
      workspace_ = choice.workspace;
    } catch (const sdk::Error& e) {
      if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
      d_.reset();  // cuDNN rejects the geometry: im2col + GEMM
    }
  }
  uint64_t WorkspaceBytes() const { return d_ ? workspace_ : ColBytes(fallback_.g); }
  void Compute(const sdk::DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_NULL) return;
    const float* x = DeviceLaunch::Ptr<const float>(c.inputs[0]);
    const float* w = DeviceLaunch::Ptr<const float>(c.inputs[1]);
    const float* b = fallback_.g.bias ? DeviceLaunch::Ptr<const float>(c.inputs[2]) : nullptr;
    float* y = DeviceLaunch::Ptr<float>(c.outputs[0]);
    void* ws = DeviceLaunch::Ptr<void>(c.workspace);
    if (!d_) {
      fallback_.Forward(c, x, w, b, y, c.req[0], static_cast<float*>(ws));
      return;
    }
    WithDnn(c, [&](cudnnHandle_t h) {
      const float one = 1.0f, beta = Beta(c.req[0]);
      CheckCudnn(cudnnConvolutionForward(h, &one, d_->x(), x, d_->w(), w, d_->conv(), algo_, ws, workspace_, &beta,
                                         d_->y(), y),
                 "cudnnConvolutionForward");
      if (b != nullptr) CheckCudnn(cudnnAddTensor(h, &one, d_->bias(), b, &one, d_->y(), y), "cudnnAddTensor (bias)");
    });
  }

 private:
  Im2colConv<DeviceLaunch> fallback_;
  std::unique_ptr<CudnnConvDescriptors> d_;
  cudnnConvolutionFwdAlgo_t algo_{};
  uint64_t workspace_ = 0;
};

// Inputs out_grad, data, weight[, bias]; outputs the data, weight[, bias] gradients.
class CudnnConvolutionBackward {
 public:
  explicit CudnnConvolutionBackward(const KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data, weight[, bias]");
    fallback_.g =
        ParseConvolution(s, s.inputs[1], s.inputs[2], s.inputs.size() > 3 ? &s.inputs[3] : nullptr, s.inputs[0]);
    s.ExpectCounts(fallback_.g.bias ? 4 : 3, fallback_.g.bias ? 3 : 2);
    try {
      d_ = std::make_unique<CudnnConvDescriptors>(fallback_.g);
      const ConvAlgoChoice choice = AlgoCache().Get(ConvAlgoCache::KeyOf(s.device, true, fallback_.g), [&] {
        SetupHandle h(s.device);
        int n = 0;
        cudnnConvolutionBwdDataAlgoPerf_t dperf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        CheckCudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(h.h, d_->w(), d_->y(), d_->conv(), d_->x(),
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, dperf),
                   "cudnnGetConvolutionBackwardDataAlgorithm_v7");
        const auto data = FirstUsable(dperf, n, "backward-data");
        cudnnConvolutionBwdFilterAlgoPerf_t fperf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        CheckCudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h.h, d_->x(), d_->y(), d_->conv(), d_->w(),
                                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, fperf),
                   "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
        const auto filter = FirstUsable(fperf, n, "backward-filter");
        return ConvAlgoChoice{static_cast<int>(data.algo), static_cast<int>(filter.algo),
                              std::max(data.memory, filter.memory)};
      });
      data_algo_ = static_cast<cudnnConvolutionBwdDataAlgo_t>(choice.first);
      filter_algo_ = static_cast<cudnnConvolutionBwdFilterAlgo_t>(choice.second);
      workspace_ = choice.workspace;
    } catch (const sdk::Error& e) {
      if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
      d_.reset();
    }
  }
  uint64_t WorkspaceBytes() const { return d_ ? workspace_ : ColBytes(fallback_.g); }
  void Compute(const sdk::DeviceCall& c) const {
    const float* gy = DeviceLaunch::Ptr<const float>(c.inputs[0]);
    const float* x = DeviceLaunch::Ptr<const float>(c.inputs[1]);
    const float* w = DeviceLaunch::Ptr<const float>(c.inputs[2]);
    float* gx = DeviceLaunch::Ptr<float>(c.outputs[0]);
    float* gw = DeviceLaunch::Ptr<float>(c.outputs[1]);
    float* gb = fallback_.g.bias ? DeviceLaunch::Ptr<float>(c.outputs[2]) : nullptr;
    const int32_t req_b = fallback_.g.bias ? c.req[2] : WEFT_REQ_NULL;
    void* ws = DeviceLaunch::Ptr<void>(c.workspace);
    if (!d_) {
      fallback_.Backward(c, gy, x, w, gx, c.req[0], gw, c.req[1], gb, req_b, static_cast<float*>(ws));
      return;
    }
    WithDnn(c, [&](cudnnHandle_t h) {
      const float one = 1.0f;
      if (c.req[0] != WEFT_REQ_NULL) {
        const float beta = Beta(c.req[0]);
        CheckCudnn(cudnnConvolutionBackwardData(h, &one, d_->w(), w, d_->y(), gy, d_->conv(), data_algo_, ws,
                                                workspace_, &beta, d_->x(), gx),
                   "cudnnConvolutionBackwardData");
      }
      if (c.req[1] != WEFT_REQ_NULL) {
        const float beta = Beta(c.req[1]);
        CheckCudnn(cudnnConvolutionBackwardFilter(h, &one, d_->x(), x, d_->y(), gy, d_->conv(), filter_algo_, ws,
                                                  workspace_, &beta, d_->w(), gw),
                   "cudnnConvolutionBackwardFilter");
      }
      if (gb != nullptr && req_b != WEFT_REQ_NULL) {
        const float beta = Beta(req_b);
        CheckCudnn(cudnnConvolutionBackwardBias(h, &one, d_->y(), gy, &beta, d_->bias(), gb),
                   "cudnnConvolutionBackwardBias");
      }
    });
  }

 private:
  Im2colConv<DeviceLaunch> fallback_;
  std::unique_ptr<CudnnConvDescriptors> d_;
  cudnnConvolutionBwdDataAlgo_t data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t filter_algo_{};
  uint64_t workspace_ = 0;
};

// ---- cuDNN LRN ----------------------------------------------------------------------------------

// LRN through cuDNN's cross-channel LRN (MXNet's GPU path) where its window is MXNet's — odd nsize
// (MXNet's window is ±nsize/2 channels) within cuDNN's limits (nsize <= 16, knorm >= 1e-5,
// beta >= 0.01) — else the layer's kernel. Data (N, C, rest...) is described as (N, C, rest, 1).
// The hidden tmp_norm output, which cuDNN does not produce, comes from the layer's functor when
// it is wanted (req not null).
class CudnnLrn {
 public:
  explicit CudnnLrn(const KernelSetup& s) : layer_(s), backward_(IsBackward(s)) {
    const LrnParams& p = layer_.params();
    const TensorDesc& x = s.inputs[backward_ ? 2 : 0];
    const int64_t n = x.dim(0), inner = p.inner;
    const bool fits = n > 0 && p.c > 0 && inner > 0 && n <= INT_MAX && p.c <= INT_MAX && inner <= INT_MAX;
    if (!fits || p.nsize % 2 == 0 || p.nsize > CUDNN_LRN_MAX_N || p.knorm < CUDNN_LRN_MIN_K ||
        p.beta < CUDNN_LRN_MIN_BETA)
      return;
    try {
      CheckCudnn(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
      CheckCudnn(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(n),
                                            static_cast<int>(p.c), static_cast<int>(inner), 1),
                 "cudnnSetTensor4dDescriptor (LRN)");
      CheckCudnn(cudnnCreateLRNDescriptor(&lrn_), "cudnnCreateLRNDescriptor");
      CheckCudnn(cudnnSetLRNDescriptor(lrn_, static_cast<unsigned>(p.nsize), p.alpha, p.beta, p.knorm),
                 "cudnnSetLRNDescriptor");
    } catch (const sdk::Error& e) {
      Release();
      if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
    }
  }
  ~CudnnLrn() { Release(); }
  CudnnLrn(const CudnnLrn&) = delete;
  CudnnLrn& operator=(const CudnnLrn&) = delete;

  void Compute(const sdk::DeviceCall& c) const {
    if (lrn_ == nullptr) return layer_.Compute(c);
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    const float one = 1.0f;
    if (backward_) {  // out_grad(output), out_grad(tmp_norm), data, output, tmp_norm
      if (c.req[0] == WEFT_REQ_NULL) return;
      WithDnn(c, [&](cudnnHandle_t h) {
        const float beta = Beta(c.req[0]);
        CheckCudnn(cudnnLRNCrossChannelBackward(h, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x_, in(3), x_, in(0), x_,
                                                in(2), &beta, x_, DeviceLaunch::Ptr<float>(c.outputs[0])),
                   "cudnnLRNCrossChannelBackward");
      });
      return;
    }
    if (c.req[0] != WEFT_REQ_NULL)
      WithDnn(c, [&](cudnnHandle_t h) {
        const float beta = Beta(c.req[0]);
        CheckCudnn(cudnnLRNCrossChannelForward(h, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x_, in(0), &beta, x_,
                                               DeviceLaunch::Ptr<float>(c.outputs[0])),
                   "cudnnLRNCrossChannelForward");
      });
    if (c.outputs.size() > 1)
      WithReq(c.req[1], [&](auto a) {
        DeviceLaunch::Map(c, c.outputs[1].size(),
                          LrnMap<decltype(a)>{layer_.params(), true, in(0), DeviceLaunch::Ptr<float>(c.outputs[1])});
      });
  }

 private:
  void Release() noexcept {
    if (x_ != nullptr) cudnnDestroyTensorDescriptor(x_);
    if (lrn_ != nullptr) cudnnDestroyLRNDescriptor(lrn_);
    x_ = nullptr;
    lrn_ = nullptr;
  }
  LrnKernel<DeviceLaunch> layer_;
  bool backward_;
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnLRNDescriptor_t lrn_ = nullptr;
};

// ---- cuDNN Activation, softmax, Pooling, BatchNorm ----------------------------------------------
// Each class sets up the shared layer's kernel first (it validates the node and is the fallback),
// then the cuDNN descriptors when cuDNN can express the node's attributes (cudnn_desc.h lists the
// cases it cannot); a descriptor cuDNN rejects also leaves the node on the layer's kernel.

// Runs `make` (which builds descriptors); a cuDNN rejection (WEFT_ERR_UNSUPPORTED) returns false.
template <typename F>
bool TryDescribe(F&& make) {
  try {
    make();
    return true;
  } catch (const sdk::Error& e) {
    if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
    return false;
  }
}

const float kOne = 1.0f, kZero = 0.0f;

// Activation relu / sigmoid / tanh through cuDNN (MXNet's GPU path); softrelu and softsign run the
// layer's kernel. Backward inputs are out_grad, data, output or out_grad, output: cuDNN's relu
// backward reads x only for its sign, which the output shares, so the output stands in for data.
template <bool kBackward>
class CudnnActivation {
 public:
  explicit CudnnActivation(const KernelSetup& s) : layer_(s), has_data_(s.inputs.size() == 3) {
    const std::optional<cudnnActivationMode_t> mode = ActModeFor(ParseAct(s));
    const std::optional<Dims4> dims = FlatDims(s.inputs[0].shape);
    if (!mode || !dims) return;
    if (!TryDescribe([&] {
          t_ = std::make_unique<DnnTensor>(*dims);
          act_ = std::make_unique<DnnActivation>(*mode);
        }))
      t_.reset(), act_.reset();
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (!act_) return layer_.Compute(c);
    if (c.req[0] == WEFT_REQ_NULL) return;
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    float* out = DeviceLaunch::Ptr<float>(c.outputs[0]);
    const cudnnTensorDescriptor_t t = t_->get();
    WithDnn(c, [&](cudnnHandle_t h) {
      const float beta = Beta(c.req[0]);
      if constexpr (kBackward) {
        const float* y = in(has_data_ ? 2 : 1);
        CheckCudnn(
            cudnnActivationBackward(h, act_->get(), &kOne, t, y, t, in(0), t, has_data_ ? in(1) : y, &beta, t, out),
            "cudnnActivationBackward");
      } else {
        CheckCudnn(cudnnActivationForward(h, act_->get(), &kOne, t, in(0), &beta, t, out), "cudnnActivationForward");
      }
    });
  }

 private:
  std::conditional_t<kBackward, ActivationBackwardKernel<DeviceLaunch>, ActivationKernel<DeviceLaunch>> layer_;
  bool has_data_;
  std::unique_ptr<DnnTensor> t_;
  std::unique_ptr<DnnActivation> act_;
};

// softmax / log_softmax over `axis` through cuDNN's CHANNEL mode on (outer, len, inner, 1)
// (ACCURATE subtracts the maximum, as the layer does); a temperature other than 1 runs the
// layer's kernel. Backward inputs: out_grad, output.
template <bool kLog, bool kBackward>
class CudnnSoftmax {
 public:
  explicit CudnnSoftmax(const KernelSetup& s) : layer_(s) {
    const AxisView v = ViewAround(s, s.inputs[kBackward ? 1 : 0], s.Params<sdk::SoftmaxParam>().axis);
    const std::optional<Dims4> dims = SoftmaxDimsFor(v, InverseTemperature(s));
    if (dims && !TryDescribe([&] { t_ = std::make_unique<DnnTensor>(*dims); })) t_.reset();
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (!t_) return layer_.Compute(c);
    if (c.req[0] == WEFT_REQ_NULL) return;
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    float* out = DeviceLaunch::Ptr<float>(c.outputs[0]);
    const cudnnTensorDescriptor_t t = t_->get();
    const cudnnSoftmaxAlgorithm_t algo = kLog ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
    WithDnn(c, [&](cudnnHandle_t h) {
      const float beta = Beta(c.req[0]);
      if constexpr (kBackward) {
        CheckCudnn(cudnnSoftmaxBackward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, t, in(1), t, in(0), &beta, t, out),
                   "cudnnSoftmaxBackward");
      } else {
        CheckCudnn(cudnnSoftmaxForward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, t, in(0), &beta, t, out),
                   "cudnnSoftmaxForward");
      }
    });
  }

 private:
  std::conditional_t<kBackward, SoftmaxBackwardKernel<DeviceLaunch, kLog>, SoftmaxKernel<DeviceLaunch, kLog>> layer_;
  std::unique_ptr<DnnTensor> t_;
};

// Pooling max / avg through cuDNN where its windows are MXNet's (PoolParamsFor); sum pooling,
// 'full' windows and pad >= kernel run the layer's kernel. Backward inputs: out_grad, data, output.
template <bool kBackward>
class CudnnPooling {
 public:
  explicit CudnnPooling(const KernelSetup& s) : layer_(s) {
    const PoolGeometry g =
        kBackward ? ParsePooling(s, s.inputs[1], s.inputs[0]) : ParsePooling(s, s.inputs[0], s.outputs[0]);
    const std::optional<PoolParams> p = PoolParamsFor(g);
    if (!p) return;
    const bool ok = TryDescribe([&] {
      x_ = std::make_unique<DnnTensor>(p->x);
      y_ = std::make_unique<DnnTensor>(p->y);
      pool_ = std::make_unique<DnnPooling>(*p);
      if (!(pool_->OutputDims(*x_) == p->y)) throw sdk::Error(WEFT_ERR_UNSUPPORTED, "cuDNN's pooled size differs");
    });
    if (!ok) x_.reset(), y_.reset(), pool_.reset();
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (!pool_) return layer_.Compute(c);
    if (c.req[0] == WEFT_REQ_NULL) return;
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    float* out = DeviceLaunch::Ptr<float>(c.outputs[0]);
    WithDnn(c, [&](cudnnHandle_t h) {
      const float beta = Beta(c.req[0]);
      if constexpr (kBackward) {
        CheckCudnn(cudnnPoolingBackward(h, pool_->get(), &kOne, y_->get(), in(2), y_->get(), in(0), x_->get(), in(1),
                                        &beta, x_->get(), out),
                   "cudnnPoolingBackward");
      } else {
        CheckCudnn(cudnnPoolingForward(h, pool_->get(), &kOne, x_->get(), in(0), &beta, y_->get(), out),
                   "cudnnPoolingForward");
      }
    });
  }

 private:
  std::conditional_t<kBackward, PoolingBackwardKernel<DeviceLaunch>, PoolingKernel<DeviceLaunch>> layer_;
  std::unique_ptr<DnnTensor> x_, y_;
  std::unique_ptr<DnnPooling> pool_;
};

// The data and BatchNorm-parameter descriptors for `d`, shared by the forward and backward
// kernels; both stay null when `d` is empty or cuDNN cannot describe it (the layer's kernel runs).
void DescribeBn(const std::optional<Dims4>& d, std::unique_ptr<DnnTensor>& x, std::unique_ptr<DnnBnParams>& bn) {
  if (d && !TryDescribe([&] {
        x = std::make_unique<DnnTensor>(*d);
        bn = std::make_unique<DnnBnParams>(*x);
      }))
    x.reset(), bn.reset();
}

// BatchNorm through cuDNN's SPATIAL batch normalization (MXNet's GPU path) on data viewed as
// (outer, C, inner, 1), keeping MXNet's (= the cpu's) bookkeeping where cuDNN's differs:
//  - the moving variance takes the biased batch variance (cuDNN's running variance is unbiased):
//    cuDNN gets no running buffers; BnMovingUpdateMap updates them from its saved mean and
//    1/sqrt(var + eps);
//  - fix_gamma: cuDNN scales by ones (workspace); gamma's gradient is 0.
// The layer's kernel runs for eps < CUDNN_BN_MIN_EPSILON, < 2 values per channel, and a null
// request for the output (cuDNN always writes it). Workspace: mean | inv_std | ones (C each).
class CudnnBatchNorm {
 public:
  explicit CudnnBatchNorm(const KernelSetup& s) : layer_(s), p_(ParseBatchNorm(s, s.inputs[0])) {
    DescribeBn(BnDimsFor(p_), x_, bn_);
  }
  uint64_t WorkspaceBytes() const { return std::max<uint64_t>(layer_.WorkspaceBytes(), 3 * p_.c * sizeof(float)); }
  void Compute(const sdk::DeviceCall& c) const {
    if (!bn_ || c.req[0] == WEFT_REQ_NULL) return layer_.Compute(c);
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    float* mean = DeviceLaunch::Ptr<float>(c.workspace);
    float* inv_std = mean + p_.c;
    float* ones = mean + 2 * p_.c;
    float* moving_mean = DeviceLaunch::Ptr<float>(c.aux[0]);
    float* moving_var = DeviceLaunch::Ptr<float>(c.aux[1]);
    const bool batch = c.is_train && !p_.use_global;
    if (p_.fix_gamma) DeviceLaunch::Map(c, p_.c, FillMap{ones, 1.0f});
    const float* gamma = p_.fix_gamma ? ones : in(1);
    const cudnnTensorDescriptor_t x = x_->get();
    WithDnn(c, [&](cudnnHandle_t h) {
      const float beta = Beta(c.req[0]);
      float* y = DeviceLaunch::Ptr<float>(c.outputs[0]);
      if (batch) {
        CheckCudnn(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &kOne, &beta, x, in(0), x, y,
                                                          bn_->get(), gamma, in(2), 1.0 - p_.momentum, nullptr, nullptr,
                                                          p_.eps, mean, inv_std),
                   "cudnnBatchNormalizationForwardTraining");
      } else {
        CheckCudnn(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &kOne, &beta, x, in(0), x, y,
                                                           bn_->get(), gamma, in(2), moving_mean, moving_var, p_.eps),
                   "cudnnBatchNormalizationForwardInference");
      }
    });
    if (batch) {
      DeviceLaunch::Map(c, p_.c, BnMovingUpdateMap{p_, mean, inv_std, moving_mean, moving_var});
    } else if (c.outputs.size() > 1) {  // the hidden outputs: the moving statistics used
      DeviceLaunch::Map(c, p_.c, BnStatsMap{p_, false, in(0), moving_mean, moving_var, mean, inv_std});
    }
    for (size_t k = 1; k < c.outputs.size(); ++k)
      WithReq(c.req[k], [&](auto a) {
        DeviceLaunch::Map(c, p_.c,
                          CopyMap<decltype(a)>{k == 1 ? mean : inv_std, DeviceLaunch::Ptr<float>(c.outputs[k])});
      });
  }

 private:
  BatchNormKernel<DeviceLaunch> layer_;
  BnShape p_;
  std::unique_ptr<DnnTensor> x_;
  std::unique_ptr<DnnBnParams> bn_;
};

// _backward_BatchNorm through cudnnBatchNormalizationBackward with the forward's saved mean and
// inv_std; use_global_stats (a gradient through fixed statistics, which cuDNN's backward does not
// compute) and the CudnnBatchNorm fallbacks run the layer's kernel. cuDNN writes the gamma / beta
// gradients into the workspace; they reach the outputs with their own requests.
class CudnnBatchNormBackward {
 public:
  explicit CudnnBatchNormBackward(const KernelSetup& s) : layer_(s) {
    g_ = s.inputs.size() - 8;
    p_ = ParseBatchNorm(s, s.inputs[g_]);
    DescribeBn(p_.use_global ? std::nullopt : BnDimsFor(p_), x_, bn_);
  }
  uint64_t WorkspaceBytes() const { return std::max<uint64_t>(layer_.WorkspaceBytes(), 3 * p_.c * sizeof(float)); }
  void Compute(const sdk::DeviceCall& c) const {
    if (!bn_ || c.req[0] == WEFT_REQ_NULL) return layer_.Compute(c);
    auto in = [&](size_t i) { return DeviceLaunch::Ptr<const float>(c.inputs[i]); };
    float* dgamma = DeviceLaunch::Ptr<float>(c.workspace);
    float* dbeta = dgamma + p_.c;
    float* ones = dgamma + 2 * p_.c;
    if (p_.fix_gamma) DeviceLaunch::Map(c, p_.c, FillMap{ones, 1.0f});
    const float* gamma = p_.fix_gamma ? ones : in(g_ + 1);
    const cudnnTensorDescriptor_t x = x_->get();
    WithDnn(c, [&](cudnnHandle_t h) {
      const float beta = Beta(c.req[0]);
      CheckCudnn(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &kOne, &beta, &kOne, &kZero, x, in(g_), x,
                                                 in(0), x, DeviceLaunch::Ptr<float>(c.outputs[0]), bn_->get(), gamma,
                                                 dgamma, dbeta, p_.eps, in(g_ + 4), in(g_ + 5)),
                 "cudnnBatchNormalizationBackward");
    });
    WithReq(c.req[1], [&](auto a) {
      DeviceLaunch::Map(c, p_.c,
                        BnParamGradMap<decltype(a)>{dgamma, p_.fix_gamma, DeviceLaunch::Ptr<float>(c.outputs[1])});
    });
    WithReq(c.req[2], [&](auto a) {
      DeviceLaunch::Map(c, p_.c, BnParamGradMap<decltype(a)>{dbeta, false, DeviceLaunch::Ptr<float>(c.outputs[2])});
    });
  }

 private:
  BatchNormBackwardKernel<DeviceLaunch> layer_;
  size_t g_ = 1;
  BnShape p_;
  std::unique_ptr<DnnTensor> x_;
  std::unique_ptr<DnnBnParams> bn_;
};

}  // namespace

void RegisterCudaKernels(sdk::KernelTable& table) {
  DeviceLaunch::vendor_gemm = &CublasGemm;
  GpuLayerOptions options;
  options.im2col_convolution = false;  // cuDNN's, falling back to the layer's im2col per geometry
  options.lrn = false;                 // cuDNN's, falling back to the layer's kernel per shape
  options.nn_basics = false;           // Activation, softmax, Pooling, BatchNorm: cuDNN's, same fallback
  RegisterGpuLayer<DeviceLaunch>(table, options);
  // Each cuDNN kernel falls back to the GPU layer's class (per node) for what cuDNN rejects: its
  // math_files name that class's file.
  using Scope = sdk::KernelTable::SourceScope;
  {
    Scope fallback(table, {kGpuNnActivationSource});
    table.Add<CudnnActivation<false>>("Activation", kF32);
    table.Add<CudnnActivation<true>>("_backward_Activation", kF32);
  }
  {
    Scope fallback(table, {kGpuSoftmaxSource});
    table.Add<CudnnSoftmax<false, false>>("softmax", kF32);
    table.Add<CudnnSoftmax<false, true>>("_backward_softmax", kF32);
    table.Add<CudnnSoftmax<true, false>>("log_softmax", kF32);
    table.Add<CudnnSoftmax<true, true>>("_backward_log_softmax", kF32);
  }
  {
    Scope fallback(table, {kGpuNnPoolingSource});
    table.Add<CudnnPooling<false>>("Pooling", kF32);
    table.Add<CudnnPooling<true>>("_backward_Pooling", kF32);
  }
  {
    Scope fallback(table, {kGpuNormBatchNormSource});
    table.Add<CudnnBatchNorm>("BatchNorm", kF32);
    table.Add<CudnnBatchNormBackward>("_backward_BatchNorm", kF32);
  }
  {
    Scope fallback(table, {kGpuNormLrnSource});
    table.Add<CudnnLrn>("LRN", kF32);
    table.Add<CudnnLrn>("_backward_LRN", kF32);
  }
  {
    Scope fallback(table, {CudnnConvSource(), kGpuNnConvSource});
    table.Add<CudnnConvolution>("Convolution", kF32);
    table.Add<CudnnConvolutionBackward>("_backward_Convolution", kF32);
  }
}

void ReleaseStreamHandles(GpuStream& stream) {
  std::lock_guard<std::mutex> lock(stream.mu);
  // A handle exists only if Cublas() loaded.
  if (stream.blas != nullptr) Cublas().Destroy(static_cast<cublasHandle_t>(stream.blas));
  if (stream.dnn != nullptr) cudnnDestroy(static_cast<cudnnHandle_t>(stream.dnn));
  stream.blas = nullptr;
  stream.dnn = nullptr;
}

std::string LibraryVersions() {
  // cuBLAS is not loaded yet (cublas_api.h): the version of the headers the plugin was built with.
  const size_t dnn = cudnnGetVersion();  // 9xxyy: works without a device
  return "cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
         std::to_string(CUBLAS_VER_PATCH) + " (" + CublasLibraryName() + ", loaded at the first GEMM), cuDNN " +
         std::to_string(dnn / 10000) + "." + std::to_string(dnn / 100 % 100) + "." + std::to_string(dnn % 100);
}

}  // namespace weft::cuda

// CUDA plugin — the kernels half (see cuda_kernels.h).
#include <cublas_v2.h>
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

#include "cuda_kernels.h"
#include "cudnn_conv.h"
#include "gpu_launch_device.h"
#include "gpu_register.h"

namespace weft::cuda {
namespace {

cublasHandle_t NewHandle(int32_t device) {
  cublasHandle_t h = nullptr;
  const cublasStatus_t st = cublasCreate(&h);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE,
                     "cuda(" + std::to_string(device) + "): cublasCreate failed: " + cublasGetStatusString(st));
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
  cublasSetStream(h, stream);
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  // batch_dot: one strided-batched call (the strides are those of the row-major operands).
  const cublasStatus_t st =
      g.batch == 1 ? cublasSgemm(h, op_b, op_a, n, m, k, &alpha, g.b, static_cast<int>(g.ldb), g.a,
                                 static_cast<int>(g.lda), &g.beta, g.c, static_cast<int>(g.ldc))
                   : cublasSgemmStridedBatched(h, op_b, op_a, n, m, k, &alpha, g.b, static_cast<int>(g.ldb), g.stride_b,
                                               g.a, static_cast<int>(g.lda), g.stride_a, &g.beta, g.c,
                                               static_cast<int>(g.ldc), g.stride_c, static_cast<int>(g.batch));
  if (s == nullptr) {
    cudaStreamSynchronize(stream);
    cublasDestroy(h);
  }
  if (st == CUBLAS_STATUS_INVALID_VALUE || st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  if (st != CUBLAS_STATUS_SUCCESS)
    throw sdk::Error(WEFT_ERR_UNAVAILABLE, "cuda(" + std::to_string(c.device) + "): cublasSgemm " +
                                               std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                                               std::to_string(g.k) + " failed: " + cublasGetStatusString(st));
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

// Convolution through cuDNN with the algorithm chosen once per node (shape) by cuDNN's heuristics
// and the workspace from the core's pool; geometries cuDNN rejects run the layer's im2col kernel.
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
      SetupHandle h(s.device);
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int n = 0;
      CheckCudnn(cudnnGetConvolutionForwardAlgorithm_v7(h.h, d_->x(), d_->w(), d_->conv(), d_->y(),
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf),
                 "cudnnGetConvolutionForwardAlgorithm_v7");
      const cudnnConvolutionFwdAlgoPerf_t best = FirstUsable(perf, n, "forward convolution");
      algo_ = best.algo;
      workspace_ = best.memory;
    } catch (const sdk::Error& e) {
      if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
      d_.reset();  // cuDNN rejects the geometry: im2col + GEMM
    }
  }
  uint64_t WorkspaceBytes() const { return d_ ? workspace_ : fallback_.g.col_bytes(); }
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
      data_algo_ = data.algo;
      filter_algo_ = filter.algo;
      workspace_ = std::max(data.memory, filter.memory);
    } catch (const sdk::Error& e) {
      if (e.code() != WEFT_ERR_UNSUPPORTED) throw;
      d_.reset();
    }
  }
  uint64_t WorkspaceBytes() const { return d_ ? workspace_ : fallback_.g.col_bytes(); }
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

}  // namespace

void RegisterCudaKernels(sdk::KernelTable& table) {
  DeviceLaunch::vendor_gemm = &CublasGemm;
  GpuLayerOptions options;
  options.im2col_convolution = false;  // cuDNN's, falling back to the layer's im2col per geometry
  options.lrn = false;                 // cuDNN's, falling back to the layer's kernel per shape
  RegisterGpuLayer<DeviceLaunch>(table, options);
  table.Add<CudnnLrn>("LRN", kF32);
  table.Add<CudnnLrn>("_backward_LRN", kF32);
  table.Add<CudnnConvolution>("Convolution", kF32);
  table.Add<CudnnConvolutionBackward>("_backward_Convolution", kF32);
}

void ReleaseStreamHandles(GpuStream& stream) {
  std::lock_guard<std::mutex> lock(stream.mu);
  if (stream.blas != nullptr) cublasDestroy(static_cast<cublasHandle_t>(stream.blas));
  if (stream.dnn != nullptr) cudnnDestroy(static_cast<cudnnHandle_t>(stream.dnn));
  stream.blas = nullptr;
  stream.dnn = nullptr;
}

std::string LibraryVersions() {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  const size_t dnn = cudnnGetVersion();  // 9xxyy: works without a device
  return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) + ", cuDNN " +
         std::to_string(dnn / 10000) + "." + std::to_string(dnn / 100 % 100) + "." + std::to_string(dnn % 100);
}

}  // namespace weft::cuda

#include "cudnn_conv.h"

#include <climits>

namespace weft::cuda {
namespace {

int Int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw sdk::Error(WEFT_ERR_UNSUPPORTED, std::string("cuDNN convolution: ") + what + " " + std::to_string(v) +
                                               " exceeds cuDNN's 32-bit sizes");
  return static_cast<int>(v);
}

}  // namespace

void CheckCudnn(cudnnStatus_t status, const std::string& what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const bool rejected = status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM;
  throw sdk::Error(rejected ? WEFT_ERR_UNSUPPORTED : WEFT_ERR_UNAVAILABLE,
                   what + ": " + cudnnGetErrorString(status) + " (" + std::to_string(static_cast<int>(status)) + ")");
}

CudnnConvDescriptors::CudnnConvDescriptors(const ConvGeometry& g) {
  try {
    CheckCudnn(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
    CheckCudnn(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
    CheckCudnn(cudnnCreateTensorDescriptor(&b_), "cudnnCreateTensorDescriptor");
    CheckCudnn(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
    CheckCudnn(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
    CheckCudnn(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, Int(g.n, "batch"),
                                          Int(g.c, "channels"), Int(g.h, "height"), Int(g.w, "width")),
               "data descriptor");
    CheckCudnn(
        cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, Int(g.n, "batch"), Int(g.f, "num_filter"),
                                   Int(g.oh, "output height"), Int(g.ow, "output width")),
        "output descriptor");
    CheckCudnn(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, Int(g.f, "num_filter"), 1, 1),
               "bias descriptor");
    CheckCudnn(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, Int(g.f, "num_filter"),
                                          Int(g.cg(), "channels per group"), Int(g.kh, "kernel height"),
                                          Int(g.kw, "kernel width")),
               "weight descriptor");
    // MXNet's Convolution is a cross-correlation (the kernel is not flipped).
    CheckCudnn(cudnnSetConvolution2dDescriptor(conv_, Int(g.ph, "pad"), Int(g.pw, "pad"), Int(g.sh, "stride"),
                                               Int(g.sw, "stride"), Int(g.dh, "dilate"), Int(g.dw, "dilate"),
                                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "convolution descriptor");
    CheckCudnn(cudnnSetConvolutionGroupCount(conv_, Int(g.groups, "num_group")), "convolution group count");
    const std::array<int, 4> out = OutputDims();
    if (out[0] != g.n || out[1] != g.f || out[2] != g.oh || out[3] != g.ow)
      throw sdk::Error(WEFT_ERR_INTERNAL, "cuDNN computes output (" + std::to_string(out[0]) + ", " +
                                              std::to_string(out[1]) + ", " + std::to_string(out[2]) + ", " +
                                              std::to_string(out[3]) + ") where MXNet's shape is (" +
                                              std::to_string(g.n) + ", " + std::to_string(g.f) + ", " +
                                              std::to_string(g.oh) + ", " + std::to_string(g.ow) + ")");
  } catch (...) {
    Release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

CudnnConvDescriptors::~CudnnConvDescriptors() { Release(); }

void CudnnConvDescriptors::Release() noexcept {
  if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
  if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
  for (cudnnTensorDescriptor_t* t : {&x_, &y_, &b_})
    if (*t != nullptr) cudnnDestroyTensorDescriptor(*t);
  conv_ = nullptr, w_ = nullptr, x_ = y_ = b_ = nullptr;
}

std::array<int, 4> CudnnConvDescriptors::OutputDims() const {
  std::array<int, 4> d{};
  CheckCudnn(cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &d[0], &d[1], &d[2], &d[3]),
             "cudnnGetConvolution2dForwardOutputDim");
  return d;
}

const char* CudnnConvSource() { return __FILE__; }

}  // namespace weft::cuda

#include "cudnn_desc.h"

#include <algorithm>
#include <climits>

namespace weft::cuda {
namespace {

bool FitsInt(int64_t v) { return v >= 1 && v <= INT_MAX; }

void Set(const char* what, const std::string& text, std::string* why) {
  if (why != nullptr) *why = std::string(what) + ": " + text;
}

}  // namespace

std::optional<Dims4> MakeDims4(int64_t n, int64_t c, int64_t h, int64_t w) {
  if (!FitsInt(n) || !FitsInt(c) || !FitsInt(h) || !FitsInt(w)) return std::nullopt;
  return Dims4{static_cast<int>(n), static_cast<int>(c), static_cast<int>(h), static_cast<int>(w)};
}

std::optional<PoolParams> PoolParamsFor(const PoolGeometry& g, std::string* why) {
  if (g.type == PoolType::kSum) return Set("pool_type sum", "cuDNN pools max and avg only", why), std::nullopt;
  if (g.ph >= g.kh || g.pw >= g.kw)
    return Set("pad >= kernel", "a window may lie in the padding, where MXNet yields 0", why), std::nullopt;
  if (g.oh != (g.ih + 2 * g.ph - g.kh) / g.sh + 1 || g.ow != (g.iw + 2 * g.pw - g.kw) / g.sw + 1)
    return Set("pooling_convention full", "its extra window is not cuDNN's output size", why), std::nullopt;
  const std::optional<Dims4> x = MakeDims4(g.n, g.c, g.ih, g.iw), y = MakeDims4(g.n, g.c, g.oh, g.ow);
  if (!x || !y) return Set("size", "empty or beyond cuDNN's int extents", why), std::nullopt;
  PoolParams p;
  p.mode = g.type == PoolType::kMax ? CUDNN_POOLING_MAX_DETERMINISTIC
           : g.count_include_pad    ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  // Window and steps are small by construction (kernel <= padded input); the ints cannot overflow
  // once the extents fit.
  p.kh = static_cast<int>(g.kh), p.kw = static_cast<int>(g.kw);
  p.ph = static_cast<int>(g.ph), p.pw = static_cast<int>(g.pw);
  p.sh = static_cast<int>(std::min<int64_t>(g.sh, INT_MAX)), p.sw = static_cast<int>(std::min<int64_t>(g.sw, INT_MAX));
  p.x = *x, p.y = *y;
  return p;
}

std::optional<cudnnActivationMode_t> ActModeFor(Act act) {
  switch (act) {
    case Act::kRelu:
      return CUDNN_ACTIVATION_RELU;
    case Act::kSigmoid:
      return CUDNN_ACTIVATION_SIGMOID;
    case Act::kTanh:
      return CUDNN_ACTIVATION_TANH;
    default:
      return std::nullopt;
  }
}

std::optional<Dims4> FlatDims(const std::vector<int64_t>& shape) {
  if (shape.empty()) return std::nullopt;
  int64_t rest = 1;
  for (size_t i = 1; i < shape.size(); ++i) rest *= shape[i];
  return MakeDims4(shape[0], rest, 1, 1);
}

std::optional<Dims4> SoftmaxDimsFor(const AxisView& v, float inv_temperature) {
  if (inv_temperature != 1.0f) return std::nullopt;
  return MakeDims4(v.outer, v.len, v.inner, 1);
}

std::optional<Dims4> BnDimsFor(const BnShape& p) {
  if (p.eps < CUDNN_BN_MIN_EPSILON || p.outer * p.inner < 2) return std::nullopt;
  return MakeDims4(p.outer, p.c, p.inner, 1);
}

DnnTensor::DnnTensor(const Dims4& d) {
  CheckCudnn(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor");
  const cudnnStatus_t st = cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, d.n, d.c, d.h, d.w);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyTensorDescriptor(d_);
    CheckCudnn(st, "cudnnSetTensor4dDescriptor");
  }
}
DnnTensor::~DnnTensor() { cudnnDestroyTensorDescriptor(d_); }

DnnPooling::DnnPooling(const PoolParams& p) {
  CheckCudnn(cudnnCreatePoolingDescriptor(&d_), "cudnnCreatePoolingDescriptor");
  const cudnnStatus_t st =
      cudnnSetPooling2dDescriptor(d_, p.mode, CUDNN_NOT_PROPAGATE_NAN, p.kh, p.kw, p.ph, p.pw, p.sh, p.sw);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyPoolingDescriptor(d_);
    CheckCudnn(st, "cudnnSetPooling2dDescriptor");
  }
}
DnnPooling::~DnnPooling() { cudnnDestroyPoolingDescriptor(d_); }

Dims4 DnnPooling::OutputDims(const DnnTensor& x) const {
  Dims4 d;
  CheckCudnn(cudnnGetPooling2dForwardOutputDim(d_, x.get(), &d.n, &d.c, &d.h, &d.w),
             "cudnnGetPooling2dForwardOutputDim");
  return d;
}

DnnActivation::DnnActivation(cudnnActivationMode_t mode) {
  CheckCudnn(cudnnCreateActivationDescriptor(&d_), "cudnnCreateActivationDescriptor");
  const cudnnStatus_t st = cudnnSetActivationDescriptor(d_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyActivationDescriptor(d_);
    CheckCudnn(st, "cudnnSetActivationDescriptor");
  }
}
DnnActivation::~DnnActivation() { cudnnDestroyActivationDescriptor(d_); }

DnnBnParams::DnnBnParams(const DnnTensor& x) {
  CheckCudnn(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor");
  const cudnnStatus_t st = cudnnDeriveBNTensorDescriptor(d_, x.get(), CUDNN_BATCHNORM_SPATIAL);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyTensorDescriptor(d_);
    CheckCudnn(st, "cudnnDeriveBNTensorDescriptor");
  }
}
DnnBnParams::~DnnBnParams() { cudnnDestroyTensorDescriptor(d_); }

ConvAlgoCache::Key ConvAlgoCache::KeyOf(int32_t device, bool backward, const ConvGeometry& g) {
  return Key{device,    backward ? 1 : 0,
             g.spatial, g.n,
             g.c,       g.h,
             g.w,       g.f,
             g.groups,  g.kh,
             g.kw,      g.sh,
             g.sw,      g.ph,
             g.pw,      g.dh,
             g.dw,      g.oh,
             g.ow,      g.bias ? 1 : 0};
}

ConvAlgoChoice ConvAlgoCache::Get(const Key& key, const std::function<ConvAlgoChoice()>& choose) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = choices_.find(key);
    if (it != choices_.end()) return it->second;
  }
  const ConvAlgoChoice c = choose();  // cuDNN's heuristics: not under the lock
  std::lock_guard<std::mutex> lock(mu_);
  return choices_.emplace(key, c).first->second;
}

size_t ConvAlgoCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return choices_.size();
}

}  // namespace weft::cuda

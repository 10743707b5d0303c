// weft GPU kernel layer — what every kernel class of the layer shares. A kernel class
// (sdk/cpp/kernel.hpp DeviceKernelClass) is written once over a launcher L:
//   L = DeviceLaunch (gpu_launch_device.h): the CUDA and HIP plugins, work queued on the stream
//   L = HostLaunch   (gpu_launch_host.h):   the kernel layer's tests, on host memory
// Setup (attribute parsing, shape checks) runs on the host in both; Compute turns the call into
// functors (gpu_elem.h) and hands them to L. Each op's class and functors are in the file of its
// family, gpu_<family>[_<part>].h (docs/adding-an-op.md, "Op families"), registered through
// RegisterGpuLayer (gpu_register.h). Here: the error helpers, the dtype masks and dispatch
// (float32 / float64 math, kMoveTypes data movement), the shape checks and the write request.
//
// The math is written once as functors: a struct holding its pointers and parameters whose
// `WEFT_HD void operator()(int64_t i) const` computes work item i (an element, a row, a
// channel). The launcher runs it for i in [0, n) (the pattern of MXNet's
// mxnet_op::Kernel<OP, xpu>::Launch, where one Map runs on CPU and GPU), so the code that runs on
// a GPU is the code the CPU test suite checks against the cpu plugin. Formulas and conventions are
// the cpu plugin's (plugins/cpu/kernels, MXNet 1.9's): each family file names the cpu file it
// mirrors. `Assign` is ReqWrite (write / in-place) or ReqAdd (add-to). Work items never write
// memory another item reads, so in-place (output aliasing an input) is safe when the item reads
// its own element before writing it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpu_elem.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::WEFT_GPU_NS {

using sdk::DeviceCall;
using sdk::DeviceTensor;
using sdk::Error;
using sdk::KernelSetup;
using sdk::TensorDesc;

inline constexpr uint64_t kF32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);

[[noreturn]] inline void Invalid(const KernelSetup& s, const std::string& m) {
  throw Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + ": " + m);
}
[[noreturn]] inline void Unsupported(const KernelSetup& s, const std::string& m) {
  throw Error(WEFT_ERR_UNSUPPORTED, s.op_name + ": " + m);
}
inline std::string ShapeOf(const TensorDesc& t) { return sdk::FormatTuple(t.shape); }

/// Every tensor float32 unless it is listed in `except` (dtype codes allowed instead).
inline void RequireFloat32(const KernelSetup& s) {
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].dtype != WEFT_DTYPE_FLOAT32)
        Unsupported(s, std::string(what) + " " + std::to_string(i) + " is " + sdk::DTypeName(ts[i].dtype) +
                           "; the GPU kernel supports float32");
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
  check(s.aux, "aux state");
}

/// Every input, output and aux state has as many elements as input 0.
inline void RequireSameSize(const KernelSetup& s) {
  const int64_t n = s.inputs.at(0).size();
  auto check = [&](const std::vector<TensorDesc>& ts, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].size() != n)
        Invalid(s, std::string(what) + " " + std::to_string(i) + " " + ShapeOf(ts[i]) + " differs from input 0 " +
                       ShapeOf(s.inputs[0]));
  };
  check(s.inputs, "input");
  check(s.outputs, "output");
  check(s.aux, "aux state");
}

/// Runs body(ReqWrite{}) or body(ReqAdd{}) as `req` says; nothing for null.
template <typename F>
void WithReq(int32_t req, F&& body) {
  switch (req) {
    case WEFT_REQ_NULL:
      return;
    case WEFT_REQ_WRITE:
    case WEFT_REQ_WRITE_INPLACE:
      body(ReqWrite{});
      return;
    case WEFT_REQ_ADD:
      body(ReqAdd{});
      return;
    default:
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "unknown write request " + std::to_string(req));
  }
}

inline constexpr uint64_t kFloatTypes = kF32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
inline constexpr uint64_t kIndexTypes =
    kFloatTypes | WEFT_DTYPE_BIT(WEFT_DTYPE_INT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT64);
inline constexpr uint64_t kMoveTypes = kIndexTypes | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT16) |
                                       WEFT_DTYPE_BIT(WEFT_DTYPE_UINT8) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT8);

using Shape = std::vector<int64_t>;

template <typename T>
struct TypeTag {
  using type = T;
};

/// f(TypeTag<T>) for the element type of `dtype`, any of kMoveTypes (data movement); other dtypes
/// throw WEFT_ERR_UNSUPPORTED naming `op`.
template <typename F>
void WithMoveType(const std::string& op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case WEFT_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    case WEFT_DTYPE_FLOAT16:
      return f(TypeTag<Half>{});
    case WEFT_DTYPE_UINT8:
      return f(TypeTag<uint8_t>{});
    case WEFT_DTYPE_INT8:
      return f(TypeTag<int8_t>{});
    case WEFT_DTYPE_INT32:
      return f(TypeTag<int32_t>{});
    case WEFT_DTYPE_INT64:
      return f(TypeTag<int64_t>{});
    default:
      throw Error(WEFT_ERR_UNSUPPORTED, op + ": dtype " + sdk::DTypeName(dtype) + " is not implemented on GPUs");
  }
}

/// float32 / float64 only (math).
template <typename F>
void WithFloatType(const std::string& op, int32_t dtype, F&& f) {
  switch (dtype) {
    case WEFT_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case WEFT_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    default:
      throw Error(WEFT_ERR_UNSUPPORTED,
                  op + ": dtype " + sdk::DTypeName(dtype) + " is not implemented on GPUs (float32 and float64 are)");
  }
}

inline bool InMask(int32_t dtype, uint64_t mask) {
  return dtype >= 0 && dtype < 64 && (mask & WEFT_DTYPE_BIT(dtype)) != 0;
}

/// Every input and output of input 0's dtype, which `mask` must hold.
inline void RequireSameDType(const KernelSetup& s, uint64_t mask) {
  const int32_t d = s.inputs.empty() ? s.outputs.at(0).dtype : s.inputs[0].dtype;
  if (!InMask(d, mask)) Unsupported(s, std::string("dtype ") + sdk::DTypeName(d) + " is not implemented on GPUs");
  for (const auto* ts : {&s.inputs, &s.outputs})
    for (const TensorDesc& t : *ts)
      if (t.dtype != d)
        Invalid(s, std::string("tensors of dtypes ") + sdk::DTypeName(t.dtype) + " and " + sdk::DTypeName(d) +
                       "; all must match");
}

inline bool IsBackward(const KernelSetup& s) { return s.op_name.rfind("_backward_", 0) == 0; }

inline int NormalizeAxis(const KernelSetup& s, int64_t axis, int ndim, const char* attr) {
  if (axis < -ndim || axis >= ndim)
    Invalid(s, std::string(attr) + "=" + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                   " dimensions");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace weft::WEFT_GPU_NS

// Out-of-line pieces of tensor_util.h.
#include "tensor_util.h"

#include <algorithm>

namespace weft::cpu::tensor {

void UnsupportedDType(const char* op, int32_t dtype) {
  throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                   std::string(op) + ": dtype " + sdk::DTypeName(dtype) + " is not implemented on cpu");
}

void CheckReq(int32_t req) {
  if (req != WEFT_REQ_NULL && req != WEFT_REQ_WRITE && req != WEFT_REQ_WRITE_INPLACE && req != WEFT_REQ_ADD) {
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "unknown write request " + std::to_string(req));
  }
}

void CopyOrAdd(void* dst, const void* src, int64_t n, int32_t dtype, int32_t req) {
  CheckReq(req);
  if (req == WEFT_REQ_NULL || n == 0) return;
  if (req != WEFT_REQ_ADD) {
    if (dst != src) std::memcpy(dst, src, static_cast<size_t>(n) * sdk::ElementSize(dtype));
    return;
  }
  DispatchAll("copy", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = static_cast<T*>(dst);
    const T* s = static_cast<const T*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] += s[i];
  });
}

void FillOrAdd(void* dst, double value, int64_t n, int32_t dtype, int32_t req) {
  CheckReq(req);
  if (req == WEFT_REQ_NULL || n == 0) return;
  DispatchAll("fill", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sdk::FillReq(req, static_cast<T*>(dst), Convert<T>(value), n);
  });
}

}  // namespace weft::cpu::tensor

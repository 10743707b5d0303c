// weft CPU kernels — a strided box inside a row-major tensor (one sdk::SliceRange per axis), the
// region slice reads and _slice_assign writes. Internal to weft_cpu_kernels; thread-safe.
#pragma once

#include <vector>

#include "tensor_kernels.h"
#include "weft/sdk/ops/slice.hpp"

namespace weft::cpu::tensor {

struct Box {
  Dims full;         // the tensor's shape
  Dims extent;       // the box's shape
  Dims begin, step;  // per axis
};

/// The box of `ranges` (one per axis of `full`).
inline Box MakeBox(const Dims& full, const std::vector<sdk::SliceRange>& ranges) {
  Box b;
  b.full = full;
  for (const sdk::SliceRange& r : ranges) b.extent.Push(r.len), b.begin.Push(r.begin), b.step.Push(r.step);
  return b;
}

/// The box `slice` (attributes begin, end, step) cuts from `data`; Invalid naming the attributes
/// when they do not fit data's shape.
inline Box SliceBox(const KernelSetup& s, const TensorDesc& data) {
  try {
    return MakeBox(Dims(data), sdk::SliceRanges(s.Params<sdk::SliceParam>(), data.shape));
  } catch (const sdk::Error& e) {
    Invalid(s, e.what());
  }
}

/// Calls visit(packed, offset) for every element of the box in row-major order: `packed` counts
/// through the box as a contiguous tensor, `offset` is the element's position in the full tensor.
template <typename F>
void WalkBox(const Box& b, F visit) {
  const int nd = b.full.ndim;
  if (nd == 0) {
    visit(int64_t{0}, int64_t{0});
    return;
  }
  if (b.extent.Size() == 0) return;
  int64_t stride[WEFT_MAX_NDIM];
  int64_t st = 1;
  for (int a = nd - 1; a >= 0; --a) stride[a] = st, st *= b.full.d[a];
  int64_t off = 0;
  for (int a = 0; a < nd; ++a) off += b.begin.d[a] * stride[a];
  const int last = nd - 1;
  const int64_t n = b.extent.d[last], inner_step = b.step.d[last] * stride[last];
  int64_t idx[WEFT_MAX_NDIM] = {};
  for (int64_t packed = 0, total = b.extent.Size(); packed < total; packed += n) {
    for (int64_t i = 0; i < n; ++i) visit(packed + i, off + i * inner_step);
    for (int a = last - 1; a >= 0; --a) {
      off += b.step.d[a] * stride[a];
      if (++idx[a] < b.extent.d[a]) break;
      off -= b.step.d[a] * stride[a] * b.extent.d[a];
      idx[a] = 0;
    }
  }
}

}  // namespace weft::cpu::tensor

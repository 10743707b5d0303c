// vulkan plugin — the strided index space of shaders/broadcast_reduce.comp, shared by the
// kernels of several families (elemwise broadcast_*, reduce, tensor: transpose, Concat, slice) and
// by StridedCopy / StridedSum (vk_kernels.h). Internal to the plugin.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vk_kernels.h"

namespace weft::vk {

using Dims = std::vector<int64_t>;

/// A tensor's extents.
Dims ShapeOf(const sdk::TensorDesc& t);
Dims ShapeOf(const sdk::DeviceTensor& t);
/// Row-major element strides of `shape`.
Dims RowMajor(const Dims& shape);
/// Strides of `operand` broadcast (aligned right) to `full`: 0 along axes where it has extent 1.
Dims BroadcastStrides(const Dims& operand, const Dims& full);

// The index space of a broadcast_reduce.comp dispatch: axes, the strides of X, L, R and the
// output, and which axes are reduced. Axes of extent 1 are dropped and neighbours that walk
// memory alike merged, so most shapes fit the shader's 4 axes.
struct Strided {
  static constexpr size_t kMaxAxes = 4;
  Dims dims;
  std::array<Dims, 4> st;  // x, l, r, out
  std::vector<bool> red;

  Strided(Dims d, Dims x, Dims l, Dims r, Dims o, std::vector<bool> reduced)
      : dims(std::move(d)), st{std::move(x), std::move(l), std::move(r), std::move(o)}, red(std::move(reduced)) {
    Collapse();
  }
  void Collapse() {
    Strided c = *this;
    c.dims.clear(), c.red.clear();
    for (Dims& s : c.st) s.clear();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      bool merge = !c.dims.empty() && c.red.back() == red[d];
      for (size_t k = 0; k < 4 && merge; ++k) merge = c.st[k].back() == st[k][d] * dims[d];
      if (merge) {
        c.dims.back() *= dims[d];
        for (size_t k = 0; k < 4; ++k) c.st[k].back() = st[k][d];
        continue;
      }
      c.dims.push_back(dims[d]);
      c.red.push_back(red[d]);
      for (size_t k = 0; k < 4; ++k) c.st[k].push_back(st[k][d]);
    }
    *this = std::move(c);
  }
  int64_t Items() const {
    int64_t n = 1;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!red[d]) n *= dims[d];
    return n;
  }
};

/// Throws UNSUPPORTED (named for the op) when the index space needs more than 4 axes.
void CheckAxes(const sdk::KernelSetup& s, const Strided& p);

// Op codes of broadcast_reduce.comp.
enum StridedOp : int32_t {
  kCopy = 0,
  kMax = 1,
  kAdd = 2,
  kSub = 3,
  kMul = 4,
  kDiv = 5,
  kMaximum = 6,
  kMinimum = 7,
  kNeg = 8,
  kMulR = 9,
  kMulL = 10,
  kDivR = 11,
  kDivRhsGrad = 12,
  kGeL = 13,
  kGeR = 14,
  kLeL = 15,
  kLeR = 16,
  kEq = 17,
};

/// Dispatches broadcast_reduce.comp with op code `op` over `p` (nothing for req null or an empty
/// output). xoff / ooff: element offset of the first item from the start of x (l, r) / o, for
/// strides that walk backwards from it.
void RunStrided(const sdk::DeviceCall& c, int32_t op, const Strided& p, Binding x, Binding l, Binding r, Binding o,
                int32_t req, float scale = 1.0f, uint32_t xoff = 0, uint32_t ooff = 0);

/// A binding `elements` float32 elements into t.
Binding Shifted(const sdk::DeviceTensor& t, int64_t elements, bool write);

}  // namespace weft::vk

// weft GPU kernel layer — Pooling (MXNet 1.9, the cpu plugin's nn_pooling.cc semantics): max / avg /
// sum over 1-D (NCW) and 2-D (NCHW) windows, global_pool, pooling_convention valid or full,
// stride, zero padding, count_include_pad. A window starts at o·stride − pad, is cut at in + pad
// (the avg divisor with count_include_pad), then clipped to the input. A window wholly in the
// padding yields 0. Backward routes max's gradient to the first maximum of its window.
//
// Forward: work item = output element. Backward: work item = one (sample, channel) plane, whose
// windows overlap only inside it, so items never write the same element (no atomics).
#pragma once

#include "gpu_kernel.h"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose pooling falls back to these classes.
inline constexpr const char* kGpuNnPoolingSource = __FILE__;

using sdk::PoolGeometry;
using sdk::PoolType;
using sdk::PoolWindow;

/// The node's window geometry from its data x and output y (sdk::PoolingGeometry); throws naming
/// the mismatch.
inline PoolGeometry ParsePooling(const KernelSetup& s, const TensorDesc& x, const TensorDesc& y) {
  return sdk::PoolingGeometry(s.op_name, s.Params<sdk::PoolingParam>(), x.shape, y.shape);
}

template <class Assign>
struct PoolForwardMap {
  PoolGeometry g;
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t e) const {
    const int64_t ox = e % g.ow, oy = e / g.ow % g.oh, plane = e / (g.ow * g.oh);
    const float* xp = x + plane * g.ih * g.iw;
    const PoolWindow win = g.Window(oy, ox);
    const int64_t h0 = win.h0, h1 = win.h1, w0 = win.w0, w1 = win.w1;
    const float div = win.div;
    float acc = g.type == PoolType::kMax ? -INFINITY : 0.0f;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t q = w0; q < w1; ++q) {
        const float v = xp[h * g.iw + q];
        acc = g.type == PoolType::kMax ? fmaxf(acc, v) : acc + v;
      }
    if (g.type == PoolType::kAvg) acc *= div;
    if (h0 >= h1 || w0 >= w1) acc = 0.0f;
    Assign::Put(y[e], acc);
  }
};

/// One (sample, channel) plane: gx (zeroed first unless `add`) += each window's share of gy.
struct PoolBackwardPlaneMap {
  PoolGeometry g;
  const float* gy;
  const float* x;
  float* gx;
  bool add;
  WEFT_HD void operator()(int64_t plane) const {
    const float* xp = x + plane * g.ih * g.iw;
    const float* gyp = gy + plane * g.oh * g.ow;
    float* gp = gx + plane * g.ih * g.iw;
    if (!add)
      for (int64_t i = 0; i < g.ih * g.iw; ++i) gp[i] = 0.0f;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const PoolWindow win = g.Window(oy, ox);
        const int64_t h0 = win.h0, h1 = win.h1, w0 = win.w0, w1 = win.w1;
        const float div = win.div;
        const float go = gyp[oy * g.ow + ox];
        if (g.type == PoolType::kMax) {
          int64_t best = -1;
          float mx = -INFINITY;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t q = w0; q < w1; ++q)
              if (best < 0 || xp[h * g.iw + q] > mx) mx = xp[h * g.iw + q], best = h * g.iw + q;
          if (best >= 0) gp[best] += go;
        } else {
          const float v = g.type == PoolType::kAvg ? go * div : go;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t q = w0; q < w1; ++q) gp[h * g.iw + q] += v;
        }
      }
  }
};

template <class L>
class PoolingKernel {
 public:
  explicit PoolingKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    g_ = ParsePooling(s, s.inputs[0], s.outputs[0]);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, g_.n * g_.c * g_.oh * g_.ow,
             PoolForwardMap<decltype(a)>{g_, L::template Ptr<const float>(c.inputs[0]),
                                         L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  PoolGeometry g_;
};

// _backward_Pooling: inputs out_grad, data, output; output the data gradient.
template <class L>
class PoolingBackwardKernel {
 public:
  explicit PoolingBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(3, 1);
    RequireFloat32(s);
    g_ = ParsePooling(s, s.inputs[1], s.inputs[0]);
  }
  void Compute(const DeviceCall& c) const {
    if (c.req[0] == WEFT_REQ_NULL) return;
    L::Map(
        c, g_.n * g_.c,
        PoolBackwardPlaneMap{g_, L::template Ptr<const float>(c.inputs[0]), L::template Ptr<const float>(c.inputs[1]),
                             L::template Ptr<float>(c.outputs[0]), c.req[0] == WEFT_REQ_ADD});
  }

 private:
  PoolGeometry g_;
};

template <class L>
void RegisterPooling(sdk::KernelTable& t) {
  t.Add<PoolingKernel<L>>("Pooling", kF32);
  t.Add<PoolingBackwardKernel<L>>("_backward_Pooling", kF32);
}

}  // namespace weft::WEFT_GPU_NS

// weft GPU kernel layer — the softmax family (cpu: softmax.cc, MXNet 1.9's formulas): softmax,
// log_softmax (axis, temperature) and SoftmaxOutput, with their backward ops, float32. Work item
// = one row along the softmax axis, summed in double.
#pragma once

#include <math.h>

#include <type_traits>

#include "gpu_kernel.h"
#include "gpu_loss.h"
#include "weft/sdk/ops/softmax.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for a vendor plugin whose softmax falls back to these classes.
inline constexpr const char* kGpuSoftmaxSource = __FILE__;

/// A tensor viewed as (outer, len, inner) around the softmax axis; work item = one row
/// (outer·inner rows of `len` elements, stride `inner`).
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
  WEFT_HD int64_t RowBase(int64_t row) const { return row / inner * len * inner + row % inner; }
};

template <bool kLog, class Assign>
struct SoftmaxRowMap {
  AxisView v;
  float inv_t;
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t row) const {
    const int64_t b = v.RowBase(row), st = v.inner;
    float mx = -INFINITY;
    for (int64_t j = 0; j < v.len; ++j) mx = fmaxf(mx, x[b + j * st]);
    double sum = 0;
    for (int64_t j = 0; j < v.len; ++j) sum += expf((x[b + j * st] - mx) * inv_t);
    if constexpr (kLog) {
      const float lse = static_cast<float>(log(sum));
      for (int64_t j = 0; j < v.len; ++j) Assign::Put(y[b + j * st], (x[b + j * st] - mx) * inv_t - lse);
    } else {
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t j = 0; j < v.len; ++j) Assign::Put(y[b + j * st], expf((x[b + j * st] - mx) * inv_t) * inv);
    }
  }
};

template <bool kLog, class Assign>
struct SoftmaxBackwardRowMap {
  AxisView v;
  float inv_t;
  const float* gy;
  const float* y;
  float* gx;
  WEFT_HD void operator()(int64_t row) const {
    const int64_t b = v.RowBase(row), st = v.inner;
    double dot = 0;
    for (int64_t j = 0; j < v.len; ++j)
      dot += kLog ? static_cast<double>(gy[b + j * st]) : static_cast<double>(gy[b + j * st]) * y[b + j * st];
    const float d = static_cast<float>(dot);
    for (int64_t j = 0; j < v.len; ++j) {
      const int64_t k = b + j * st;
      const float g = kLog ? gy[k] - expf(y[k]) * d : y[k] * (gy[k] - d);
      Assign::Put(gx[k], g * inv_t);
    }
  }
};

/// _backward_SoftmaxOutput, one backward row r of `v` (label r): (y − one_hot(label)) · scale, 0
/// for ignored rows. A label outside [0, len) cannot raise an error on a GPU: its row is treated as
/// ignored (the cpu kernel reports it). normalization 'valid' divides by the rows not ignored,
/// which each item counts itself (O(rows) per row).
template <class Assign>
struct SoftmaxOutputGradMap {
  AxisView v;
  float scale;  // grad_scale, divided for normalization null / batch on the host
  bool use_ignore, norm_valid;
  float ignore_label;
  const float* label;
  const float* y;
  float* gx;
  WEFT_HD bool Ignored(int64_t r) const {
    const float l = label[r];  // the class is l truncated toward zero
    return (use_ignore && l == ignore_label) || !(l > -1.0f) || static_cast<int64_t>(l) >= v.len;
  }
  WEFT_HD void operator()(int64_t r) const {
    float s = scale;
    if (norm_valid) {
      int64_t valid = 0;
      for (int64_t q = 0, rows = v.outer * v.inner; q < rows; ++q) valid += Ignored(q) ? 0 : 1;
      s /= static_cast<float>(valid > 1 ? valid : 1);
    }
    const bool ignored = Ignored(r);
    const int64_t k = ignored ? -1 : static_cast<int64_t>(label[r]), b = v.RowBase(r);
    for (int64_t j = 0; j < v.len; ++j) {
      const int64_t at = b + j * v.inner;
      Assign::Put(gx[at], ignored ? 0.0f : (y[at] - (j == k ? 1.0f : 0.0f)) * s);
    }
  }
};

// ---- kernel classes ----------------------------------------------------------------------------

inline AxisView ViewAround(const KernelSetup& s, const TensorDesc& t, int64_t axis) {
  const sdk::AxisSplit v = sdk::SplitAtAxis(s.op_name, t.shape, axis);
  return AxisView{v.outer, v.len, v.inner};
}

inline float InverseTemperature(const KernelSetup& s) { return s.Params<sdk::SoftmaxParam>().InverseTemperature(); }

template <class L, bool kLog>
class SoftmaxKernel {
 public:
  explicit SoftmaxKernel(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    RequireSameSize(s);
    v_ = ViewAround(s, s.inputs[0], s.Params<sdk::SoftmaxParam>().axis);
    inv_t_ = InverseTemperature(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, v_.outer * v_.inner,
             SoftmaxRowMap<kLog, decltype(a)>{v_, inv_t_, L::template Ptr<const float>(c.inputs[0]),
                                              L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

template <class L, bool kLog>
class SoftmaxBackwardKernel {
 public:
  explicit SoftmaxBackwardKernel(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    RequireSameSize(s);
    v_ = ViewAround(s, s.inputs[1], s.Params<sdk::SoftmaxParam>().axis);
    inv_t_ = InverseTemperature(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, v_.outer * v_.inner,
             SoftmaxBackwardRowMap<kLog, decltype(a)>{v_, inv_t_, L::template Ptr<const float>(c.inputs[0]),
                                                      L::template Ptr<const float>(c.inputs[1]),
                                                      L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

/// SoftmaxOutput's rows and gradient scale: the SDK's LayOutSoftmaxOutput (MXNet 1.9's layout,
/// one definition for every backend).
struct SoftmaxOutputParams {
  AxisView fwd, bwd;
  bool prob_label = false;
  float scale = 1;  // grad_scale, divided for null / batch (valid divides per call)
  float ignore_label = -1;
  bool use_ignore = false, norm_valid = false;
  SoftmaxOutputParams(const KernelSetup& s, const TensorDesc& data, const TensorDesc& label) {
    const auto a = s.Params<sdk::SoftmaxOutputParam>();
    const sdk::SoftmaxOutputLayout l = sdk::LayOutSoftmaxOutput(s.op_name, data.shape, label.shape, a);
    fwd = AxisView{l.fwd.outer, l.fwd.len, l.fwd.inner};
    bwd = AxisView{l.bwd.outer, l.bwd.len, l.bwd.inner};
    prob_label = l.prob_label;
    scale = l.scale;
    ignore_label = a.ignore_label;
    use_ignore = a.use_ignore;
    norm_valid = a.normalization == sdk::GradNormalization::kValid;
  }
};

template <class L>
class SoftmaxOutputKernel {
 public:
  explicit SoftmaxOutputKernel(const KernelSetup& s) : p_((s.ExpectCounts(2, 1), s), s.inputs[0], s.inputs[1]) {
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      L::Map(c, p_.fwd.outer * p_.fwd.inner,
             SoftmaxRowMap<false, decltype(a)>{p_.fwd, 1.0f, L::template Ptr<const float>(c.inputs[0]),
                                               L::template Ptr<float>(c.outputs[0])});
    });
  }

 private:
  SoftmaxOutputParams p_;
};

// Inputs out_grad (ignored: a loss), data, label, output; outputs data grad, label grad (zeros).
template <class L>
class SoftmaxOutputBackwardKernel {
 public:
  explicit SoftmaxOutputBackwardKernel(const KernelSetup& s) : p_((s.ExpectCounts(4, 2), s), s.inputs[1], s.inputs[2]) {
    RequireFloat32(s);
  }
  void Compute(const DeviceCall& c) const {
    WithReq(c.req[0], [&](auto a) {
      if (p_.prob_label) {
        L::Map(c, c.outputs[0].size(),
               // a label of the output's shape holds probabilities: (y − label)·scale, the
               // regression heads' gradient
               RegressionGradMap<decltype(a)>{p_.scale, L::template Ptr<const float>(c.inputs[2]),
                                              L::template Ptr<const float>(c.inputs[3]),
                                              L::template Ptr<float>(c.outputs[0]), false});
        return;
      }
      L::Map(c, p_.bwd.outer * p_.bwd.inner,
             SoftmaxOutputGradMap<decltype(a)>{p_.bwd, p_.scale, p_.use_ignore, p_.norm_valid, p_.ignore_label,
                                               L::template Ptr<const float>(c.inputs[2]),
                                               L::template Ptr<const float>(c.inputs[3]),
                                               L::template Ptr<float>(c.outputs[0])});
    });
    WithReq(c.req[1], [&](auto a) {
      if constexpr (std::is_same_v<decltype(a), ReqWrite>)
        L::Map(c, c.outputs[1].size(), FillMap{L::template Ptr<float>(c.outputs[1]), 0.0f});
    });
  }

 private:
  SoftmaxOutputParams p_;
};

/// Registers softmax, log_softmax and their backward ops (RegisterGpuLayer, unless the plugin runs
/// them through a vendor library).
template <class L>
void RegisterSoftmaxKernels(sdk::KernelTable& t) {
  t.Add<SoftmaxKernel<L, false>>("softmax", kF32);
  t.Add<SoftmaxBackwardKernel<L, false>>("_backward_softmax", kF32);
  t.Add<SoftmaxKernel<L, true>>("log_softmax", kF32);
  t.Add<SoftmaxBackwardKernel<L, true>>("_backward_log_softmax", kF32);
}

/// Registers SoftmaxOutput and its backward op for launcher L.
template <class L>
void RegisterSoftmaxOutputKernels(sdk::KernelTable& t) {
  t.Add<SoftmaxOutputKernel<L>>("SoftmaxOutput", kF32);
  t.Add<SoftmaxOutputBackwardKernel<L>>("_backward_SoftmaxOutput", kF32);
}

}  // namespace weft::WEFT_GPU_NS

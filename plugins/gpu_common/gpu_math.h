// weft GPU kernel layer — the math of every GPU kernel, written once.
//
// Each kernel is a functor: a struct holding its pointers and parameters whose
// `WEFT_HD void operator()(int64_t i) const` computes work item i (an element, a row, a
// channel). A launcher runs it for i in [0, n) (the pattern of MXNet's
// mxnet_op::Kernel<OP, xpu>::Launch, where one Map runs on CPU and GPU):
//   gpu_launch_device.h   grid-stride loop on the GPU (nvcc / hipcc)
//   gpu_launch_host.h     a plain loop on the host (g++): the kernel layer's tests
// so the code that runs on a GPU is the code the CPU test suite checks against the cpu plugin.
//
// Formulas and conventions are the cpu plugin's (plugins/cpu/kernels, MXNet 1.9's): each functor
// names the cpu kernel it mirrors. `Assign` is ReqWrite (write / in-place) or ReqAdd (add-to).
// Work items never write memory another item reads, so in-place (output aliasing an input) is
// safe when the item reads its own element before writing it.
#pragma once

#include <math.h>
#include <stdint.h>

#include "gpu_elem.h"
#include "gpu_port.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::WEFT_GPU_NS {

/// This file, for the kernels whose math it holds (weft_kernel_def.math_files).
inline constexpr const char* kGpuMathSource = __FILE__;

WEFT_HD inline float ClipTo(float v, float c) { return c >= 0.0f ? fminf(fmaxf(v, -c), c) : v; }

// ---- add_n (cpu: elemwise_binary.cc) ---------------------------------------------------------

/// add_n (the KVStore's sum of device copies): out[i] = Σ_k in[k][i], k < count (≤ kMaxAddN).
inline constexpr int kMaxAddN = 16;
template <typename T, class Assign>
struct AddNMap {
  const T* in[kMaxAddN];
  int count;
  T* out;
  WEFT_HD void operator()(int64_t i) const {
    T s = in[0][i];
    for (int k = 1; k < count; ++k) s += in[k][i];
    Assign::Put(out[i], s);
  }
};

// ---- activations (cpu: nn_activation.cc) -------------------------------------------------------

enum class Act { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign, kLeaky, kElu, kSelu, kGelu };

// MXNet's SELU constants (mshadow_op.h) and the erf-form GELU's.
inline constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
inline constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
inline constexpr float kSqrt1_2 = 0.70710678118654752440f;
inline constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

WEFT_HD inline float ActForward(Act act, float slope, float x) {
  switch (act) {
    case Act::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Act::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Act::kTanh:
      return tanhf(x);
    case Act::kSoftRelu:
      return x > 20.0f ? x : log1pf(expf(x));
    case Act::kSoftSign:
      return x / (1.0f + fabsf(x));
    case Act::kLeaky:
      return x > 0.0f ? x : slope * x;
    case Act::kElu:
      return x > 0.0f ? x : slope * expm1f(x);
    case Act::kSelu:
      return kSeluLambda * (x > 0.0f ? x : kSeluAlpha * expm1f(x));
    case Act::kGelu:
      return 0.5f * x * (1.0f + erff(x * kSqrt1_2));
  }
  return 0.0f;
}

/// dL/dx from dL/dy = gy, the input x (may be unused) and the output y.
WEFT_HD inline float ActBackward(Act act, float slope, float gy, float x, float y) {
  switch (act) {
    case Act::kRelu:
      return y > 0.0f ? gy : 0.0f;
    case Act::kSigmoid:
      return gy * y * (1.0f - y);
    case Act::kTanh:
      return gy * (1.0f - y * y);
    case Act::kSoftRelu:
      return gy * -expm1f(-y);
    case Act::kSoftSign: {
      const float d = 1.0f + fabsf(x);
      return gy / (d * d);
    }
    case Act::kLeaky:
      return x > 0.0f ? gy : slope * gy;
    case Act::kElu:
      return x > 0.0f ? gy : gy * (y + slope);
    case Act::kSelu:  // MXNet 1.9's selu_grad below zero: lambda * (y + alpha)
      return gy * (x > 0.0f ? kSeluLambda : kSeluLambda * (y + kSeluAlpha));
    case Act::kGelu:
      return gy * (0.5f * (1.0f + erff(x * kSqrt1_2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x));
  }
  return 0.0f;
}

template <class Assign>
struct ActForwardMap {
  Act act;
  float slope;
  const float* x;
  float* y;
  WEFT_HD void operator()(int64_t i) const { Assign::Put(y[i], ActForward(act, slope, x[i])); }
};

/// `x` may be null when the activation's derivative needs only the output.
template <class Assign>
struct ActBackwardMap {
  Act act;
  float slope;
  const float* gy;
  const float* x;
  const float* y;
  float* gx;
  WEFT_HD void operator()(int64_t i) const {
    Assign::Put(gx[i], ActBackward(act, slope, gy[i], x != nullptr ? x[i] : 0.0f, y[i]));
  }
};

// ---- optimizer updates (cpu: optimizer.cc, MXNet's optimizer_op-inl.h) ----------------------

/// What every update shares: learning rate, weight decay, gradient rescale and clip.
struct UpdateParams {
  float lr = 0, wd = 0, rescale = 1, clip = -1;
  WEFT_HD float Clip(float g) const { return ClipTo(g, clip); }
};

using Update = sdk::UpdateRule;

/// The update of one element: reads w and g, advances the states s0..s2 (as many as the rule has)
/// and returns the new weight. `h` holds the rule's extra attributes (momentum or beta1, beta2,
/// gamma1, gamma2, epsilon, clip_weights), named by the rule below.
struct UpdateExtra {
  float a = 0, b = 0, c = 0, eps = 0, clip_weights = -1;
};

template <Update U>
WEFT_HD inline float UpdateRule(const UpdateParams& p, const UpdateExtra& h, float w, float g, float* s0, float* s1,
                                float* s2) {
  if constexpr (U == Update::kSgd) {  // w' = (1 − lr·wd)·w − lr·clip(rescale·g)
    return (1.0f - p.lr * p.wd) * w - p.lr * p.Clip(p.rescale * g);
  } else if constexpr (U == Update::kSgdMom) {  // h.a = momentum
    *s0 = h.a * *s0 - p.lr * p.wd * w - p.lr * p.Clip(p.rescale * g);
    return w + *s0;
  } else if constexpr (U == Update::kNagMom) {  // h.a = momentum
    const float gi = p.Clip(p.rescale * g) + p.wd * w;
    const float m = h.a * *s0;
    *s0 = m - p.lr * gi;
    return w - m + (h.a + 1.0f) * (m - p.lr * gi);
  } else if constexpr (U == Update::kAdam) {  // h.a = beta1, h.b = beta2; s0 mean, s1 var
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = h.a * *s0 + (1.0f - h.a) * gi;
    *s1 = h.b * *s1 + (1.0f - h.b) * gi * gi;
    return w - p.lr * *s0 / (sqrtf(*s1) + h.eps);
  } else if constexpr (U == Update::kRmsProp) {  // h.a = gamma1; s0 n
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = (1.0f - h.a) * (gi * gi) + h.a * *s0;
    return ClipTo(w - p.lr * (gi / sqrtf(*s0 + h.eps)), h.clip_weights);
  } else {  // kRmsPropAlex: h.a = gamma1, h.b = gamma2; s0 n, s1 g, s2 delta
    const float gi = p.Clip(p.rescale * g + p.wd * w);
    *s0 = (1.0f - h.a) * gi * gi + h.a * *s0;
    *s1 = (1.0f - h.a) * gi + h.a * *s1;
    *s2 = h.b * *s2 - p.lr * gi / sqrtf(*s0 - *s1 * *s1 + h.eps);
    return ClipTo(w + *s2, h.clip_weights);
  }
}

/// <name>_update: out[i] = rule(w[i], g[i]); states advance even when `out` is null (req null).
template <Update U, class Assign>
struct UpdateMap {
  UpdateParams p;
  UpdateExtra h;
  const float* w;
  const float* g;
  float* s0;
  float* s1;
  float* s2;
  float* out;  // null: req null
  WEFT_HD void operator()(int64_t i) const {
    float dummy = 0;
    const float wi = UpdateRule<U>(p, h, w[i], g[i], s0 ? s0 + i : &dummy, s1 ? s1 + i : &dummy, s2 ? s2 + i : &dummy);
    if (out != nullptr) Assign::Put(out[i], wi);
  }
};

// ---- 2-bit gradient compression (cpu: gradient_compression.cc) ------------------------------

/// Bit position of element i's code in its uint32 word (MXNet's layout).
WEFT_HD inline int CodeShift(int64_t i) { return static_cast<int>(8 * ((i % 16) / 4) + 6 - 2 * (i % 4)); }

/// _quantize_2bit: work item = one 32-bit word (16 values), so no two items write one word.
struct Quantize2BitMap {
  const float* data;
  float* residual;
  uint32_t* out;  // null: req null (the residual still advances)
  int64_t n;
  float threshold;
  WEFT_HD void operator()(int64_t w) const {
    uint32_t word = 0;
    const int64_t end = n < w * 16 + 16 ? n : w * 16 + 16;
    for (int64_t i = w * 16; i < end; ++i) {
      float r = residual[i] + data[i];
      uint32_t code = 0;
      if (r >= threshold) {
        code = 3u;
        r -= threshold;
      } else if (r <= -threshold) {
        code = 2u;
        r += threshold;
      }
      residual[i] = r;
      word |= code << CodeShift(i);
    }
    if (out != nullptr) out[w] = word;
  }
};

template <class Assign>
struct Dequantize2BitMap {
  const uint32_t* in;
  float* out;
  float threshold;
  WEFT_HD void operator()(int64_t i) const {
    const uint32_t code = (in[i / 16] >> CodeShift(i)) & 3u;
    Assign::Put(out[i], code == 3u ? threshold : code == 2u ? -threshold : 0.0f);
  }
};

// ---- softmax (cpu: softmax.cc) --------------------------------------------------------------

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

// ---- small helpers of the dense ops ------------------------------------------------------------

/// y[i·h + j] += b[j] (FullyConnected's bias), item = element.
struct AddBiasMap {
  const float* b;
  float* y;
  int64_t h;
  WEFT_HD void operator()(int64_t i) const { y[i] += b[i % h]; }
};

/// gb[j] (=|+=) Σ_i gy[i·h + j] (FullyConnected's bias gradient), item = column.
template <class Assign>
struct ColumnSumMap {
  const float* gy;
  float* gb;
  int64_t n, h;
  WEFT_HD void operator()(int64_t j) const {
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += gy[i * h + j];
    Assign::Put(gb[j], s);
  }
};

/// out[i] = value (write) or out[i] += 0 (add: nothing to do; the launcher skips it).
struct FillMap {
  float* out;
  float value;
  WEFT_HD void operator()(int64_t i) const { out[i] = value; }
};

}  // namespace weft::WEFT_GPU_NS

// softmax / log_softmax (axis, temperature) and SoftmaxOutput, forward and backward.
// softmax(x)_i = exp((x_i − max)/T) / Σ_j exp((x_j − max)/T); log_softmax = log of it.
// Backward (MXNet 1.9): softmax gx = y ⊙ (gy − Σ gy⊙y) / T; log_softmax gx = (gy − e^y Σ gy) / T.
// SoftmaxOutput is a loss: its backward ignores out_grad and makes (softmax − one_hot(label)) ·
// grad_scale / norm (see OPS.md).
#include <algorithm>
#include <cmath>
#include <vector>

#include "isa_dispatch.h"
#include "nn_common.h"
#include "vector_math.h"
#include "weft/sdk/ops/softmax.hpp"

namespace weft::cpu {
namespace {

// A tensor viewed as (outer, len, inner) around one axis.
using AxisView = weft::sdk::AxisSplit;

AxisView ViewAround(const KernelSetup& s, const TensorDesc& t, int64_t axis) {
  return weft::sdk::SplitAtAxis(s.op_name, t.shape, axis);
}

// Softmax (or log-softmax) of one strided row of `len` elements into `out` via assign. Each
// e^((x - max) / T) is computed once, by the vectorisable vmath::Exp (two libm calls per element
// were most of a 100x10 SoftmaxOutput's time); the sum stays in double.
template <bool kLog, typename Assign>
void SoftmaxRow(const float* x, float* out, int64_t len, int64_t stride, float inv_t, Assign assign) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < len; ++j) mx = std::max(mx, x[j * stride]);
  thread_local std::vector<float> e;
  e.resize(static_cast<size_t>(len));
  for (int64_t j = 0; j < len; ++j) e[static_cast<size_t>(j)] = vmath::Exp((x[j * stride] - mx) * inv_t);
  double sum = 0;
  for (int64_t j = 0; j < len; ++j) sum += e[static_cast<size_t>(j)];
  if constexpr (kLog) {
    float lse = static_cast<float>(std::log(sum));
    for (int64_t j = 0; j < len; ++j) assign(out[j * stride], (x[j * stride] - mx) * inv_t - lse);
  } else {
    float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < len; ++j) assign(out[j * stride], e[static_cast<size_t>(j)] * inv);
  }
}

// Softmax of `rows` contiguous rows of `len` (inner 1), written over `out` (req write; out may be
// x). Same values as SoftmaxRow, but the exponentials of the whole block are one loop: with few
// classes (an MNIST classifier's 10) each row's own Exp loop was a short vector pass plus a scalar
// tail, most of a 100x10 SoftmaxOutput's time. Used up to kBlockRowsElems elements (256 KiB, in L2
// across its three passes; a 32x1000 ImageNet head: 74 us a call against 83 row by row): a larger
// block would stream memory three times, so it stays row by row.
constexpr int64_t kBlockRowsElems = 65536;
void SoftmaxRowsWrite(const float* x, float* out, int64_t rows, int64_t len, float inv_t) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = out + r * len;
    float mx = -INFINITY;
    for (int64_t j = 0; j < len; ++j) mx = std::max(mx, xr[j]);
    for (int64_t j = 0; j < len; ++j) yr[j] = (xr[j] - mx) * inv_t;
  }
  const int64_t n = rows * len;
  for (int64_t i = 0; i < n; ++i) out[i] = vmath::Exp(out[i]);
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = out + r * len;
    double sum = 0;
    for (int64_t j = 0; j < len; ++j) sum += yr[j];
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < len; ++j) yr[j] *= inv;
  }
}

// softmax over every row of view v, through assign (the req), in the active ISA.
template <bool kLog>
void SoftmaxRows(const float* x, float* y, const AxisView& v, float inv_t, int32_t req) {
  isa::Dispatch([&] {
    const bool overwrite = req == WEFT_REQ_WRITE || req == WEFT_REQ_WRITE_INPLACE;
    if (!kLog && v.inner == 1 && overwrite && v.outer * v.len <= kBlockRowsElems)
      return SoftmaxRowsWrite(x, y, v.outer, v.len, inv_t);
    weft::sdk::WithReq(req, [&](auto assign) {
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t base = o * v.len * v.inner + i;
          SoftmaxRow<kLog>(x + base, y + base, v.len, v.inner, inv_t, assign);
        }
    });
  });
}

template <bool kLog>
class SoftmaxForward {
 public:
  explicit SoftmaxForward(const KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const auto p = s.Params<weft::sdk::SoftmaxParam>();
    v_ = ViewAround(s, s.inputs[0], p.axis);
    inv_t_ = p.InverseTemperature();
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    if (weft::sdk::IsNull(c.req[0])) return;
    // In-place is safe: each row is fully read (max, sum) before it is written, except the final
    // pass, which reads and writes the same element (SoftmaxRowsWrite: each element is read just
    // before it is overwritten).
    SoftmaxRows<kLog>(x, y, v_, inv_t_, c.req[0]);
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

// _backward_softmax / _backward_log_softmax: inputs out_grad, output; output data grad.
template <bool kLog>
class SoftmaxBackward {
 public:
  explicit SoftmaxBackward(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    if (s.inputs[1].size() != s.inputs[0].size()) Invalid(s, "out_grad and output differ in size");
    const auto p = s.Params<weft::sdk::SoftmaxParam>();
    v_ = ViewAround(s, s.inputs[1], p.axis);
    inv_t_ = p.InverseTemperature();
  }
  void Compute(const KernelCall& c) const {
    const float* gy = c.inputs[0].data<float>();
    const float* y = c.inputs[1].data<float>();
    float* gx = c.outputs[0].data<float>();
    const int64_t st = v_.inner;
    isa::Dispatch([&] {
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t o = 0; o < v_.outer; ++o)
          for (int64_t i = 0; i < v_.inner; ++i) {
            int64_t b = o * v_.len * v_.inner + i;
            double dot = 0;
            for (int64_t j = 0; j < v_.len; ++j)
              dot += kLog ? static_cast<double>(gy[b + j * st]) : static_cast<double>(gy[b + j * st]) * y[b + j * st];
            float d = static_cast<float>(dot);
            for (int64_t j = 0; j < v_.len; ++j) {
              int64_t k = b + j * st;
              float g = kLog ? gy[k] - std::exp(y[k]) * d : y[k] * (gy[k] - d);
              assign(gx[k], g * inv_t_);
            }
          }
      });
    });
  }

 private:
  AxisView v_;
  float inv_t_ = 1.0f;
};

// SoftmaxOutput's rows and gradient scale: the SDK's LayOutSoftmaxOutput (MXNet 1.9's layout,
// one definition for every backend).
struct SoftmaxOutputParams {
  weft::sdk::SoftmaxOutputLayout l;
  float ignore_label = -1.0f;
  bool use_ignore = false, norm_valid = false;
};

SoftmaxOutputParams ParseSoftmaxOutput(const KernelSetup& s, const TensorDesc& data, const TensorDesc& label) {
  const auto a = s.Params<weft::sdk::SoftmaxOutputParam>();
  SoftmaxOutputParams p;
  p.l = weft::sdk::LayOutSoftmaxOutput(s.op_name, data.shape, label.shape, a);
  p.ignore_label = a.ignore_label;
  p.use_ignore = a.use_ignore;
  p.norm_valid = a.normalization == weft::sdk::GradNormalization::kValid;
  return p;
}

// Forward: inputs data, label; output the softmax.
class SoftmaxOutputForward {
 public:
  explicit SoftmaxOutputForward(const KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    p_ = ParseSoftmaxOutput(s, s.inputs[0], s.inputs[1]);
  }
  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    float* y = c.outputs[0].data<float>();
    if (weft::sdk::IsNull(c.req[0])) return;
    SoftmaxRows<false>(x, y, p_.l.fwd, 1.0f, c.req[0]);
  }

 private:
  SoftmaxOutputParams p_;
};

// Backward: inputs out_grad (ignored), data, label, output; outputs data grad, label grad (0).
class SoftmaxOutputBackward {
 public:
  explicit SoftmaxOutputBackward(const KernelSetup& s) {
    s.ExpectCounts(4, 2);
    RequireFloat32(s);
    p_ = ParseSoftmaxOutput(s, s.inputs[1], s.inputs[2]);
  }
  void Compute(const KernelCall& c) const {
    const float* label = c.inputs[2].data<float>();
    const float* y = c.inputs[3].data<float>();
    float* gx = c.outputs[0].data<float>();
    if (p_.l.prob_label) {
      weft::sdk::WithReq(c.req[0], [&](auto assign) {
        for (int64_t i = 0, n = c.outputs[0].size(); i < n; ++i) assign(gx[i], (y[i] - label[i]) * p_.l.scale);
      });
    } else {
      ClassLabelGrad(label, y, gx, c.req[0]);
    }
    weft::sdk::FillReq(c.req[1], c.outputs[1].data<float>(), 0.0f, c.outputs[1].size());
  }

 private:
  // (y − one_hot(label))·scale per backward row; ignored rows get 0.
  void ClassLabelGrad(const float* label, const float* y, float* gx, int32_t req) const {
    const AxisView& v = p_.l.bwd;
    const int64_t rows = v.outer * v.inner;  // label i belongs to row (i / inner, i % inner)
    int64_t valid = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const bool ignored = p_.use_ignore && label[i] == p_.ignore_label;
      const int64_t k = static_cast<int64_t>(label[i]);
      if (!ignored && (k < 0 || k >= v.len))
        throw Error(WEFT_ERR_INVALID_ARGUMENT, "SoftmaxOutput: label " + std::to_string(label[i]) + " at " +
                                                   std::to_string(i) + " is outside [0, " + std::to_string(v.len) +
                                                   ") (set use_ignore/ignore_label to skip it, or give a " +
                                                   "probability label of the output's shape)");
      valid += ignored ? 0 : 1;
    }
    const float scale = p_.norm_valid ? p_.l.scale / static_cast<float>(std::max<int64_t>(valid, 1)) : p_.l.scale;
    weft::sdk::WithReq(req, [&](auto assign) {
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = (r / v.inner) * v.len * v.inner + r % v.inner;
        const bool ignored = p_.use_ignore && label[r] == p_.ignore_label;
        const int64_t k = static_cast<int64_t>(label[r]);
        for (int64_t j = 0; j < v.len; ++j) {
          const int64_t at = base + j * v.inner;
          assign(gx[at], ignored ? 0.0f : (y[at] - (j == k ? 1.0f : 0.0f)) * scale);
        }
      }
    });
  }

  SoftmaxOutputParams p_;
};

}  // namespace

void RegisterSoftmax(KernelTable& t) {
  t.Add<SoftmaxForward<false>>("softmax", kF32);
  t.Add<SoftmaxBackward<false>>("_backward_softmax", kF32);
  t.Add<SoftmaxForward<true>>("log_softmax", kF32);
  t.Add<SoftmaxBackward<true>>("_backward_log_softmax", kF32);
  t.Add<SoftmaxOutputForward>("SoftmaxOutput", kF32);
  t.Add<SoftmaxOutputBackward>("_backward_SoftmaxOutput", kF32);
}

}  // namespace weft::cpu

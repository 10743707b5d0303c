// vulkan plugin — Convolution, Deconvolution and Pooling (1-D NCW and 2-D NCHW; 1-D runs as
// H = 1): im2col + GEMM (shaders/im2col.comp, col2im.comp, gemm4.comp) with the direct shaders
// (Convolution.comp, _backward_Convolution.comp) for convolutions too large for the columns;
// Pooling.comp, _backward_Pooling.comp. Geometry and semantics as the CPU plugin's kernels
// (MXNet 1.9).
#include <algorithm>
#include <span>
#include <vector>

#include "vk_kernels.h"
#include "weft/sdk/ops/convolution.hpp"
#include "weft/sdk/ops/pooling.hpp"

namespace weft::vk {
namespace {

struct ConvPush {
  uint32_t n, c, h, w, f, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, g;
};

// The shaders' push constants of a convolution geometry (weft/sdk/ops/convolution.hpp).
ConvPush PushOf(const sdk::ConvGeometry& g) {
  return {U32(g.n),  U32(g.c),  U32(g.h),  U32(g.w),  U32(g.f),  U32(g.oh), U32(g.ow), U32(g.kh),
          U32(g.kw), U32(g.sh), U32(g.sw), U32(g.ph), U32(g.pw), U32(g.dh), U32(g.dw), U32(g.groups)};
}

std::span<const int64_t> ShapeOrNone(const sdk::KernelSetup& s, size_t i) {
  return i < s.inputs.size() ? std::span<const int64_t>(s.inputs[i].shape) : std::span<const int64_t>();
}

// A Convolution node whose data, weight[, bias] are inputs `first`... and whose output (out_grad
// for the backward) is y.
ConvPush ParseConv(const sdk::KernelSetup& s, size_t first, const sdk::TensorDesc& y, bool& bias) {
  const sdk::ConvGeometry g = sdk::ConvolutionGeometry(s.op_name, s.Params<sdk::ConvolutionParam>(),
                                                       s.inputs[first].shape, s.inputs[first + 1].shape,
                                                       ShapeOrNone(s, first + 2), s.inputs.size() > first + 2, y.shape);
  bias = g.bias;
  return PushOf(g);
}

// im2col geometry of a convolution: rows = channels x kernel taps per group, pixels per image.
struct ColPlan {
  uint64_t ohow = 0, kk = 0, cg = 0, fg = 0, rows_g = 0;
  uint64_t rows = 0;   // im2col rows per image (all groups; padded to 4 for one group)
  uint64_t chunk = 0;  // images per forward im2col pass
  bool pad_w = false;  // the forward copies the weight with rows padded to `rows` columns
};

// Largest im2col buffer, in floats (64 MiB, half of lavapipe's maxStorageBufferRange): bigger
// convolutions are done in chunks of images (forward) or by the direct shaders (backward).
constexpr uint64_t kMaxColFloats = uint64_t{16} << 20;

ColPlan PlanCol(const ConvPush& p) {
  ColPlan c;
  c.ohow = uint64_t{p.oh} * p.ow;
  c.kk = uint64_t{p.kh} * p.kw;
  c.cg = p.c / p.g;
  c.fg = p.f / p.g;
  c.rows_g = c.cg * c.kk;
  c.rows = p.c * c.kk;
  // One group: pad K to a multiple of 4 (zero rows in col, zero columns in a copy of the
  // weight) so gemm4.comp takes it.
  if (p.g == 1 && c.rows % 4 != 0) c.pad_w = true, c.rows = (c.rows + 3) / 4 * 4, c.rows_g = c.rows;
  const uint64_t per_image = std::max<uint64_t>(1, c.rows * c.ohow);
  c.chunk = std::clamp<uint64_t>(kMaxColFloats / per_image, 0, p.n);
  return c;
}

struct ColPush {
  uint32_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, rows_or_add, row_stride, img_stride;
};

ColPush MakeColPush(const ConvPush& p, uint32_t n, uint64_t rows_or_add, uint64_t row_stride, uint64_t img_stride) {
  return {n,
          p.c,
          p.h,
          p.w,
          p.oh,
          p.ow,
          p.kh,
          p.kw,
          p.sh,
          p.sw,
          p.ph,
          p.pw,
          p.dh,
          p.dw,
          static_cast<uint32_t>(rows_or_add),
          static_cast<uint32_t>(row_stride),
          static_cast<uint32_t>(img_stride)};
}

void Im2col(const sdk::DeviceCall& c, const ConvPush& p, const Binding& x, const Binding& col, uint32_t n,
            uint64_t rows, uint64_t row_stride, uint64_t img_stride) {
  const ColPush push = MakeColPush(p, n, rows, row_stride, img_stride);
  Binding xt = x;
  xt.texel = xt.scalar_texel = true;
  const Binding b[2] = {xt, col};
  Dispatch(c, Launch{"im2col", {}, Groups64(static_cast<int64_t>(n * rows))}, b, push);
}

// The im2col algorithm of one convolution geometry, on bindings: Convolution runs it directly and
// Deconvolution with the roles swapped (its forward is this convolution's data gradient, its
// data gradient this convolution's forward, its weight gradient this convolution's weight
// gradient with data and out_grad exchanged). Convolutions whose columns do not fit
// kMaxColFloats use the direct shaders.
class ConvAlgo {
 public:
  explicit ConvAlgo(const ConvPush& p) : p_(p), col_(PlanCol(p)) {
    ohow_ = uint64_t{p_.oh} * p_.ow;
    rows_ = uint64_t{p_.c} * p_.kh * p_.kw;
    back_im2col_ = rows_ * p_.n * ohow_ <= kMaxColFloats;
  }
  const ConvPush& geometry() const { return p_; }
  // Forward: the im2col buffer for `chunk` images, then the padded weight.
  uint64_t ForwardWorkspace() const {
    if (col_.chunk == 0) return 0;
    return 4 * (col_.chunk * col_.rows * col_.ohow + (col_.pad_w ? uint64_t{p_.f} * col_.rows : 0));
  }
  // Backward: dy transposed (F, N·ohow) and the columns of the whole batch.
  uint64_t BackwardWorkspace() const { return back_im2col_ ? 4 * (uint64_t{p_.f} + rows_) * p_.n * ohow_ : 0; }

  // y (=|+=) conv(x, w) (+ bias per filter).
  void Forward(const sdk::DeviceCall& c, const Binding& x, Binding w, const Binding* bias, const Binding& y,
               int32_t req, const Binding& ws) const {
    if (sdk::IsNull(req) || y.bytes == 0) return;
    if (col_.chunk == 0) return DirectForward(c, x, w, bias, y, req);
    const uint64_t col_floats = col_.chunk * col_.rows * col_.ohow;
    if (col_.pad_w) {
      const Binding wpad = At(ws, col_floats);
      ZeroFill(c, wpad, uint64_t{p_.f} * col_.rows * 4);
      const int64_t dims[2] = {p_.f, static_cast<int64_t>(p_.c * col_.kk)};
      const int64_t src[2] = {dims[1], 1}, dst[2] = {static_cast<int64_t>(col_.rows), 1};
      StridedCopy(c, dims, w, src, wpad, dst, WEFT_REQ_WRITE);
      w = wpad;
      w.write = false;
    }
    Binding col = ws;
    col.bytes = col_floats * 4;
    const uint64_t img_x = uint64_t{p_.c} * p_.h * p_.w, img_y = uint64_t{p_.f} * col_.ohow;
    for (uint64_t n0 = 0; n0 < p_.n; n0 += col_.chunk) {
      const uint32_t cnt = static_cast<uint32_t>(std::min<uint64_t>(col_.chunk, p_.n - n0));
      Im2col(c, p_, At(x, n0 * img_x), col, cnt, col_.rows, col_.ohow, col_.rows * col_.ohow);
      Binding colr = col;
      colr.write = false;
      for (uint32_t g = 0; g < p_.g; ++g) {
        // y[img, g] (fg x ohow) = W_g (fg x rows_g) · col[img, g] (rows_g x ohow) (+ bias per row)
        GemmArgs a{static_cast<uint32_t>(col_.fg), static_cast<uint32_t>(col_.ohow),
                   static_cast<uint32_t>(col_.rows_g)};
        a.batch = cnt;
        a.sb = static_cast<uint32_t>(col_.rows * col_.ohow);
        a.sc = static_cast<uint32_t>(img_y);
        a.bias_rows = 1;
        const Binding b = bias != nullptr ? At(*bias, g * col_.fg) : Binding{};
        Gemm(c, a, At(w, g * col_.fg * col_.rows_g), At(colr, g * col_.rows_g * col_.ohow),
             At(y, n0 * img_y + g * col_.fg * col_.ohow), req, bias != nullptr ? &b : nullptr);
      }
    }
  }

  // dx (=|+=) the data gradient and dw (=|+=) the weight gradient of dy; x is read only for dw,
  // w only for dx. With im2col: dy is transposed to dy' (F, N·ohow), then dW_g = dy'_g · col_gᵀ
  // and dcol_g = W_gᵀ · dy'_g (one GEMM per group each) and col2im.
  void Backward(const sdk::DeviceCall& c, const Binding& dy, const Binding& x, const Binding& w, const Binding& dx,
                int32_t req_x, const Binding& dw, int32_t req_w, const Binding& ws) const {
    const bool gx = !sdk::IsNull(req_x), gw = !sdk::IsNull(req_w);
    if (!back_im2col_ || p_.n == 0 || ohow_ == 0) {
      if (gx) DirectBackward(c, 0, dy, dy, w, dx, req_x);
      if (gw) DirectBackward(c, 1, dy, x, dy, dw, req_w);
      return;
    }
    if (!gx && !gw) return;
    const uint64_t cols = uint64_t{p_.n} * ohow_, fg = p_.f / p_.g, rg = rows_ / p_.g;
    Binding dyt = ws, col = At(ws, uint64_t{p_.f} * cols);
    dyt.bytes = uint64_t{p_.f} * cols * 4;
    const int64_t dims[3] = {p_.n, p_.f, static_cast<int64_t>(ohow_)};
    const int64_t src[3] = {static_cast<int64_t>(p_.f * ohow_), static_cast<int64_t>(ohow_), 1};
    const int64_t dst[3] = {static_cast<int64_t>(ohow_), static_cast<int64_t>(cols), 1};
    StridedCopy(c, dims, dy, src, dyt, dst, WEFT_REQ_WRITE);
    Binding dytr = dyt, colr = col;
    dytr.write = colr.write = false;
    if (gw) {
      Im2col(c, p_, x, col, p_.n, rows_, cols, ohow_);
      for (uint32_t g = 0; g < p_.g; ++g) {
        GemmArgs a{static_cast<uint32_t>(fg), static_cast<uint32_t>(rg), static_cast<uint32_t>(cols)};
        a.tb = true;
        Gemm(c, a, At(dytr, g * fg * cols), At(colr, g * rg * cols), At(dw, g * fg * rg), req_w, nullptr);
      }
    }
    if (gx) {
      for (uint32_t g = 0; g < p_.g; ++g) {
        GemmArgs a{static_cast<uint32_t>(rg), static_cast<uint32_t>(cols), static_cast<uint32_t>(fg)};
        a.ta = true;
        Gemm(c, a, At(w, g * fg * rg), At(dytr, g * fg * cols), At(col, g * rg * cols), WEFT_REQ_WRITE, nullptr);
      }
      const ColPush push = MakeColPush(p_, p_.n, AddFlag(req_x), cols, ohow_);
      Binding colt = colr;
      colt.texel = colt.scalar_texel = true;
      const Binding b[2] = {colt, dx};
      Dispatch(c, Launch{"col2im", {}, Groups64(int64_t{p_.n} * p_.c * p_.h)}, b, push);
    }
  }

  // db (=|+=) the sum of dy over images and positions, per filter.
  void BackwardBias(const sdk::DeviceCall& c, const Binding& dy, const Binding& db, int32_t req) const {
    if (!sdk::IsNull(req)) DirectBackward(c, 2, dy, dy, dy, db, req);
  }

 private:
  // The direct shader (convolutions whose im2col of one image exceeds kMaxColFloats).
  void DirectForward(const sdk::DeviceCall& c, const Binding& x, const Binding& w, const Binding* bias,
                     const Binding& y, int32_t req) const {
    struct {
      ConvPush p;
      uint32_t has_bias, add;
    } push{p_, bias != nullptr ? 1u : 0u, AddFlag(req)};
    const Binding b[4] = {x, w, bias != nullptr ? *bias : w, y};
    Dispatch(c, Launch{"Convolution", {}, Groups64(static_cast<int64_t>(y.bytes / 4))}, b, push);
  }
  // _backward_Convolution.comp's mode: 0 data (reads dy, w), 1 weight (dy, x), 2 bias (dy).
  void DirectBackward(const sdk::DeviceCall& c, int32_t mode, const Binding& dy, const Binding& x, const Binding& w,
                      const Binding& out, int32_t req) const {
    struct {
      ConvPush p;
      uint32_t add;
    } push{p_, AddFlag(req)};
    const Binding b[4] = {dy, x, w, out};
    const int32_t spec[1] = {mode};
    Dispatch(c, Launch{"_backward_Convolution", spec, Groups64(static_cast<int64_t>(out.bytes / 4))}, b, push);
  }

  ConvPush p_;
  ColPlan col_;
  uint64_t ohow_ = 0, rows_ = 0;
  bool back_im2col_ = false;
};

// The bindings of a kernel call's tensors.
Binding InAt(const sdk::DeviceCall& c, size_t i) { return In(c.inputs[i]); }
Binding OutAt(const sdk::DeviceCall& c, size_t i) { return Out(c.outputs[i]); }

class ConvForward {
 public:
  explicit ConvForward(const sdk::KernelSetup& s) : algo_(Parse(s, bias_)) { s.ExpectCounts(bias_ ? 3 : 2, 1); }
  uint64_t WorkspaceBytes() const { return algo_.ForwardWorkspace(); }
  void Compute(const sdk::DeviceCall& c) const {
    const Binding bias = bias_ ? InAt(c, 2) : Binding{};
    algo_.Forward(c, InAt(c, 0), InAt(c, 1), bias_ ? &bias : nullptr, OutAt(c, 0), c.req[0], Workspace(c, true));
  }

 private:
  static ConvPush Parse(const sdk::KernelSetup& s, bool& bias) {
    RequireFloat32(s);
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    return ParseConv(s, 0, s.outputs[0], bias);
  }
  bool bias_ = true;
  ConvAlgo algo_;
};

// Inputs out_grad, data, weight[, bias]; outputs data, weight[, bias] gradients.
class ConvBackward {
 public:
  explicit ConvBackward(const sdk::KernelSetup& s) : algo_(Parse(s, bias_)) {
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
  }
  uint64_t WorkspaceBytes() const { return algo_.BackwardWorkspace(); }
  void Compute(const sdk::DeviceCall& c) const {
    algo_.Backward(c, InAt(c, 0), InAt(c, 1), InAt(c, 2), OutAt(c, 0), c.req[0], OutAt(c, 1), c.req[1],
                   Workspace(c, true));
    if (bias_) algo_.BackwardBias(c, InAt(c, 0), OutAt(c, 2), c.req[2]);
  }

 private:
  static ConvPush Parse(const sdk::KernelSetup& s, bool& bias) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    return ParseConv(s, 1, s.inputs[0], bias);
  }
  bool bias_ = true;
  ConvAlgo algo_;
};

// The convolution behind a Deconvolution node (sdk::DeconvolutionGeometry) whose data,
// weight[, bias] are inputs `first`... and whose output (out_grad for the backward) is y.
ConvPush ParseDeconv(const sdk::KernelSetup& s, const sdk::DeconvolutionParam& p, size_t first,
                     const sdk::TensorDesc& y) {
  return PushOf(sdk::DeconvolutionGeometry(s.op_name, p, s.inputs[first].shape, s.inputs[first + 1].shape,
                                           ShapeOrNone(s, first + 2), !p.no_bias && s.inputs.size() > first + 2,
                                           y.shape));
}

// dst (N, C, plane) += bias[C] (the Deconvolution's bias, per output channel).
void AddChannelBias(const sdk::DeviceCall& c, const ConvPush& p, const Binding& bias, const Binding& dst) {
  const int64_t plane = int64_t{p.h} * p.w;
  const int64_t dims[3] = {p.n, p.c, plane};
  const int64_t src[3] = {0, 1, 0}, dst_st[3] = {int64_t{p.c} * plane, plane, 1};
  StridedCopy(c, dims, bias, src, dst, dst_st, WEFT_REQ_ADD);
}

// Deconvolution: inputs data, weight[, bias] (no_bias defaults to True, as in MXNet).
class DeconvForward {
 public:
  explicit DeconvForward(const sdk::KernelSetup& s) : algo_(Parse(s, bias_)) { s.ExpectCounts(bias_ ? 3 : 2, 1); }
  uint64_t WorkspaceBytes() const { return algo_.BackwardWorkspace(); }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const Binding x = InAt(c, 0), y = OutAt(c, 0);
    algo_.Backward(c, x, x, InAt(c, 1), y, c.req[0], y, WEFT_REQ_NULL, Workspace(c, true));
    if (bias_) AddChannelBias(c, algo_.geometry(), InAt(c, 2), y);
  }

 private:
  static ConvPush Parse(const sdk::KernelSetup& s, bool& bias) {
    RequireFloat32(s);
    const auto p = s.Params<sdk::DeconvolutionParam>();
    bias = !p.no_bias;
    if (s.inputs.size() != (bias ? 3u : 2u) || s.outputs.size() != 1)
      Invalid(s, bias ? "expects data, weight, bias and one output" : "expects data, weight and one output");
    return ParseDeconv(s, p, 0, s.outputs[0]);
  }
  bool bias_ = false;
  ConvAlgo algo_;
};

// _backward_Deconvolution: inputs out_grad, data, weight[, bias]; outputs data, weight[, bias]
// gradients: gx = conv(gy, W), gW = the convolution's weight gradient with x as its out_grad and
// gy as its data, gb = gy summed per channel.
class DeconvBackward {
 public:
  explicit DeconvBackward(const sdk::KernelSetup& s) : algo_(Parse(s, bias_)) {
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
  }
  uint64_t WorkspaceBytes() const { return std::max(algo_.ForwardWorkspace(), algo_.BackwardWorkspace()); }
  void Compute(const sdk::DeviceCall& c) const {
    const Binding gy = InAt(c, 0), x = InAt(c, 1), w = InAt(c, 2), ws = Workspace(c, true);
    algo_.Forward(c, gy, w, nullptr, OutAt(c, 0), c.req[0], ws);
    algo_.Backward(c, x, gy, w, OutAt(c, 0), WEFT_REQ_NULL, OutAt(c, 1), c.req[1], ws);
    if (!bias_ || sdk::IsNull(c.req[2])) return;
    const ConvPush& p = algo_.geometry();
    const int64_t plane = int64_t{p.h} * p.w;
    const int64_t dims[3] = {p.n, p.c, plane};
    const int64_t src[3] = {int64_t{p.c} * plane, plane, 1}, dst[3] = {0, 1, 0};
    const bool reduced[3] = {true, false, true};
    StridedSum(c, dims, gy, src, OutAt(c, 2), dst, reduced, c.req[2]);
  }

 private:
  static ConvPush Parse(const sdk::KernelSetup& s, bool& bias) {
    RequireFloat32(s);
    const auto p = s.Params<sdk::DeconvolutionParam>();
    bias = !p.no_bias;
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    return ParseDeconv(s, p, 1, s.inputs[0]);
  }
  bool bias_ = false;
  ConvAlgo algo_;
};

struct PoolPush {
  uint32_t nc, h, w, oh, ow, kh, kw, sh, sw, ph, pw, include_pad;
};

PoolPush ParsePool(const sdk::KernelSetup& s, const sdk::TensorDesc& x, const sdk::TensorDesc& y, int32_t& type) {
  const sdk::PoolGeometry g = sdk::PoolingGeometry(s.op_name, s.Params<sdk::PoolingParam>(), x.shape, y.shape);
  type = static_cast<int32_t>(g.type);  // Pooling.comp's 0 max, 1 avg, 2 sum
  return {U32(g.n * g.c), U32(g.ih), U32(g.iw), U32(g.oh), U32(g.ow), U32(g.kh),
          U32(g.kw),      U32(g.sh), U32(g.sw), U32(g.ph), U32(g.pw), g.count_include_pad ? 1u : 0u};
}

class PoolForward {
 public:
  explicit PoolForward(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    p_ = ParsePool(s, s.inputs[0], s.outputs[0], type_);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    struct {
      PoolPush p;
      uint32_t add;
    } push{p_, AddFlag(c.req[0])};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    const int32_t spec[1] = {type_};
    Dispatch(c, Launch{"Pooling", spec, Groups64(c.outputs[0].size())}, b, push);
  }

 private:
  PoolPush p_;
  int32_t type_ = 0;
};

// Inputs out_grad, data, output; output data gradient.
class PoolBackward {
 public:
  explicit PoolBackward(const sdk::KernelSetup& s) {
    s.ExpectCounts(3, 1);
    RequireFloat32(s);
    p_ = ParsePool(s, s.inputs[1], s.inputs[0], type_);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    struct {
      PoolPush p;
      uint32_t add;
    } push{p_, AddFlag(c.req[0])};
    const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0])};
    const int32_t spec[1] = {type_};
    Dispatch(c, Launch{"_backward_Pooling", spec, Groups64(c.outputs[0].size())}, b, push);
  }

 private:
  PoolPush p_;
  int32_t type_ = 0;
};

}  // namespace

void RegisterConvKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  AddWithShaders<ConvForward>(t, "Convolution", f32,
                              {"Convolution", "im2col", "col2im", "gemm", "gemm4", "broadcast_reduce"});
  AddWithShaders<ConvBackward>(t, "_backward_Convolution", f32,
                               {"_backward_Convolution", "im2col", "col2im", "gemm", "gemm4", "broadcast_reduce"});
  AddWithShaders<DeconvForward>(t, "Deconvolution", f32, {"im2col", "col2im", "gemm", "gemm4", "broadcast_reduce"});
  AddWithShaders<DeconvBackward>(t, "_backward_Deconvolution", f32,
                                 {"im2col", "col2im", "gemm", "gemm4", "broadcast_reduce"});
  AddWithShaders<PoolForward>(t, "Pooling", f32, {"Pooling"});
  AddWithShaders<PoolBackward>(t, "_backward_Pooling", f32, {"_backward_Pooling"});
}

}  // namespace weft::vk

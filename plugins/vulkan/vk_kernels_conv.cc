// vulkan plugin — Convolution and Pooling (1-D NCW and 2-D NCHW; 1-D runs as H = 1), direct
// shaders (shaders/Convolution.comp, _backward_Convolution.comp, Pooling.comp,
// _backward_Pooling.comp). Geometry and semantics as the CPU plugin's kernels (MXNet 1.9).
#include "vk_kernels.h"

namespace weft::vk {
namespace {

// Kernel, stride, dilate, pad as (h, w) pairs; 1-D data gets h = 1.
struct Spatial {
  int sp = 2;
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

Spatial ParseSpatial(const sdk::KernelSetup& s, const sdk::TensorDesc& x, bool global) {
  Spatial g;
  g.sp = x.ndim() - 2;
  if (g.sp != 1 && g.sp != 2) Unsupported(s, "only 1-D (NCW) and 2-D (NCHW) data");
  const std::string layout = s.attrs.GetString("layout", "");
  if (!layout.empty() && layout != "NCHW" && layout != "NCW") Unsupported(s, "layout " + layout);
  auto tuple = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = s.attrs.GetTuple(name, {});
    if (v.empty()) v.assign(static_cast<size_t>(g.sp), dflt);
    if (v.size() != static_cast<size_t>(g.sp)) Invalid(s, std::string(name) + " must have one entry per spatial axis");
    for (int64_t e : v)
      if (e < 0) Invalid(s, std::string(name) + " must not be negative");
    return g.sp == 2 ? std::pair<uint32_t, uint32_t>(v[0], v[1]) : std::pair<uint32_t, uint32_t>(1, v[0]);
  };
  if (!global) std::tie(g.kh, g.kw) = tuple("kernel", 1);
  std::tie(g.sh, g.sw) = tuple("stride", 1);
  std::tie(g.dh, g.dw) = tuple("dilate", 1);
  std::tie(g.ph, g.pw) = tuple("pad", 0);
  if (g.sp == 1) g.ph = 0;
  if (g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1)
    Invalid(s, "kernel, stride and dilate must be positive");
  return g;
}

struct ConvPush {
  uint32_t n, c, h, w, f, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, g;
};

ConvPush ParseConv(const sdk::KernelSetup& s, const sdk::TensorDesc& x, const sdk::TensorDesc& w,
                   const sdk::TensorDesc& y, bool& bias) {
  const Spatial sp = ParseSpatial(s, x, false);
  if (s.attrs.GetTuple("kernel", {}).size() != static_cast<size_t>(sp.sp)) Invalid(s, "kernel does not match data");
  ConvPush p{};
  p.n = static_cast<uint32_t>(x.dim(0));
  p.c = static_cast<uint32_t>(x.dim(1));
  p.h = sp.sp == 2 ? static_cast<uint32_t>(x.dim(2)) : 1;
  p.w = static_cast<uint32_t>(x.dim(-1));
  p.f = static_cast<uint32_t>(s.attrs.GetInt("num_filter"));
  p.g = static_cast<uint32_t>(s.attrs.GetInt("num_group", 1));
  bias = !s.attrs.GetBool("no_bias", false);
  p.kh = sp.kh, p.kw = sp.kw, p.sh = sp.sh, p.sw = sp.sw, p.ph = sp.ph, p.pw = sp.pw, p.dh = sp.dh, p.dw = sp.dw;
  if (p.g < 1 || p.c % p.g != 0 || p.f % p.g != 0) Invalid(s, "num_group must divide channels and num_filter");
  const int64_t eh = int64_t{p.dh} * (p.kh - 1) + 1, ew = int64_t{p.dw} * (p.kw - 1) + 1;
  if (eh > p.h + 2 * p.ph || ew > p.w + 2 * p.pw) Invalid(s, "kernel (dilated) larger than the padded data");
  p.oh = static_cast<uint32_t>((p.h + 2 * p.ph - eh) / p.sh + 1);
  p.ow = static_cast<uint32_t>((p.w + 2 * p.pw - ew) / p.sw + 1);
  if (w.size() != int64_t{p.f} * (p.c / p.g) * p.kh * p.kw) Invalid(s, "weight does not match (F, C/group, kh, kw)");
  if (y.size() != int64_t{p.n} * p.f * p.oh * p.ow) Invalid(s, "output does not match (N, F, oh, ow)");
  return p;
}

class ConvForward {
 public:
  explicit ConvForward(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 2 || s.outputs.size() != 1) Invalid(s, "expects data, weight[, bias] and one output");
    p_ = ParseConv(s, s.inputs[0], s.inputs[1], s.outputs[0], bias_);
    s.ExpectCounts(bias_ ? 3 : 2, 1);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    struct {
      ConvPush p;
      uint32_t has_bias, add;
    } push{p_, bias_ ? 1u : 0u, AddFlag(c.req[0])};
    const Binding b[4] = {In(c.inputs[0]), In(c.inputs[1]), bias_ ? In(c.inputs[2]) : In(c.inputs[1]),
                          Out(c.outputs[0])};
    Dispatch(c, Launch{"Convolution", {}, Groups64(c.outputs[0].size())}, b, push);
  }

 private:
  ConvPush p_;
  bool bias_ = true;
};

// Inputs out_grad, data, weight[, bias]; outputs data, weight[, bias] gradients.
class ConvBackward {
 public:
  explicit ConvBackward(const sdk::KernelSetup& s) {
    RequireFloat32(s);
    if (s.inputs.size() < 3) Invalid(s, "expects out_grad, data and weight");
    p_ = ParseConv(s, s.inputs[1], s.inputs[2], s.inputs[0], bias_);
    s.ExpectCounts(bias_ ? 4 : 3, bias_ ? 3 : 2);
  }
  void Compute(const sdk::DeviceCall& c) const {
    for (int mode = 0; mode < (bias_ ? 3 : 2); ++mode) {
      const int32_t req = c.req[static_cast<size_t>(mode)];
      if (sdk::IsNull(req)) continue;
      const sdk::DeviceTensor& out = c.outputs[static_cast<size_t>(mode)];
      struct {
        ConvPush p;
        uint32_t add;
      } push{p_, AddFlag(req)};
      const Binding b[4] = {In(c.inputs[0]), In(c.inputs[1]), In(c.inputs[2]), Out(out)};
      const int32_t spec[1] = {mode};
      Dispatch(c, Launch{"_backward_Convolution", spec, Groups64(out.size())}, b, push);
    }
  }

 private:
  ConvPush p_;
  bool bias_ = true;
};

struct PoolPush {
  uint32_t nc, h, w, oh, ow, kh, kw, sh, sw, ph, pw, include_pad;
};

PoolPush ParsePool(const sdk::KernelSetup& s, const sdk::TensorDesc& x, const sdk::TensorDesc& y, int32_t& type) {
  const std::string t = s.attrs.GetEnum("pool_type", {"max", "avg", "sum", "lp"}, "max");
  if (t == "lp") Unsupported(s, "pool_type 'lp'");
  type = t == "max" ? 0 : t == "avg" ? 1 : 2;
  const std::string conv = s.attrs.GetEnum("pooling_convention", {"valid", "full", "same"}, "valid");
  if (conv == "same") Unsupported(s, "pooling_convention 'same'");
  const bool global = s.attrs.GetBool("global_pool", false);
  if (!global && s.attrs.GetTuple("kernel", {}).empty()) Invalid(s, "kernel is required unless global_pool=True");
  const Spatial sp = ParseSpatial(s, x, global);
  PoolPush p{};
  p.nc = static_cast<uint32_t>(x.dim(0) * x.dim(1));
  p.h = sp.sp == 2 ? static_cast<uint32_t>(x.dim(2)) : 1;
  p.w = static_cast<uint32_t>(x.dim(-1));
  p.include_pad = s.attrs.GetBool("count_include_pad", true) ? 1 : 0;
  if (global) {
    p.kh = p.h, p.kw = p.w, p.sh = p.sw = 1, p.ph = p.pw = 0, p.oh = p.ow = 1;
  } else {
    p.kh = sp.kh, p.kw = sp.kw, p.sh = sp.sh, p.sw = sp.sw, p.ph = sp.ph, p.pw = sp.pw;
    if (p.kh > p.h + 2 * p.ph || p.kw > p.w + 2 * p.pw) Invalid(s, "kernel larger than the padded input");
    auto out = [&](uint32_t in, uint32_t k, uint32_t st, uint32_t pad) {
      const uint32_t span = in + 2 * pad - k;
      return (conv == "full" ? (span + st - 1) / st : span / st) + 1;
    };
    p.oh = out(p.h, p.kh, p.sh, p.ph);
    p.ow = out(p.w, p.kw, p.sw, p.pw);
  }
  if (y.size() != int64_t{p.nc} * p.oh * p.ow) Invalid(s, "output does not match the pooled size");
  return p;
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
  t.Add<ConvForward>("Convolution", f32);
  t.Add<ConvBackward>("_backward_Convolution", f32);
  t.Add<PoolForward>("Pooling", f32);
  t.Add<PoolBackward>("_backward_Pooling", f32);
}

}  // namespace weft::vk

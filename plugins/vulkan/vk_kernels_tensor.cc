// vulkan plugin — the tensor family (docs/adding-an-op.md, "Op families"): _copy, Flatten, Reshape,
// expand_dims, BlockGrad (a buffer copy); transpose, SwapAxis, Concat, SliceChannel, slice and
// slice_axis forward and backward (shaders/broadcast_reduce.comp through vk_strided.h); Cast
// (shaders/Cast.comp); dot and batch_dot (shaders/gemm.comp). Semantics as the CPU plugin's
// kernels (MXNet 1.9).
#include <numeric>
#include <optional>
#include <string>

#include "vk_device.h"
#include "vk_strided.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/dot.hpp"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::vk {
namespace {

// _copy, Flatten, Reshape, expand_dims and their backward ops: the bytes unchanged.
class CopyKernel {
 public:
  explicit CopyKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    const sdk::DeviceTensor &x = c.inputs[0], &y = c.outputs[0];
    if (sdk::IsNull(c.req[0]) || x.size() == 0) return;
    if (c.req[0] == WEFT_REQ_ADD) return AddInto(c, In(x), Out(y), y.size(), true);
    if (x.data() == y.data() && x.offset() == y.offset()) return;  // in place
    VulkanDevice& dev = static_cast<const VkKernelTable*>(c.table)->device();
    dev.OnStream(c.device, c.stream, [&](Gpu& g, StreamState& s) {
      auto [src, sat] = g.Locate(x.data(), x.offset(), x.bytes(), "copy source");
      auto [dst, dat] = g.Locate(y.data(), y.offset(), y.bytes(), "copy destination");
      const VkBuffer r[1] = {src->buffer}, w[1] = {dst->buffer};
      g.Record(s, r, w, [&](VkCommandBuffer cb) {
        VkBufferCopy region{sat, dat, x.bytes()};
        g.api().vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &region);
      });
    });
  }
};

// transpose: output axis i is input axis axes[i]; _backward_transpose applies the inverse to the
// out_grad (its output is shaped like the forward input).
class TransposeKernel {
 public:
  explicit TransposeKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const bool backward = s.op_name.starts_with("_backward_");
    const Dims in = ShapeOf(s.inputs[0]);
    const size_t nd = in.size();
    std::vector<int64_t> axes;
    if (s.op_name.ends_with("SwapAxis")) {  // the transpose exchanging dim1 and dim2 (its own inverse)
      for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(i));
      const auto p = s.Params<sdk::SwapAxisParam>();
      auto axis = [&](const char* name) {
        int64_t a = std::string_view(name) == "dim1" ? p.dim1 : p.dim2;
        if (a < -static_cast<int64_t>(nd) || a >= static_cast<int64_t>(nd))
          Invalid(s, std::string(name) + " " + std::to_string(a) + " is out of range for the data's axes");
        return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a);
      };
      std::swap(axes[axis("dim1")], axes[axis("dim2")]);
    } else {
      axes = s.Params<sdk::TransposeParam>().axes;
    }
    if (axes.empty())
      for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(nd - 1 - i));
    if (axes.size() != nd) Invalid(s, "axes must list every axis of the data once");
    std::vector<size_t> perm(nd);
    std::vector<bool> seen(nd, false);
    for (size_t i = 0; i < nd; ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + static_cast<int64_t>(nd) : axes[i];
      if (a < 0 || a >= static_cast<int64_t>(nd) || seen[static_cast<size_t>(a)])
        Invalid(s, "axes is not a permutation of the data's axes");
      seen[static_cast<size_t>(a)] = true;
      perm[i] = static_cast<size_t>(a);
    }
    if (backward) {  // out_grad axis perm[i] is input-grad axis i
      std::vector<size_t> inv(nd);
      for (size_t i = 0; i < nd; ++i) inv[perm[i]] = i;
      perm = inv;
    }
    const Dims rm = RowMajor(in);
    out_.resize(nd);
    xs_.resize(nd);
    for (size_t i = 0; i < nd; ++i) out_[i] = in[perm[i]], xs_[i] = rm[perm[i]];
    if (s.outputs[0].size() != s.inputs[0].size()) Invalid(s, "output differs from data in size");
    CheckAxes(s, Plan());
  }
  Strided Plan() const { return Strided(out_, xs_, xs_, xs_, RowMajor(out_), std::vector<bool>(out_.size(), false)); }
  void Compute(const sdk::DeviceCall& c) const {
    const Binding x = In(c.inputs[0]);
    RunStrided(c, kCopy, Plan(), x, x, x, Out(c.outputs[0]), c.req[0]);
  }

 private:
  Dims out_, xs_;
};

// Concat along `dim`: input k is the block [off_k, off_k + len_k) of the output's axis; viewed as
// (outer, len_k, inner). _backward_Concat copies the blocks of out_grad to the input gradients.
// SliceChannel (split along `axis` into equal parts, squeeze_axis dropping the axis from parts of
// length 1) is _backward_Concat's copy, and _backward_SliceChannel is Concat's.
class ConcatKernel {
 public:
  explicit ConcatKernel(const sdk::KernelSetup& s)
      : backward_(s.op_name == "_backward_Concat" || s.op_name == "SliceChannel") {
    RequireFloat32(s);
    s.ExpectCounts(backward_ ? 1 : -1, backward_ ? -1 : 1);
    const auto& parts = backward_ ? s.outputs : s.inputs;
    const sdk::TensorDesc& whole = backward_ ? s.inputs[0] : s.outputs[0];
    if (parts.empty()) Invalid(s, "needs at least one part");
    const int nd = whole.ndim();
    const bool split = s.op_name.ends_with("SliceChannel");
    int64_t dim = split ? s.Params<sdk::SliceChannelParam>().axis : s.Params<sdk::ConcatParam>().dim;
    if (dim < -nd || dim >= nd) Invalid(s, "axis " + std::to_string(dim) + " out of range");
    if (dim < 0) dim += nd;
    for (int i = 0; i < nd; ++i)
      if (i < dim)
        outer_ *= whole.dim(i);
      else if (i > dim)
        inner_ *= whole.dim(i);
    for (const sdk::TensorDesc& t : parts) {
      const bool squeezed = split && t.ndim() == nd - 1;
      if (t.ndim() != nd && !squeezed) Invalid(s, "every part must have the whole tensor's number of axes");
      len_.push_back(squeezed ? 1 : t.dim(static_cast<int>(dim)));
      total_ += len_.back();
    }
    if (total_ * outer_ * inner_ != whole.size()) Invalid(s, "parts do not add up to the concatenated shape");
  }
  void Compute(const sdk::DeviceCall& c) const {
    int64_t off = 0;
    for (size_t k = 0; k < len_.size(); ++k) {
      const Dims part{outer_, len_[k], inner_};
      const Dims rm = RowMajor(part), wide{total_ * inner_, inner_, 1};
      const std::vector<bool> none(3, false);
      if (!backward_) {
        const Binding x = In(c.inputs[k]);
        if (c.inputs[k].size() > 0)
          RunStrided(c, kCopy, Strided(part, rm, rm, rm, wide, none), x, x, x,
                     Shifted(c.outputs[0], off * inner_, true), c.req[0]);
      } else if (c.outputs[k].size() > 0) {
        const Binding g = Shifted(c.inputs[0], off * inner_, false);
        RunStrided(c, kCopy, Strided(part, wide, wide, wide, rm, none), g, g, g, Out(c.outputs[k]), c.req[k]);
      }
      off += len_[k];
    }
  }

 private:
  bool backward_;
  int64_t outer_ = 1, inner_ = 1, total_ = 0;
  std::vector<int64_t> len_;
};

// slice / slice_axis cut a strided box out of the data (per axis begin, step, len from
// weft/sdk/ops/slice.hpp, the rule of core's shape inference): the forward copies the box into the
// output, the backward zeroes the data gradient (req write) and copies out_grad into the box. A
// negative step is a negative stride: the data is bound from the lowest element the box touches
// and the first item's offset from there travels as xoff / ooff.
class SliceKernel {
 public:
  explicit SliceKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    const sdk::TensorDesc& data = backward_ ? s.outputs[0] : s.inputs[0];
    const sdk::TensorDesc& sliced = backward_ ? s.inputs[0] : s.outputs[0];
    std::vector<sdk::SliceRange> r;
    try {
      if (s.op_name.ends_with("slice_axis")) {
        int axis = 0;
        const sdk::SliceRange one = sdk::SliceAxisOpRange(s.Params<sdk::SliceAxisParam>(), data.shape, &axis);
        for (int i = 0; i < data.ndim(); ++i) r.push_back(i == axis ? one : sdk::SliceRange{0, 1, data.dim(i)});
      } else {
        r = sdk::SliceRanges(s.Params<sdk::SliceParam>(), data.shape);
      }
    } catch (const sdk::Error& e) {
      Invalid(s, e.what());
    }
    const Dims rm = RowMajor(ShapeOf(data));
    Dims box, step;
    for (size_t a = 0; a < r.size(); ++a) {
      box.push_back(r[a].len);
      step.push_back(r[a].step * rm[a]);
      base_ += r[a].begin * rm[a];
      if (r[a].step < 0 && r[a].len > 0) first_ += (r[a].len - 1) * -step.back();
    }
    base_ -= first_;  // now the lowest element of the box; the first item is first_ above it
    const Dims packed = RowMajor(box);
    if (std::accumulate(box.begin(), box.end(), int64_t{1}, std::multiplies<>()) != sliced.size())
      Invalid(s, "the sliced tensor's size differs from the slice's box");
    const std::vector<bool> none(box.size(), false);
    plan_ = backward_ ? Strided(box, packed, packed, packed, step, none) : Strided(box, step, step, step, packed, none);
    CheckAxes(s, *plan_);
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    if (backward_) {
      ZeroOutput(c, c.outputs[0], c.req[0]);
      if (c.inputs[0].size() == 0) return;
      const Binding g = In(c.inputs[0]);
      RunStrided(c, kCopy, *plan_, g, g, g, Shifted(c.outputs[0], base_, true), c.req[0], 1.0f, 0,
                 static_cast<uint32_t>(first_));
    } else if (c.outputs[0].size() > 0) {
      const Binding x = Shifted(c.inputs[0], base_, false);
      RunStrided(c, kCopy, *plan_, x, x, x, Out(c.outputs[0]), c.req[0], 1.0f, static_cast<uint32_t>(first_));
    }
  }

 private:
  bool backward_;
  int64_t base_ = 0, first_ = 0;
  std::optional<Strided> plan_;
};

int32_t CastType(int32_t dtype) {
  return dtype == WEFT_DTYPE_FLOAT32 ? 0 : dtype == WEFT_DTYPE_FLOAT64 ? 1 : dtype == WEFT_DTYPE_INT32 ? 2 : -1;
}

// Cast and _backward_Cast between float32, float64 and int32.
class CastKernel {
 public:
  explicit CastKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    in_ = CastType(s.inputs[0].dtype);
    out_ = CastType(s.outputs[0].dtype);
    if (in_ < 0 || out_ < 0)
      Unsupported(s, "from " + sdk::DTypeName(s.inputs[0].dtype) + " to " + sdk::DTypeName(s.outputs[0].dtype) +
                         " (the Vulkan kernel converts between float32, float64 and int32)");
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
    Gpu& g = static_cast<const VkKernelTable*>(s.table)->device().gpu(s.device);
    if (!g.has_float64()) Unsupported(s, g.name() + " lacks shaderFloat64, which the Vulkan Cast kernel needs");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0]) || c.outputs[0].size() == 0) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0])};
    const Binding b[2] = {In(c.inputs[0]), Out(c.outputs[0])};
    const int32_t spec[2] = {in_, out_};
    Dispatch(c, Launch{"Cast", spec, Groups64(n)}, b, push);
  }

 private:
  int32_t in_ = 0, out_ = 0;
};

// dot / batch_dot and their backward ops (MXNet semantics, as the CPU plugin's tensor_dot.cc):
// C = op(A) op(B) per batch; dop(A) = dC op(B)ᵀ, dop(B) = op(A)ᵀ dC.
class DotKernel {
 public:
  explicit DotKernel(const sdk::KernelSetup& s) : backward_(s.op_name.starts_with("_backward_")) {
    s.ExpectCounts(backward_ ? 3 : 2, backward_ ? 2 : 1);
    RequireFloat32(s);
    const sdk::TensorDesc& lhs = s.inputs[backward_ ? 1 : 0];
    const sdk::TensorDesc& rhs = s.inputs[backward_ ? 2 : 1];
    const auto p = s.Params<sdk::DotParam>();
    ta_ = p.transpose_a;
    tb_ = p.transpose_b;
    int64_t batch = 1, m = 1, n = 1, k = 0, k2 = 0;
    const std::string shapes = " (lhs " + ShapeText(lhs) + ", rhs " + ShapeText(rhs) + ")";
    if (s.op_name.find("batch_dot") != std::string::npos) {
      if (lhs.ndim() < 3 || lhs.ndim() != rhs.ndim()) Invalid(s, "needs operands of equal rank >= 3" + shapes);
      for (int a = 0; a < lhs.ndim() - 2; ++a) {
        if (lhs.dim(a) != rhs.dim(a)) Invalid(s, "batch extents differ" + shapes);
        batch *= lhs.dim(a);
      }
      m = lhs.dim(ta_ ? -1 : -2);
      k = lhs.dim(ta_ ? -2 : -1);
      k2 = rhs.dim(tb_ ? -1 : -2);
      n = rhs.dim(tb_ ? -2 : -1);
    } else {
      if (lhs.ndim() < 1 || rhs.ndim() < 1) Invalid(s, "needs operands of rank >= 1" + shapes);
      const int ca = ta_ ? 0 : lhs.ndim() - 1, cb = tb_ ? rhs.ndim() - 1 : 0;
      k = lhs.dim(ca);
      k2 = rhs.dim(cb);
      for (int a = 0; a < lhs.ndim(); ++a)
        if (a != ca) m *= lhs.dim(a);
      for (int a = 0; a < rhs.ndim(); ++a)
        if (a != cb) n *= rhs.dim(a);
    }
    if (k != k2) Invalid(s, "inner extents differ" + shapes);
    batch_ = static_cast<uint32_t>(batch);
    m_ = static_cast<uint32_t>(m);
    n_ = static_cast<uint32_t>(n);
    k_ = static_cast<uint32_t>(k);
  }
  void Compute(const sdk::DeviceCall& c) const {
    const uint32_t sa = m_ * k_, sb = k_ * n_, sc = m_ * n_;
    auto args = [&](uint32_t m, uint32_t n, uint32_t k, bool ta, bool tb, uint32_t s1, uint32_t s2, uint32_t s3) {
      GemmArgs g{m, n, k, ta, tb, batch_, s1, s2, s3};
      return g;
    };
    if (!backward_) {
      Gemm(c, args(m_, n_, k_, ta_, tb_, sa, sb, sc), c.inputs[0], c.inputs[1], c.outputs[0], c.req[0], nullptr);
      return;
    }
    const sdk::DeviceTensor &dc = c.inputs[0], &a = c.inputs[1], &b = c.inputs[2];
    if (!ta_)  // dA (m x k) = dC op(B)ᵀ
      Gemm(c, args(m_, k_, n_, false, !tb_, sc, sb, sa), dc, b, c.outputs[0], c.req[0], nullptr);
    else  // dA (k x m) = op(B) dCᵀ
      Gemm(c, args(k_, m_, n_, tb_, true, sb, sc, sa), b, dc, c.outputs[0], c.req[0], nullptr);
    if (!tb_)  // dB (k x n) = op(A)ᵀ dC
      Gemm(c, args(k_, n_, m_, !ta_, false, sa, sc, sb), a, dc, c.outputs[1], c.req[1], nullptr);
    else  // dB (n x k) = dCᵀ op(A)
      Gemm(c, args(n_, k_, m_, true, ta_, sc, sa, sb), dc, a, c.outputs[1], c.req[1], nullptr);
  }

 private:
  bool backward_;
  bool ta_ = false, tb_ = false;
  uint32_t batch_ = 1, m_ = 0, n_ = 0, k_ = 0;
};

}  // namespace

void RegisterTensorKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "BlockGrad"})
    AddWithShaders<CopyKernel>(t, op, f32, {kAddShader});  // for req add
  {
    ShaderScope strided(t, {"broadcast_reduce"});  // RunStrided's copies
    t.Add<TransposeKernel>("transpose", f32);
    t.Add<TransposeKernel>("_backward_transpose", f32);
    t.Add<TransposeKernel>("SwapAxis", f32);
    t.Add<TransposeKernel>("_backward_SwapAxis", f32);
    for (const char* op : {"Concat", "_backward_Concat", "SliceChannel", "_backward_SliceChannel"})
      t.Add<ConcatKernel>(op, f32);
    for (const char* op : {"slice", "_backward_slice", "slice_axis", "_backward_slice_axis"})
      t.Add<SliceKernel>(op, f32);
  }
  const uint64_t cast = f32 | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64) | WEFT_DTYPE_BIT(WEFT_DTYPE_INT32);
  AddWithShaders<CastKernel>(t, "Cast", cast, {"Cast"});
  AddWithShaders<CastKernel>(t, "_backward_Cast", cast, {"Cast"});
  for (const char* op : {"dot", "_backward_dot", "batch_dot", "_backward_batch_dot"})
    AddWithShaders<DotKernel>(t, op, f32, {"gemm", "gemm4"});
}

}  // namespace weft::vk

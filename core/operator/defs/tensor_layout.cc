// The tensor family's replicating and reshaping ops: stack, tile, repeat, broadcast_to, broadcast_like, reshape_like,
// slice_like, Pad, UpSampling (nearest, bilinear). Shape rules are MXNet 1.9's (src/operator/tensor/matrix_op-inl.h,
// broadcast_reduce_op.h, elemwise_unary_op_basic.cc, pad-inl.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/broadcast.hpp"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/copy.hpp"
#include "weft/sdk/ops/pad.hpp"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sdk/ops/upsampling.hpp"

namespace weft::opdef {
namespace {

OpDef OneInput(std::string name, std::string description, std::vector<std::string> inputs = {"data"}) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  d.list_inputs = Fixed(std::move(inputs));
  d.list_outputs = Fixed({"output"});
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  return d;
}

OpDef Stack() {
  OpDef d = OneInput("stack", "Joins num_args arrays of one shape along a new axis `axis` (in [-ndim-1, ndim]).");
  DeclareParams<sdk::StackParam>(d);
  d.list_inputs = Numbered("arg", "num_args");
  SetShapeFn<sdk::StackParam>(d, [](ShapeIO& io, const sdk::StackParam& p) {
    ShapeSlot common;
    for (size_t i = 0; i < io.num_in(); ++i)
      if (io.in(i)) common = common ? common : io.in(i);
    if (!common) return;
    for (size_t i = 0; i < io.num_in(); ++i) io.AssignIn(i, *common);
    common = io.in(0);
    std::vector<int64_t> s = common->dims();
    const int64_t at = NormalizeAxis(io, p.axis, static_cast<int64_t>(s.size()) + 1, "axis");
    s.insert(s.begin() + at, static_cast<int64_t>(io.num_in()));
    io.AssignOut(0, Shape(s));
  });
  return d;
}

OpDef Tile() {
  OpDef d = OneInput("tile",
                     "Repeats the whole array reps[i] times along axis i; the shorter of data's shape and reps is "
                     "padded with leading 1s (MXNet/NumPy). The gradient sums the copies.");
  DeclareParams<sdk::TileParam>(d);
  SetShapeFn<sdk::TileParam>(d, [](ShapeIO& io, const sdk::TileParam& p) {
    if (!io.in(0)) return;
    std::vector<int64_t> s = io.in(0)->dims(), reps = p.reps;
    if (reps.empty()) {
      io.AssignOut(0, *io.in(0));
      return;
    }
    while (s.size() < reps.size()) s.insert(s.begin(), 1);
    while (reps.size() < s.size()) reps.insert(reps.begin(), 1);
    for (size_t i = 0; i < s.size(); ++i) s[i] = s[i] < 0 ? -1 : s[i] * reps[i];
    io.AssignOut(0, Shape(s));
  });
  return d;
}

OpDef Repeat() {
  OpDef d = OneInput("repeat",
                     "Repeats each element `repeats` times along `axis` (None: of the flattened array, giving a "
                     "1-D output). The gradient sums the copies.");
  DeclareParams<sdk::RepeatParam>(d);
  SetShapeFn<sdk::RepeatParam>(d, [](ShapeIO& io, const sdk::RepeatParam& p) {
    if (!io.in(0)) return;
    const int64_t r = p.repeats;
    const std::optional<int64_t> axis = p.axis;
    const Shape& in = *io.in(0);
    if (!axis) {
      const int64_t n = ProdOrUnknown(in, 0, in.ndim());
      io.AssignOut(0, Shape{n < 0 ? -1 : n * r});
      return;
    }
    std::vector<int64_t> s = in.dims();
    const size_t a = static_cast<size_t>(NormalizeAxis(io, *axis, static_cast<int64_t>(s.size()), "axis"));
    s[a] = s[a] < 0 ? -1 : s[a] * r;
    io.AssignOut(0, Shape(s));
  });
  return d;
}

OpDef BroadcastTo() {
  OpDef d = OneInput("broadcast_to",
                     "Broadcasts data to `shape` (same number of axes; data's extents must be 1 or equal; a 0 in "
                     "shape keeps data's extent). The gradient sums over the broadcast axes.");
  DeclareParams<sdk::BroadcastToParam>(d);
  SetShapeFn<sdk::BroadcastToParam>(d, [](ShapeIO& io, const sdk::BroadcastToParam& p) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    std::vector<int64_t> t = p.shape;
    if (t.size() != in.ndim()) {
      io.Fail(fmt::format("shape {} must have as many axes as input 'data' {}", sdk::FormatTuple(t), in.ToString()));
    }
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == 0) t[i] = in[i];
      if (in[i] >= 0 && t[i] >= 0 && in[i] != 1 && in[i] != t[i]) {
        io.Fail(fmt::format("cannot broadcast input 'data' {} to {}: axis {} has extent {} (must be 1 or {})",
                            in.ToString(), sdk::FormatTuple(t), i, in[i], t[i]));
      }
    }
    io.AssignOut(0, Shape(t));
  });
  return d;
}

OpDef BroadcastLike() {
  OpDef d = OneInput("broadcast_like",
                     "Broadcasts lhs to rhs's shape, or only lhs_axes to the extents of rhs_axes (same count). The "
                     "gradient of lhs sums over the broadcast axes; rhs gets none.",
                     {"lhs", "rhs"});
  DeclareParams<sdk::BroadcastLikeParam>(d);
  SetShapeFn<sdk::BroadcastLikeParam>(d, [](ShapeIO& io, const sdk::BroadcastLikeParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& l = *io.in(0);
    const Shape& r = *io.in(1);
    std::vector<int64_t> la = p.lhs_axes.value_or(sdk::Tuple{}), ra = p.rhs_axes.value_or(sdk::Tuple{});
    // MXNet: None broadcasts every axis; a given empty tuple is refused.
    if (p.lhs_axes && p.lhs_axes->empty())
      io.Fail(
          "lhs_axes is an empty tuple: name the axes to broadcast, or leave lhs_axes and rhs_axes out (None) to "
          "broadcast every axis");
    Shape out = l;
    if (la.empty() && ra.empty()) {
      if (l.ndim() != r.ndim())
        io.Fail(
            fmt::format("inputs 'lhs' {} and 'rhs' {} must have the same number of axes", l.ToString(), r.ToString()));
      for (size_t i = 0; i < l.ndim(); ++i) la.push_back(static_cast<int64_t>(i)), ra.push_back(la.back());
    }
    if (la.size() != ra.size())
      io.Fail(fmt::format("lhs_axes {} and rhs_axes {} must have the same length", sdk::FormatTuple(la),
                          sdk::FormatTuple(ra)));
    for (size_t i = 0; i < la.size(); ++i) {
      const size_t a = static_cast<size_t>(NormalizeAxis(io, la[i], static_cast<int64_t>(l.ndim()), "lhs_axes"));
      const size_t b = static_cast<size_t>(NormalizeAxis(io, ra[i], static_cast<int64_t>(r.ndim()), "rhs_axes"));
      if (l[a] >= 0 && r[b] >= 0 && l[a] != 1 && l[a] != r[b])
        io.Fail(fmt::format("cannot broadcast axis {} of input 'lhs' {} to extent {} (axis {} of 'rhs' {})", a,
                            l.ToString(), r[b], b, r.ToString()));
      out[a] = r[b];
    }
    io.AssignOut(0, out);
  });
  return d;
}

// The [begin, end) range of axes of an ndim-array given MXNet's optional begin/end (negative from
// the end).
std::pair<size_t, size_t> AxisRange(const ShapeIO& io, const char* b, std::optional<int64_t> begin, const char* e,
                                    std::optional<int64_t> end, size_t ndim) {
  const int64_t n = static_cast<int64_t>(ndim);
  int64_t lo = begin.value_or(0), hi = end.value_or(n);
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  auto text = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string("None"); };
  if (lo < 0 || hi > n || lo > hi)
    io.Fail(fmt::format("{}={} and {}={} do not give a range of axes of an array with {} axes", b, text(begin), e,
                        text(end), n));
  return {static_cast<size_t>(lo), static_cast<size_t>(hi)};
}

OpDef ReshapeLike() {
  OpDef d = OneInput("reshape_like",
                     "lhs's elements with the shape lhs.shape[:lhs_begin] + rhs.shape[rhs_begin:rhs_end] + "
                     "lhs.shape[lhs_end:] (all of rhs's shape by default). rhs gets no gradient.",
                     {"lhs", "rhs"});
  DeclareParams<sdk::ReshapeLikeParam>(d);
  d.inplace = InplacePairs({{0, 0}});
  SetShapeFn<sdk::ReshapeLikeParam>(d, [](ShapeIO& io, const sdk::ReshapeLikeParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& l = *io.in(0);
    const Shape& r = *io.in(1);
    const auto [lb, le] = AxisRange(io, "lhs_begin", p.lhs_begin, "lhs_end", p.lhs_end, l.ndim());
    const auto [rb, re] = AxisRange(io, "rhs_begin", p.rhs_begin, "rhs_end", p.rhs_end, r.ndim());
    std::vector<int64_t> s(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(lb));
    s.insert(s.end(), r.begin() + static_cast<std::ptrdiff_t>(rb), r.begin() + static_cast<std::ptrdiff_t>(re));
    s.insert(s.end(), l.begin() + static_cast<std::ptrdiff_t>(le), l.end());
    Shape out(s);
    if (FullyKnown(out) && FullyKnown(l) && out.Size() != l.Size())
      io.Fail(fmt::format("cannot reshape input 'lhs' {} to {}: element counts differ", l.ToString(), out.ToString()));
    io.AssignOut(0, out);
  });
  return d;
}

OpDef SliceLike() {
  OpDef d = OneInput("slice_like",
                     "data[0:shape_like.shape[a]] along each axis a of `axes` (every axis when empty; data and "
                     "shape_like then have as many axes). shape_like gets no gradient.",
                     {"data", "shape_like"});
  DeclareParams<sdk::SliceLikeParam>(d);
  SetShapeFn<sdk::SliceLikeParam>(d, [](ShapeIO& io, const sdk::SliceLikeParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& data = *io.in(0);
    const Shape& like = *io.in(1);
    std::vector<int64_t> axes = p.axes;
    Shape out = data;
    if (axes.empty()) {
      if (data.ndim() != like.ndim())
        io.Fail(fmt::format("with axes=() inputs 'data' {} and 'shape_like' {} must have as many axes", data.ToString(),
                            like.ToString()));
      for (size_t i = 0; i < data.ndim(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    for (int64_t a : axes) {
      const size_t ax = static_cast<size_t>(NormalizeAxis(io, a, static_cast<int64_t>(data.ndim()), "axes"));
      if (ax >= like.ndim())
        io.Fail(fmt::format("axis {} is past the last axis of input 'shape_like' {}", ax, like.ToString()));
      if (data[ax] >= 0 && like[ax] > data[ax])
        io.Fail(fmt::format("input 'shape_like' {} is longer than input 'data' {} along axis {}", like.ToString(),
                            data.ToString(), ax));
      out[ax] = like[ax];
    }
    io.AssignOut(0, out);
  });
  return d;
}

OpDef Pad() {
  OpDef d = OneInput("Pad",
                     "Pads a 4-D or 5-D array on its spatial axes: pad_width gives (before, after) per axis, zero for "
                     "the first two. constant fills constant_value, edge repeats the border, reflect mirrors it "
                     "without repeating the border (pads smaller than the extent). The gradient sums every copy of "
                     "an element back into it.");
  DeclareParams<sdk::PadParam>(d);
  SetShapeFn<sdk::PadParam>(d, [](ShapeIO& io, const sdk::PadParam& p) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const std::vector<int64_t>& pw = p.pad_width;
    if (in.ndim() != 4 && in.ndim() != 5)
      io.Fail(fmt::format("input 'data' {} must be 4-D or 5-D (MXNet pads only those)", in.ToString()));
    if (pw.size() != 2 * in.ndim())
      io.Fail(fmt::format("pad_width {} must have 2 entries per axis of input 'data' {}", sdk::FormatTuple(pw),
                          in.ToString()));
    if (pw[0] != 0 || pw[1] != 0 || pw[2] != 0 || pw[3] != 0)
      io.Fail(fmt::format("pad_width {} pads the batch or channel axis; only the spatial axes can be padded",
                          sdk::FormatTuple(pw)));
    const bool reflect = p.mode == sdk::PadMode::kReflect;
    Shape out = in;
    for (size_t i = 0; i < in.ndim(); ++i) {
      if (pw[2 * i] < 0 || pw[2 * i + 1] < 0) io.Fail(fmt::format("pad_width {} is negative", sdk::FormatTuple(pw)));
      if (reflect && in[i] >= 0 && (pw[2 * i] >= in[i] || pw[2 * i + 1] >= in[i]))
        io.Fail(fmt::format("reflect pads of axis {} must be smaller than its extent {}", i, in[i]));
      out[i] = in[i] < 0 ? -1 : in[i] + pw[2 * i] + pw[2 * i + 1];
    }
    io.AssignOut(0, out);
  });
  return d;
}

// MXNet's bilinear UpSampling is a grouped Deconvolution (upsampling-inl.h GetDeconvolutionParam):
// kernel 2·scale − scale % 2, stride scale, pad ⌈(scale − 1) / 2⌉, one group per channel, no bias;
// the weight (C, 1, k, k) is an ordinary input (mx.init.Bilinear fills it in MXNet's programs).
void NearestShape(ShapeIO& io, const sdk::UpSamplingParam& p) {
  for (size_t i = 0; i < io.num_in(); ++i)
    if (!FullyKnown(io.in(i))) return;
  const Shape& first = *io.in(0);
  const int64_t scale = p.scale;
  const bool concat = p.multi_input_mode == sdk::MultiInputMode::kConcat;
  if (first.ndim() != 4) io.Fail(fmt::format("input 'arg0' {} must be 4-D (N, C, H, W)", first.ToString()));
  Shape out{first[0], 0, first[2] * scale, first[3] * scale};
  for (size_t i = 0; i < io.num_in(); ++i) {
    const Shape& s = *io.in(i);
    if (s.ndim() != 4 || s[0] != first[0] || out[2] % s[2] != 0 || out[3] % s[3] != 0 || out[2] / s[2] != out[3] / s[3])
      io.Fail(fmt::format("input '{}' {} cannot be upsampled by a whole factor to ({}, {}) with batch {}",
                          io.in_name(i), s.ToString(), out[2], out[3], first[0]));
    if (!concat && s[1] != first[1])
      io.Fail(fmt::format("multi_input_mode=sum needs equal channels; input '{}' {} differs from {}", io.in_name(i),
                          s.ToString(), first.ToString()));
    out[1] = concat ? out[1] + s[1] : s[1];
  }
  io.AssignOut(0, out);
}

void BilinearShape(ShapeIO& io, const sdk::UpSamplingParam& p) {
  if (!FullyKnown(io.in(0))) return;
  const Shape& in = *io.in(0);
  const int64_t scale = p.scale, nf = p.num_filter;
  if (in.ndim() != 4) io.Fail(fmt::format("input 'data' {} must be 4-D (N, C, H, W)", in.ToString()));
  // MXNet infers the same shapes for any num_filter but its deconvolution then fails (or
  // crashes for 0) unless num_filter equals the channels: refuse that here, at bind.
  if (nf != in[1])
    io.Fail(fmt::format("sample_type=bilinear needs num_filter ({}) equal to the channels of input 'data' {}", nf,
                        in.ToString()));
  const int64_t k = p.BilinearKernel();
  io.AssignIn(1, Shape{in[1], 1, k, k});
  io.AssignOut(0, Shape{in[0], in[1], in[2] * scale, in[3] * scale});
}

OpDef UpSampling() {
  OpDef d = OneInput("UpSampling",
                     "nearest: upsampling of num_args (N, C, H, W) arrays to (H·scale, W·scale) of the first; "
                     "each input is repeated by its own integer factor, then the results are concatenated along "
                     "channels (multi_input_mode concat) or summed (sum); the gradient sums each block back. "
                     "bilinear: inputs data (N, C, H, W) and weight (C, 1, k, k), k = 2·scale − scale % 2; the "
                     "output (N, C, H·scale, W·scale) is the per-channel Deconvolution with stride scale and pad "
                     "⌈(scale − 1) / 2⌉ (MXNet's definition; num_filter must equal C); data and weight get gradients.");
  DeclareParams<sdk::UpSamplingParam>(d);
  d.list_inputs = [](const AttrMap& a) {
    if (sdk::ParseParams<sdk::UpSamplingParam>(a).sample_type == sdk::UpSampleType::kBilinear)
      return std::vector<std::string>{"data", "weight"};
    return Numbered("arg", "num_args")(a);
  };
  d.backward_uses = kUsesInputs;
  d.backward_uses_for = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::UpSamplingParam>(a).sample_type == sdk::UpSampleType::kBilinear ? kUsesInputs : 0u;
  };
  SetShapeFn<sdk::UpSamplingParam>(d, [](ShapeIO& io, const sdk::UpSamplingParam& p) {
    if (p.sample_type == sdk::UpSampleType::kBilinear)
      BilinearShape(io, p);
    else
      NearestShape(io, p);
  });
  return d;
}

}  // namespace

void RegisterTensorLayoutOps(OpRegistry& r) {
  r.Register(Stack());
  r.Register(Tile());
  r.Register(Repeat());
  r.Register(BroadcastTo());
  r.Register(BroadcastLike());
  r.Register(ReshapeLike());
  r.Register(SliceLike());
  r.Register(Pad());
  r.Register(UpSampling());
  r.AddAlias("pad", "Pad");
}

}  // namespace weft::opdef

// MXNet's shape and layout ops that its frontend and typical 1.x programs use, beyond
// defs/tensor_shape.cc and defs/tensor_layout.cc: squeeze, reverse (flip), diag, shape_array, size_array,
// broadcast_axis, _split_v2 (mx.nd.split_v2), depth_to_space, space_to_depth and amp_cast.
// Shape rules are MXNet 1.9's (src/operator/tensor/matrix_op-inl.h, diag_op-inl.h,
// elemwise_unary_op_basic.cc, broadcast_reduce_op.h, amp_cast.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/matrix.hpp"

namespace weft::opdef {
namespace {

OpDef OneInput(std::string name, std::string description) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + d.name;
  return d;
}

// The axes `given` (attribute `attr`) normalised for `ndim` axes, sorted, each once.
std::vector<int64_t> AxesOf(const ShapeIO& io, const std::vector<int64_t>& given, const std::string& attr,
                            size_t ndim) {
  std::vector<int64_t> axes = given;
  for (int64_t& a : axes) a = NormalizeAxis(io, a, static_cast<int64_t>(ndim), attr);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    io.Fail(fmt::format("{} {} names an axis twice", attr, sdk::FormatTuple(given)));
  return axes;
}

OpDef Squeeze() {
  OpDef d = OneInput("squeeze",
                     "Removes the axes of extent 1 named by `axis` (all of them when None); removing every axis "
                     "gives shape (1,) (MXNet's legacy shapes).");
  DeclareParams<sdk::SqueezeParam>(d);
  SetShapeFn<sdk::SqueezeParam>(d, [](ShapeIO& io, const sdk::SqueezeParam& p) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const bool all = !p.axis;
    const std::vector<int64_t> axes = AxesOf(io, p.axis.value_or(sdk::Tuple{}), "axis", in.ndim());
    std::vector<int64_t> out;
    for (size_t i = 0; i < in.ndim(); ++i) {
      const bool named = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
      if (named && in[i] != 1 && in[i] >= 0)
        io.Fail(fmt::format("axis {} of {} has extent {}, not 1", i, in.ToString(), in[i]));
      if (!(named || (all && in[i] == 1))) out.push_back(in[i]);
    }
    if (out.empty()) out.push_back(1);
    io.AssignOut(0, Shape(out));
  });
  d.backward_op = "_backward_copy";
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

OpDef Reverse() {
  OpDef d = OneInput("reverse", "Reverses the order of the elements along each axis of `axis`.");
  DeclareParams<sdk::ReverseParam>(d);
  SetShapeFn<sdk::ReverseParam>(d, [](ShapeIO& io, const sdk::ReverseParam& p) {
    if (!io.in(0)) return;
    AxesOf(io, p.axis, "axis", io.in(0)->ndim());
    io.AssignOut(0, *io.in(0));
  });
  return d;
}

OpDef Diag() {
  OpDef d = OneInput("diag",
                     "A 1-D input (N,) gives the (N+|k|, N+|k|) matrix with it on diagonal k (k > 0 above the main "
                     "one); an input of 2 or more axes gives its diagonal k over axes axis1 and axis2, which are "
                     "removed, as a new last axis.");
  DeclareParams<sdk::DiagParam>(d);
  SetShapeFn<sdk::DiagParam>(d, [](ShapeIO& io, const sdk::DiagParam& p) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const int64_t k = p.k;
    if (in.ndim() == 0) io.Fail("input 'data' must have at least one axis");
    if (in.ndim() == 1) {
      const int64_t n = in[0] < 0 ? -1 : in[0] + std::abs(k);
      io.AssignOut(0, Shape{n, n});
      return;
    }
    const int64_t nd = static_cast<int64_t>(in.ndim());
    const int64_t a1 = NormalizeAxis(io, p.axis1, nd, "axis1");
    const int64_t a2 = NormalizeAxis(io, p.axis2, nd, "axis2");
    if (a1 == a2) io.Fail("axis1 and axis2 name the same axis");
    std::vector<int64_t> out;
    for (int64_t i = 0; i < nd; ++i)
      if (i != a1 && i != a2) out.push_back(in[static_cast<size_t>(i)]);
    const int64_t d1 = in[static_cast<size_t>(a1)], d2 = in[static_cast<size_t>(a2)];
    out.push_back(d1 < 0 || d2 < 0 ? -1 : p.Length(d1, d2));
    io.AssignOut(0, Shape(out));
  });
  return d;
}

OpDef ShapeArray(std::string name, std::string description, bool size) {
  OpDef d = OneInput(std::move(name), std::move(description));
  SetShapeFn(d, [size](ShapeIO& io) {
    if (io.in(0)) io.AssignOut(0, Shape{size ? 1 : static_cast<int64_t>(io.in(0)->ndim())});
  });
  d.infer_type = [](const AttrMap&, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("shape_array", "output", "output", out[0], static_cast<int>(DType::kInt64));
  };
  d.grad = GradKind::kZero;
  d.backward_op.clear();
  return d;
}

OpDef BroadcastAxis() {
  OpDef d = OneInput("broadcast_axis",
                     "Repeats the axes of `axis` (each of extent 1) to the extents of `size`; the gradient sums "
                     "over them.");
  DeclareParams<sdk::BroadcastAxisParam>(d);
  SetShapeFn<sdk::BroadcastAxisParam>(d, [](ShapeIO& io, const sdk::BroadcastAxisParam& p) {
    if (!io.in(0)) return;
    Shape out = *io.in(0);
    const std::vector<int64_t>&axes = p.axis, &size = p.size;
    if (axes.size() != size.size())
      io.Fail(fmt::format("axis {} and size {} differ in length", sdk::FormatTuple(axes), sdk::FormatTuple(size)));
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t a = static_cast<size_t>(NormalizeAxis(io, axes[i], static_cast<int64_t>(out.ndim()), "axis"));
      if (out[a] != 1 && out[a] >= 0)
        io.Fail(fmt::format("axis {} of {} has extent {}; only extent 1 broadcasts", a, io.in(0)->ToString(), out[a]));
      out[a] = size[i];
    }
    io.AssignOut(0, out);
  });
  d.resources = kResourceTempSpace;
  return d;
}

// _split_v2's parts along the axis: `sections` equal ones, else cut before each of `indices`.
std::vector<int64_t> SplitExtents(const sdk::SplitV2Param& p, int64_t len) {
  const int64_t sections = p.sections;
  std::vector<int64_t> parts;
  if (sections > 0) {
    WEFT_CHECK(len < 0 || len % sections == 0, "the axis of extent {} does not split into {} equal sections", len,
               sections);
    return std::vector<int64_t>(static_cast<size_t>(sections), len < 0 ? -1 : len / sections);
  }
  const std::vector<int64_t>& idx = p.indices;
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t end = i + 1 < idx.size() ? idx[i + 1] : len;
    WEFT_CHECK(len < 0 || (idx[i] >= 0 && end >= idx[i] && end <= len),
               "indices {} are not increasing positions within the axis of extent {}", sdk::FormatTuple(idx), len);
    parts.push_back(len < 0 ? -1 : end - idx[i]);
  }
  return parts;
}

OpDef SplitV2() {
  OpDef d = OneInput("_split_v2",
                     "Splits data along `axis` into `sections` equal parts, or (sections 0) into the parts that "
                     "start at each of `indices`; squeeze_axis drops the axis from parts of extent 1.");
  DeclareParams<sdk::SplitV2Param>(d);
  d.list_outputs = [](const AttrMap& a) {
    const size_t n = static_cast<size_t>(sdk::ParseParams<sdk::SplitV2Param>(a).Parts());
    WEFT_CHECK(n >= 1 && static_cast<int64_t>(n) <= kMaxNumberedCount, "_split_v2 makes {} parts", n);
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) names.push_back("output" + std::to_string(i));
    return names;
  };
  SetShapeFn<sdk::SplitV2Param>(d, [](ShapeIO& io, const sdk::SplitV2Param& p) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const size_t axis = static_cast<size_t>(NormalizeAxis(io, p.axis, static_cast<int64_t>(in.ndim()), "axis"));
    std::vector<int64_t> parts;
    try {
      parts = SplitExtents(p, in[axis]);
    } catch (const Error& e) {
      io.Fail(e.what());
    }
    const bool squeeze = p.squeeze_axis;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::vector<int64_t> s = in.dims();
      if (squeeze) {
        if (parts[i] != 1 && parts[i] >= 0) io.Fail("squeeze_axis needs parts of extent 1 along the axis");
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
        if (s.empty()) s.push_back(1);
      } else {
        s[axis] = parts[i];
      }
      io.AssignOut(i, Shape(s));
    }
  });
  d.backward_op = "_backward_split_v2";
  return d;
}

// depth_to_space (NCHW): (N, C·b², H, W) -> (N, C, H·b, W·b); space_to_depth the inverse.
OpDef DepthSpace(std::string name, bool to_space) {
  OpDef d =
      OneInput(std::move(name),
               to_space ? "Moves blocks of depth into space (NCHW): (N, C·b², H, W) -> (N, C, H·b, W·b) with "
                          "output[n, c, h·b + i, w·b + j] = data[n, (i·b + j)·C + c, h, w]; b = block_size."
                        : "Moves blocks of space into depth (NCHW), the inverse of depth_to_space: (N, C, H·b, W·b) -> "
                          "(N, C·b², H, W).");
  DeclareParams<sdk::DepthSpaceParam>(d);
  SetShapeFn<sdk::DepthSpaceParam>(d, [to_space](ShapeIO& io, const sdk::DepthSpaceParam& p) {
    if (!FullyKnown(io.in(0))) return;
    const Shape& in = *io.in(0);
    const int64_t b = p.block_size;
    if (in.ndim() != 4) io.Fail("input 'data' must be 4-D (N, C, H, W), got " + in.ToString());
    if (to_space) {
      if (in[1] % (b * b) != 0)
        io.Fail(fmt::format("channels {} are not a multiple of block_size² = {}", in[1], b * b));
      io.AssignOut(0, Shape{in[0], in[1] / (b * b), in[2] * b, in[3] * b});
    } else {
      if (in[2] % b != 0 || in[3] % b != 0)
        io.Fail(fmt::format("height {} and width {} must be multiples of block_size {}", in[2], in[3], b));
      io.AssignOut(0, Shape{in[0], in[1] * b * b, in[2] / b, in[3] / b});
    }
  });
  return d;
}

OpDef AmpCast() {
  OpDef d = OneInput("amp_cast",
                     "Casts a floating-point input to `dtype` (AMP); integer inputs pass unchanged. The gradient is "
                     "cast back to the input's dtype.");
  DeclareParams<sdk::AmpCastParam>(d);
  SetShapeFn(d, SameShapeAll);
  d.infer_type = [](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[0] < 0) return;
    const DType from = static_cast<DType>(in[0]);
    const bool is_float = from == DType::kFloat32 || from == DType::kFloat64 || from == DType::kFloat16;
    AssignType("amp_cast", "output", "output", out[0],
               is_float ? static_cast<int>(DTypeFromName(sdk::ParseParams<sdk::AmpCastParam>(a).dtype)) : in[0]);
  };
  return d;
}

}  // namespace

void RegisterTensorMatrixOps(OpRegistry& r) {
  r.Register(Squeeze());
  r.Register(Reverse());
  r.AddAlias("flip", "reverse");
  r.Register(Diag());
  r.Register(ShapeArray("shape_array", "The input's shape as a 1-D int64 array.", false));
  r.Register(ShapeArray("size_array", "The input's number of elements as a (1,) int64 array.", true));
  r.Register(BroadcastAxis());
  r.AddAlias("broadcast_axes", "broadcast_axis");
  r.Register(SplitV2());
  r.Register(DepthSpace("depth_to_space", true));
  r.Register(DepthSpace("space_to_depth", false));
  r.Register(AmpCast());
}

}  // namespace weft::opdef

// MXNet's shape and layout ops that its frontend and typical 1.x programs use, beyond
// defs/shape.cc and defs/layout.cc: squeeze, reverse (flip), diag, shape_array, size_array,
// broadcast_axis, _split_v2 (mx.nd.split_v2), depth_to_space, space_to_depth and amp_cast.
// Shape rules are MXNet 1.9's (src/operator/tensor/matrix_op-inl.h, diag_op-inl.h,
// elemwise_unary_op_basic.cc, broadcast_reduce_op.h, amp_cast.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"

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

// The axes of attribute `attr` (a tuple) normalised for `ndim` axes, sorted, each once.
std::vector<int64_t> AxesOf(const ShapeIO& io, const std::string& attr, size_t ndim) {
  std::vector<int64_t> axes = io.attrs().GetTuple(attr, {});
  for (int64_t& a : axes) a = NormalizeAxis(io, a, static_cast<int64_t>(ndim), attr);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    io.Fail(fmt::format("{} {} names an axis twice", attr, io.attrs().GetString(attr)));
  return axes;
}

OpDef Squeeze() {
  OpDef d = OneInput("squeeze",
                     "Removes the axes of extent 1 named by `axis` (all of them when None); removing every axis "
                     "gives shape (1,) (MXNet's legacy shapes).");
  d.attrs = {Opt("axis", "shape", "None", "axes to remove (each of extent 1); None = every axis of extent 1")};
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const bool all = sdk::IsNone(io.attrs().GetString("axis"));
    const std::vector<int64_t> axes = AxesOf(io, "axis", in.ndim());
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
  d.attrs = {Req("axis", "shape", "axes to reverse")};
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    AxesOf(io, "axis", io.in(0)->ndim());
    io.AssignOut(0, *io.in(0));
  });
  return d;
}

// The diagonal's length for extents (d1, d2) and offset k (MXNet: 0 when it lies outside).
int64_t DiagLength(int64_t d1, int64_t d2, int64_t k) {
  const int64_t n = k >= 0 ? std::min(d1, d2 - k) : std::min(d1 + k, d2);
  return std::max<int64_t>(n, 0);
}

OpDef Diag() {
  OpDef d = OneInput("diag",
                     "A 1-D input (N,) gives the (N+|k|, N+|k|) matrix with it on diagonal k (k > 0 above the main "
                     "one); an input of 2 or more axes gives its diagonal k over axes axis1 and axis2, which are "
                     "removed, as a new last axis.");
  d.attrs = {Opt("k", "int", "0", "diagonal offset"), Opt("axis1", "int", "0", "first axis of the 2-D sub-arrays"),
             Opt("axis2", "int", "1", "second axis of the 2-D sub-arrays")};
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const int64_t k = io.attrs().GetInt("k");
    if (in.ndim() == 0) io.Fail("input 'data' must have at least one axis");
    if (in.ndim() == 1) {
      const int64_t n = in[0] < 0 ? -1 : in[0] + std::abs(k);
      io.AssignOut(0, Shape{n, n});
      return;
    }
    const int64_t nd = static_cast<int64_t>(in.ndim());
    const int64_t a1 = NormalizeAxis(io, io.attrs().GetInt("axis1"), nd, "axis1");
    const int64_t a2 = NormalizeAxis(io, io.attrs().GetInt("axis2"), nd, "axis2");
    if (a1 == a2) io.Fail("axis1 and axis2 name the same axis");
    std::vector<int64_t> out;
    for (int64_t i = 0; i < nd; ++i)
      if (i != a1 && i != a2) out.push_back(in[static_cast<size_t>(i)]);
    const int64_t d1 = in[static_cast<size_t>(a1)], d2 = in[static_cast<size_t>(a2)];
    out.push_back(d1 < 0 || d2 < 0 ? -1 : DiagLength(d1, d2, k));
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
  d.attrs = {Opt("axis", "shape", "()", "axes to broadcast"), Opt("size", "shape", "()", "their new extents")};
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    Shape out = *io.in(0);
    const std::vector<int64_t> axes = io.attrs().GetTuple("axis"), size = io.attrs().GetTuple("size");
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
std::vector<int64_t> SplitExtents(const AttrMap& a, int64_t len) {
  const int64_t sections = a.GetInt("sections");
  std::vector<int64_t> parts;
  if (sections > 0) {
    WEFT_CHECK(len < 0 || len % sections == 0, "the axis of extent {} does not split into {} equal sections", len,
               sections);
    return std::vector<int64_t>(static_cast<size_t>(sections), len < 0 ? -1 : len / sections);
  }
  const std::vector<int64_t> idx = a.GetTuple("indices");
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
  d.attrs = {Req("indices", "shape", "start of each part (sections = 0)"), Opt("axis", "int", "1", "axis to split"),
             Opt("squeeze_axis", "bool", "False", "remove the axis from each part (each must have extent 1)"),
             Opt("sections", "int", "0", "number of equal parts; 0 = use indices")};
  d.list_outputs = [](const AttrMap& a) {
    const int64_t sections = a.GetInt("sections");
    const size_t n = sections > 0 ? static_cast<size_t>(sections) : a.GetTuple("indices").size();
    WEFT_CHECK(n >= 1 && static_cast<int64_t>(n) <= kMaxNumberedCount, "_split_v2 makes {} parts", n);
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) names.push_back("output" + std::to_string(i));
    return names;
  };
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& in = *io.in(0);
    const size_t axis =
        static_cast<size_t>(NormalizeAxis(io, io.attrs().GetInt("axis"), static_cast<int64_t>(in.ndim()), "axis"));
    std::vector<int64_t> parts;
    try {
      parts = SplitExtents(io.attrs(), in[axis]);
    } catch (const Error& e) {
      io.Fail(e.what());
    }
    const bool squeeze = io.attrs().GetBool("squeeze_axis");
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
  d.attrs = {Req("block_size", "int", "edge of the square blocks")};
  d.validate = [](const AttrMap& a) {
    WEFT_CHECK(a.GetInt("block_size") >= 1, "block_size must be at least 1, got {}", a.GetInt("block_size"));
  };
  SetShapeFn(d, [to_space](ShapeIO& io) {
    if (!FullyKnown(io.in(0))) return;
    const Shape& in = *io.in(0);
    const int64_t b = io.attrs().GetInt("block_size");
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
  d.attrs = {Enum("dtype", {"float16", "bfloat16", "float32", "float64", "uint8", "int8", "int32", "int64"}, "",
                  "target dtype of floating-point inputs")};
  SetShapeFn(d, SameShapeAll);
  d.infer_type = [](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[0] < 0) return;
    const DType from = static_cast<DType>(in[0]);
    const bool is_float = from == DType::kFloat32 || from == DType::kFloat64 || from == DType::kFloat16;
    AssignType("amp_cast", "output", "output", out[0],
               is_float ? static_cast<int>(DTypeFromName(a.GetString("dtype"))) : in[0]);
  };
  return d;
}

}  // namespace

void RegisterMatrixOps(OpRegistry& r) {
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

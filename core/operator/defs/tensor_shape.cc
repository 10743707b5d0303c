// The tensor family's shape-changing and copying ops (docs/adding-an-op.md, "Op families"): Flatten,
// Reshape, expand_dims, _copy, BlockGrad, Concat, SliceChannel, transpose, slice, slice_axis, SwapAxis.
// Shape rules
// are MXNet 1.9's (src/operator/tensor/matrix_op-inl.h, nn/concat.cc, slice_channel-inl.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/concat.hpp"
#include "weft/sdk/ops/copy.hpp"
#include "weft/sdk/ops/slice.hpp"
#include "weft/sdk/ops/transpose.hpp"

namespace weft::opdef {
namespace {

// An op with one input `data` and one output that is a copy of it (same memory order), whose
// gradient is `_backward_copy`.
OpDef CopyLike(std::string name, std::string description, bool inplace) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_copy";
  if (inplace) d.inplace = InplacePairs({{0, 0}});
  return d;
}

// With one unknown extent on one side and everything else known, the element counts fix it
// (MXNet's ReverseReshapeInferShape, used in both directions).
void FillOneUnknown(Shape& s, int64_t total) {
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.ndim(); ++i) {
    if (s[i] < 0) {
      if (unknown >= 0) return;
      unknown = static_cast<int>(i);
    } else {
      known *= s[i];
    }
  }
  if (unknown >= 0 && known > 0) s[static_cast<size_t>(unknown)] = total / known;
}

// ---- Reshape --------------------------------------------------------------------------------------

// MXNet's special codes: 0 copy a dim, -1 infer one dim, -2 copy the rest, -3 merge two dims,
// -4 split one dim into the next two codes (one may be -1). `reverse` matches from the right.
Shape ReshapeTarget(const ShapeIO& io, std::vector<int64_t> codes, std::vector<int64_t> in, bool reverse) {
  const std::vector<int64_t> given = codes;
  if (reverse) {
    std::reverse(codes.begin(), codes.end());
    std::reverse(in.begin(), in.end());  // as MXNet: -4 then needs its sizes before it
  }
  auto fail = [&](const std::string& why) {
    io.Fail(fmt::format("cannot apply shape {} to input 'data' of shape {}: {}", sdk::FormatTuple(given),
                        io.in(0)->ToString(), why));
  };
  std::vector<int64_t> out;
  size_t src = 0;
  int inferred = -1;
  for (size_t i = 0; i < codes.size(); ++i) {
    int64_t c = codes[i];
    if (c == 0) {
      if (src >= in.size()) fail("code 0 has no input axis left to copy");
      out.push_back(in[src++]);
    } else if (c == -1) {
      if (inferred >= 0) fail("only one axis can be -1");
      inferred = static_cast<int>(out.size());
      out.push_back(1);
      ++src;
    } else if (c == -2) {
      while (src < in.size()) out.push_back(in[src++]);
    } else if (c == -3) {
      if (src + 1 >= in.size()) fail("code -3 needs two input axes");
      int64_t a = in[src++], b = in[src++];
      out.push_back(a < 0 || b < 0 ? -1 : a * b);
    } else if (c == -4) {
      if (i + 2 >= codes.size()) fail("code -4 must be followed by two sizes");
      if (src >= in.size()) fail("code -4 has no input axis left to split");
      int64_t whole = in[src++];
      int64_t a = codes[++i], b = codes[++i];
      if (a == -1 && b == -1) fail("the two sizes after -4 cannot both be -1");
      if (a == -1 && whole >= 0) a = whole / b;
      if (b == -1 && whole >= 0) b = whole / a;
      if (whole >= 0 && a * b != whole) fail(fmt::format("{} x {} does not split axis of size {}", a, b, whole));
      out.push_back(a);
      out.push_back(b);
    } else if (c > 0) {
      out.push_back(c);
      ++src;
    } else {
      fail(fmt::format("{} is not a valid size or code (0, -1, -2, -3, -4)", c));
    }
  }
  if (inferred >= 0) {
    Shape data(in);
    if (FullyKnown(data)) {
      int64_t rest = 1;
      for (int64_t v : out) rest *= v;
      out[static_cast<size_t>(inferred)] = rest > 0 ? data.Size() / rest : 0;
    } else {
      out[static_cast<size_t>(inferred)] = -1;
    }
  }
  if (reverse) std::reverse(out.begin(), out.end());
  return Shape(std::move(out));
}

// Deprecated `target_shape` (MXNet 0.x JSON): 0 marks the one inferred axis; keep_highest keeps
// the first axis of the input.
Shape LegacyTarget(const sdk::ReshapeParam& p, const Shape& data) {
  std::vector<int64_t> t = p.target_shape;
  const bool keep = p.keep_highest;
  if (keep && !t.empty()) t[0] = data[0];
  Shape out(t);
  int zeros = 0;
  size_t at = 0;
  for (size_t i = keep ? 1 : 0; i < out.ndim(); ++i)
    if (out[i] == 0) {
      ++zeros;
      at = i;
    }
  if (zeros == 1) {
    out[at] = -1;
    if (FullyKnown(data)) FillOneUnknown(out, data.Size());
  }
  return out;
}

OpDef Reshape() {
  OpDef d = CopyLike("Reshape", "Same elements, new shape; `shape` may use MXNet's codes 0, -1, -2, -3, -4.", true);
  DeclareParams<sdk::ReshapeParam>(d);
  SetShapeFn<sdk::ReshapeParam>(d, [](ShapeIO& io, const sdk::ReshapeParam& p) {
    if (p.shape.empty() && p.target_shape.empty()) io.Fail("attribute 'shape' is required");
    if (!io.in(0)) return;
    Shape data = *io.in(0);
    Shape out = p.shape.empty() ? LegacyTarget(p, data) : ReshapeTarget(io, p.shape, data.dims(), p.reverse);
    if (FullyKnown(data)) FillOneUnknown(out, data.Size());
    if (FullyKnown(out) && FullyKnown(data) && out.Size() != data.Size()) {
      io.Fail(fmt::format("cannot reshape input 'data' of shape {} ({} elements) to {} ({} elements)", data.ToString(),
                          data.Size(), out.ToString(), out.Size()));
    }
    io.AssignOut(0, out);
    if (FullyKnown(io.out(0))) {
      FillOneUnknown(data, io.out(0)->Size());
      io.AssignIn(0, data);
    }
  });
  return d;
}

OpDef Flatten() {
  OpDef d = CopyLike("Flatten", "Collapses all axes but the first: (d0, d1, ..., dk) -> (d0, d1·...·dk).", true);
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& s = *io.in(0);
    if (s.ndim() == 0) io.Fail("input 'data' must have at least one axis, got shape ()");
    io.AssignOut(0, Shape{s[0], ProdOrUnknown(s, 1, s.ndim())});
  });
  return d;
}

OpDef ExpandDims() {
  OpDef d = CopyLike("expand_dims", "Inserts an axis of size 1 at `axis` (in [-ndim-1, ndim]).", true);
  DeclareParams<sdk::ExpandDimsParam>(d);
  SetShapeFn<sdk::ExpandDimsParam>(d, [](ShapeIO& io, const sdk::ExpandDimsParam& p) {
    const int64_t axis = p.axis;
    if (io.in(0)) {
      std::vector<int64_t> s = io.in(0)->dims();
      int64_t at = NormalizeAxis(io, axis, static_cast<int64_t>(s.size()) + 1, "axis");
      s.insert(s.begin() + at, 1);
      io.AssignOut(0, Shape(s));
    }
    if (io.out(0) && io.out(0)->ndim() > 0) {
      std::vector<int64_t> s = io.out(0)->dims();
      int64_t at = NormalizeAxis(io, axis, static_cast<int64_t>(s.size()), "axis");
      s.erase(s.begin() + at);
      io.AssignIn(0, Shape(s));
    }
  });
  return d;
}

OpDef Copy() {
  OpDef d = CopyLike("_copy", "Copies the input.", false);
  SetShapeFn(d, SameShapeAll);
  return d;
}

// ---- Concat, SliceChannel -------------------------------------------------------------------------

// Concat's shape rule, MXNet's ConcatShape: every axis but `dim` agrees across inputs and
// output; the output's length along dim is the inputs' total. Up to `max_unknown` inputs of
// unknown length along dim share what the known output length leaves (1 for Concat; 2 for
// _rnn_param_concat, MXNet's RNNParamConcatShape, whose unknown parts are the first layer's input
// weights of the two directions, equal in size).
void ConcatShape(ShapeIO& io, int64_t dim, int max_unknown) {
  // Every axis but `dim` must agree: merge them from all known slots (dim itself set to -1).
  ShapeSlot common;
  size_t axis = 0;
  auto absorb = [&](const Shape& s, std::string_view what) {
    if (s.ndim() == 0) io.Fail("zero-dimensional arrays cannot be concatenated");
    axis = static_cast<size_t>(NormalizeAxis(io, dim, static_cast<int64_t>(s.ndim()), "dim"));
    Shape t = s;
    t[axis] = -1;
    if (!common) {
      common = t;
      return;
    }
    bool ok = common->ndim() == t.ndim();
    for (size_t k = 0; ok && k < t.ndim(); ++k) {
      if ((*common)[k] < 0) {
        (*common)[k] = t[k];
      } else if (t[k] >= 0 && t[k] != (*common)[k]) {
        ok = false;
      }
    }
    if (!ok) {
      io.Fail(fmt::format("shape mismatch for {}: has {}, expected {} (all axes but dim={} must match)", what,
                          s.ToString(), common->ToString(), dim));
    }
  };
  for (size_t i = 0; i < io.num_in(); ++i)
    if (io.in(i)) absorb(*io.in(i), fmt::format("input '{}'", io.in_name(i)));
  if (io.out(0)) absorb(*io.out(0), "output 'output'");
  if (!common) return;
  int64_t total = 0;
  std::vector<size_t> unknown;
  for (size_t i = 0; i < io.num_in(); ++i) {
    Shape in = *common;
    if (io.in(i)) in[axis] = (*io.in(i))[axis];
    io.AssignIn(i, in);
    if (in[axis] < 0) {
      unknown.push_back(i);
    } else {
      total += in[axis];
    }
  }
  Shape out = *common;
  if (unknown.empty()) out[axis] = total;
  io.AssignOut(0, out);
  // Inputs of unknown length along dim: the output's length fixes them.
  const int64_t out_len = (*io.out(0))[axis];
  const auto n_unknown = static_cast<int64_t>(unknown.size());
  if (n_unknown >= 1 && n_unknown <= max_unknown && out_len >= 0) {
    if (out_len < total) {
      io.Fail(fmt::format("output length {} along dim {} is smaller than the inputs' total {}", out_len, axis, total));
    }
    if ((out_len - total) % n_unknown != 0) {
      io.Fail(fmt::format("the {} inputs of unknown length cannot share the output's remaining {} along dim {}",
                          n_unknown, out_len - total, axis));
    }
    for (size_t i : unknown) {
      Shape in = *io.in(i);
      in[axis] = (out_len - total) / n_unknown;
      io.AssignIn(i, in);
    }
  }
}

OpDef ConcatLike(std::string name, std::string description, int max_unknown) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  DeclareParams<sdk::ConcatParam>(d);
  MarkInternal(d, {"data_format"});  // the fusion pass's blocked layouts
  d.list_inputs = Numbered("arg", "num_args");
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::ConcatParam>(
      d, [max_unknown](ShapeIO& io, const sdk::ConcatParam& p) { ConcatShape(io, p.dim, max_unknown); });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Concat";
  return d;
}

OpDef Concat() { return ConcatLike("Concat", "Joins num_args arrays along `dim`; all other axes must match.", 1); }

// Gluon's rnn layers join their parameters with it before the fused RNN: a Concat whose shape
// inference also fills the unknown input-weight lengths from the RNN's parameter size.
OpDef RnnParamConcat() {
  return ConcatLike("_rnn_param_concat",
                    "Concat for Gluon's RNN parameters: up to two inputs of unknown length along `dim` share the "
                    "length the output leaves (MXNet's RNNParamConcatShape).",
                    2);
}

OpDef SliceChannel() {
  OpDef d;
  d.name = "SliceChannel";
  d.description =
      "Splits `axis` into num_outputs equal parts (dropping the axis when squeeze_axis and the parts "
      "have length 1).";
  DeclareParams<sdk::SliceChannelParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Numbered("output", "num_outputs");
  SetShapeFn<sdk::SliceChannelParam>(d, [](ShapeIO& io, const sdk::SliceChannelParam& p) {
    const int64_t n = p.num_outputs;
    const bool squeeze = p.squeeze_axis;
    const int64_t axis_attr = p.axis;
    if (io.in(0)) {
      Shape data = *io.in(0);
      const size_t ax = static_cast<size_t>(NormalizeAxis(io, axis_attr, static_cast<int64_t>(data.ndim()), "axis"));
      const int64_t len = data[ax];
      if (len >= 0 && len % n != 0) {
        io.Fail(fmt::format("cannot split axis {} of input 'data' {} into {} equal parts", ax, data.ToString(), n));
      }
      if (squeeze && len >= 0 && len != n) {
        io.Fail(fmt::format("squeeze_axis needs axis {} of input 'data' {} to have length num_outputs ({})", ax,
                            data.ToString(), n));
      }
      std::vector<int64_t> part = data.dims();
      if (squeeze) {
        part.erase(part.begin() + static_cast<std::ptrdiff_t>(ax));
      } else {
        part[ax] = len >= 0 ? len / n : -1;
      }
      for (size_t i = 0; i < io.num_out(); ++i) io.AssignOut(i, Shape(part));
    }
    // Every part has one shape: merge what is known of each (a consumer may know one part's
    // extents that data leaves unknown, e.g. data (0, 10) and part 1 added to a (5,) array), then
    // back to data: n parts long along the axis.
    for (size_t i = 0; i < io.num_out(); ++i)
      if (io.out(i))
        for (size_t j = 0; j < io.num_out(); ++j) io.AssignOut(j, *io.out(i));
    if (io.num_out() == 0 || !io.out(0)) return;
    std::vector<int64_t> s = io.out(0)->dims();
    const int64_t nd = static_cast<int64_t>(s.size()) + (squeeze ? 1 : 0);
    const size_t ax = static_cast<size_t>(NormalizeAxis(io, axis_attr, nd, "axis"));
    if (squeeze) {
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(ax), n);
    } else if (s[ax] >= 0) {
      s[ax] *= n;
    }
    io.AssignIn(0, Shape(s));
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_SliceChannel";
  return d;
}

// ---- transpose ------------------------------------------------------------------------------------

OpDef Transpose() {
  OpDef d;
  d.name = "transpose";
  d.description = "Permutes axes: output axis i is input axis axes[i]; empty axes reverses them.";
  DeclareParams<sdk::TransposeParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::TransposeParam>(d, [](ShapeIO& io, const sdk::TransposeParam& p) {
    std::vector<int64_t> axes = p.axes;
    const ShapeSlot& known = io.in(0) ? io.in(0) : io.out(0);
    if (!known) return;
    const size_t nd = known->ndim();
    if (axes.empty()) {
      for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(nd - 1 - i));
    }
    if (axes.size() != nd) {
      io.Fail(fmt::format("axes {} has {} entries but input 'data' has {} axes ({})", sdk::FormatTuple(axes),
                          axes.size(), nd, SlotString(io.in(0))));
    }
    std::vector<bool> seen(nd, false);
    for (int64_t& a : axes) {
      a = NormalizeAxis(io, a, static_cast<int64_t>(nd), "axes");
      if (seen[static_cast<size_t>(a)]) io.Fail(fmt::format("axes {} is not a permutation", sdk::FormatTuple(axes)));
      seen[static_cast<size_t>(a)] = true;
    }
    if (io.in(0)) {
      Shape out = UnknownShape(nd);
      for (size_t i = 0; i < nd; ++i) out[i] = (*io.in(0))[static_cast<size_t>(axes[i])];
      io.AssignOut(0, out);
    }
    Shape in = UnknownShape(nd);
    for (size_t i = 0; i < nd; ++i) in[static_cast<size_t>(axes[i])] = (*io.out(0))[i];
    io.AssignIn(0, in);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_transpose";
  return d;
}

// ---- slice, slice_axis, SwapAxis ------------------------------------------------------------------

OpDef Slice() {
  OpDef d;
  d.name = "slice";
  d.description =
      "output = data[begin:end:step] per axis (NumPy basic slicing; None = the axis' default, axes past "
      "begin's length are kept whole).";
  DeclareParams<sdk::SliceParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(0)) io.AssignOut(0, SlicedShape(io, *io.in(0)));
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_slice";
  return d;
}

OpDef SliceAxis() {
  OpDef d;
  d.name = "slice_axis";
  d.description = "output = data[..., begin:end, ...] along `axis` (negative begin/end count from the end).";
  DeclareParams<sdk::SliceAxisParam>(d);  // `end` is required but may be None (MXNet requires the key)
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::SliceAxisParam>(d, [](ShapeIO& io, const sdk::SliceAxisParam& p) {
    if (!io.in(0)) return;
    Shape out = *io.in(0);
    const int64_t nd = static_cast<int64_t>(out.ndim());
    const size_t axis = static_cast<size_t>(NormalizeAxis(io, p.axis, nd, "axis"));
    if (out[axis] < 0) {
      io.AssignOut(0, out);
      return;
    }
    int ax = 0;
    try {
      out[axis] = sdk::SliceAxisOpRange(p, io.in(0)->dims(), &ax).len;
    } catch (const std::exception& e) {
      io.Fail(fmt::format("input 'data' {}: {}", io.in(0)->ToString(), e.what()));
    }
    io.AssignOut(0, out);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_slice_axis";
  return d;
}

OpDef SwapAxis() {
  OpDef d;
  d.name = "SwapAxis";
  d.description = "Exchanges axes dim1 and dim2 (a transpose); its gradient swaps them back.";
  DeclareParams<sdk::SwapAxisParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::SwapAxisParam>(d, [](ShapeIO& io, const sdk::SwapAxisParam& p) {
    if (!io.in(0)) return;
    Shape out = *io.in(0);
    const int64_t nd = static_cast<int64_t>(out.ndim());
    const size_t a = static_cast<size_t>(NormalizeAxis(io, p.dim1, nd, "dim1"));
    const size_t b = static_cast<size_t>(NormalizeAxis(io, p.dim2, nd, "dim2"));
    std::swap(out[a], out[b]);
    io.AssignOut(0, out);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_SwapAxis";
  return d;
}

OpDef BlockGrad() {
  OpDef d;
  d.name = "BlockGrad";
  d.description = "Identity in forward; stops the gradient (the input gets zeros).";
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kZero;
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

}  // namespace

void RegisterTensorShapeOps(OpRegistry& r) {
  r.Register(Flatten());
  r.Register(Reshape());
  r.Register(ExpandDims());
  r.Register(Copy());
  r.Register(Concat());
  r.Register(RnnParamConcat());
  r.Register(SliceChannel());
  r.Register(Transpose());
  r.Register(Slice());
  r.Register(SliceAxis());
  r.Register(SwapAxis());
  r.Register(BlockGrad());
  r.AddAlias("crop", "slice");
  r.AddAlias("stop_gradient", "BlockGrad");
  r.AddAlias("flatten", "Flatten");
  r.AddAlias("reshape", "Reshape");
  r.AddAlias("identity", "_copy");
  r.AddAlias("concat", "Concat");
  r.AddAlias("split", "SliceChannel");
  r.AddAlias("swapaxes", "SwapAxis");  // MXNet's alias; Gluon's NTC rnn layers call it
}

}  // namespace weft::opdef

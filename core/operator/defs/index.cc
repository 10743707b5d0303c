// The index family (docs/adding-an-op.md, "Op families"): ops that read or return positions.
// Selection: where, take, pick, one_hot, Embedding; positions of extremes: argmax, argmin,
// argmax_channel; ordering: topk, sort, argsort. Shape rules are MXNet 1.9's
// (src/operator/tensor/control_flow_op.h, indexing_op.h, broadcast_reduce_op.h, ordering_op-inl.h).
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/index.hpp"
#include "weft/sdk/ops/sort.hpp"

namespace weft::opdef {
namespace {

// Index inputs keep their own dtype; the output (and any unknown data input) takes input `from`'s.
std::function<void(const AttrMap&, std::vector<int>&, std::vector<int>&, std::vector<int>&)> TypeOfInput(
    size_t from, std::string op) {
  return [from, op = std::move(op)](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[from] < 0) in[from] = out[0];
    if (in[from] < 0) return;
    for (int& o : out) AssignType(op, "output", "output", o, in[from]);
    for (int& i : in)
      if (i < 0) i = in[from];
  };
}

OpDef Where() {
  OpDef d;
  d.name = "where";
  d.description =
      "output = condition != 0 ? x : y element by element; condition has x's shape or is 1-D with x's first "
      "extent (one choice per row). condition gets no gradient.";
  d.list_inputs = Fixed({"condition", "x", "y"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    // MXNet's WhereOpShape infers nothing until condition's shape is fully known
    // (infer_shape_partial leaves x, y and the output as they were).
    if (!io.in(0) || !FullyKnown(*io.in(0))) return;
    for (size_t i : {1, 2})
      if (io.in(i)) io.AssignOut(0, *io.in(i));
    if (!io.out(0)) return;
    const Shape xs = *io.out(0);
    io.AssignIn(1, xs);
    io.AssignIn(2, xs);
    const ShapeSlot& c = io.in(0);
    if (c && c->ndim() == 1 && xs.ndim() > 1) {
      if ((*c)[0] >= 0 && xs[0] >= 0 && (*c)[0] != xs[0]) {
        io.Fail(fmt::format("input 'condition' {} must have x's shape {} or be 1-D of length {}", c->ToString(),
                            xs.ToString(), xs[0]));
      }
      return;
    }
    io.AssignIn(0, xs);
  });
  d.infer_type = TypeOfInput(1, "where");
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_where";
  d.backward_uses = kUsesInputs;
  return d;
}

OpDef Take() {
  OpDef d;
  d.name = "take";
  d.description =
      "Gathers slices of `a` along `axis` at the positions in `indices` (values truncated to integers): output "
      "shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. mode clip clamps positions into range, wrap takes "
      "them modulo the extent, raise fails on one out of range. The gradient of `a` sums out_grad slices per "
      "position; indices get none.";
  DeclareParams<sdk::TakeParam>(d);
  d.list_inputs = Fixed({"a", "indices"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::TakeParam>(d, [](ShapeIO& io, const sdk::TakeParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& a = *io.in(0);
    if (a.ndim() == 0) io.Fail("input 'a' must have at least one axis");
    const size_t axis = static_cast<size_t>(NormalizeAxis(io, p.axis, static_cast<int64_t>(a.ndim()), "axis"));
    std::vector<int64_t> out(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(axis));
    for (int64_t e : io.in(1)->dims()) out.push_back(e);
    out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(axis) + 1, a.end());
    io.AssignOut(0, Shape(out));
  });
  d.infer_type = TypeOfInput(0, "take");
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_take";
  d.backward_uses = kUsesInputs;
  return d;
}

OpDef Pick() {
  OpDef d;
  d.name = "pick";
  d.description =
      "output[i…, j…] = data[i…, index[i…, j…], j…]: one element along `axis` per position, chosen by `index` "
      "(truncated; clip clamps, wrap takes the value modulo the extent). index has the output's shape. The "
      "gradient of data scatters out_grad to the picked elements; index gets none.";
  DeclareParams<sdk::PickParam>(d);
  d.list_inputs = Fixed({"data", "index"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::PickParam>(d, [](ShapeIO& io, const sdk::PickParam& p) {
    if (!io.in(0)) return;
    std::vector<int64_t> s = io.in(0)->dims();
    const size_t axis = static_cast<size_t>(NormalizeAxis(io, *p.axis, static_cast<int64_t>(s.size()), "axis"));
    std::vector<int64_t> kept = s;
    kept[axis] = 1;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
    if (s.empty()) s.push_back(1);
    io.AssignOut(0, Shape(p.keepdims ? kept : s));
    // MXNet's PickOpShape: index has data's shape without the axis, keepdims or not (Gluon's
    // losses pass it so). An index with the axis kept at 1 holds the same elements in the same
    // order and is taken too.
    if (io.in(1) && p.keepdims && *io.in(1) == Shape(kept)) return;
    io.AssignIn(1, Shape(s));
  });
  d.infer_type = TypeOfInput(0, "pick");
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_pick";
  d.backward_uses = kUsesInputs;
  return d;
}

// ---- topk, sort, argsort ---------------------------------------------------------------------------

// The output shape of an ordering op keeping `k` elements along `axis` (None: of the flattened
// data); k < 1 keeps them all.
Shape OrderedShape(const ShapeIO& io, const Shape& in, std::optional<int64_t> axis, int64_t k) {
  if (!axis) {
    const int64_t n = ProdOrUnknown(in, 0, in.ndim());
    return Shape{k < 1 || n < 0 ? n : std::min(k, n)};
  }
  Shape out = in;
  const size_t a = static_cast<size_t>(NormalizeAxis(io, *axis, static_cast<int64_t>(in.ndim()), "axis"));
  if (k >= 1 && in[a] >= 0) {
    if (k > in[a])
      io.Fail(fmt::format("k={} is larger than the axis' extent {} of input 'data' {}", k, in[a], in.ToString()));
    out[a] = k;
  }
  return out;
}

template <class P>
OpDef Ordering(std::string name, std::string description) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  d.list_inputs = Fixed({"data"});
  DeclareParams<P>(d);
  return d;
}

bool TwoTopkOutputs(const AttrMap& a) {
  const sdk::TopkReturn r = sdk::ParseParams<sdk::TopkParam>(a).ret_typ;
  return r == sdk::TopkReturn::kBoth || r == sdk::TopkReturn::kValue;
}

OpDef Topk() {
  using sdk::TopkReturn;
  OpDef d = Ordering<sdk::TopkParam>(
      "topk",
      "The k largest (smallest with is_ascend) elements along `axis`, in order: ret_typ value gives "
      "them (indices hidden), indices their positions (as `dtype`), both the two, mask an array of "
      "data's shape with 1 where an element is among them. k < 1 takes all. Ties keep the earlier "
      "position first. value/both have a gradient (scattered back), indices/mask none.");
  d.list_outputs = [](const AttrMap& a) {
    return TwoTopkOutputs(a) ? std::vector<std::string>{"output0", "output1"} : std::vector<std::string>{"output"};
  };
  d.num_visible_outputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::TopkParam>(a).ret_typ == sdk::TopkReturn::kBoth ? 2 : 1;
  };
  SetShapeFn<sdk::TopkParam>(d, [](ShapeIO& io, const sdk::TopkParam& p) {
    if (!io.in(0)) return;
    if (p.ret_typ == TopkReturn::kMask) {
      io.AssignOut(0, *io.in(0));
      return;
    }
    const Shape out = OrderedShape(io, *io.in(0), p.axis, p.k);
    for (size_t i = 0; i < io.num_out(); ++i) io.AssignOut(i, out);
  });
  d.infer_type = [](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    const sdk::TopkParam p = sdk::ParseParams<sdk::TopkParam>(a);
    const int idx = p.dtype.code;
    if (p.ret_typ == TopkReturn::kIndices) {
      AssignType("topk", "output", "output", out[0], idx);
    } else {
      if (in[0] < 0) in[0] = out[0];
      if (in[0] >= 0) AssignType("topk", "output", "output0", out[0], in[0]);
      if (TwoTopkOutputs(a)) AssignType("topk", "output", "output1", out[1], idx);
    }
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_topk";
  d.backward_uses = kUsesOutputs;
  return d;
}

OpDef Sort() {
  OpDef d = Ordering<sdk::SortParam>("sort",
                                     "data's elements sorted along `axis` (ascending unless is_ascend is False; ties "
                                     "keep their order); a hidden second output holds the positions. The gradient "
                                     "scatters back.");
  d.list_outputs = Fixed({"output0", "output1"});
  d.num_visible_outputs = [](const AttrMap&) { return 1; };
  SetShapeFn<sdk::SortParam>(d, [](ShapeIO& io, const sdk::SortParam& p) {
    if (!io.in(0)) return;
    const Shape out = OrderedShape(io, *io.in(0), p.axis, 0);
    io.AssignOut(0, out);
    io.AssignOut(1, out);
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_sort";
  d.backward_uses = kUsesOutputs;
  return d;
}

OpDef Argsort() {
  OpDef d = Ordering<sdk::ArgsortParam>("argsort",
                                        "The positions that sort data along `axis` (ascending unless is_ascend is "
                                        "False; ties keep their order), as `dtype`.");
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::ArgsortParam>(d, [](ShapeIO& io, const sdk::ArgsortParam& p) {
    if (io.in(0)) io.AssignOut(0, OrderedShape(io, *io.in(0), p.axis, 0));
  });
  d.infer_type = [](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("argsort", "output", "output", out[0], sdk::ParseParams<sdk::ArgsortParam>(a).dtype.code);
  };
  d.grad = GradKind::kNone;
  return d;
}

OpDef OneHot() {
  OpDef d;
  d.name = "one_hot";
  d.description =
      "output[..., j] = on_value if j == indices[...] else off_value; indices out of [0, depth) give a "
      "row of off_value.";
  DeclareParams<sdk::OneHotParam>(d);
  d.list_inputs = Fixed({"indices"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::OneHotParam>(d, [](ShapeIO& io, const sdk::OneHotParam& p) {
    if (!io.in(0)) return;
    std::vector<int64_t> s = io.in(0)->dims();
    s.push_back(p.depth);
    io.AssignOut(0, Shape(s));
  });
  // The indices keep their own dtype (MXNet needs it known; weft leaves it to the caller).
  d.infer_type = [](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("one_hot", "output", "output", out[0], sdk::ParseParams<sdk::OneHotParam>(a).dtype.code);
  };
  d.grad = GradKind::kNone;
  return d;
}

OpDef Embedding() {
  OpDef d;
  d.name = "Embedding";
  d.description =
      "output[..., :] = weight[data[...], :]: looks up rows of weight (input_dim, output_dim) by the index "
      "values of data (cast to integers, clipped to [0, input_dim − 1] as MXNet); output shape is data's "
      "plus (output_dim,). The weight gradient sums out_grad rows per index; data gets none.";
  DeclareParams<sdk::EmbeddingParam>(d);
  d.list_inputs = Fixed({"data", "weight"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::EmbeddingParam>(d, [](ShapeIO& io, const sdk::EmbeddingParam& p) {
    const int64_t in_dim = p.input_dim, out_dim = p.output_dim;
    io.AssignIn(1, Shape{in_dim, out_dim});
    if (!io.in(0)) return;
    std::vector<int64_t> s = io.in(0)->dims();
    s.push_back(out_dim);
    io.AssignOut(0, Shape(s));
  });
  // data keeps its own dtype (indices); weight and output take `dtype`.
  d.infer_type = [](const AttrMap& a, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    const int t = sdk::ParseParams<sdk::EmbeddingParam>(a).dtype.code;
    AssignType("Embedding", "input", "weight", in[1], t);
    AssignType("Embedding", "output", "output", out[0], t);
    if (in[0] < 0) in[0] = t;
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Embedding";
  d.backward_uses = kUsesInputs;
  return d;
}

OpDef Argmax(std::string name, std::string what) {
  OpDef d;
  d.name = std::move(name);
  d.description = "Index of the " + what +
                  " element along `axis` (of the flattened input when None), as a value of the input's dtype "
                  "(MXNet); the first one on ties.";
  DeclareParams<sdk::ArgmaxParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<sdk::ArgmaxParam>(d, [](ShapeIO& io, const sdk::ArgmaxParam& p) {
    if (!io.in(0)) return;
    std::vector<int64_t> axes;
    if (p.axis) axes.push_back(*p.axis);
    io.AssignOut(0, ReducedShape(io, *io.in(0), axes, p.keepdims));
  });
  d.grad = GradKind::kNone;
  d.resources = kResourceTempSpace;
  return d;
}

OpDef ArgmaxChannel() {
  OpDef d;
  d.name = "argmax_channel";
  d.description = "argmax along the last axis (MXNet's argmax_channel): output shape data.shape[:-1].";
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    if (io.in(0)->ndim() == 0) io.Fail("input 'data' must have at least one axis");
    io.AssignOut(0, ReducedShape(io, *io.in(0), {-1}, false));
  });
  return d;
}

}  // namespace

void RegisterIndexOps(OpRegistry& r) {
  r.Register(Where());
  r.Register(OneHot());
  r.Register(Embedding());
  r.Register(Argmax("argmax", "largest"));
  r.Register(Argmax("argmin", "smallest"));
  r.Register(ArgmaxChannel());
  r.Register(Take());
  r.Register(Pick());
  r.Register(Topk());
  r.Register(Sort());
  r.Register(Argsort());
}

}  // namespace weft::opdef

// MXNet's indexing and assignment ops that its NDArray frontend calls for `x[key]` and
// `x[key] = value` (mxnet/ndarray/ndarray.py): _slice_assign and _slice_assign_scalar (basic
// slices), gather_nd / scatter_nd / _scatter_set_nd (advanced indexing), _set_value (x[:] = v on a
// sparse array), _onehot_encode (mx.nd.onehot_encode) and _histogram (mx.nd.histogram). Shape
// rules are MXNet 1.9's (src/operator/tensor/matrix_op.cc, indexing_op.h, histogram-inl.h,
// src/ndarray/ndarray_function.h).
#include "weft/sdk/ops/indexing.hpp"
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/slice.hpp"

namespace weft::opdef {
namespace {

OpDef SliceAssign() {
  OpDef d;
  d.name = "_slice_assign";
  d.description =
      "output = lhs with lhs[begin:end:step] replaced by rhs (the box of slice); MXNet's frontend runs it in "
      "place (out = lhs). Not differentiable (MXNet registers no gradient).";
  DeclareParams<sdk::SliceParam>(d);
  d.list_inputs = Fixed({"lhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(0)) io.AssignOut(0, *io.in(0));
    if (io.out(0)) io.AssignIn(0, *io.out(0));
    if (FullyKnown(io.in(0))) io.AssignIn(1, SlicedShape(io, *io.in(0)));
  });
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

OpDef SliceAssignScalar() {
  OpDef d;
  d.name = "_slice_assign_scalar";
  d.description = "output = data with data[begin:end:step] set to `scalar` (in place from MXNet's frontend).";
  DeclareParams<sdk::SliceAssignScalarParam>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

OpDef SetValue() {
  OpDef d;
  d.name = "_set_value";
  d.description = "Sets every element of the output array (given with out=) to `src`.";
  DeclareParams<sdk::SetValueParam>(d);
  d.list_inputs = Fixed({});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO&) {});  // the output array given by the caller has the shape
  d.infer_type = [](const AttrMap&, std::vector<int>&, std::vector<int>&, std::vector<int>&) {};
  return d;
}

// gather_nd: indices (M, Y...) address the first M axes of data (D0 … Dn−1); output Y + D[M:].
Shape GatheredShape(const ShapeIO& io, const Shape& data, const Shape& indices) {
  if (indices.ndim() == 0) io.Fail("input 'indices' must have at least one axis (M, ...)");
  const int64_t m = indices[0];
  if (m > static_cast<int64_t>(data.ndim()) || m < 1)
    io.Fail(fmt::format("indices {} address {} axes but data {} has {}", indices.ToString(), m, data.ToString(),
                        data.ndim()));
  std::vector<int64_t> out(indices.begin() + 1, indices.end());
  out.insert(out.end(), data.begin() + m, data.end());
  if (out.empty()) out.push_back(1);  // MXNet's legacy shape for a full index
  return Shape(out);
}

// MXNet's type rule of gather_nd, scatter_nd and _scatter_set_nd (indexing_op.h): the output has
// the data's dtype (and _scatter_set_nd's rhs the lhs's); the indices keep a dtype of their own,
// any, and are left undecided when the caller gives none (MXNet's infer_type reports them).
void SetNdTypeRule(OpDef& d, bool with_lhs) {
  d.infer_type = [name = d.name, with_lhs](const AttrMap&, std::vector<int>& in, std::vector<int>& out,
                                           std::vector<int>&) {
    const size_t data_slots = with_lhs ? 2 : 1;
    int t = out[0];
    for (size_t i = 0; i < data_slots && t < 0; ++i) t = in[i];
    if (t < 0) return;
    AssignType(name, "output", "output", out[0], t);
    const std::vector<std::string> names =
        with_lhs ? std::vector<std::string>{"lhs", "rhs"} : std::vector<std::string>{"data"};
    for (size_t i = 0; i < data_slots; ++i) AssignType(name, "input", names[i], in[i], t);
  };
}

OpDef GatherNd() {
  OpDef d;
  d.name = "gather_nd";
  d.description =
      "output[y…, rest…] = data[indices[0, y…], …, indices[M−1, y…], rest…] for indices of shape (M, Y…): "
      "output shape Y + data.shape[M:]. Negative positions count from the end (MXNet). The data gradient "
      "sums out_grad into the addressed elements; indices get none.";
  d.list_inputs = Fixed({"data", "indices"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (FullyKnown(io.in(0)) && FullyKnown(io.in(1))) io.AssignOut(0, GatheredShape(io, *io.in(0), *io.in(1)));
  });
  SetNdTypeRule(d, false);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_gather_nd";
  d.backward_uses = kUsesInputs;
  return d;
}

OpDef ScatterNd(std::string name, std::string description, std::vector<std::string> inputs) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  DeclareParams<sdk::ScatterNdParam>(d);
  d.list_inputs = Fixed(inputs);
  d.list_outputs = Fixed({"output"});
  const bool with_lhs = inputs.size() == 3;
  SetShapeFn<sdk::ScatterNdParam>(d, [with_lhs](ShapeIO& io, const sdk::ScatterNdParam& p) {
    const Shape out(p.shape);
    io.AssignOut(0, out);
    if (with_lhs) io.AssignIn(0, out);
    const size_t data = with_lhs ? 1 : 0;
    if (FullyKnown(io.in(data + 1))) io.AssignIn(data, GatheredShape(io, out, *io.in(data + 1)));
  });
  SetNdTypeRule(d, with_lhs);
  return d;
}

OpDef OneHotEncode() {
  OpDef d;
  d.name = "_onehot_encode";
  d.description =
      "output[i, j] = 1 if j == lhs[i] else 0, output of rhs's shape (N, depth); MXNet's deprecated "
      "mx.nd.onehot_encode(indices, out) passes out as rhs too.";
  d.list_inputs = Fixed({"lhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(1)) io.AssignOut(0, *io.in(1));
    if (io.out(0) && io.out(0)->ndim() != 2) io.Fail("output must be 2-D (N, depth)");
    if (io.out(0)) io.AssignIn(1, *io.out(0));
    if (io.out(0)) io.AssignIn(0, Shape{(*io.out(0))[0]});
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[1] >= 0) AssignType("_onehot_encode", "output", "output", out[0], in[1]);
  };
  return d;
}

OpDef Histogram() {
  OpDef d;
  d.name = "_histogram";
  d.description =
      "Counts data's elements per bin: bins given as an array of increasing edges, or as bin_cnt equal "
      "bins over range (min, max). A value equal to the last edge counts into the last bin; values outside "
      "are not counted. Outputs the counts (int64) and the bin edges (data's dtype).";
  DeclareParams<sdk::HistogramParam>(d);
  d.list_inputs = [](const AttrMap& a) {
    return sdk::ParseParams<sdk::HistogramParam>(a).bin_cnt ? std::vector<std::string>{"data"}
                                                            : std::vector<std::string>{"data", "bins"};
  };
  d.list_outputs = Fixed({"output0", "output1"});
  SetShapeFn<sdk::HistogramParam>(d, [](ShapeIO& io, const sdk::HistogramParam& p) {
    if (const std::optional<int64_t> n = p.bin_cnt) {
      io.AssignOut(0, Shape{*n});
      io.AssignOut(1, Shape{*n + 1});
    } else if (io.in(1)) {
      if (io.in(1)->ndim() != 1) io.Fail("input 'bins' must be 1-D, got " + io.in(1)->ToString());
      const int64_t edges = (*io.in(1))[0];
      io.AssignOut(0, Shape{edges < 0 ? -1 : std::max<int64_t>(edges - 1, 0)});
      io.AssignOut(1, Shape{edges});
    }
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    AssignType("_histogram", "output", "output0", out[0], static_cast<int>(DType::kInt64));
    if (in[0] >= 0) AssignType("_histogram", "output", "output1", out[1], in[0]);
    if (in.size() > 1 && in[1] < 0) in[1] = in[0];
  };
  return d;
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  r.Register(SliceAssign());
  r.AddAlias("_crop_assign", "_slice_assign");
  r.Register(SliceAssignScalar());
  r.AddAlias("_crop_assign_scalar", "_slice_assign_scalar");
  r.Register(SetValue());
  r.Register(GatherNd());
  OpDef scatter = ScatterNd("scatter_nd",
                            "output = zeros of `shape` with output[indices[0, y…], …, indices[M−1, y…], rest…] = "
                            "data[y…, rest…] (the inverse of gather_nd; with repeated positions one of the values "
                            "is kept). The data gradient is gather_nd of out_grad; indices get none.",
                            {"data", "indices"});
  scatter.grad = GradKind::kOp;
  scatter.backward_op = "_backward_scatter_nd";
  scatter.backward_uses = kUsesInputs;
  r.Register(std::move(scatter));
  OpDef set_nd = ScatterNd("_scatter_set_nd",
                           "output = lhs with the positions of indices set to rhs (scatter_nd onto lhs); MXNet's "
                           "frontend runs it in place for x[index_arrays] = value. Not differentiable.",
                           {"lhs", "rhs", "indices"});
  set_nd.inplace = InplacePairs({{0, 0}});
  r.Register(std::move(set_nd));
  r.Register(OneHotEncode());
  r.Register(Histogram());
}

}  // namespace weft::opdef

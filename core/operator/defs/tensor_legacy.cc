// Older MXNet ops its 1.9.1 frontend still exposes and its unit tests call: batch_take
// (src/operator/tensor/indexing_op.cc), fill_element_0index (a legacy NDArray function,
// src/ndarray/ndarray.cc), _identity_with_attr_like_rhs (elemwise_unary_op_basic.cc), and the
// alias choose_element_0index of pick.
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

// Input `i` is fixed to dtype `t` (MXNet's int32 index arrays); the others and the output share
// input `data`'s.
void AssignInputType(const std::string& op, const std::string& name, int& slot, DType t) {
  AssignType(op, "input", name, slot, static_cast<int>(t));
}

OpDef BatchTake() {
  OpDef d;
  d.name = "batch_take";
  d.description =
      "output[i] = a[i, indices[i]] with `a` viewed as (rows, last extent): one element per row, positions "
      "clipped into [0, last extent). indices (int32, as MXNet) has one element per row of `a` and gives the "
      "output's shape. No gradient (MXNet registers none): binding it with a gradient request fails.";
  d.list_inputs = Fixed({"a", "indices"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& a = *io.in(0);
    if (a.ndim() == 0) io.Fail("input 'a' must have at least one axis");
    const int64_t rows = ProdOrUnknown(a, 0, a.ndim() - 1);
    if (!io.in(1)) return;
    const Shape& idx = *io.in(1);
    if (rows >= 0 && FullyKnown(idx) && idx.Size() != rows)
      io.Fail(fmt::format("input 'indices' {} must have one element per row of 'a' {} ({} rows)", idx.ToString(),
                          a.ToString(), rows));
    io.AssignOut(0, idx);
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    AssignInputType("batch_take", "indices", in[1], DType::kInt32);
    if (in[0] < 0) in[0] = out[0];
    if (in[0] >= 0) AssignType("batch_take", "output", "output", out[0], in[0]);
  };
  d.grad = GradKind::kNone;
  d.no_gradient_is_error = true;
  return d;
}

OpDef FillElement0Index() {
  OpDef d;
  d.name = "fill_element_0index";
  d.description =
      "lhs with output[i, rhs[i]] = mhs[i] for every row i of the 2-D lhs (rhs truncated to integers; a row whose "
      "position is outside [0, columns) is left as it was, as MXNet). mhs and rhs are 1-D of lhs's row count; all "
      "three share lhs's dtype. No gradient (a legacy NDArray function in MXNet).";
  d.list_inputs = Fixed({"lhs", "mhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.out(0)) io.AssignIn(0, *io.out(0));
    if (!io.in(0)) return;
    const Shape& l = *io.in(0);
    if (l.ndim() != 2) io.Fail(fmt::format("input 'lhs' {} must be 2-D (a matrix)", l.ToString()));
    io.AssignIn(1, Shape{l[0]});
    io.AssignIn(2, Shape{l[0]});
    io.AssignOut(0, l);
  });
  d.grad = GradKind::kNone;
  return d;
}

OpDef IdentityWithAttrLikeRhs() {
  OpDef d;
  d.name = "_identity_with_attr_like_rhs";
  d.description =
      "lhs unchanged; rhs must have its shape and dtype, so a known rhs gives lhs its shape in shape inference "
      "(backward inference through a constraint). The gradient goes to lhs; rhs gets zeros.";
  d.list_inputs = Fixed({"lhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_identity_with_attr_like_rhs";
  d.inplace = InplacePairs({{0, 0}});
  return d;
}

}  // namespace

void RegisterTensorLegacyOps(OpRegistry& r) {
  r.Register(BatchTake());
  r.Register(FillElement0Index());
  r.Register(IdentityWithAttrLikeRhs());
  r.AddAlias("choose_element_0index", "pick");
}

}  // namespace weft::opdef

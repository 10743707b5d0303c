// The tensor family (docs/adding-an-op.md, "Op families"; the rest in defs/tensor_*.cc): products
// and dtype and fill ops dot, batch_dot, Cast, zeros_like, ones_like, and _sparse_retain. Shape rules are MXNet 1.9's
// (src/operator/tensor/dot-inl.h, elemwise_unary_op.h).
#include "operator/defs/builtin.h"
#include "operator/defs/elemwise_defs.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/cast.hpp"
#include "weft/sdk/ops/dot.hpp"

namespace weft::opdef {
namespace {

std::string DotError(const sdk::DotParam& p, const Shape& l, const Shape& r) {
  return fmt::format("shape mismatch between input 'lhs' {} and input 'rhs' {} (transpose_a={}, transpose_b={})",
                     l.ToString(), r.ToString(), sdk::FormatBool(p.transpose_a), sdk::FormatBool(p.transpose_b));
}

// lhs and rhs with the common attributes of dot and batch_dot.
OpDef ProductOp(std::string name, std::string description) {
  OpDef d;
  d.name = name;
  d.description = std::move(description);
  DeclareParams<sdk::DotParam>(d);
  d.list_inputs = Fixed({"lhs", "rhs"});
  d.list_outputs = Fixed({"output"});
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  d.backward_uses = kUsesInputs;
  d.resources = kResourceTempSpace;
  return d;
}

// dot: lhs (..., K) · rhs (K, ...) contracting lhs's last axis with rhs's first (first/last
// with the transposes); two vectors give (1,).
OpDef Dot() {
  OpDef d = ProductOp("dot",
                      "Tensor product contracting the last axis of lhs with the first axis of rhs "
                      "(the first of lhs with transpose_a, the last of rhs with transpose_b).");
  SetShapeFn<sdk::DotParam>(d, [](ShapeIO& io, const sdk::DotParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& l = *io.in(0);
    const Shape& r = *io.in(1);
    const bool ta = p.transpose_a, tb = p.transpose_b;
    if (l.ndim() == 0 || r.ndim() == 0) io.Fail("scalar inputs are not supported");
    if (l.ndim() == 1 && r.ndim() == 1) {
      if (ta || tb) io.Fail("cannot transpose vectors");
      if (l[0] >= 0 && r[0] >= 0 && l[0] != r[0]) io.Fail(DotError(p, l, r));
      io.AssignOut(0, Shape{1});
      return;
    }
    // Split each side into (kept axes, contracted axes) as MXNet does.
    const size_t ln = l.ndim(), rn = r.ndim();
    std::vector<int64_t> lkeep, rkeep;
    int64_t lk, rk;
    if (ta) {
      lk = l[0];
      lkeep.assign(l.begin() + 1, l.end());
    } else {
      lk = ln > 1 ? l[ln - 1] : l[0];
      lkeep.assign(l.begin(), l.end() - 1);
    }
    if (tb) {
      rk = r[rn - 1];
      rkeep.assign(r.begin(), r.end() - 1);
    } else {
      rk = r[0];
      rkeep.assign(r.begin() + 1, r.end());
    }
    if (lk >= 0 && rk >= 0 && lk != rk) io.Fail(DotError(p, l, r));
    std::vector<int64_t> out;
    if (ln > 1) out.insert(out.end(), lkeep.begin(), lkeep.end());
    if (rn > 1) out.insert(out.end(), rkeep.begin(), rkeep.end());
    io.AssignOut(0, Shape(out));
  });
  return d;
}

OpDef BatchDot() {
  OpDef d = ProductOp("batch_dot",
                      "Batched matrix product: (B..., M, K) · (B..., K, N) -> (B..., M, N) with equal "
                      "batch axes, N-d inputs with N >= 3.");
  SetShapeFn<sdk::DotParam>(d, [](ShapeIO& io, const sdk::DotParam& p) {
    if (!io.in(0) || !io.in(1)) return;
    const Shape& l = *io.in(0);
    const Shape& r = *io.in(1);
    const bool ta = p.transpose_a, tb = p.transpose_b;
    const size_t n = l.ndim();
    if (n < 3 || r.ndim() != n) {
      io.Fail(fmt::format("inputs must have the same number of axes, at least 3; got 'lhs' {} and 'rhs' {}",
                          l.ToString(), r.ToString()));
    }
    // MXNet's BatchDotShape infers nothing unless lhs's last extent and rhs's second-to-last are
    // known (whatever the transposes): infer_shape_partial then gives an unknown output there too.
    if (l[n - 1] < 0 || r[n - 2] < 0) return;
    std::vector<int64_t> out;
    for (size_t i = 0; i + 2 < n; ++i) {
      if (l[i] >= 0 && r[i] >= 0 && l[i] != r[i]) io.Fail(DotError(p, l, r) + ": batch axes differ");
      out.push_back(l[i] >= 0 ? l[i] : r[i]);
    }
    const int64_t m = ta ? l[n - 1] : l[n - 2], lk = ta ? l[n - 2] : l[n - 1];
    const int64_t nn = tb ? r[n - 2] : r[n - 1], rk = tb ? r[n - 1] : r[n - 2];
    if (lk >= 0 && rk >= 0 && lk != rk) io.Fail(DotError(p, l, r));
    out.push_back(m);
    out.push_back(nn);
    io.AssignOut(0, Shape(out));
  });
  return d;
}

// One input, one output of the same shape.
OpDef SameShapeUnary(std::string name, std::string description) {
  OpDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, SameShapeAll);
  return d;
}

OpDef Cast() {
  OpDef d = SameShapeUnary("Cast", "Converts elements to `dtype` (C++ conversion rules).");
  DeclareParams<sdk::CastParam>(d);
  d.infer_type = [](const AttrMap& a, std::vector<int>&, std::vector<int>& out, std::vector<int>&) {
    AssignType("Cast", "output", "output", out[0], sdk::ParseParams<sdk::CastParam>(a).dtype.code);
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_Cast";
  return d;
}

OpDef FillLike(std::string name, std::string value) {
  OpDef d = SameShapeUnary(std::move(name), "An array of " + value + " with the input's shape and dtype.");
  d.grad = GradKind::kZero;
  return d;
}

// _sparse_retain (MXNet 1.9 src/operator/tensor/sparse_retain.cc; mx.nd.sparse.retain): the rows
// of a row_sparse `data` named by `indices`, as a row_sparse array of data's shape (the cpu's
// sparse kernel, tensor_sparse_ops.cc). Its dense kernel (the same file) computes the same values
// on a dense data, zero outside those rows: what the MXNet binding's bound graphs run on their
// dense copies of sparse arrays (MXNet's imperative call refuses a dense data; the binding too).
// Gradient: out_grad's rows at indices (_backward_sparse_retain), row_sparse (dense when dense).
OpDef SparseRetain() {
  OpDef d;
  d.name = "_sparse_retain";
  d.description =
      "The rows of row_sparse `data` named by `indices` (whole numbers in [0, rows), any numeric dtype), as a "
      "row_sparse array of data's shape storing those rows.";
  d.list_inputs = Fixed({"data", "indices"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(0)) io.AssignOut(0, *io.in(0));
  });
  // indices keep their own dtype (mx.nd.array makes them float32); the output is data's.
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    if (in[0] < 0) in[0] = out[0];
    if (in[0] >= 0) AssignType("_sparse_retain", "output", "output", out[0], in[0]);
  };
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_sparse_retain";
  d.backward_uses = kUsesInputs;
  return d;
}

// cast_storage (MXNet 1.9 src/operator/tensor/cast_storage.cc): the input in storage type `stype`.
// Its point is the storage, which weft's dense kernels do not see: the MXNet binding converts
// imperative calls itself (weft::CastStorage) and runs it in a bound graph on dense copies as the
// copy of its values (sparse_executor.h), storing the result in `stype`. No kernel computes it.
// Gradient: out_grad (MXNet's _copy of it).
OpDef CastStorage() {
  OpDef d = SameShapeUnary("cast_storage",
                           "The input converted to storage type `stype`: 'default' (dense), 'row_sparse' (the rows "
                           "holding a non-zero element) or 'csr' (the non-zero elements of a 2-d array).");
  AttrSpec stype;
  stype.name = "stype";
  stype.type = "enum";
  stype.doc = "Output storage type.";
  stype.choices = {"csr", "default", "row_sparse"};
  d.attrs.push_back(std::move(stype));
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_copy";
  return d;
}

// MXNet 1.9's scatter ops (src/operator/tensor/elemwise_scatter_op.cc): on a sparse lhs they
// compute only the values it stores, and their result stores the same rows (row_sparse) or elements
// (csr, the scalar ops) -- which only the sparse kernels see; on dense arrays (and, for the
// division, a lhs that is not row_sparse, which MXNet computes dense) they are the plain op, with
// its kernels and gradient (MXNet: _copy of out_grad for the scalar ops, _backward_div).
OpDef ScatterScalar(const char* name, const char* formula, const char* plain) {
  OpDef d = Scalar(name, formula, 0);
  d.description = std::string("output = ") + formula + " element by element (" + plain +
                  "); of a row_sparse or csr `data`, only the values it stores, the result storing the same "
                  "rows or elements.";
  return d;  // backward _backward<name>: the plain op's gradient kernel under this op's name
}

OpDef ScatterDiv() {
  OpDef d = Elemwise("_scatter_elemwise_div", "lhs / rhs", kUsesInputs);
  d.description =
      "output = lhs / rhs element by element (elemwise_div); of a row_sparse lhs, only the rows it stores, the "
      "result storing the same rows.";
  d.backward_op = "_backward_scatter_elemwise_div";  // elemwise_div's gradient kernel under this op's name
  return d;
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  r.Register(Dot());
  r.Register(BatchDot());
  r.Register(Cast());
  r.Register(SparseRetain());
  r.Register(CastStorage());
  r.Register(ScatterScalar("_scatter_plus_scalar", "data + scalar", "_plus_scalar"));
  r.Register(ScatterScalar("_scatter_minus_scalar", "data − scalar", "_minus_scalar"));
  r.Register(ScatterDiv());
  r.Register(FillLike("zeros_like", "zeros"));
  r.Register(FillLike("ones_like", "ones"));
  r.AddAlias("cast", "Cast");
}

}  // namespace weft::opdef

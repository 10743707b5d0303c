// Products, dtype, fill, lookup and comparison ops: dot, batch_dot, Cast, zeros_like, ones_like,
// one_hot, Embedding, _contrib_allclose. Shape rules
// are MXNet 1.9's (src/operator/tensor/dot-inl.h, elemwise_unary_op.h, indexing_op.h).
#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/cast.hpp"
#include "weft/sdk/ops/dot.hpp"
#include "weft/sdk/ops/elemwise_binary.hpp"
#include "weft/sdk/ops/index.hpp"

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

// _contrib_allclose (mx.nd.contrib.allclose; MXNet's test_utils.assert_almost_equal calls it on
// two arrays of one context and dtype): numpy.allclose as one 0-d uint8 flag.
OpDef AllClose() {
  OpDef d;
  d.name = "_contrib_allclose";
  d.description =
      "output = 1 when every |a − b| <= atol + rtol·|b| (equal values, infinities included, always pass; a NaN "
      "matches a NaN only with equal_nan), else 0: a 0-d uint8 array. a and b have one shape and dtype.";
  DeclareParams<sdk::AllCloseParam>(d);
  d.list_inputs = Fixed({"a", "b"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn(d, [](ShapeIO& io) {
    if (io.in(0)) io.AssignIn(1, *io.in(0));
    if (io.in(1)) io.AssignIn(0, *io.in(1));
    io.AssignOut(0, Shape{});
  });
  d.infer_type = [](const AttrMap&, std::vector<int>& in, std::vector<int>& out, std::vector<int>&) {
    AssignType("_contrib_allclose", "input", "b", in[1], in[0]);
    AssignType("_contrib_allclose", "input", "a", in[0], in[1]);
    AssignType("_contrib_allclose", "output", "output", out[0], static_cast<int>(DType::kUint8));
  };
  d.grad = GradKind::kNone;
  return d;
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  r.Register(AllClose());
  r.Register(Dot());
  r.Register(BatchDot());
  r.Register(Cast());
  r.Register(FillLike("zeros_like", "zeros"));
  r.Register(FillLike("ones_like", "ones"));
  r.Register(OneHot());
  r.Register(Embedding());
  r.AddAlias("cast", "Cast");
}

}  // namespace weft::opdef

// MXNet's linear-algebra ops (mx.nd.linalg / mx.sym.linalg): _linalg_gelqf (alias linalg_gelqf),
// the LQ factorisation. Shape rules and errors are MXNet 1.9's (src/operator/tensor/la_op.h).
#include "operator/defs/builtin.h"
#include "operator/op_util.h"

namespace weft::opdef {
namespace {

// A (..., m, n) with m <= n gives Q (..., m, n), row-orthonormal, and L (..., m, m), lower
// triangular, with A = L Q; batched over the leading axes. The gradient (MXNet's, after Walter &
// Lehmann and Seeger et al., "Auto-differentiating linear algebra") reads only Q and L.
OpDef Gelqf() {
  OpDef d;
  d.name = "_linalg_gelqf";
  d.description =
      "LQ factorisation of the matrices in the last two axes of A (m x n, m <= n, full rank m): Q (m x n) with "
      "orthonormal rows and L (m x m) lower triangular with A = L Q, as LAPACK's Householder QR of A's transpose "
      "gives them (signs included); float32 and float64.";
  d.list_inputs = Fixed({"A"});
  d.list_outputs = Fixed({"output0", "output1"});  // Q, L (MXNet names them by position)
  SetShapeFn(d, [](ShapeIO& io) {
    if (!io.in(0)) return;
    const Shape& a = *io.in(0);
    if (a.ndim() < 2) return;  // MXNet leaves the outputs unknown: "inferring shapes failed"
    const size_t n = a.ndim();
    if (a[n - 2] >= 0 && a[n - 1] >= 0 && a[n - 2] > a[n - 1]) {
      io.Fail(
          fmt::format("input A has shape {}: its last axis must be at least as long as the second to last "
                      "(MXNet: \"Last dimension must be >= than second to last\"); transpose it and use Q^T, "
                      "L^T",
                      a.ToString()));
    }
    io.AssignOut(0, a);
    std::vector<int64_t> l(a.begin(), a.end());
    l[n - 1] = a[n - 2];
    io.AssignOut(1, Shape(l));
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_linalg_gelqf";
  d.backward_uses = kUsesOutputs;
  return d;
}

}  // namespace

void RegisterTensorLinalgOps(OpRegistry& r) {
  r.Register(Gelqf());
  r.AddAlias("linalg_gelqf", "_linalg_gelqf");
}

}  // namespace weft::opdef

// The reduce family (docs/adding-an-op.md, "Op families"): sum, mean, max, min, prod, nansum,
// nanprod, norm, _square_sum over `axis` (with keepdims); argmax is in defs/index.cc. Shape rules
// are MXNet 1.9's legacy (non-NumPy) mode: reducing every axis without keepdims gives (1,), not ().
#include <algorithm>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "weft/sdk/ops/reduce.hpp"

namespace weft::opdef {
namespace {

// sum, mean, max, ... share attributes and shape rule; they differ in gradient.
template <class P = sdk::ReduceParam>
OpDef Reduce(std::string name, std::string what, uint32_t uses) {
  OpDef d;
  d.name = name;
  d.description = "The " + what +
                  " of the elements over `axis` (every axis when empty), keeping reduced axes with "
                  "length 1 when keepdims.";
  DeclareParams<P>(d);
  d.list_inputs = Fixed({"data"});
  d.list_outputs = Fixed({"output"});
  SetShapeFn<P>(d, [](ShapeIO& io, const P& p) {
    // "None" and "()" both mean every axis.
    bool exclude = false;  // norm has no exclude
    if constexpr (requires { p.exclude; }) exclude = p.exclude;
    if (io.in(0)) io.AssignOut(0, ReducedShape(io, *io.in(0), p.axis, p.keepdims, exclude));
  });
  d.grad = GradKind::kOp;
  d.backward_op = "_backward_" + name;
  d.backward_uses = uses;
  d.resources = kResourceTempSpace;
  return d;
}

// norm: the L1 or L2 norm over `axis` (MXNet 1.9 accepts one or two axes; two give the Frobenius
// norm, which is the L2 norm over both).
OpDef Norm() {
  OpDef d = Reduce<sdk::NormParam>("norm", "", kUsesInputs | kUsesOutputs);
  d.description =
      "The L1 (ord=1) or L2 (ord=2) norm over `axis` (every element when None; at most two axes), keeping reduced "
      "axes with length 1 when keepdims. Gradient out_grad·sign(x) (L1) or out_grad·x/norm (L2).";
  return d;
}

// _square_sum (MXNet 1.9 src/operator/tensor/square_sum.cc): sum(data², axis) fused, so that the
// gradient of a row_sparse weight stays row_sparse. MXNet runs it on row_sparse input only; weft
// also has a dense kernel, and the cpu's sparse kernel (tensor_sparse_ops.cc) gives MXNet's
// storage types for row_sparse data.
OpDef SquareSum() {
  OpDef d = Reduce("_square_sum", "", kUsesInputs);
  d.backward_op = "_backward_square_sum";  // MXNet's name
  d.description =
      "The sum of the squared elements over `axis` (every axis when empty), keeping reduced axes with length 1 "
      "when keepdims. Gradient 2·data·out_grad. MXNet's storage rule: row_sparse data gives row_sparse output "
      "(the data's stored rows) for axis=1 with keepdims, else dense.";
  return d;
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  r.Register(Reduce("sum", "sum", 0));
  r.Register(Reduce("mean", "mean", 0));
  r.Register(Reduce("max", "maximum", kUsesInputs | kUsesOutputs));
  r.Register(Reduce("min", "minimum", kUsesInputs | kUsesOutputs));
  r.Register(Reduce("prod", "product", kUsesInputs | kUsesOutputs));
  r.Register(Reduce("nansum", "sum (NaN counted as 0)", kUsesInputs));
  r.Register(Norm());
  r.Register(SquareSum());
  r.Register(Reduce("nanprod", "product (NaN counted as 1)", kUsesInputs | kUsesOutputs));
  r.AddAlias("sum_axis", "sum");
  r.AddAlias("max_axis", "max");
  r.AddAlias("min_axis", "min");
}

}  // namespace weft::opdef

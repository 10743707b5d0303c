// dot / batch_dot and their backward ops through OpenBLAS GEMM (float32, float64).
//
// MXNet's dot on n-d arrays: without transpose_a the lhs is a matrix (product of all but its last
// extent) x (last extent); with transpose_a it is (first extent) x (product of the rest), used
// transposed. The rhs likewise from the other side: (first) x (rest), or (all but last) x (last)
// used transposed with transpose_b. batch_dot does the same per leading batch index on
// (..., M, K) x (..., K, N) (operands' last two axes swapped by transpose_a / transpose_b).
//
// Gradients, with C = op(A) op(B):  dop(A) = dC op(B)^T,  dop(B) = op(A)^T dC, each written
// through GEMM's beta (0 for write, 1 for add-to) so req costs nothing.
#include <cblas.h>

#include <climits>

#include "tensor_kernels.h"
#include "weft/sdk/ops/dot.hpp"

namespace weft::cpu::tensor {
namespace {

// Row-major C (m x n, ldc) = op(A) op(B) + beta C.
template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta,
          T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // The product is empty: C = beta C, which BLAS would skip entirely.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j];
    return;
  }
  const auto op_a = ta ? CblasTrans : CblasNoTrans;
  const auto op_b = tb ? CblasTrans : CblasNoTrans;
  const auto I = [](int64_t v) { return static_cast<blasint>(v); };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, op_a, op_b, I(m), I(n), I(k), 1.0f, a, I(lda), b, I(ldb), beta, c, I(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, op_a, op_b, I(m), I(n), I(k), 1.0, a, I(lda), b, I(ldb), beta, c, I(ldc));
  }
}

// Geometry of one (batched) product: batch x [op(A) (m x k)] [op(B) (k x n)].
struct Geometry {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  int64_t lda() const { return ta ? m : k; }  // A stored k x m when transposed
  int64_t ldb() const { return tb ? k : n; }  // B stored n x k when transposed
};

Geometry DotGeometry(const KernelSetup& s, const TensorDesc& lhs, const TensorDesc& rhs, bool batched) {
  Geometry g;
  const auto p = s.Params<sdk::DotParam>();
  g.ta = p.transpose_a;
  g.tb = p.transpose_b;
  std::string shapes = " (lhs " + sdk::FormatTuple(lhs.shape) + ", rhs " + sdk::FormatTuple(rhs.shape) + ")";
  int64_t k2 = 0;
  if (batched) {
    if (lhs.ndim() < 3 || lhs.ndim() != rhs.ndim()) Invalid(s, "needs operands of equal rank >= 3" + shapes);
    for (int a = 0; a < lhs.ndim() - 2; ++a) {
      if (lhs.shape[static_cast<size_t>(a)] != rhs.shape[static_cast<size_t>(a)])
        Invalid(s, "batch extents differ" + shapes);
      g.batch *= lhs.shape[static_cast<size_t>(a)];
    }
    g.m = lhs.dim(g.ta ? -1 : -2);
    g.k = lhs.dim(g.ta ? -2 : -1);
    k2 = rhs.dim(g.tb ? -1 : -2);
    g.n = rhs.dim(g.tb ? -2 : -1);
  } else {
    if (lhs.ndim() < 1 || rhs.ndim() < 1) Invalid(s, "needs operands of rank >= 1" + shapes);
    // The contracted axis is lhs's first (transpose_a) or last, rhs's last (transpose_b) or first.
    const int ca = g.ta ? 0 : lhs.ndim() - 1, cb = g.tb ? rhs.ndim() - 1 : 0;
    g.k = lhs.dim(ca);
    k2 = rhs.dim(cb);
    g.m = 1;
    g.n = 1;
    for (int a = 0; a < lhs.ndim(); ++a)
      if (a != ca) g.m *= lhs.shape[static_cast<size_t>(a)];
    for (int a = 0; a < rhs.ndim(); ++a)
      if (a != cb) g.n *= rhs.shape[static_cast<size_t>(a)];
  }
  if (g.k != k2) Invalid(s, "inner extents differ: " + std::to_string(g.k) + " vs " + std::to_string(k2) + shapes);
  if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX) Unsupported(s, "matrix extents beyond 2^31 - 1" + shapes);
  return g;
}

class DotKernel {
 public:
  explicit DotKernel(const KernelSetup& s) {
    backward_ = s.op_name.rfind("_backward_", 0) == 0;
    if (backward_) {
      s.ExpectCounts(3, 2);  // out_grad, lhs, rhs -> lhs_grad, rhs_grad
    } else {
      s.ExpectCounts(2, 1);
    }
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    const size_t first = backward_ ? 1 : 0;
    g_ = DotGeometry(s, s.inputs[first], s.inputs[first + 1], s.op_name.find("batch_dot") != std::string::npos);
    const TensorDesc& c = backward_ ? s.inputs[0] : s.outputs[0];
    if (c.size() != g_.batch * g_.m * g_.n) {
      Invalid(s, "the product has " + std::to_string(g_.batch * g_.m * g_.n) + " elements, the " +
                     (backward_ ? "output gradient " : "output ") + std::to_string(c.size()));
    }
  }

  void Compute(const KernelCall& c) const {
    for (int32_t r : c.req) CheckReq(r);
    DispatchFloat("dot", c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t sa = g_.m * g_.k, sb = g_.k * g_.n, sc = g_.m * g_.n;
      const auto beta = [](int32_t req) { return req == WEFT_REQ_ADD ? T(1) : T(0); };
      if (!backward_) {
        const T* a = static_cast<const T*>(c.inputs[0].raw());
        const T* b = static_cast<const T*>(c.inputs[1].raw());
        T* out = static_cast<T*>(c.outputs[0].raw());
        if (sdk::IsNull(c.req[0])) return;
        for (int64_t i = 0; i < g_.batch; ++i) {
          Gemm(g_.ta, g_.tb, g_.m, g_.n, g_.k, a + i * sa, g_.lda(), b + i * sb, g_.ldb(), beta(c.req[0]), out + i * sc,
               g_.n);
        }
        return;
      }
      const T* dc = static_cast<const T*>(c.inputs[0].raw());
      const T* a = static_cast<const T*>(c.inputs[1].raw());
      const T* b = static_cast<const T*>(c.inputs[2].raw());
      T* da = static_cast<T*>(c.outputs[0].raw());
      T* db = static_cast<T*>(c.outputs[1].raw());
      for (int64_t i = 0; i < g_.batch; ++i) {
        if (!sdk::IsNull(c.req[0])) {
          if (!g_.ta) {  // dA (m x k) = dC op(B)^T
            Gemm(false, !g_.tb, g_.m, g_.k, g_.n, dc + i * sc, g_.n, b + i * sb, g_.ldb(), beta(c.req[0]), da + i * sa,
                 g_.k);
          } else {  // dA (k x m) = op(B) dC^T
            Gemm(g_.tb, true, g_.k, g_.m, g_.n, b + i * sb, g_.ldb(), dc + i * sc, g_.n, beta(c.req[0]), da + i * sa,
                 g_.m);
          }
        }
        if (!sdk::IsNull(c.req[1])) {
          if (!g_.tb) {  // dB (k x n) = op(A)^T dC
            Gemm(!g_.ta, false, g_.k, g_.n, g_.m, a + i * sa, g_.lda(), dc + i * sc, g_.n, beta(c.req[1]), db + i * sb,
                 g_.n);
          } else {  // dB (n x k) = dC^T op(A)
            Gemm(true, g_.ta, g_.n, g_.k, g_.m, dc + i * sc, g_.n, a + i * sa, g_.lda(), beta(c.req[1]), db + i * sb,
                 g_.k);
          }
        }
      }
    });
  }

 private:
  bool backward_ = false;
  Geometry g_;
};

}  // namespace

void RegisterDotKernels(KernelTable& t) {
  for (const char* op : {"dot", "_backward_dot", "batch_dot", "_backward_batch_dot"})
    AddAny<DotKernel>(t, op, kFloatMask);
}

}  // namespace weft::cpu::tensor

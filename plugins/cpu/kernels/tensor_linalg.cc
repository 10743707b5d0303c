// _linalg_gelqf (LQ factorisation) and its backward through OpenBLAS's LAPACK and BLAS (float32,
// float64), batched over the leading axes.
//
// Forward, per matrix A (m x n, m <= n, row-major): the row-major buffer of A is the column-major
// n x m matrix A^T, so LAPACK's Householder QR of A^T (geqrf, then orgqr for the explicit factor)
// runs on a copy of A in place: A^T = Q^T R gives Q (row-major m x n, the buffer orgqr leaves)
// and L = R^T (the lower triangle of the buffer's first m columns after geqrf). MXNet computes
// it the same way, so signs match its results.
//
// Backward (MXNet's formula, after Seeger et al., "Auto-differentiating linear algebra"):
//   M = L^T dL - dQ Q^T,  dA = L^-T (dQ + copyltu(M) Q),
// copyltu(M) being the symmetric matrix with M's lower triangle mirrored to the upper.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>
#include <vector>

#include "tensor_kernels.h"

// LAPACK's Fortran entry points, exported by libopenblas (Debian's libopenblas-dev ships no
// lapacke.h): column-major, arguments by pointer, `info` < 0 names a bad argument.
extern "C" {
void sgeqrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, float* tau, float* work,
             const blasint* lwork, blasint* info);
void dgeqrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, double* tau, double* work,
             const blasint* lwork, blasint* info);
void sorgqr_(const blasint* m, const blasint* n, const blasint* k, float* a, const blasint* lda, const float* tau,
             float* work, const blasint* lwork, blasint* info);
void dorgqr_(const blasint* m, const blasint* n, const blasint* k, double* a, const blasint* lda, const double* tau,
             double* work, const blasint* lwork, blasint* info);
}

namespace weft::cpu::tensor {
namespace {

void Geqrf(blasint m, blasint n, float* a, float* tau, float* work, blasint lwork, blasint* info) {
  sgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void Geqrf(blasint m, blasint n, double* a, double* tau, double* work, blasint lwork, blasint* info) {
  dgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, float* a, const float* tau, float* work, blasint lwork, blasint* info) {
  sorgqr_(&m, &n, &n, a, &m, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, double* a, const double* tau, double* work, blasint lwork, blasint* info) {
  dorgqr_(&m, &n, &n, a, &m, tau, work, &lwork, info);
}

// Row-major C (m x n) = alpha op(A) op(B) + beta C, A and B dense (leading dimensions = their widths).
template <typename T>
void Gemm(bool ta, bool tb, blasint m, blasint n, blasint k, T alpha, const T* a, const T* b, T beta, T* c) {
  const blasint lda = ta ? m : k, ldb = tb ? k : n;
  const auto oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
  } else {
    cblas_dgemm(CblasRowMajor, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
  }
}

// Batch of m x n matrices from the trailing axes of `a`; m <= n, both within LAPACK's int.
struct LqGeometry {
  int64_t batch = 1;
  blasint m = 0, n = 0;
};

LqGeometry Geometry(const KernelSetup& s, const TensorDesc& a) {
  if (a.ndim() < 2) Invalid(s, "input A needs at least 2 axes, has shape " + sdk::FormatTuple(a.shape));
  const int64_t m = a.dim(-2), n = a.dim(-1);
  if (m > n) {
    Invalid(s, "input A has shape " + sdk::FormatTuple(a.shape) +
                   ": its last axis must be at least as long as the second to last");
  }
  if (n > INT_MAX / std::max<int64_t>(m, 1)) Unsupported(s, "matrices beyond 2^31 - 1 elements");
  LqGeometry g;
  for (int i = 0; i < a.ndim() - 2; ++i) g.batch *= a.shape[static_cast<size_t>(i)];
  g.m = static_cast<blasint>(m);
  g.n = static_cast<blasint>(n);
  return g;
}

class GelqfKernel {
 public:
  explicit GelqfKernel(const KernelSetup& s) : op_(s.op_name) {
    backward_ = s.op_name.rfind("_backward_", 0) == 0;
    s.ExpectCounts(backward_ ? 4 : 1, backward_ ? 1 : 2);  // backward: dQ, dL, Q, L -> dA
    RequireSameDType(s);
    DispatchFloat(s.op_name.c_str(), s.inputs[0].dtype, [](auto) {});
    g_ = Geometry(s, backward_ ? s.inputs[2] : s.inputs[0]);
    const int64_t qs = g_.batch * g_.m * g_.n, ls = g_.batch * g_.m * g_.m;
    const std::vector<int64_t> want =
        backward_ ? std::vector<int64_t>{qs, ls, qs, ls, qs} : std::vector<int64_t>{qs, qs, ls};
    const size_t nin = s.inputs.size();
    for (size_t i = 0; i < want.size(); ++i) {
      const TensorDesc& t = i < nin ? s.inputs[i] : s.outputs[i - nin];
      if (t.size() != want[i]) Invalid(s, "array " + std::to_string(i) + " does not fit A's shape");
    }
  }

  void Compute(const KernelCall& c) const {
    for (int32_t r : c.req) CheckReq(r);
    DispatchFloat(op_.c_str(), c.inputs[0].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      backward_ ? Backward<T>(c) : Forward<T>(c);
    });
  }

 private:
  template <typename T>
  void Forward(const KernelCall& c) const {
    const blasint m = g_.m, n = g_.n;
    const int64_t qs = int64_t{m} * n, ls = int64_t{m} * m;
    const T* a = static_cast<const T*>(c.inputs[0].raw());
    std::vector<T> q(static_cast<size_t>(qs)), l(static_cast<size_t>(ls)), tau(static_cast<size_t>(m));
    std::vector<T> work;
    for (int64_t b = 0; b < g_.batch; ++b) {
      std::copy(a + b * qs, a + (b + 1) * qs, q.begin());
      if (m > 0) {
        // Workspace query (lwork = -1) once per matrix size, then the factorisation.
        blasint info = 0;
        T best = 0;
        Geqrf(n, m, q.data(), tau.data(), &best, -1, &info);
        T best_org = 0;
        Orgqr(n, m, q.data(), tau.data(), &best_org, -1, &info);
        const blasint lwork = static_cast<blasint>(std::max({best, best_org, T(1)}));
        work.resize(static_cast<size_t>(lwork));
        Geqrf(n, m, q.data(), tau.data(), work.data(), lwork, &info);
        Check(info, "geqrf");
        for (blasint j = 0; j < m; ++j)
          for (blasint i = 0; i < m; ++i)
            l[static_cast<size_t>(j * m + i)] = i <= j ? q[static_cast<size_t>(j * n + i)] : T(0);
        Orgqr(n, m, q.data(), tau.data(), work.data(), lwork, &info);
        Check(info, "orgqr");
      }
      CopyOrAdd(static_cast<T*>(c.outputs[0].raw()) + b * qs, q.data(), qs, c.outputs[0].dtype(), c.req[0]);
      CopyOrAdd(static_cast<T*>(c.outputs[1].raw()) + b * ls, l.data(), ls, c.outputs[1].dtype(), c.req[1]);
    }
  }

  template <typename T>
  void Backward(const KernelCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const blasint m = g_.m, n = g_.n;
    const int64_t qs = int64_t{m} * n, ls = int64_t{m} * m;
    const T* dq_all = static_cast<const T*>(c.inputs[0].raw());
    const T* dl_all = static_cast<const T*>(c.inputs[1].raw());
    const T* q_all = static_cast<const T*>(c.inputs[2].raw());
    const T* l_all = static_cast<const T*>(c.inputs[3].raw());
    std::vector<T> mm(static_cast<size_t>(ls)), da(static_cast<size_t>(qs));
    for (int64_t b = 0; b < g_.batch; ++b) {
      const T *dq = dq_all + b * qs, *dl = dl_all + b * ls, *q = q_all + b * qs, *l = l_all + b * ls;
      if (m > 0) {
        Gemm<T>(true, false, m, m, m, T(1), l, dl, T(0), mm.data());   // M = L^T dL
        Gemm<T>(false, true, m, m, n, T(-1), dq, q, T(1), mm.data());  //     - dQ Q^T
        for (blasint i = 0; i < m; ++i)
          for (blasint j = i + 1; j < m; ++j) mm[static_cast<size_t>(i * m + j)] = mm[static_cast<size_t>(j * m + i)];
        std::copy(dq, dq + qs, da.begin());
        Gemm<T>(false, false, m, n, m, T(1), mm.data(), q, T(1), da.data());  // dQ + copyltu(M) Q
        // dA = L^-T (...): a triangular solve with L transposed.
        if constexpr (std::is_same_v<T, float>) {
          cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0f, l, m, da.data(), n);
        } else {
          cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, l, m, da.data(), n);
        }
      }
      CopyOrAdd(static_cast<T*>(c.outputs[0].raw()) + b * qs, da.data(), qs, c.outputs[0].dtype(), c.req[0]);
    }
  }

  void Check(blasint info, const char* routine) const {
    if (info != 0) {
      throw sdk::Error(WEFT_ERR_INTERNAL, op_ + ": LAPACK " + routine + " failed with info " + std::to_string(info));
    }
  }

  std::string op_;
  bool backward_ = false;
  LqGeometry g_;
};

}  // namespace

void RegisterLinalgKernels(KernelTable& t) {
  for (const char* op : {"_linalg_gelqf", "_backward_linalg_gelqf"}) AddAny<GelqfKernel>(t, op, kFloatMask);
}

}  // namespace weft::cpu::tensor

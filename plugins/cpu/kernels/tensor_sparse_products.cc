// dot with a dense lhs and a csr rhs, and with a csr lhs and a row_sparse rhs, and their
// gradients, as sparse kernels (SDK 2.1). tensor_sparse_dot.cc holds csr·dense; the storage rules
// are MXNet 1.9's DotForwardInferStorageType / DotBackwardInferStorageType on the cpu
// (src/operator/tensor/dot-inl.h), checked against the real libmxnet:
//
//   dot(dense (m, K), csr (K, n))                          -> csr (m, n): every row stores the
//        columns the csr stores anywhere (zero or not), as MXNet's DotDnsCsrCsrImpl; also with
//        forward_stype='csr'
//   dot(dense, csr, forward_stype='default'), transpose_b either way -> dense
//   dot(csr (m, K), row_sparse (K, n)), forward_stype None or 'default' -> dense
//   dot(csr (K, m), row_sparse (K, n), transpose_a=True)   -> row_sparse (m, n) storing the
//        columns the csr stores in the rows the row_sparse stores (also with
//        forward_stype='row_sparse')
//   _backward_dot(out_grad dense, csr lhs, dense or row_sparse rhs), no transpose
//        -> (dense lhs gradient out_grad·rhsᵀ, row_sparse rhs gradient csrᵀ·out_grad storing the
//           csr's stored columns)
//   _backward_dot(out_grad dense, dense lhs, csr rhs), transpose_a False
//        -> (dense lhs gradient out_grad·csrᵀ (or ·csr with transpose_b), dense rhs gradient
//           lhsᵀ·out_grad). MXNet's kernel leaves that rhs gradient zero (it computes the lhs's
//           only); weft computes it.
// Every other combination is declined: dot(dense, csr, transpose_b=True) without forward_stype
// and the forward_stype hints MXNet has no kernel for take the dense fallback with MXNet's
// warning, as there. In float32 and float64, with int64 or int32 aux arrays; every sparse input
// is checked first (sparse_views.h). Each output row is summed on one thread in a fixed order,
// so results do not depend on the team size.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "parallel.h"
#include "sparse_views.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/dot.hpp"

namespace weft::cpu {
namespace {

using sparse::ColumnRanks;
using sparse::CsrView;
using sparse::RspView;

bool HintIs(const sdk::DotParam& p, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return p.forward_stype == n; });
}

// The query's dot attributes, or nullopt when they do not parse (the dense path reports them).
std::optional<sdk::DotParam> DotAttrs(const sdk::StorageQuery& q) {
  try {
    return sdk::ParseParams<sdk::DotParam>(q.attrs);
  } catch (const sdk::Error&) {
    return std::nullopt;
  }
}

// A dense or row_sparse rhs, as rows: row(r) is row r's values or nullptr for a zero row.
template <typename T>
struct Rows {
  const T* dense = nullptr;
  RspView<T> rsp;
  std::vector<int64_t> at;  // rsp: row -> stored position, -1 when absent
  int64_t width = 0;

  const T* row(int64_t r) const {
    if (dense != nullptr) return dense + r * width;
    const int64_t k = at[static_cast<size_t>(r)];
    return k < 0 ? nullptr : rsp.row(k);
  }
};

template <typename T>
Rows<T> ReadRows(const sdk::DeviceCall& c, size_t i, const std::string& op, const std::string& name) {
  Rows<T> r;
  const sdk::DeviceTensor& t = c.inputs[i];
  r.width = t.dim(1);
  if (c.InputStype(i) == WEFT_STYPE_DEFAULT) {
    r.dense = sparse::Dense<const T>(c, t);
    return r;
  }
  r.rsp = sparse::ReadRsp<T>(c, i, op, name);
  r.at.assign(static_cast<size_t>(r.rsp.rows), -1);
  for (int64_t k = 0; k < r.rsp.count; ++k) r.at[static_cast<size_t>(r.rsp.indices[static_cast<size_t>(k)])] = k;
  return r;
}

// out (a.rows, k) = or += a · rows, rows' row c taken for column c of a.
template <typename T>
void CsrTimes(const CsrView<T>& a, const Rows<T>& rows, T* out, int32_t req) {
  const int64_t k = rows.width;
  sdk::WithReq(req, [&](auto assign) {
    ParallelChunks(a.rows, a.nnz * k + a.rows * k, [&](int64_t r0, int64_t r1, int) {
      std::vector<T> acc(static_cast<size_t>(k));
      for (int64_t i = r0; i < r1; ++i) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t p = a.begin(i); p < a.end(i); ++p)
          if (const T* src = rows.row(a.col(p)))
            for (int64_t j = 0; j < k; ++j) acc[static_cast<size_t>(j)] += a.values[p] * src[j];
        for (int64_t j = 0; j < k; ++j) assign(out[i * k + j], acc[static_cast<size_t>(j)]);
      }
    });
  });
}

// out (ranks.columns.size(), k) += aᵀ · rows (rows' row i for row i of a): row rank(c) of out
// is column c of the product. Split over out's columns, each summed in csr order.
template <typename T>
void CsrTransposedTimes(const CsrView<T>& a, const Rows<T>& rows, const std::vector<int64_t>& rank, T* out) {
  const int64_t k = rows.width;
  ParallelChunks(k, a.nnz * k, [&](int64_t j0, int64_t j1, int) {
    for (int64_t i = 0; i < a.rows; ++i) {
      const T* src = rows.row(i);
      if (src == nullptr) continue;
      for (int64_t p = a.begin(i); p < a.end(i); ++p) {
        T* dst = out + rank[static_cast<size_t>(a.col(p))] * k;
        for (int64_t j = j0; j < j1; ++j) dst[j] += a.values[p] * src[j];
      }
    }
  });
}

// out (m, width) += x (m, K) · b where b is the csr (K, n) (transposed: b is (n, K) and the
// product takes bᵀ). col_of maps b's column to out's column (identity, or a rank for a csr out).
template <typename T>
void DenseTimesCsr(const T* x, int64_t m, int64_t kx, const CsrView<T>& b, bool transposed,
                   const std::vector<int64_t>* col_of, int64_t width, T* out) {
  ParallelChunks(m, m * (b.nnz + width), [&](int64_t r0, int64_t r1, int) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xi = x + i * kx;
      T* dst = out + i * width;
      for (int64_t r = 0; r < b.rows; ++r) {
        if (transposed) {
          T s = 0;  // out[i, r] = x[i, :] · b[r, :]
          for (int64_t p = b.begin(r); p < b.end(r); ++p) s += xi[b.col(p)] * b.values[p];
          dst[r] += s;
          continue;
        }
        const T v = xi[r];  // row r of b scaled by x[i, r]
        for (int64_t p = b.begin(r); p < b.end(r); ++p) {
          const int64_t col = col_of != nullptr ? (*col_of)[static_cast<size_t>(b.col(p))] : b.col(p);
          dst[col] += v * b.values[p];
        }
      }
    }
  });
}

// out (n, width) += xᵀ · g: x (m, n) dense or row-wise, g (m, width) dense. Row-wise sums over m.
template <typename T>
void TransposedTimesDense(const T* x, int64_t m, int64_t n, const T* g, int64_t width, T* out) {
  ParallelChunks(n, m * n * width, [&](int64_t c0, int64_t c1, int) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t col = c0; col < c1; ++col) {
        const T v = x[i * n + col];
        for (int64_t j = 0; j < width; ++j) out[col * width + j] += v * g[i * width + j];
      }
  });
}

// out (m, n) += g (m, k) · rowsᵀ, rows (n, k) dense or row_sparse.
template <typename T>
void DenseTimesRowsTransposed(const T* g, int64_t m, const Rows<T>& rows, int64_t n, T* out) {
  const int64_t k = rows.width;
  ParallelChunks(m, m * n * k, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t r = 0; r < n; ++r)
        if (const T* src = rows.row(r)) {
          T s = 0;
          for (int64_t j = 0; j < k; ++j) s += g[i * k + j] * src[j];
          out[i * n + r] += s;
        }
  });
}

// A dense output's values, zeroed unless the request adds; nullptr for a null request.
template <typename T>
T* DenseOut(const sdk::DeviceCall& c, size_t o) {
  if (sdk::IsNull(c.req[o])) return nullptr;
  T* out = sparse::Dense<T>(c, c.outputs[o]);
  if (c.req[o] != WEFT_REQ_ADD) std::fill(out, out + c.outputs[o].size(), T(0));
  return out;
}

void CheckDims(const sdk::KernelSetup& s, int64_t got, int64_t want, const std::string& what) {
  if (got != want)
    sparse::Fail(s.op_name, what + " do not fit: " + std::to_string(got) + " against " + std::to_string(want));
}

// dot(dense, csr): see the top of the file.
class DenseCsrDotKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes != std::vector<int32_t>{WEFT_STYPE_DEFAULT, WEFT_STYPE_CSR} || q.inputs[0].ndim() != 2 ||
        q.inputs[1].ndim() != 2)
      return false;
    const auto p = DotAttrs(q);
    if (!p || p->transpose_a) return false;
    if (HintIs(*p, {"default"})) return sparse::ClaimOutputs(q, {WEFT_STYPE_DEFAULT});
    return !p->transpose_b && HintIs(*p, {"None", "csr"}) && sparse::ClaimOutputs(q, {WEFT_STYPE_CSR});
  }

  explicit DenseCsrDotKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    trans_b_ = s.Params<sdk::DotParam>().transpose_b;
    csr_out_ = !s.output_stypes.empty() && s.output_stypes[0] == WEFT_STYPE_CSR;
    const sdk::TensorDesc &x = s.inputs[0], &b = s.inputs[1];
    CheckDims(s, x.dim(1), trans_b_ ? b.dim(1) : b.dim(0), "lhs's columns and the csr rhs's rows");
    CheckDims(s, s.outputs[0].size(), x.dim(0) * (trans_b_ ? b.dim(0) : b.dim(1)), "the output's elements");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const CsrView<T> b = sparse::ReadCsr<T>(c, 1, "dot", "rhs");
    const T* x = sparse::Dense<const T>(c, c.inputs[0]);
    const int64_t m = c.inputs[0].dim(0), kx = c.inputs[0].dim(1);
    if (!csr_out_) {
      if (T* out = DenseOut<T>(c, 0)) DenseTimesCsr(x, m, kx, b, trans_b_, nullptr, c.outputs[0].dim(1), out);
      return;
    }
    // Every output row stores the csr's columns: indptr i·nnc, the columns repeated per row.
    const ColumnRanks cols(b);
    const auto nnc = static_cast<int64_t>(cols.columns.size());
    const weft_sparse_alloc_args got = c.AllocSparseOutput(0, m * nnc);
    int64_t* indptr = HostData<int64_t>(c, sdk::DeviceTensor(got.aux[0]), m + 1);
    for (int64_t i = 0; i <= m; ++i) indptr[i] = i * nnc;
    if (m * nnc == 0) return;
    int64_t* indices = HostData<int64_t>(c, sdk::DeviceTensor(got.aux[1]), m * nnc);
    for (int64_t i = 0; i < m; ++i) std::copy(cols.columns.begin(), cols.columns.end(), indices + i * nnc);
    T* values = HostData<T>(c, sdk::DeviceTensor(got.values), m * nnc);
    std::fill(values, values + m * nnc, T(0));
    DenseTimesCsr(x, m, kx, b, false, &cols.rank, nnc, values);
  }

  bool trans_b_ = false;
  bool csr_out_ = false;
};

// dot(csr, row_sparse): see the top of the file.
class CsrRspDotKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes != std::vector<int32_t>{WEFT_STYPE_CSR, WEFT_STYPE_ROW_SPARSE} || q.inputs[1].ndim() != 2)
      return false;
    const auto p = DotAttrs(q);
    if (!p || p->transpose_b) return false;
    if (p->transpose_a) return HintIs(*p, {"None", "row_sparse"}) && sparse::ClaimOutputs(q, {WEFT_STYPE_ROW_SPARSE});
    return HintIs(*p, {"None", "default"}) && sparse::ClaimOutputs(q, {WEFT_STYPE_DEFAULT});
  }

  explicit CsrRspDotKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    trans_a_ = s.Params<sdk::DotParam>().transpose_a;
    const sdk::TensorDesc &a = s.inputs[0], &b = s.inputs[1];
    CheckDims(s, trans_a_ ? a.dim(0) : a.dim(1), b.dim(0), "the csr lhs's inner extent and the rhs's rows");
    CheckDims(s, s.outputs[0].size(), (trans_a_ ? a.dim(1) : a.dim(0)) * b.dim(1), "the output's elements");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Run<decltype(tag)>(c); });
  }

 private:
  template <typename T>
  void Run(const sdk::DeviceCall& c) const {
    const CsrView<T> a = sparse::ReadCsr<T>(c, 0, "dot", "lhs");
    const Rows<T> rows = ReadRows<T>(c, 1, "dot", "rhs");
    if (!trans_a_) {
      if (!sdk::IsNull(c.req[0])) CsrTimes(a, rows, sparse::Dense<T>(c, c.outputs[0]), c.req[0]);
      return;
    }
    // MXNet stores the columns of the csr's rows that meet a stored rhs row (zero or not).
    const ColumnRanks cols(a, [&](int64_t r) { return rows.row(r) != nullptr; });
    T* out = sparse::AllocRsp<T>(c, 0, cols.columns, rows.width, true);
    if (out != nullptr) CsrTransposedTimes(a, rows, cols.rank, out);
  }

  bool trans_a_ = false;
};

// _backward_dot(out_grad, lhs, rhs) with a csr operand: see the top of the file.
class SparseDotBackwardKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.input_stypes.size() != 3 || q.input_stypes[0] != WEFT_STYPE_DEFAULT) return false;
    const auto p = DotAttrs(q);
    if (!p || p->transpose_a) return false;
    const int32_t l = q.input_stypes[1], r = q.input_stypes[2];
    if (l == WEFT_STYPE_CSR && (r == WEFT_STYPE_DEFAULT || r == WEFT_STYPE_ROW_SPARSE) && !p->transpose_b)
      return sparse::ClaimOutputs(q, {WEFT_STYPE_DEFAULT, WEFT_STYPE_ROW_SPARSE});
    if (l == WEFT_STYPE_DEFAULT && r == WEFT_STYPE_CSR)
      return sparse::ClaimOutputs(q, {WEFT_STYPE_DEFAULT, WEFT_STYPE_DEFAULT});
    return false;
  }

  explicit SparseDotBackwardKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(3, 2);
    trans_b_ = s.Params<sdk::DotParam>().transpose_b;
    csr_lhs_ = s.input_stypes[1] == WEFT_STYPE_CSR;
    const sdk::TensorDesc &g = s.inputs[0], &l = s.inputs[1], &r = s.inputs[2];
    if (g.ndim() != 2 || l.ndim() != 2 || r.ndim() != 2) sparse::Fail(s.op_name, "out_grad, lhs and rhs must be 2-d");
    CheckDims(s, g.dim(0), l.dim(0), "out_grad's rows and lhs's rows");
    CheckDims(s, g.dim(1), trans_b_ ? r.dim(0) : r.dim(1), "out_grad's columns and rhs's columns");
    CheckDims(s, l.dim(1), trans_b_ ? r.dim(1) : r.dim(0), "lhs's columns and rhs's rows");
    if (s.outputs[0].shape != l.shape || s.outputs[1].shape != r.shape)
      sparse::Fail(s.op_name, "the gradients must have the shapes of lhs and rhs");
  }

  void Compute(const sdk::DeviceCall& c) const {
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if (csr_lhs_)
        RunCsrLhs<T>(c);
      else
        RunCsrRhs<T>(c);
    });
  }

 private:
  // lhs csr (m, K), rhs (K, n) dense or row_sparse, out_grad (m, n).
  template <typename T>
  void RunCsrLhs(const sdk::DeviceCall& c) const {
    const CsrView<T> a = sparse::ReadCsr<T>(c, 1, "_backward_dot", "lhs");
    const Rows<T> rhs = ReadRows<T>(c, 2, "_backward_dot", "rhs");
    const T* g = sparse::Dense<const T>(c, c.inputs[0]);
    if (T* lhs_grad = DenseOut<T>(c, 0)) DenseTimesRowsTransposed(g, a.rows, rhs, a.cols, lhs_grad);
    const ColumnRanks cols(a);
    Rows<T> og;
    og.dense = g;
    og.width = c.inputs[0].dim(1);
    T* out = sparse::AllocRsp<T>(c, 1, cols.columns, og.width, true);
    if (out != nullptr) CsrTransposedTimes(a, og, cols.rank, out);
  }

  // lhs dense (m, K), rhs csr (K, n) (or (n, K) with transpose_b), out_grad (m, n).
  template <typename T>
  void RunCsrRhs(const sdk::DeviceCall& c) const {
    const CsrView<T> b = sparse::ReadCsr<T>(c, 2, "_backward_dot", "rhs");
    const T* g = sparse::Dense<const T>(c, c.inputs[0]);
    const T* x = sparse::Dense<const T>(c, c.inputs[1]);
    const int64_t m = c.inputs[1].dim(0), kx = c.inputs[1].dim(1), n = c.inputs[0].dim(1);
    // lhs gradient: out_grad · bᵀ (out_grad · b when the forward took bᵀ).
    if (T* lhs_grad = DenseOut<T>(c, 0)) DenseTimesCsr(g, m, n, b, !trans_b_, nullptr, kx, lhs_grad);
    T* rhs_grad = DenseOut<T>(c, 1);
    if (rhs_grad == nullptr) return;
    if (!trans_b_) {
      TransposedTimesDense(x, m, kx, g, n, rhs_grad);  // lhsᵀ · out_grad (K, n)
      return;
    }
    TransposedTimesDense(g, m, n, x, kx, rhs_grad);  // out_gradᵀ · lhs (n, K)
  }

  bool trans_b_ = false;
  bool csr_lhs_ = false;
};

}  // namespace

void RegisterSparseProducts(sdk::KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  const uint32_t all =
      WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_CSR) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE);
  table.AddSparse<DenseCsrDotKernel>("dot", floats,
                                     WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_CSR));
  table.AddSparse<CsrRspDotKernel>("dot", floats, all);
  table.AddSparse<SparseDotBackwardKernel>("_backward_dot", floats, all);
}

}  // namespace weft::cpu

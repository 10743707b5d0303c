// dot with a csr lhs, as a sparse kernel (SDK 2.1): MXNet 1.9's FComputeEx of dot
// (src/operator/tensor/dot-inl.h, DotForwardInferStorageType):
//   dot(csr (m, n), dense (n, k))                    -> dense (m, k)
//   dot(csr (m, n), dense (m, k), transpose_a=True)  -> row_sparse (n, k) storing the csr's stored
//                                                       columns, zero or not (forward_stype
//                                                       'default' gives it dense)
// in float32 and float64, with int64 or int32 aux arrays. The csr is read where it lies: no dense
// copy of it is made. Indices are checked while they are used (a column outside [0, n) or an
// indptr that is not monotone is an error naming the position), so a malformed array that skipped
// check_format is refused rather than read out of bounds.
//
// Parallelism: rows of the dense result are split over the thread plan's team (each row is one
// thread's); the row_sparse result is split over its columns when they are many (k >= 16), else
// summed on one thread. Every output element is summed in csr order on either path, so the result
// does not depend on the team size.
#include <atomic>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "host_data.h"
#include "isa_dispatch.h"
#include "parallel.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/dot.hpp"

namespace weft::cpu {
namespace {

// The csr operand: m rows, n columns, nnz values, indptr and indices as stored (int64 or int32).
template <typename T, typename P, typename I>
struct Csr {
  int64_t m = 0, n = 0, nnz = 0;
  const T* values = nullptr;
  const P* indptr = nullptr;
  const I* indices = nullptr;
};

// First problem found in a csr (an indptr that falls or passes nnz, a column outside [0, n)),
// recorded by whichever thread meets it; the kernel throws it after the parallel loop.
struct Fault {
  std::atomic<int64_t> row{-1};
  std::atomic<int64_t> pos{-1};
  void Note(int64_t r, int64_t p) {
    int64_t none = -1;
    if (row.compare_exchange_strong(none, r)) pos.store(p);
  }
  void Throw(const char* what) const {
    if (row.load() < 0) return;
    throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                     std::string("dot: the csr lhs is malformed at row ") + std::to_string(row.load()) +
                         (pos.load() >= 0 ? ", stored element " + std::to_string(pos.load()) : std::string()) + ": " +
                         what + " (check_format reports the details)");
  }
};

// Row i's stored range [b, e), or false when indptr is broken there.
template <typename C>
bool RowRange(const C& a, int64_t i, int64_t* b, int64_t* e) {
  *b = static_cast<int64_t>(a.indptr[i]);
  *e = static_cast<int64_t>(a.indptr[i + 1]);
  return *b >= 0 && *b <= *e && *e <= a.nnz;
}

// Stored elements ahead whose rhs row CsrDense prefetches: far enough for a miss to memory to
// land in time (a batch of 512 LibSVM rows, 100 stored each, against a 1M x 1 rhs: 0.24 ms per
// call at 16 ahead, 0.21 at 48, no better beyond).
constexpr int64_t kAhead = 48;

// out (m, k) = or += csr · rhs (n, k).
template <typename T, typename C, typename Assign>
void CsrDense(const C& a, const T* rhs, int64_t k, T* out, Assign assign, Fault& fault) {
  ParallelChunks(a.m, a.nnz * k + a.m * k, [&](int64_t r0, int64_t r1, int) {
    std::vector<T> acc(static_cast<size_t>(k));
    for (int64_t i = r0; i < r1; ++i) {
      int64_t b = 0, e = 0;
      if (!RowRange(a, i, &b, &e)) {
        fault.Note(i, -1);
        return;
      }
      std::fill(acc.begin(), acc.end(), T(0));
      T sum = 0;
      for (int64_t p = b; p < e; ++p) {
        const auto col = static_cast<int64_t>(a.indices[p]);
        if (col < 0 || col >= a.n) {
          fault.Note(i, p);
          return;
        }
        // The rhs rows lie far apart: fetch the row a few stored elements ahead (its column is
        // checked by then; an out-of-range one is skipped here and reported when reached).
        if (p + kAhead < a.nnz) {
          const auto ahead = static_cast<uint64_t>(a.indices[p + kAhead]);
          if (ahead < static_cast<uint64_t>(a.n)) __builtin_prefetch(rhs + static_cast<int64_t>(ahead) * k);
        }
        const T v = a.values[p];
        const T* src = rhs + col * k;
        if (k == 1) {  // a register sum: through acc[0] each add waited for the last one's store
          sum += v * src[0];
          continue;
        }
        for (int64_t j = 0; j < k; ++j) acc[static_cast<size_t>(j)] += v * src[j];
      }
      if (k == 1) acc[0] = sum;
      T* dst = out + i * k;
      for (int64_t j = 0; j < k; ++j) assign(dst[j], acc[static_cast<size_t>(j)]);
    }
  });
}

// The stored columns of a csr as a rank bitmap over [0, n): rank(c) is c's position among them.
// Each 64-column word sits beside the count of columns before it, so a rank reads one cache line
// (the transposed product ranks every stored element: 51 200 of them for a batch of 512 LibSVM
// rows of 100 features).
class ColumnSet {
 public:
  template <typename C>
  ColumnSet(const C& a, Fault& fault) : words_(static_cast<size_t>((a.n + 63) / 64)) {
    for (int64_t i = 0; i < a.m; ++i) {
      int64_t b = 0, e = 0;
      if (!RowRange(a, i, &b, &e)) {
        fault.Note(i, -1);
        return;
      }
      for (int64_t p = b; p < e; ++p) {
        const auto col = static_cast<int64_t>(a.indices[p]);
        if (col < 0 || col >= a.n) {
          fault.Note(i, p);
          return;
        }
        words_[static_cast<size_t>(col >> 6)].bits |= uint64_t{1} << (col & 63);
      }
    }
    int64_t count = 0;
    for (Word& w : words_) {
      w.before = count;
      count += __builtin_popcountll(w.bits);
    }
    size_ = count;
  }
  int64_t size() const { return size_; }
  int64_t Rank(int64_t col) const {
    const Word& w = words_[static_cast<size_t>(col >> 6)];
    return w.before + __builtin_popcountll(w.bits & ((uint64_t{1} << (col & 63)) - 1));
  }
  // The columns in ascending order (size() of them). A word's columns go four at a time, stored
  // whether or not the word has that many (the extra stores land where the next word's columns
  // go, and are overwritten by them; the words within 64 columns of the end go one by one): a loop
  // per set bit mispredicted its exit about once a word.
  void Write(int64_t* out) const {
    int64_t* const end = out + size_;
    for (size_t i = 0; i < words_.size(); ++i) {
      uint64_t x = words_[i].bits;
      int64_t* o = out + words_[i].before;
      const auto base = static_cast<int64_t>(i * 64);
      if (end - o < 64) {
        for (; x != 0; x &= x - 1) *o++ = base + __builtin_ctzll(x);
        continue;
      }
      while (x != 0) {
        for (int j = 0; j < 4; ++j) {
          o[j] = base + __builtin_ctzll(x | (uint64_t{1} << 63));  // x may be 0 by now: a dummy 63
          x &= x - 1;
        }
        o += 4;
      }
    }
  }

 private:
  struct Word {
    uint64_t bits = 0;
    int64_t before = 0;
  };
  std::vector<Word> words_;
  int64_t size_ = 0;
};

// out rows (rows.size() of k) += csrᵀ · rhs (m, k), out row r holding column `row_of(c)`. The
// csr was checked by ColumnSet.
template <typename T, typename C, typename RowOf>
void CsrTransposedDense(const C& a, const T* rhs, int64_t k, T* out, const RowOf& row_of) {
  auto columns = [&](int64_t j0, int64_t j1) {
    for (int64_t i = 0; i < a.m; ++i) {
      const T* src = rhs + i * k;
      const auto e = static_cast<int64_t>(a.indptr[i + 1]);
      for (auto p = static_cast<int64_t>(a.indptr[i]); p < e; ++p) {
        const T v = a.values[p];
        T* dst = out + row_of(static_cast<int64_t>(a.indices[p])) * k;
        for (int64_t j = j0; j < j1; ++j) dst[j] += v * src[j];
      }
    }
  };
  if (k < 16) {
    columns(0, k);
    return;
  }
  ParallelChunks(k, a.nnz * k, [&](int64_t j0, int64_t j1, int) { columns(j0, j1); });
}

class CsrDotKernel {
 public:
  // csr · dense with neither operand transposed but a, or csrᵀ · dense: see the top of the file.
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (q.inputs.size() != 2 || q.output_stypes.size() != 1 || q.input_stypes[0] != WEFT_STYPE_CSR ||
        q.input_stypes[1] != WEFT_STYPE_DEFAULT || q.inputs[1].ndim() != 2)
      return false;
    sdk::DotParam p;
    try {
      p = sdk::ParseParams<sdk::DotParam>(q.attrs);
    } catch (const sdk::Error&) {
      return false;  // the dense path reports bad attributes
    }
    if (p.transpose_b) return false;
    const bool dense = p.forward_stype == "None" || p.forward_stype == "default";
    int32_t want = WEFT_STYPE_DEFAULT;
    if (p.transpose_a) {
      if (!dense && p.forward_stype != "row_sparse") return false;
      want = p.forward_stype == "default" ? WEFT_STYPE_DEFAULT : WEFT_STYPE_ROW_SPARSE;
    } else if (!dense) {
      return false;
    }
    if (q.output_stypes[0] >= 0 && q.output_stypes[0] != want) return false;
    q.output_stypes[0] = want;
    return true;
  }

  explicit CsrDotKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    trans_a_ = s.Params<sdk::DotParam>().transpose_a;
    const sdk::TensorDesc &lhs = s.inputs[0], &rhs = s.inputs[1], &out = s.outputs[0];
    const int64_t inner = trans_a_ ? lhs.dim(0) : lhs.dim(1);
    if (lhs.ndim() != 2 || rhs.ndim() != 2 || rhs.dim(0) != inner || out.ndim() != 2 ||
        out.dim(0) != (trans_a_ ? lhs.dim(1) : lhs.dim(0)) || out.dim(1) != rhs.dim(1))
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "dot: csr lhs, rhs and output shapes do not fit");
    rsp_out_ = !s.output_stypes.empty() && s.output_stypes[0] == WEFT_STYPE_ROW_SPARSE;
  }

  void Compute(const sdk::DeviceCall& c) const {
    const int32_t pt = c.InputAux(0, 0).dtype(), it = c.InputAux(0, 1).dtype();
    auto is_index = [](int32_t d) { return d == WEFT_DTYPE_INT64 || d == WEFT_DTYPE_INT32; };
    if (!is_index(pt) || !is_index(it))
      throw sdk::Error(WEFT_ERR_UNSUPPORTED, "dot: csr aux arrays must be int64 or int32, got " + sdk::DTypeName(pt) +
                                                 " and " + sdk::DTypeName(it));
    auto on_index = [&](auto ptr_tag, auto idx_tag) {
      using P = decltype(ptr_tag);
      using I = decltype(idx_tag);
      if (c.inputs[0].dtype() == WEFT_DTYPE_FLOAT64)
        Run<double, P, I>(c);
      else
        Run<float, P, I>(c);
    };
    auto on_ptr = [&](auto ptr_tag) {
      if (it == WEFT_DTYPE_INT64)
        on_index(ptr_tag, int64_t{});
      else
        on_index(ptr_tag, int32_t{});
    };
    if (pt == WEFT_DTYPE_INT64)
      on_ptr(int64_t{});
    else
      on_ptr(int32_t{});
  }

 private:
  template <typename T, typename P, typename I>
  void Run(const sdk::DeviceCall& c) const {
    Csr<T, P, I> a;
    a.m = c.inputs[0].dim(0);
    a.n = c.inputs[0].dim(1);
    a.nnz = c.InputAux(0, 1).dim(0);
    if (c.InputAux(0, 0).dim(0) != a.m + 1)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, "dot: the csr lhs's indptr has " +
                                                      std::to_string(c.InputAux(0, 0).dim(0)) + " entries, not " +
                                                      std::to_string(a.m + 1));
    a.values = HostData<const T>(c, c.inputs[0], a.nnz);
    a.indptr = HostData<const P>(c, c.InputAux(0, 0), a.m + 1);
    a.indices = HostData<const I>(c, c.InputAux(0, 1), a.nnz);
    const int64_t k = c.inputs[1].dim(1);
    const T* rhs = HostData<const T>(c, c.inputs[1], c.inputs[1].size());
    Fault fault;
    if (!trans_a_) {
      T* out = HostData<T>(c, c.outputs[0], c.outputs[0].size());
      sdk::WithReq(c.req[0], [&](auto assign) { CsrDense(a, rhs, k, out, assign, fault); });
      fault.Throw("indptr or a column index is out of range");
      return;
    }
    if (rsp_out_) {
      auto rows = [&] {
        const ColumnSet cols(a, fault);
        fault.Throw("indptr or a column index is out of range");
        const weft_sparse_alloc_args got = c.AllocSparseOutput(0, cols.size());
        if (cols.size() == 0) return;
        T* values = HostData<T>(c, sdk::DeviceTensor(got.values), cols.size() * k);
        cols.Write(HostData<int64_t>(c, sdk::DeviceTensor(got.aux[0]), cols.size()));
        std::memset(values, 0, static_cast<size_t>(cols.size() * k) * sizeof(T));
        CsrTransposedDense(a, rhs, k, values, [&](int64_t col) { return cols.Rank(col); });
      };
      // In the ISA variants: the column set's ranks are popcounts, a library call in the
      // baseline x86-64 build and one instruction with AVX2. Only for float32 values with int64
      // indptr and indices (the csr that LibSVMIter and MXNet's csr_matrix make, the sparse
      // models' gradient); the other seven combinations run the baseline copy (issue 34: each
      // was three more copies of the loop in the build).
      if constexpr (std::is_same_v<T, float> && std::is_same_v<P, int64_t> && std::is_same_v<I, int64_t>) {
        isa::Dispatch(rows);
      } else {
        rows();
      }
      return;
    }
    const ColumnSet cols(a, fault);  // checks the csr
    fault.Throw("indptr or a column index is out of range");
    if (sdk::IsNull(c.req[0])) return;
    T* out = HostData<T>(c, c.outputs[0], c.outputs[0].size());
    if (c.req[0] != WEFT_REQ_ADD) std::memset(out, 0, static_cast<size_t>(c.outputs[0].size()) * sizeof(T));
    CsrTransposedDense(a, rhs, k, out, [](int64_t col) { return col; });
  }

  bool trans_a_ = false;
  bool rsp_out_ = false;
};

}  // namespace

void RegisterSparseKernels(sdk::KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  table.AddSparse<CsrDotKernel>(
      "dot", floats,
      WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_CSR) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE));
}

}  // namespace weft::cpu

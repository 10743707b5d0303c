// Embedding's row_sparse weight gradient as a sparse kernel (SDK 2.1): MXNet 1.9's
// SparseEmbeddingOpBackwardRspImpl (src/operator/tensor/indexing_op.cc), what Embedding with
// sparse_grad=True gives autograd.
//
//   _backward_Embedding(out_grad, data, weight; all dense), sparse_grad=True
//       -> (data's gradient: dense zeros; weight's gradient: row_sparse storing every row data
//       names, ascending and distinct, each the sum of out_grad's rows for that index).
//
// A row data names is stored even when its sum is zero, as MXNet stores it; so the gradient's
// rows are the batch's rows, which is what lazy updates (sgd/adam lazy_update) touch. Indices
// are truncated toward zero as the forward reads them; one outside [0, input_dim) is refused by
// position (MXNet: "Embedding input contains data out of bound"), where the dense gradient
// clips it. The gradient's request must be write (the tape gives a fresh array; MXNet refuses
// others too). Rows are summed in data's order, each output row by one thread (ParallelChunks over
// the distinct rows), so results do not depend on the team size.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cpu_kernels.h"
#include "parallel.h"
#include "sparse_views.h"
#include "weft/sdk/cpp/kernel.hpp"

namespace weft::cpu {
namespace {

constexpr const char* kOp = "_backward_Embedding";

class EmbeddingRowSparseGradKernel {
 public:
  static bool ClaimStorage(sdk::StorageQuery& q) {
    if (!q.attrs.GetBool("sparse_grad", false) || q.inputs.size() != 3) return false;
    if (std::any_of(q.input_stypes.begin(), q.input_stypes.end(), [](int32_t t) { return t != WEFT_STYPE_DEFAULT; }))
      return false;
    if (q.inputs[2].ndim() != 2) return false;  // the dense kernel names the bad weight
    return sparse::ClaimOutputs(q, {WEFT_STYPE_DEFAULT, WEFT_STYPE_ROW_SPARSE});
  }

  explicit EmbeddingRowSparseGradKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(3, 2);
    const sdk::TensorDesc &og = s.inputs[0], &data = s.inputs[1], &weight = s.inputs[2];
    rows_ = weight.shape[0];
    dim_ = weight.shape[1];
    if (og.dtype != weight.dtype) sparse::Fail(kOp, "out_grad and weight dtypes differ");
    if (og.size() != data.size() * dim_)
      sparse::Fail(kOp, "out_grad " + sdk::FormatTuple(og.shape) + " must hold output_dim = " + std::to_string(dim_) +
                            " values per index of data " + sdk::FormatTuple(data.shape));
    if (s.outputs[0].shape != data.shape || s.outputs[1].shape != weight.shape)
      sparse::Fail(kOp, "the gradients must have the shapes of data and weight");
  }

  void Compute(const sdk::DeviceCall& c) const {
    if (c.req[1] != WEFT_REQ_WRITE && !sdk::IsNull(c.req[1]))
      sparse::Fail(kOp, "sparse_grad=True writes the weight's gradient (grad_req write), not adds to it");
    ZeroDataGrad(c);
    if (sdk::IsNull(c.req[1])) return;
    const std::vector<int64_t> ids = Indices(c);
    WithFloatType(c.inputs[0].dtype(), [&](auto tag) { Sum<decltype(tag)>(c, ids); });
  }

 private:
  // Indices have no gradient: zeros (MXNet's), unless not wanted or added to.
  static void ZeroDataGrad(const sdk::DeviceCall& c) {
    if (sdk::IsNull(c.req[0]) || c.req[0] == WEFT_REQ_ADD) return;
    sparse::OnNumericType(c.outputs[0].dtype(), kOp, "data's gradient", [&](auto tag) {
      using I = decltype(tag);
      I* g = sparse::Dense<I>(c, c.outputs[0]);
      std::fill(g, g + c.outputs[0].size(), I(0));
    });
  }

  // data's indices, truncated toward zero and checked against [0, input_dim).
  std::vector<int64_t> Indices(const sdk::DeviceCall& c) const {
    const sdk::DeviceTensor& data = c.inputs[1];
    std::vector<int64_t> ids(static_cast<size_t>(data.size()));
    sparse::OnNumericType(data.dtype(), kOp, "data", [&](auto tag) {
      using I = decltype(tag);
      const I* p = sparse::Dense<const I>(c, data);
      for (size_t k = 0; k < ids.size(); ++k) {
        const double v = static_cast<double>(p[k]);
        if (!(v > -1.0 && v < static_cast<double>(rows_)))  // NaN fails too
          sparse::Fail(kOp, "Embedding input contains data out of bound: data[" + std::to_string(k) + "] = " +
                                std::to_string(v) + " is outside [0, input_dim = " + std::to_string(rows_) + ")");
        ids[k] = static_cast<int64_t>(std::trunc(v));
      }
    });
    return ids;
  }

  template <typename T>
  void Sum(const sdk::DeviceCall& c, const std::vector<int64_t>& ids) const {
    // The distinct rows, and for each the positions of data naming it, in data's order.
    std::vector<int64_t> order(ids.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
    std::vector<int64_t> rows, start;
    for (size_t k = 0; k < order.size(); ++k)
      if (k == 0 || ids[order[k]] != ids[order[k - 1]]) {
        rows.push_back(ids[order[k]]);
        start.push_back(static_cast<int64_t>(k));
      }
    start.push_back(static_cast<int64_t>(order.size()));
    const T* og = sparse::Dense<const T>(c, c.inputs[0]);
    T* out = sparse::AllocRsp<T>(c, 1, rows, dim_, true);
    const auto count = static_cast<int64_t>(rows.size());
    ParallelChunks(count, static_cast<int64_t>(ids.size()) * dim_, [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) {
        T* dst = out + r * dim_;
        for (int64_t k = start[r]; k < start[r + 1]; ++k) {
          const T* src = og + order[k] * dim_;
          for (int64_t j = 0; j < dim_; ++j) dst[j] += src[j];
        }
      }
    });
  }

  int64_t rows_ = 0, dim_ = 0;
};

}  // namespace

void RegisterSparseEmbedding(sdk::KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  table.AddSparse<EmbeddingRowSparseGradKernel>(
      kOp, floats, WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE));
}

}  // namespace weft::cpu

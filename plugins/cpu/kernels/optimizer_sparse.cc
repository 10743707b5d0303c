// Lazy optimizer updates on a row_sparse gradient, as sparse kernels (SDK 2.1): MXNet 1.9's
// SGDDnsRspKernel, SGDMomDnsRspDnsKernel and AdamLazyUpdateDnsRspDnsKernel
// (src/operator/optimizer_op-inl.h), which sgd_update, sgd_mom_update and adam_update run with
// lazy_update=True on a dense weight and dense states:
//   for each row r the gradient stores (its k-th stored row):
//     every element j of row r of the weight and the states takes the dense rule (optimizer.h:
//     SgdRule, SgdMomRule, AdamRule) with gradient element (k, j)
// and every other row of the weight and the states keeps its value (no weight decay, no momentum
// decay there). One pass over the stored rows, in place, ISA-dispatched for float32: the composed
// path (gather the rows, the dense kernel, scatter them back: weft/internal/sparse_update.h) costs
// three engine operations per array, which a batch touching a few thousand rows of a million
// pays many times over.
//
// The gradient's indices must be strictly ascending and inside [0, rows) (check_format's rule for
// row_sparse): they are checked before any row is written, so a malformed gradient changes nothing
// and is reported by position. A repeated index would update its row twice.
//
// Parallelism: the stored rows are split over the thread plan's team when the update touches
// enough elements, in pieces the threads take in turn (ParallelPieces); the rows are distinct, so
// pieces write disjoint rows and the result does not depend on the team size or the order.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "host_data.h"
#include "isa_dispatch.h"
#include "optimizer.h"
#include "parallel.h"
#include "weft/sdk/cpp/kernel.hpp"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::cpu {
namespace {

using weft::sdk::UpdateRule;

// The per-element rules, with their states at element e of every state array.
struct SgdStep {
  template <typename T>
  static T Apply(const UpdateParams& p, const sdk::UpdateParam<UpdateRule::kSgd>&, T w, T g, T* const*, int64_t) {
    return SgdRule(p, w, g);
  }
};
struct SgdMomStep {
  template <typename T>
  static T Apply(const UpdateParams& p, const sdk::UpdateParam<UpdateRule::kSgdMom>& q, T w, T g, T* const* s,
                 int64_t e) {
    return SgdMomRule(p, q.momentum, w, g, s[0][e]);
  }
};
struct AdamStep {
  template <typename T>
  static T Apply(const UpdateParams& p, const sdk::UpdateParam<UpdateRule::kAdam>& q, T w, T g, T* const* s,
                 int64_t e) {
    return AdamRule(p, q.beta1, q.beta2, q.epsilon, w, g, s[0][e], s[1][e]);
  }
};

// Rows ahead whose weight and states are prefetched.
constexpr int64_t kAhead = 16;

// Position of the first index that is outside [0, rows) or not above its predecessor, or -1.
template <typename I>
int64_t FirstBadIndex(const I* idx, int64_t count, int64_t rows) {
  int64_t prev = -1;
  for (int64_t k = 0; k < count; ++k) {
    const auto r = static_cast<int64_t>(idx[k]);
    if (r <= prev || r >= rows) return k;
    prev = r;
  }
  return -1;
}

template <UpdateRule R, typename Step, int kStates>
class LazyUpdateKernel {
 public:
  using Param = sdk::UpdateParam<R>;

  // Weight dense, gradient row_sparse, states dense (the query lists them after the inputs when
  // the host asks with every array), the new weight dense, lazy_update on: MXNet's lazy dispatch.
  static bool ClaimStorage(sdk::StorageQuery& q) {
    const size_t n = q.input_stypes.size();
    if ((n != 2 && n != 2 + kStates) || q.output_stypes.size() != 1 || q.input_stypes[0] != WEFT_STYPE_DEFAULT ||
        q.input_stypes[1] != WEFT_STYPE_ROW_SPARSE || q.inputs[0].ndim() < 1 || q.inputs[1].shape != q.inputs[0].shape)
      return false;
    for (size_t i = 2; i < n; ++i)
      if (q.input_stypes[i] != WEFT_STYPE_DEFAULT || q.inputs[i].shape != q.inputs[0].shape) return false;
    try {
      if (!sdk::ParseParams<Param>(q.attrs).lazy_update) return false;
    } catch (const sdk::Error&) {
      return false;  // the dense path reports bad attributes
    }
    if (q.output_stypes[0] >= 0 && q.output_stypes[0] != WEFT_STYPE_DEFAULT) return false;
    q.output_stypes[0] = WEFT_STYPE_DEFAULT;
    return true;
  }

  explicit LazyUpdateKernel(const sdk::KernelSetup& s) : q_(s.Params<Param>()) {
    s.ExpectCounts(2, 1, kStates);
    p_ = UpdateParams(q_.lr, q_.wd, q_.rescale_grad, q_.clip_gradient);
    dtype_ = s.inputs[0].dtype;
    auto same = [&](const sdk::TensorDesc& t) { return t.shape == s.inputs[0].shape && t.dtype == dtype_; };
    bool ok = same(s.inputs[1]) && same(s.outputs[0]);
    for (const sdk::TensorDesc& a : s.aux) ok = ok && same(a);
    if (!ok)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name +
                                                      ": the weight, the row_sparse gradient, the states and the "
                                                      "output must share one shape and dtype");
    if (dtype_ != WEFT_DTYPE_FLOAT32 && dtype_ != WEFT_DTYPE_FLOAT64)
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       s.op_name + ": a lazy update takes float32 or float64, not " + sdk::DTypeName(dtype_));
    name_ = s.op_name;
  }

  void Compute(const sdk::DeviceCall& c) const {
    const int32_t it = c.InputAux(1, 0).dtype();
    if (it != WEFT_DTYPE_INT64 && it != WEFT_DTYPE_INT32)
      throw sdk::Error(WEFT_ERR_UNSUPPORTED,
                       name_ + ": the row_sparse gradient's indices must be int64 or int32, not " + sdk::DTypeName(it));
    if (c.req[0] == WEFT_REQ_ADD)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       name_ + ": a lazy update writes the weight (pass out=weight); it cannot add to the output");
    auto on_index = [&](auto idx_tag) {
      if (dtype_ == WEFT_DTYPE_FLOAT64)
        Run<double, decltype(idx_tag)>(c);
      else
        Run<float, decltype(idx_tag)>(c);
    };
    if (it == WEFT_DTYPE_INT64)
      on_index(int64_t{});
    else
      on_index(int32_t{});
  }

 private:
  template <typename T, typename I>
  void Run(const sdk::DeviceCall& c) const {
    const sdk::DeviceTensor& weight = c.inputs[0];
    const int64_t rows = weight.dim(0), size = weight.size(), count = c.InputAux(1, 0).dim(0);
    const int64_t k = rows == 0 ? 0 : size / rows;  // elements per row
    const I* idx = HostData<const I>(c, c.InputAux(1, 0), count);
    if (const int64_t bad = FirstBadIndex(idx, count, rows); bad >= 0)
      throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT,
                       name_ + ": the row_sparse gradient's index " + std::to_string(static_cast<int64_t>(idx[bad])) +
                           " at position " + std::to_string(bad) + " is outside [0, " + std::to_string(rows) +
                           ") or not above the one before (indices must be sorted and distinct; check_format "
                           "reports the details)");
    const T* w = HostData<const T>(c, weight, size);
    const T* g = HostData<const T>(c, c.inputs[1], count * k);
    T* states[kStates + 1] = {};
    for (int i = 0; i < kStates; ++i) states[i] = HostData<T>(c, c.aux[static_cast<size_t>(i)], size);
    T* out = c.req[0] == WEFT_REQ_NULL ? nullptr : HostData<T>(c, c.outputs[0], size);
    // Written to another array (req write, not in place): the rows the gradient lacks keep the
    // weight's values there too.
    if (out != nullptr && out != w) std::memcpy(out, w, static_cast<size_t>(size) * sizeof(T));
    // Pieces, not halves: the rows are sorted, and the high ones (far apart, a miss each) cost a
    // few times the low ones (frequent features, many to a cache line) in a LibSVM batch.
    const int64_t piece = std::max<int64_t>(kAhead * 16, count / 32);
    ParallelPieces(count, count * k * (2 + kStates), piece, [&](int64_t k0, int64_t k1) {
      auto rows_loop = [&] {
        // Copies the loop owns: read through the kernel's members, every parameter was loaded
        // again after each store to the weight or a state (they might alias, for the compiler).
        const Param q = q_;
        const UpdateParams p = p_;
        T* s[kStates + 1];
        std::copy(states, states + kStates + 1, s);
        for (int64_t r = k0; r < k1; ++r) {
          // The rows lie far apart in arrays of megabytes: fetch the ones a few rows ahead (one
          // cache line each), or every row waits for memory in turn.
          if (r + kAhead < k1) {
            const int64_t ahead = static_cast<int64_t>(idx[r + kAhead]) * k;
            __builtin_prefetch(w + ahead);
            if (out != nullptr && out != w) __builtin_prefetch(out + ahead, 1);
            for (int i = 0; i < kStates; ++i) __builtin_prefetch(s[i] + ahead, 1);
          }
          const int64_t base = static_cast<int64_t>(idx[r]) * k;
          const T* gr = g + r * k;
          if (out == nullptr) {
            for (int64_t j = 0; j < k; ++j) Step::Apply(p, q, w[base + j], gr[j], s, base + j);
            continue;
          }
          for (int64_t j = 0; j < k; ++j) out[base + j] = Step::Apply(p, q, w[base + j], gr[j], s, base + j);
        }
      };
      if constexpr (std::is_same_v<T, float>)
        isa::Dispatch(rows_loop);
      else
        rows_loop();
    });
  }

  Param q_;
  UpdateParams p_;
  int32_t dtype_ = WEFT_DTYPE_FLOAT32;
  std::string name_;
};

}  // namespace

void RegisterSparseOptimizers(KernelTable& table) {
  const uint64_t floats = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32) | WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT64);
  const uint32_t stypes = WEFT_STYPE_BIT(WEFT_STYPE_DEFAULT) | WEFT_STYPE_BIT(WEFT_STYPE_ROW_SPARSE);
  table.AddSparse<LazyUpdateKernel<UpdateRule::kSgd, SgdStep, 0>>("sgd_update", floats, stypes);
  table.AddSparse<LazyUpdateKernel<UpdateRule::kSgdMom, SgdMomStep, 1>>("sgd_mom_update", floats, stypes);
  table.AddSparse<LazyUpdateKernel<UpdateRule::kAdam, AdamStep, 2>>("adam_update", floats, stypes);
}

}  // namespace weft::cpu

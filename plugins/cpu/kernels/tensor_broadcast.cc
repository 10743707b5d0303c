// tile, repeat, broadcast_to, broadcast_like and broadcast_axis (MXNet 1.9): forward in every dtype
// MXNet 1.9's cpu has (float32, float64, float16, int32, int64, uint8, int8; issue 28), backward in
// float32 / float64. Only float32 runs per ISA (issue 34: the build); float64 has one baseline copy,
// and the other dtypes move their bytes through one baseline loop per element size.
//
// All four copy each input element to several output places, and each is a numpy broadcast
// once input and output are viewed with extra axes: tile (d0, d1) by (r0, r1) broadcasts
// (1, d0, 1, d1) to (r0, d0, r1, d1); repeat along axis a broadcasts (…, d_a, 1, …) to
// (…, d_a, r, …); broadcast_to / broadcast_like broadcast as they are. The forward is
// MapBroadcast over those views; the backward sums the output gradient over the broadcast axes
// (ReduceTo), which is MXNet's gradient. broadcast_like's rhs gets a zero gradient.
#include <string>
#include <type_traits>
#include <vector>

#include "elemwise_driver.h"
#include "reduce_driver.h"
#include "tensor_kernels.h"
#include "weft/sdk/ops/broadcast.hpp"

namespace weft::cpu::tensor {
namespace {

// (input extent, output extent) per view axis.
using View = std::vector<std::pair<int64_t, int64_t>>;

// The views of the forward op `op` (its input shape `in`, output shape `out`).
View MakeView(const KernelSetup& s, const std::string& op, const TensorDesc& in, const TensorDesc& out) {
  View v;
  if (op == "tile") {
    std::vector<int64_t> d = in.shape, reps = s.Params<sdk::TileParam>().reps;
    while (d.size() < reps.size()) d.insert(d.begin(), 1);
    while (reps.size() < d.size()) reps.insert(reps.begin(), 1);
    for (size_t i = 0; i < d.size(); ++i) {
      v.push_back({1, reps[i]});
      v.push_back({d[i], d[i]});
    }
  } else if (op == "repeat") {
    const auto p = s.Params<sdk::RepeatParam>();
    const int64_t r = p.repeats;
    const std::optional<int64_t> axis = p.axis;
    const Dims d(in);
    const int a = axis ? NormalizeAxis(s, *axis, d.ndim, "axis") : d.ndim - 1;
    const int64_t pre = axis ? d.Prod(0, a) : 1, n = axis ? d.d[a] : d.Size(), post = axis ? d.Prod(a + 1, d.ndim) : 1;
    v = {{pre, pre}, {n, n}, {1, r}, {post, post}};
  } else {
    if (in.ndim() != out.ndim()) Invalid(s, "input and output must have the same number of axes");
    for (int i = 0; i < in.ndim(); ++i)
      v.push_back({in.shape[static_cast<size_t>(i)], out.shape[static_cast<size_t>(i)]});
  }
  // Drop axes of output extent 1 and merge neighbours of one kind (both copied or both
  // broadcast from 1), so views of up to WEFT_MAX_NDIM axes cover most inputs.
  View m;
  for (const auto& [a, b] : v) {
    if (b == 1) continue;
    const bool bc = a == 1 && b != 1;
    if (!m.empty() && (m.back().first == 1 && m.back().second != 1) == bc) {
      m.back().first *= a;
      m.back().second *= b;
    } else {
      m.push_back({a, b});
    }
  }
  if (m.size() > WEFT_MAX_NDIM)
    Unsupported(s, "the broadcast needs more than " + std::to_string(WEFT_MAX_NDIM) + " axes");
  return m;
}

class BroadcastViewKernel {
 public:
  explicit BroadcastViewKernel(const KernelSetup& s) : backward_(s.op_name.rfind("_backward_", 0) == 0) {
    const std::string op = backward_ ? s.op_name.substr(10) : s.op_name;
    const bool like = op == "broadcast_like";
    const int n_out = backward_ && like ? 2 : 1;
    s.ExpectCounts(backward_ ? 1 : (like ? 2 : 1), n_out);
    const TensorDesc& small = backward_ ? s.outputs[0] : s.inputs[0];
    const TensorDesc& big = backward_ ? s.inputs[0] : s.outputs[0];
    if (small.dtype != big.dtype) Invalid(s, "input and output dtypes differ");
    if (backward_) {
      DispatchFloat(s.op_name.c_str(), small.dtype, [](auto) {});
    } else {
      DispatchAll(s.op_name.c_str(), small.dtype, [](auto) {});
    }
    for (const auto& [a, b] : MakeView(s, op, small, big)) {
      if (a != 1 && a != b)
        Invalid(s, "cannot broadcast " + sdk::FormatTuple(small.shape) + " to " + sdk::FormatTuple(big.shape));
      in_.Push(a);
      out_.Push(b);
    }
    if (in_.Size() != small.size() || out_.Size() != big.size())
      Invalid(s, "shapes " + sdk::FormatTuple(small.shape) + " and " + sdk::FormatTuple(big.shape) +
                     " do not match the attributes");
    for (int a = 0; a < out_.ndim; ++a) reduced_[a] = in_.d[a] == 1 && out_.d[a] != 1;
  }

  void Compute(const KernelCall& c) const {
    if (c.outputs.size() > 1) FillOrAdd(c.outputs[1].raw(), 0.0, c.outputs[1].size(), c.outputs[1].dtype(), c.req[1]);
    const int32_t dtype = c.inputs[0].dtype();
    if (!backward_ && dtype != WEFT_DTYPE_FLOAT32 && dtype != WEFT_DTYPE_FLOAT64) return CopyOther(c);
    DispatchFloat("broadcast", dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr bool kIsa = std::is_same_v<T, float>;  // float64 is off the hot path
      const T* x = static_cast<const T*>(c.inputs[0].raw());
      T* y = static_cast<T*>(c.outputs[0].raw());
      if (backward_) {
        ReduceTo<kIsa>(x, out_, reduced_, y, c.req[0], SumOp<T>());
      } else {
        MapBroadcast<kIsa>(
            y, out_, c.req[0], [](T v) { return v; }, BroadcastIn<T>{x, in_});
      }
    });
  }

 private:
  // The forward of the dtypes off the hot path. A write is a move of bytes (one baseline loop per
  // element size); add-to needs the element type's addition.
  void CopyOther(const KernelCall& c) const {
    const Tensor& x = c.inputs[0];
    const int32_t req = c.req[0];
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      MapBroadcast<false>(
          static_cast<T*>(c.outputs[0].raw()), out_, req, [](T v) { return v; },
          BroadcastIn<T>{static_cast<const T*>(x.raw()), in_});
    };
    if (req == WEFT_REQ_ADD) return DispatchAll("broadcast", x.dtype(), run);
    switch (sdk::ElementSize(x.dtype())) {
      case 1:
        return run(TypeTag<uint8_t>{});
      case 2:
        return run(TypeTag<uint16_t>{});
      case 4:
        return run(TypeTag<uint32_t>{});
      default:
        return run(TypeTag<uint64_t>{});
    }
  }

  bool backward_;
  Dims in_, out_;
  bool reduced_[WEFT_MAX_NDIM] = {};
};

}  // namespace

void RegisterBroadcastKernels(KernelTable& t) {
  for (const char* op : {"tile", "repeat", "broadcast_to", "broadcast_like", "broadcast_axis"}) {
    AddAny<BroadcastViewKernel>(t, op, kAllMask);
    AddAny<BroadcastViewKernel>(t, std::string("_backward_") + op, kFloatMask);
  }
}

}  // namespace weft::cpu::tensor

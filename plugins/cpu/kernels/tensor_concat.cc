// Concat (and _rnn_param_concat, Gluon's Concat of RNN parameters) / _backward_Concat,
// SliceChannel / _backward_SliceChannel, stack / _backward_stack and
// _split_v2 / _backward_split_v2 (parts of unequal extents):
// joining tensors along an axis and splitting one along an axis are the same block copies in
// opposite directions. stack is a Concat along a new axis of the output (its `axis` counted in
// the output's axes), so the parts' blocks are whole parts' rows.
//
// Row-major layout makes both simple: with outer = product of the extents before the axis, each
// part is `outer` contiguous blocks of (its size / outer) elements, and the whole is those
// blocks interleaved part by part. SliceChannel's squeeze_axis only changes the parts' shapes.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "parallel.h"
#include "tensor_kernels.h"
#include "weft/sdk/ops/concat.hpp"

namespace weft::cpu::tensor {
namespace {

// Axis geometry shared by both directions: the block length of each part in elements.
struct Blocks {
  int64_t outer = 1;
  std::vector<int64_t> part;  // elements per block of each part
  int64_t whole = 0;          // elements per block of the whole (sum of part)
};

// The part count and the axis (value and attribute name) of Concat, SliceChannel or stack (or
// their backward ops).
struct PartsAxis {
  int64_t count, axis;
  const char* axis_attr;
  sdk::ActFormat format = sdk::ActFormat::kPlain;  // Concat's data_format
};

PartsAxis PartsAxisOf(const KernelSetup& s) {
  const std::string op = s.op_name.rfind("_backward_", 0) == 0 ? s.op_name.substr(10) : s.op_name;
  if (op == "Concat" || op == "_rnn_param_concat") {
    const auto p = s.Params<sdk::ConcatParam>();
    return {p.num_args, p.dim, "dim", p.data_format};
  }
  if (op == "stack") {
    const auto p = s.Params<sdk::StackParam>();
    return {p.num_args, p.axis, "axis"};
  }
  if (op == "_split_v2" || op == "split_v2") {  // _backward_split_v2 strips to split_v2
    const auto p = s.Params<sdk::SplitV2Param>();
    return {p.Parts(), p.axis, "axis"};
  }
  const auto p = s.Params<sdk::SliceChannelParam>();
  return {p.num_outputs, p.axis, "axis"};
}

// A blocked data_format needs the join the plain copy also does (see the top): 4-D, along axis 1,
// every part with whole blocks of channels.
void CheckBlockedJoin(const KernelSetup& s, const TensorDesc& whole, const std::vector<TensorDesc>& parts,
                      const PartsAxis& pa, int axis) {
  if (pa.format == sdk::ActFormat::kPlain) return;
  const int64_t block = sdk::ActFormatBlock(pa.format);
  bool ok = whole.ndim() == 4 && axis == 1;
  for (const TensorDesc& p : parts) ok = ok && p.ndim() == 4 && p.shape[1] % block == 0;
  if (!ok)
    Invalid(s, "data_format " + std::string(sdk::kActFormats[static_cast<size_t>(pa.format)]) +
                   " joins 4-D arrays along dim 1 whose channels are multiples of " + std::to_string(block) +
                   "; use data_format plain");
}

Blocks MakeBlocks(const KernelSetup& s, const TensorDesc& whole, const std::vector<TensorDesc>& parts,
                  const PartsAxis& pa) {
  RequireSameDType(s);
  if (parts.empty()) Invalid(s, "needs at least one part");
  const char* axis_attr = pa.axis_attr;
  const int axis = NormalizeAxis(s, pa.axis, whole.ndim(), axis_attr);
  Blocks b;
  for (int a = 0; a < axis; ++a) b.outer *= whole.shape[static_cast<size_t>(a)];
  for (const TensorDesc& p : parts) {
    if (b.outer == 0) {
      b.part.push_back(0);
      continue;
    }
    if (p.size() % b.outer != 0) Invalid(s, "a part does not split evenly along " + std::string(axis_attr));
    b.part.push_back(p.size() / b.outer);
    b.whole += b.part.back();
  }
  if (b.outer != 0 && b.whole * b.outer != whole.size()) {
    Invalid(s, "the parts hold " + std::to_string(b.whole * b.outer) + " elements, the whole " +
                   std::to_string(whole.size()));
  }
  CheckBlockedJoin(s, whole, parts, pa, axis);
  return b;
}

// dst = src, or dst += src, over n elements.
template <bool kAdd, typename T>
void Copy(T* dst, const T* src, int64_t n) {
  if constexpr (kAdd) {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  }
}

// Joins parts (inputs) into whole (outputs[0]) or splits whole (inputs[0]) into parts (outputs).
class AxisCopyKernel {
 public:
  explicit AxisCopyKernel(const KernelSetup& s) {
    join_ = s.op_name == "Concat" || s.op_name == "_rnn_param_concat" || s.op_name == "_backward_SliceChannel" ||
            s.op_name == "stack" || s.op_name == "_backward_split_v2";
    const PartsAxis pa = PartsAxisOf(s);
    if (join_) {
      s.ExpectCounts(-1, 1);
      if (pa.count != static_cast<int64_t>(s.inputs.size())) Invalid(s, "num attribute disagrees with inputs");
      blocks_ = MakeBlocks(s, s.outputs[0], s.inputs, pa);
      // The executor's attribute (core/executor/concat_view.h): the output is a slice of a wider
      // array whose rows (images) lie this many elements apart.
      const int64_t stride = s.attrs.GetInt("out_image_stride", 0);
      if (stride != 0 && (stride < blocks_.whole || s.op_name != "Concat"))
        Invalid(s, "out_image_stride " + std::to_string(stride) + " must be at least the output's " +
                       std::to_string(blocks_.whole) + " elements per row (Concat only)");
      row_stride_ = stride;
    } else {
      s.ExpectCounts(1, -1);
      if (pa.count != static_cast<int64_t>(s.outputs.size())) Invalid(s, "num attribute disagrees with outputs");
      blocks_ = MakeBlocks(s, s.inputs[0], s.outputs, pa);
    }
  }

  // The whole's elements are split into contiguous ranges over the OpenMP team (each range copies
  // the pieces of part blocks it covers): one thread's memcpy does not fill the memory bandwidth
  // of both cores (DenseNet joins every layer's growing input, 100 MB at batch 32; SqueezeNet's
  // fire modules at batch 32 join 50 MB per Concat). Copies are exact, so the split changes no
  // value.
  void Compute(const KernelCall& c) const {
    const int32_t dtype = c.inputs[0].dtype();
    DispatchAll("Concat", dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      // An unknown request throws here, not inside the OpenMP region below.
      for (int32_t req : c.req) sdk::WithReq(req, [](auto) {});
      const int64_t total = blocks_.outer * blocks_.whole;
      if (total == 0) return;  // nothing to copy (and no row length to divide by)
      const std::vector<bool> placed = InPlace<T>(c);
      ParallelChunks(total, total, [&](int64_t begin, int64_t end, int) { CopyRange<T>(c, placed, begin, end); });
    });
  }

 private:
  // Per part of a join written with write request: whether it already lies where it would be
  // copied to. The executor makes a Concat input that its writer wrote straight into its slice of
  // the output a view starting there (core/executor/concat_view.h: its rows then lie a whole row
  // apart, as in the output); nothing else puts an input there, as a join allows no in-place
  // input (and with one row the copy would be onto itself).
  template <typename T>
  std::vector<bool> InPlace(const KernelCall& c) const {
    std::vector<bool> placed(blocks_.part.size(), false);
    if (!join_ || c.req[0] == WEFT_REQ_ADD) return placed;
    const T* whole = static_cast<const T*>(c.outputs[0].raw());
    int64_t offset = 0;
    for (size_t p = 0; p < blocks_.part.size(); offset += blocks_.part[p], ++p)
      placed[p] = blocks_.part[p] > 0 && static_cast<const T*>(c.inputs[p].raw()) == whole + offset;
    return placed;
  }

  // Copies the whole's elements [begin, end) from (join) or to (split) the parts under their reqs,
  // but for the parts `placed` (InPlace).
  template <typename T>
  void CopyRange(const KernelCall& c, const std::vector<bool>& placed, int64_t begin, int64_t end) const {
    T* whole = static_cast<T*>(join_ ? c.outputs[0].raw() : c.inputs[0].raw());
    const int64_t stride = row_stride_ > 0 ? row_stride_ : blocks_.whole;  // between the whole's rows
    for (int64_t o = begin / blocks_.whole; o * blocks_.whole < end; ++o) {
      int64_t offset = 0;  // of part p in row o
      for (size_t p = 0; p < blocks_.part.size(); offset += blocks_.part[p], ++p) {
        const int64_t len = blocks_.part[p], row = o * blocks_.whole + offset;
        const int64_t from = std::max(begin, row), to = std::min(end, row + len);
        if (from >= to || placed[p]) continue;
        sdk::WithReq(join_ ? c.req[0] : c.req[p], [&](auto assign) {
          T* w = whole + o * stride + (from - o * blocks_.whole);
          T* q = static_cast<T*>(join_ ? c.inputs[p].raw() : c.outputs[p].raw()) + o * len + (from - row);
          Copy<decltype(assign)::kAdd>(join_ ? w : q, join_ ? q : w, to - from);
        });
      }
    }
  }

  bool join_ = false;
  Blocks blocks_;
  int64_t row_stride_ = 0;  // out_image_stride; 0: the whole's rows are contiguous
};

}  // namespace

void RegisterConcatKernels(KernelTable& t) {
  for (const char* op : {"Concat", "_rnn_param_concat", "_backward_Concat", "SliceChannel", "_backward_SliceChannel",
                         "stack", "_backward_stack", "_split_v2", "_backward_split_v2"}) {
    AddAny<AxisCopyKernel>(t, op, kAllMask);
  }
}

}  // namespace weft::cpu::tensor

// weft core — CommCPU and CommDevice (see comm.h).
#include "kvstore/comm.h"

#include <optional>

#include "operator/kernel_runner.h"
#include "operator/op_def.h"
#include "weft/sdk/operator.h"

namespace weft::kv {
namespace {

// Words of 16 two-bit codes holding `n` values (the _quantize_2bit output).
Shape TwoBitWords(const Shape& values) { return Shape(static_cast<int64_t>((values.Size() + 15) / 16)); }

// A runner for a built-in op with its attributes normalised (defaults filled in).
std::unique_ptr<KernelRunner> MakeRunner(const std::string& op, std::map<std::string, std::string> attrs,
                                         const Context& ctx, const NodeSignature& sig) {
  const AttrMap normalised = OpRegistry::Get().Lookup(op).Normalize(AttrMap(std::move(attrs)));
  return std::make_unique<KernelRunner>(op, normalised, ctx, sig);
}

NodeSignature Signature(std::vector<Shape> in, std::vector<DType> in_t, std::vector<Shape> out,
                        std::vector<DType> out_t, std::vector<Shape> aux = {}, std::vector<DType> aux_t = {}) {
  NodeSignature sig;
  sig.in_shapes = std::move(in);
  sig.in_dtypes = std::move(in_t);
  sig.out_shapes = std::move(out);
  sig.out_dtypes = std::move(out_t);
  sig.aux_shapes = std::move(aux);
  sig.aux_dtypes = std::move(aux_t);
  return sig;
}

// `a` if it is allocated on `ctx` with `shape` and `dtype`, else a new (delayed) array there.
NDArray& Ensure(NDArray& a, const Shape& shape, const Context& ctx, DType dtype = DType::kFloat32) {
  if (a.is_none() || a.GetContext() != ctx || a.GetShape() != shape || a.GetDType() != dtype)
    a = NDArray(shape, ctx, true, dtype);
  return a;
}

}  // namespace

// Buffers of one value slot (the i-th value of a key's pushes).
struct Comm::Slot {
  NDArray copy;  // the value copied to the merge device
  // 2-bit compression:
  NDArray residual;                        // float32, on the pushing device
  NDArray words;                           // uint32 codes, on the pushing device
  NDArray words_merge;                     // the codes copied to the merge device
  std::unique_ptr<KernelRunner> quantize;  // _quantize_2bit on the pushing device
};

struct Comm::KeyBuffers {
  Context merge_ctx;
  Shape shape;
  NDArray merged;  // the sum of several values, on merge_ctx
  std::map<size_t, Slot> slots;
  std::map<size_t, std::unique_ptr<KernelRunner>> add_n;  // by number of inputs
  std::unique_ptr<KernelRunner> dequantize;               // _dequantize_2bit on merge_ctx
};

Comm::Comm() = default;
Comm::~Comm() = default;

const Context* Comm::MergeContext(const std::string& key) const {
  auto it = buffers_.find(key);
  return it == buffers_.end() ? nullptr : &it->second->merge_ctx;
}

NDArray Comm::Reduce(const std::string& key, const std::vector<NDArray>& values, int priority) {
  WEFT_CHECK(!values.empty(), "Comm({}) Reduce of key {}: no values", name(), key);
  std::unique_ptr<KeyBuffers>& kbp = buffers_[key];
  if (!kbp) {
    auto kb = std::make_unique<KeyBuffers>();
    kb->shape = values[0].GetShape();
    kb->merge_ctx = PickMergeContext(values, values[0].Bytes());
    kbp = std::move(kb);
  }
  KeyBuffers& kb = *kbp;
  return compression_.enabled ? ReduceCompressed(kb, values, priority) : Sum(kb, values, priority);
}

NDArray Comm::OnMergeDevice(KeyBuffers& kb, size_t i, const NDArray& value, int priority) {
  if (value.GetContext() == kb.merge_ctx) return value;
  NDArray& copy = Ensure(kb.slots[i].copy, kb.shape, kb.merge_ctx);
  NDArray::CopyFromTo(value, copy, priority);
  return copy;
}

NDArray Comm::Sum(KeyBuffers& kb, const std::vector<NDArray>& values, int priority) {
  const size_t n = values.size();
  KernelRunner* add_n = nullptr;
  if (n > 1) {  // prepared before anything is pushed, so a missing kernel leaves no work behind
    std::unique_ptr<KernelRunner>& r = kb.add_n[n];
    if (!r)
      r = MakeRunner("add_n", {{"num_args", std::to_string(n)}}, kb.merge_ctx,
                     Signature(std::vector<Shape>(n, kb.shape), std::vector<DType>(n, DType::kFloat32), {kb.shape},
                               {DType::kFloat32}));
    add_n = r.get();
  }
  std::vector<NDArray> inputs;
  inputs.reserve(n);
  for (size_t i = 0; i < n; ++i) inputs.push_back(OnMergeDevice(kb, i, values[i], priority));
  if (n == 1) return inputs[0];
  add_n->Run(inputs, {Ensure(kb.merged, kb.shape, kb.merge_ctx)}, {WEFT_REQ_WRITE}, {}, false, priority);
  return kb.merged;
}

NDArray Comm::ReduceCompressed(KeyBuffers& kb, const std::vector<NDArray>& values, int priority) {
  const Shape words = TwoBitWords(kb.shape);
  const std::map<std::string, std::string> attrs{{"threshold", fmt::format("{}", compression_.threshold)}};
  // Prepare every kernel and buffer first: a device without the kernels fails the push cleanly.
  if (!kb.dequantize)
    kb.dequantize =
        MakeRunner("_dequantize_2bit", {{"shape", kb.shape.ToString()}, {"threshold", attrs.at("threshold")}},
                   kb.merge_ctx, Signature({words}, {DType::kUint32}, {kb.shape}, {DType::kFloat32}));
  for (size_t i = 0; i < values.size(); ++i) {
    Slot& s = kb.slots[i];
    const Context ctx = values[i].GetContext();
    if (s.residual.is_none()) {
      s.residual = NDArray(kb.shape, ctx, false);
      s.residual = 0.0f;
    } else if (s.residual.GetContext() != ctx) {  // the slot moved: carry the residual along
      s.residual = s.residual.Copy(ctx);
      s.quantize.reset();
    }
    Ensure(s.words, words, ctx, DType::kUint32);
    if (!s.quantize)
      s.quantize = MakeRunner(
          "_quantize_2bit", attrs, ctx,
          Signature({kb.shape}, {DType::kFloat32}, {words}, {DType::kUint32}, {kb.shape}, {DType::kFloat32}));
  }
  // Quantise where each value lives, move the words, decode and sum on the merge device (the
  // first slot writes the sum, the others add to it).
  Ensure(kb.merged, kb.shape, kb.merge_ctx);
  for (size_t i = 0; i < values.size(); ++i) {
    Slot& s = kb.slots[i];
    s.quantize->Run({values[i]}, {s.words}, {WEFT_REQ_WRITE}, {s.residual}, false, priority);
    NDArray codes = s.words;
    if (values[i].GetContext() != kb.merge_ctx) {
      codes = Ensure(s.words_merge, words, kb.merge_ctx, DType::kUint32);
      NDArray::CopyFromTo(s.words, codes, priority);
    }
    kb.dequantize->Run({codes}, {kb.merged}, {i == 0 ? WEFT_REQ_WRITE : WEFT_REQ_ADD}, {}, false, priority);
  }
  return kb.merged;
}

void Comm::SetGradientCompression(const GradientCompression& compression) {
  compression_ = compression;
  // Prepared kernels carry the old threshold.
  for (auto& [key, kb] : buffers_) {
    kb->dequantize.reset();
    for (auto& [i, s] : kb->slots) s.quantize.reset();
  }
}

void Comm::Broadcast(const NDArray& src, const std::vector<NDArray>& dsts, int priority) {
  for (const NDArray& dst : dsts) {
    if (dst.SharesChunkWith(src) && dst.offset() == src.offset()) continue;
    NDArray::CopyFromTo(src, dst, priority);
  }
}

Context CommDevice::PickMergeContext(const std::vector<NDArray>& values, uint64_t bytes) {
  std::optional<Context> best;
  for (const NDArray& v : values) {
    const Context c = v.GetContext();
    if (!best || load_[c] < load_[*best]) best = c;
  }
  load_[*best] += bytes;
  return *best;
}

}  // namespace weft::kv

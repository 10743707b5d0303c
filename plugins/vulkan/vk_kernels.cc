// vulkan plugin — dispatch helpers and the element-wise, copy and optimizer kernels.
#include "vk_kernels.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "vk_shaders.h"
#include "weft/sdk/ops/optimizer.hpp"

namespace weft::vk {

void RequireFloat32(const sdk::KernelSetup& s) {
  for (const auto* list : {&s.inputs, &s.outputs, &s.aux})
    for (const sdk::TensorDesc& t : *list)
      if (t.dtype != WEFT_DTYPE_FLOAT32)
        Unsupported(s, "dtype " + sdk::DTypeName(t.dtype) + " (the Vulkan kernels are float32 only)");
}
void Unsupported(const sdk::KernelSetup& s, const std::string& what) {
  throw sdk::Error(WEFT_ERR_UNSUPPORTED, s.op_name + " on vulkan: " + what);
}
void Invalid(const sdk::KernelSetup& s, const std::string& what) {
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, s.op_name + " on vulkan: " + what);
}

uint32_t Groups64(int64_t n) {
  // Grid-stride shaders: a bounded number of workgroups covers any n.
  return static_cast<uint32_t>(std::clamp<int64_t>((n + 63) / 64, 1, 4096));
}

void Dispatch(const sdk::DeviceCall& call, const Launch& launch, std::span<const Binding> bindings, const void* push,
              uint32_t push_bytes) {
  VulkanDevice& dev = static_cast<const VkKernelTable*>(call.table)->device();
  std::span<const uint32_t> code = Shader(launch.shader);
  if (code.empty())
    throw sdk::Error(WEFT_ERR_INTERNAL, std::string("vulkan: no embedded shader '") + launch.shader + "'");
  uint32_t texel_mask = 0;
  for (size_t i = 0; i < bindings.size(); ++i) texel_mask |= bindings[i].texel ? 1u << i : 0u;
  dev.OnStream(call.device, call.stream, [&](Gpu& g, StreamState& s) {
    const Pipeline& p =
        g.GetPipeline(launch.shader, code, static_cast<uint32_t>(bindings.size()), launch.spec, texel_mask);
    g.Dispatch(s, p, bindings, push, push_bytes, launch.gx, launch.gy, launch.gz);
  });
}

void DispatchElementwise(const sdk::DeviceCall& call, const char* shader, std::span<const int32_t> spec,
                         std::span<const Binding> bindings, const void* push, uint32_t push_bytes) {
  uint32_t n = 0;
  std::memcpy(&n, push, 4);
  VulkanDevice& dev = static_cast<const VkKernelTable*>(call.table)->device();
  // Elements per chunk: the binding range less the alignment slack of a shifted binding.
  const uint64_t chunk = (dev.gpu(call.device).max_binding_bytes() - 64) / 4 / 64 * 64;
  if (n <= chunk) return Dispatch(call, Launch{shader, spec, Groups64(n)}, bindings, push, push_bytes);
  std::vector<uint8_t> pc(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_bytes);
  std::vector<Binding> b(bindings.begin(), bindings.end());
  for (uint64_t at = 0; at < n; at += chunk) {
    const uint32_t cnt = static_cast<uint32_t>(std::min<uint64_t>(chunk, n - at));
    std::memcpy(pc.data(), &cnt, 4);
    for (size_t i = 0; i < b.size(); ++i) {
      b[i] = At(bindings[i], at);
      b[i].bytes = uint64_t{cnt} * 4;
    }
    Dispatch(call, Launch{shader, spec, Groups64(cnt)}, b, pc.data(), push_bytes);
  }
}

void ZeroFill(const sdk::DeviceCall& call, const Binding& b, uint64_t bytes) {
  if (bytes == 0) return;
  VulkanDevice& dev = static_cast<const VkKernelTable*>(call.table)->device();
  dev.OnStream(call.device, call.stream, [&](Gpu& g, StreamState& s) {
    auto [buf, at] = g.Locate(b.ptr, b.offset, bytes, "kernel output");
    const VkBuffer w[1] = {buf->buffer};
    g.Record(s, {}, w, [&](VkCommandBuffer cb) { g.api().vkCmdFillBuffer(cb, buf->buffer, at, bytes, 0u); });
  });
}

void ZeroOutput(const sdk::DeviceCall& call, const sdk::DeviceTensor& t, int32_t req) {
  if (req != WEFT_REQ_WRITE && req != WEFT_REQ_WRITE_INPLACE) return;
  ZeroFill(call, Out(t), t.bytes());
}

namespace {

// Byte offset of a binding inside its VkBuffer.
uint64_t BufferOffset(const sdk::DeviceCall& call, const Binding& t) {
  uint64_t at = 0;
  VulkanDevice& dev = static_cast<const VkKernelTable*>(call.table)->device();
  dev.OnStream(call.device, call.stream,
               [&](Gpu& g, StreamState&) { at = g.Locate(t.ptr, t.offset, t.bytes, "gemm operand").second; });
  return at;
}

}  // namespace

GemmTiles ChooseGemm(const sdk::DeviceCall& call, const GemmArgs& g, const Binding& a, const Binding& b) {
  GemmTiles t = GemmTilesOverride();
  if (t.rows4 < 0) return {};
  // gemm4 loads vec4: 16-byte aligned operands and batch strides, and multiples of 4 along the
  // contiguous axis of each operand (K unless ta && !tb, M when ta, N when !tb).
  const bool ok = (g.k % 4 == 0 || (g.ta && !g.tb)) && (!g.ta || g.m % 4 == 0) && (g.tb || g.n % 4 == 0) &&
                  g.sa % 4 == 0 && g.sb % 4 == 0 && BufferOffset(call, a) % 16 == 0 && BufferOffset(call, b) % 16 == 0;
  if (!ok) return {};
  // bench/vulkan on lavapipe (note of issue 14): 16 x 16 per invocation with K steps of 8 is the
  // fastest for large GEMMs (1024^3: 19 GFLOP/s against 14 for 8 x 8); smaller products (LeNet's
  // convolutions: M = 20 or 50 filters) keep more workgroups busy with 8 x 8.
  if (t.rows4 == 0) t = g.m >= 128 && g.n >= 128 ? GemmTiles{4, 4, 2} : GemmTiles{2, 2, 1};
  return t;
}

GemmTiles GemmTilesOverride() {
  // WEFT_VULKAN_GEMM=R4xC4[kKB] (tile of 4R4 x 4C4 per invocation, K steps of 4KB) or "scalar"
  // (gemm.comp): for the benchmark's comparisons.
  GemmTiles t;
  const char* e = std::getenv("WEFT_VULKAN_GEMM");
  if (e == nullptr || *e == 0) return t;
  if (std::string(e) == "scalar") return {-1, -1};
  static const std::regex kTile("([1-4])x([1-4])(k([1-4]))?");
  std::cmatch m;
  if (std::regex_match(e, m, kTile))
    return {std::stoi(m[1].str()), std::stoi(m[2].str()), m[4].matched ? std::stoi(m[4].str()) : 1};
  throw sdk::Error(WEFT_ERR_INVALID_ARGUMENT, std::string("WEFT_VULKAN_GEMM='") + e +
                                                  "': expected RxC or RxCkB (tile rows and columns / 4, 1..4 each; "
                                                  "K blocks of 4 per step, 1..4) or 'scalar'");
}

Binding At(Binding b, uint64_t elements) {
  b.offset += elements * 4;
  b.bytes -= elements * 4;
  return b;
}

void Gemm(const sdk::DeviceCall& call, const GemmArgs& g, const sdk::DeviceTensor& a, const sdk::DeviceTensor& b,
          const sdk::DeviceTensor& c, int32_t req, const sdk::DeviceTensor* bias) {
  const Binding bb = bias != nullptr ? In(*bias) : Binding{};
  Gemm(call, g, In(a), In(b), Out(c), req, bias != nullptr ? &bb : nullptr);
}

void Gemm(const sdk::DeviceCall& call, const GemmArgs& g, const Binding& a, const Binding& b, const Binding& c,
          int32_t req, const Binding* bias) {
  if (sdk::IsNull(req) || g.m == 0 || g.n == 0) return;
  struct {
    uint32_t m, n, k, ta, tb, add, has_bias, sa, sb, sc;
    float alpha;
    uint32_t bias_rows;
  } push{g.m, g.n, g.k, g.ta, g.tb, AddFlag(req), bias != nullptr, g.sa, g.sb, g.sc, g.alpha, g.bias_rows};
  Binding binds[4] = {a, b, c, bias != nullptr ? *bias : c};
  const GemmTiles t = ChooseGemm(call, g, a, b);
  if (t.rows4 > 0) {
    binds[0].texel = binds[1].texel = true;
    // Invocations along M: enough for M (up to 8), the rest of the 64 along N.
    int32_t wgy = 1;
    while (wgy < 8 && static_cast<uint32_t>(wgy * 4 * t.rows4) < g.m) wgy *= 2;
    const int32_t spec[6] = {g.ta, g.tb, t.rows4, t.cols4, wgy, t.kblocks};
    const uint32_t tm = 4 * t.rows4 * wgy, tn = 4 * t.cols4 * (64 / wgy);
    Dispatch(call, Launch{"gemm4", spec, (g.n + tn - 1) / tn, (g.m + tm - 1) / tm, g.batch}, binds, push);
    return;
  }
  // 4 rows x 4 column strips per invocation measured best on lavapipe among 4..32 x 1..4
  // (bench/vulkan; the note of issue 14 has the numbers).
  constexpr int32_t rows = 4, colsn = 4;
  binds[0].texel = binds[1].texel = binds[0].scalar_texel = binds[1].scalar_texel = true;
  const int32_t spec[2] = {rows, colsn};
  Launch l{"gemm", spec, (g.n + 64 * colsn - 1) / (64 * colsn), (g.m + rows - 1) / rows, g.batch};
  Dispatch(call, l, binds, push);
}

namespace {

// elemwise_add / _sub / _mul / _div on equal shapes.
class ElemwiseKernel {
 public:
  explicit ElemwiseKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(2, 1);
    RequireFloat32(s);
    if (s.inputs[0].shape != s.inputs[1].shape || s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "inputs and output must have one shape");
    const std::string& op = s.op_name;
    op_ = op == "elemwise_add" ? 0 : op == "elemwise_sub" ? 1 : op == "elemwise_mul" ? 2 : 3;
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0])};
    const Binding b[3] = {In(c.inputs[0]), In(c.inputs[1]), Out(c.outputs[0])};
    const int32_t spec[1] = {op_};
    DispatchElementwise(c, "elemwise_binary", spec, b, push);
  }

 private:
  int32_t op_ = 0;
};

// Writes (or adds) x into out through shaders/add_n.comp.
void AddInto(const sdk::DeviceCall& c, const sdk::DeviceTensor& x, const sdk::DeviceTensor& out, bool add) {
  const int64_t n = out.size();
  struct {
    uint32_t n, add;
  } push{static_cast<uint32_t>(n), add ? 1u : 0u};
  const Binding b[2] = {In(x), Out(out)};
  DispatchElementwise(c, "add_n", {}, b, push);
}

// add_n: out = sum of the inputs.
class AddNKernel {
 public:
  explicit AddNKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(-1, 1);
    RequireFloat32(s);
    if (s.inputs.empty()) Invalid(s, "needs at least one input");
    for (const sdk::TensorDesc& t : s.inputs)
      if (t.size() != s.outputs[0].size()) Invalid(s, "every input must have the output's size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      AddInto(c, c.inputs[i], c.outputs[0], i > 0 || c.req[0] == WEFT_REQ_ADD);
  }
};

// _copy, Flatten, Reshape, expand_dims and their backward ops: the bytes unchanged.
class CopyKernel {
 public:
  explicit CopyKernel(const sdk::KernelSetup& s) {
    s.ExpectCounts(1, 1);
    RequireFloat32(s);
    if (s.inputs[0].size() != s.outputs[0].size()) Invalid(s, "input and output differ in size");
  }
  void Compute(const sdk::DeviceCall& c) const {
    const sdk::DeviceTensor &x = c.inputs[0], &y = c.outputs[0];
    if (sdk::IsNull(c.req[0]) || x.size() == 0) return;
    if (c.req[0] == WEFT_REQ_ADD) return AddInto(c, x, y, true);
    if (x.data() == y.data() && x.offset() == y.offset()) return;  // in place
    VulkanDevice& dev = static_cast<const VkKernelTable*>(c.table)->device();
    dev.OnStream(c.device, c.stream, [&](Gpu& g, StreamState& s) {
      auto [src, sat] = g.Locate(x.data(), x.offset(), x.bytes(), "copy source");
      auto [dst, dat] = g.Locate(y.data(), y.offset(), y.bytes(), "copy destination");
      const VkBuffer r[1] = {src->buffer}, w[1] = {dst->buffer};
      g.Record(s, r, w, [&](VkCommandBuffer cb) {
        VkBufferCopy region{sat, dat, x.bytes()};
        g.api().vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &region);
      });
    });
  }
};

// sgd_update (inputs weight, grad) and sgd_mom_update (aux mom), MXNet's attributes.
class SgdKernel {
 public:
  explicit SgdKernel(const sdk::KernelSetup& s) : mom_(s.op_name == "sgd_mom_update") {
    s.ExpectCounts(2, 1, mom_ ? 1 : 0);
    RequireFloat32(s);
    for (const auto* list : {&s.inputs, &s.outputs, &s.aux})
      for (const sdk::TensorDesc& t : *list)
        if (t.size() != s.inputs[0].size()) Invalid(s, "weight, grad, state and output must have one size");
    const sdk::UpdateFields p = sdk::UpdateParamsOf(s);
    lr_ = p.lr, wd_ = p.wd, rescale_ = p.rescale_grad, clip_ = p.clip_gradient, momentum_ = p.momentum;
  }
  void Compute(const sdk::DeviceCall& c) const {
    if (sdk::IsNull(c.req[0])) return;
    const int64_t n = c.outputs[0].size();
    struct {
      uint32_t n, add;
      float lr, wd, rescale, clip, momentum;
    } push{static_cast<uint32_t>(n), AddFlag(c.req[0]), lr_, wd_, rescale_, clip_, momentum_};
    const Binding b[4] = {In(c.inputs[0]), In(c.inputs[1]), mom_ ? Out(c.aux[0]) : In(c.outputs[0]), Out(c.outputs[0])};
    const int32_t spec[1] = {mom_ ? 1 : 0};
    DispatchElementwise(c, "sgd_update", spec, b, push);
  }

 private:
  bool mom_;
  float lr_ = 0, wd_ = 0, rescale_ = 1, clip_ = -1, momentum_ = 0;
};

}  // namespace

void RegisterKernels(VkKernelTable& t) {
  const uint64_t f32 = WEFT_DTYPE_BIT(WEFT_DTYPE_FLOAT32);
  for (const char* op : {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"})
    AddWithShaders<ElemwiseKernel>(t, op, f32, {"elemwise_binary"});
  AddWithShaders<AddNKernel>(t, "add_n", f32, {"add_n"});
  for (const char* op : {"_copy", "_backward_copy", "Flatten", "Reshape", "expand_dims", "BlockGrad"})
    AddWithShaders<CopyKernel>(t, op, f32, {"add_n"});  // add_n for req add
  AddWithShaders<SgdKernel>(t, "sgd_update", f32, {"sgd_update"});
  AddWithShaders<SgdKernel>(t, "sgd_mom_update", f32, {"sgd_update"});
  RegisterNnKernels(t);
  RegisterConvKernels(t);
  RegisterMathKernels(t);
  RegisterNormKernels(t);
  RegisterIndexKernels(t);
  RegisterCompressionKernels(t);
  RegisterRandomKernels(t);
}

}  // namespace weft::vk

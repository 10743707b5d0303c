// weft core — host-side array helpers (see host_ops.h).
#include "kvstore/host_ops.h"

#include <algorithm>

#include "weft/engine.h"
#include "weft/runtime.h"

namespace weft::kv {

bool IsHostAddressable(const Context& ctx) { return Runtime::Get().GetDevice(ctx).host_addressable(); }

float* HostFloats(const NDArray& array) {
  array.CheckAndAlloc();
  return reinterpret_cast<float*>(static_cast<uintptr_t>(array.dptr() + array.offset()));
}

void PushHostSum(const std::vector<NDArray>& srcs, const NDArray& dst, int priority) {
  const size_t n = dst.Size();
  std::vector<VarHandle> reads;
  for (const NDArray& s : srcs) {
    WEFT_CHECK(!s.SharesChunkWith(dst), "PushHostSum: a source shares memory with the destination");
    s.CheckAndAlloc();
    reads.push_back(s.var());
  }
  dst.CheckAndAlloc();
  Engine::Get()->PushSync(
      [srcs, dst, n](RunContext) {
        float* out = HostFloats(dst);
        std::vector<const float*> in;
        in.reserve(srcs.size());
        for (const NDArray& s : srcs) in.push_back(HostFloats(s));
        std::copy(in[0], in[0] + n, out);
        for (size_t k = 1; k < in.size(); ++k) {
          const float* p = in[k];
          for (size_t i = 0; i < n; ++i) out[i] += p[i];
        }
      },
      dst.GetContext(), reads, {dst.var()}, FnProperty::kCPUPrioritized, priority, "KVStoreHostSum");
}

void QuantizeTwoBit(const float* grad, float* residual, uint32_t* packed, size_t n, float threshold) {
  std::fill(packed, packed + TwoBitWords(n), 0u);
  for (size_t i = 0; i < n; ++i) {
    float r = residual[i] + grad[i];
    uint32_t code = 0;
    if (r >= threshold) {
      code = 3;  // 11: +t
      r -= threshold;
    } else if (r <= -threshold) {
      code = 2;  // 10: -t
      r += threshold;
    }
    residual[i] = r;
    // Element j of a 16-element block sits in byte j/4 of the word, highest bit pair first
    // (MXNet's layout in quantize_2bit).
    const size_t j = i % 16;
    packed[i / 16] |= code << (8 * (j / 4) + 6 - 2 * (j % 4));
  }
}

void DequantizeTwoBit(const uint32_t* packed, float* out, size_t n, float threshold) {
  for (size_t i = 0; i < n; ++i) {
    const size_t j = i % 16;
    const uint32_t code = (packed[i / 16] >> (8 * (j / 4) + 6 - 2 * (j % 4))) & 3u;
    out[i] = code == 3 ? threshold : code == 2 ? -threshold : 0.0f;
  }
}

void PushTwoBitRoundTrip(const NDArray& src, const NDArray& residual, const NDArray& packed, const NDArray& decoded,
                         float threshold, int priority) {
  const size_t n = src.Size();
  for (const NDArray* a : {&src, &residual, &packed, &decoded}) a->CheckAndAlloc();
  Engine::Get()->PushSync(
      [=](RunContext) {
        QuantizeTwoBit(HostFloats(src), HostFloats(residual), reinterpret_cast<uint32_t*>(HostFloats(packed)), n,
                       threshold);
      },
      residual.GetContext(), {src.var()}, {residual.var(), packed.var()}, FnProperty::kCPUPrioritized, priority,
      "KVStoreQuantize2Bit");
  Engine::Get()->PushSync(
      [=](RunContext) {
        DequantizeTwoBit(reinterpret_cast<const uint32_t*>(HostFloats(packed)), HostFloats(decoded), n, threshold);
      },
      decoded.GetContext(), {packed.var()}, {decoded.var()}, FnProperty::kCPUPrioritized, priority,
      "KVStoreDequantize2Bit");
}

void PushHostRule(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& states, HostRule rule,
                  const char* name) {
  const size_t n = weight.Size();
  const bool on_host = IsHostAddressable(weight.GetContext());
  NDArray w = weight, g = grad;
  std::vector<NDArray> s = states;
  if (!on_host) {
    const Context host = Context::cpu(0);
    w = weight.Copy(host);
    g = grad.Copy(host);
    for (NDArray& a : s) a = a.Copy(host);
  }
  std::vector<VarHandle> writes{w.var()};
  w.CheckAndAlloc();
  g.CheckAndAlloc();
  for (const NDArray& a : s) {
    a.CheckAndAlloc();
    writes.push_back(a.var());
  }
  Engine::Get()->PushSync(
      [w, g, s, n, rule](RunContext) {
        std::vector<float*> sp;
        for (const NDArray& a : s) sp.push_back(HostFloats(a));
        rule(n, HostFloats(w), HostFloats(g), sp);
      },
      w.GetContext(), {g.var()}, writes, FnProperty::kNormal, 0, name);
  if (!on_host) {
    NDArray::CopyFromTo(w, weight);
    for (size_t i = 0; i < s.size(); ++i) NDArray::CopyFromTo(s[i], states[i]);
  }
}

}  // namespace weft::kv

// What the oneDNN-backed kernel files (nn_conv_dnnl.cc, nn_fc_dnnl.cc) share; internal to
// weft_cpu_kernels.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

namespace weft::cpu {

/// The one CPU engine every oneDNN primitive of the plugin is created and run on.
inline const dnnl::engine& DnnlEngine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

/// True when oneDNN's effective ISA (the CPU's, lowered by ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA)
/// includes `want`. Thread-safe.
inline bool DnnlHasIsa(dnnl::cpu_isa want) {
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (effective & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
}

/// Buffers carved for oneDNN (workspace slices, cached operands) start on 64-byte boundaries.
inline constexpr uint64_t kDnnlAlign = 64;
inline uint64_t DnnlRoundUp(uint64_t bytes) { return (bytes + kDnnlAlign - 1) / kDnnlAlign * kDnnlAlign; }

// One operand of a primitive: the plain layout weft's tensor has and the layout the primitive
// wants. When they differ, a buffer at `offset` in the workspace holds the operand in the wanted
// layout and `reorder` converts (plain -> wanted for inputs, wanted -> plain for outputs).
struct Operand {
  dnnl::memory::desc plain, wanted;
  uint64_t offset = 0;
  dnnl::reorder reorder;
  bool same() const { return plain == wanted; }
};

inline Operand MakeOperand(const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted, bool input,
                           uint64_t& cursor) {
  Operand o{plain, wanted, 0, {}};
  if (o.same()) return o;
  o.offset = cursor;
  cursor += DnnlRoundUp(wanted.get_size());
  o.reorder = input ? dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), plain, DnnlEngine(), wanted))
                    : dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), wanted, DnnlEngine(), plain));
  return o;
}

inline dnnl::memory Mem(const dnnl::memory::desc& md, const float* p) {
  return dnnl::memory(md, DnnlEngine(), const_cast<float*>(p));  // oneDNN takes void*; inputs are only read
}

// The operand as the primitive reads it: the tensor itself, or its reordered copy.
inline dnnl::memory In(const Operand& o, const float* p, char* ws, dnnl::stream& s) {
  if (o.same()) return Mem(o.plain, p);
  dnnl::memory from = Mem(o.plain, p), m(o.wanted, DnnlEngine(), ws + o.offset);
  o.reorder.execute(s, from, m);
  return m;
}

// Where the primitive writes the operand; Finish then converts it into the tensor `p`.
inline dnnl::memory Out(const Operand& o, float* p, char* ws) {
  return o.same() ? Mem(o.plain, p) : dnnl::memory(o.wanted, DnnlEngine(), ws + o.offset);
}
inline void Finish(const Operand& o, float* p, char* ws, dnnl::stream& s) {
  if (o.same()) return;
  dnnl::memory from(o.wanted, DnnlEngine(), ws + o.offset), to = Mem(o.plain, p);
  o.reorder.execute(s, from, to);
}

}  // namespace weft::cpu

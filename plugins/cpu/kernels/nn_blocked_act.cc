// Blocked activations' helpers (nn_blocked_act.h).
#include "nn_blocked_act.h"

#include "cpu_kernels.h"
#include "nn_common.h"
#include "nn_dnnl.h"

namespace weft::cpu {

using dnnl::memory;
using weft::sdk::ActFormat;

memory::desc ActDesc(const memory::desc& plain, ActFormat f) {
  if (f == ActFormat::kPlain) return plain;
  return memory::desc(plain.dims(), memory::data_type::f32,
                      f == ActFormat::kNChw16c ? memory::format_tag::nChw16c : memory::format_tag::nChw8c);
}

int64_t CheckBlockedData(const KernelSetup& s, const TensorDesc& data, ActFormat f) {
  const int64_t block = weft::sdk::ActFormatBlock(f);
  if (block > 1 && (data.shape.size() != 4 || data.shape[1] % block != 0))
    Invalid(s, "data_format " + std::string(weft::sdk::kActFormats[static_cast<size_t>(f)]) +
                   " needs 4-D data with a multiple of " + std::to_string(block) + " channels (got " +
                   ShapeString(data) + "); use plain");
  return block;
}

void Relayout(const memory::desc& from_md, const float* from, const memory::desc& to_md, float* to) {
  dnnl::stream s(DnnlEngine());
  memory src = Mem(from_md, from), dst = Mem(to_md, to);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
}

}  // namespace weft::cpu

// Blocked activations' helpers and Pooling forward on them (nn_blocked_act.h).
#include "nn_blocked_act.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cpu_kernels.h"
#include "nn_common.h"
#include "nn_dnnl.h"

namespace weft::cpu {

using dnnl::memory;
using weft::sdk::ActFormat;
using weft::sdk::PoolGeometry;
using weft::sdk::PoolType;

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

namespace {

// oneDNN's right padding giving g's output extent `o` on one axis, or -1 when its windows are not
// MXNet's there: one wholly in the padding (the plain kernel yields 0), or, for avg counting the
// padding, one reaching past in + pad (MXNet divides by the window cut there, oneDNN by k).
int64_t RightPad(const PoolGeometry& g, int64_t in, int64_t o, int64_t k, int64_t s, int64_t p) {
  const int64_t right = (o - 1) * s + k - in - p;
  if (right < 0 || p >= k || (o - 1) * s - p >= in) return -1;
  if (g.type == PoolType::kAvg && g.count_include_pad && right > p) return -1;
  return right;
}

}  // namespace

BlockedPooling::BlockedPooling(const PoolGeometry& g, ActFormat data, ActFormat out) {
  const memory::dims x_dims{g.n, g.c, g.ih, g.iw}, y_dims{g.n, g.c, g.oh, g.ow};
  x_plain_ = memory::desc(x_dims, memory::data_type::f32, memory::format_tag::nchw);
  y_plain_ = memory::desc(y_dims, memory::data_type::f32, memory::format_tag::nchw);
  x_md_ = ActDesc(x_plain_, data);
  y_md_ = ActDesc(y_plain_, out);
  const int64_t right_h = RightPad(g, g.ih, g.oh, g.kh, g.sh, g.ph),
                right_w = RightPad(g, g.iw, g.ow, g.kw, g.sw, g.pw);
  if (g.id != 1 || g.type == PoolType::kSum || right_h < 0 || right_w < 0 || g.n == 0) return;
  const dnnl::algorithm alg = g.type == PoolType::kMax ? dnnl::algorithm::pooling_max
                              : g.count_include_pad    ? dnnl::algorithm::pooling_avg_include_padding
                                                       : dnnl::algorithm::pooling_avg_exclude_padding;
  // A 1x1 output lies alike in both layouts: the primitive writes it blocked, so oneDNN keeps its
  // blocked kernel (with a plain dst it would take its reference one).
  const memory::desc y_run = g.oh * g.ow == 1 ? ActDesc(y_plain_, data) : y_md_;
  try {
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, x_md_, y_run, {g.sh, g.sw}, {g.kh, g.kw},
                                  {g.ph, g.pw}, {right_h, right_w});
    dnnl::pooling_forward::primitive_desc pd(d, DnnlEngine());
    if (std::getenv("WEFT_DEBUG_DNNL")) std::fprintf(stderr, "dnnl blocked Pooling: %s\n", pd.impl_info_str());
    prim_ = dnnl::pooling_forward(pd);
    y_run_ = y_run;
    native_ = true;
  } catch (const dnnl::error&) {
    native_ = false;  // the relayouts and the plain kernel
  }
}

void BlockedPooling::Run(const float* x, float* y, int32_t req, const PlainRun& plain) const {
  if (native_ && req != WEFT_REQ_ADD) {
    PrepareMathThread();
    std::lock_guard<std::mutex> lock(mu_);
    dnnl::stream s(DnnlEngine());
    prim_.execute(s, {{DNNL_ARG_SRC, Mem(x_md_, x)}, {DNNL_ARG_DST, Mem(y_run_, y)}});
    s.wait();
    return;
  }
  std::vector<float> x_plain(x_plain_.get_size() / sizeof(float)), y_plain(y_plain_.get_size() / sizeof(float));
  Relayout(x_md_, x, x_plain_, x_plain.data());
  if (req == WEFT_REQ_ADD) Relayout(y_md_, y, y_plain_, y_plain.data());  // adds to the output's values
  plain(x_plain.data(), y_plain.data(), req);
  Relayout(y_plain_, y_plain.data(), y_md_, y);
}

}  // namespace weft::cpu

// Convolution through oneDNN 2.x, user (plain) layouts: src/dst NCHW, weights OIHW (GOIHW with
// groups), bias X — the layouts weft tensors have, so no reorders. Primitives are built once per
// node; scratchpads are user-managed (carved from the kernel workspace), so Compute allocates
// nothing and primitives may execute from several threads at once. Add-to requests use a sum
// post-op for the forward and a staging buffer in the workspace for the backward passes.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "nn_conv.h"

namespace weft::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

const dnnl::engine& Engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

constexpr uint64_t kAlign = 64;
uint64_t RoundUp(uint64_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

class DnnlConv final : public ConvAlgo {
 public:
  explicit DnnlConv(const ConvGeom& g) : g_(g) {
    const memory::dims src = {g.n, g.c, g.h, g.w}, dst = {g.n, g.f, g.oh, g.ow};
    const memory::dims strides = {g.sh, g.sw}, dil = {g.dh - 1, g.dw - 1}, pad_l = {g.ph, g.pw};
    // Right padding that makes oneDNN's output size equal ours (floor division drops the rest).
    const memory::dims pad_r = {(g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.ph,
                                (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pw};
    memory::desc src_md(src, memory::data_type::f32, tag::nchw);
    memory::desc dst_md(dst, memory::data_type::f32, tag::nchw);
    memory::desc wei_md =
        g.groups == 1 ? memory::desc({g.f, g.c, g.kh, g.kw}, memory::data_type::f32, tag::oihw)
                      : memory::desc({g.groups, g.fg(), g.cg(), g.kh, g.kw}, memory::data_type::f32, tag::goihw);
    memory::desc bias_md = g.bias ? memory::desc({g.f}, memory::data_type::f32, tag::x) : memory::desc();
    src_md_ = src_md, dst_md_ = dst_md, wei_md_ = wei_md, bias_md_ = bias_md;

    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_md,
                                       wei_md, bias_md, dst_md, strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc fpd(fd, attr, Engine());
    dnnl::primitive_attr attr_sum;  // a fresh object: copies of primitive_attr share one handle
    attr_sum.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr_sum.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc fpd_add(fd, attr_sum, Engine());
    fwd_ = dnnl::convolution_forward(fpd);
    fwd_add_ = dnnl::convolution_forward(fpd_add);
    fwd_scratch_ = std::max(fpd.scratchpad_desc().get_size(), fpd_add.scratchpad_desc().get_size());

    dnnl::convolution_backward_data::desc bd(dnnl::algorithm::convolution_direct, src_md, wei_md, dst_md, strides, dil,
                                             pad_l, pad_r);
    dnnl::convolution_backward_data::primitive_desc bpd(bd, attr, Engine(), fpd);
    dnnl::convolution_backward_weights::desc wd(dnnl::algorithm::convolution_direct, src_md, wei_md, bias_md, dst_md,
                                                strides, dil, pad_l, pad_r);
    dnnl::convolution_backward_weights::primitive_desc wpd(wd, attr, Engine(), fpd);
    bwd_data_ = dnnl::convolution_backward_data(bpd);
    bwd_w_ = dnnl::convolution_backward_weights(wpd);
    bwd_scratch_ = RoundUp(std::max(bpd.scratchpad_desc().get_size(), wpd.scratchpad_desc().get_size()));
    gx_bytes_ = RoundUp(src_md.get_size());
    gw_bytes_ = RoundUp(wei_md.get_size());
  }

  uint64_t ForwardWorkspace() const override { return fwd_scratch_; }
  // scratchpad | staged gx | staged gW | staged gb (staging is used for add-to requests only)
  uint64_t BackwardWorkspace() const override {
    return bwd_scratch_ + gx_bytes_ + gw_bytes_ + RoundUp(static_cast<uint64_t>(g_.f) * sizeof(float));
  }

  void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const override {
    dnnl::stream s(Engine());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, Mem(src_md_, x)},
                                            {DNNL_ARG_WEIGHTS, Mem(wei_md_, w)},
                                            {DNNL_ARG_DST, Mem(dst_md_, y)},
                                            {DNNL_ARG_SCRATCHPAD, memory(Scratch(fwd_scratch_), Engine(), ws)}};
    if (g_.bias) args[DNNL_ARG_BIAS] = Mem(bias_md_, b);
    (req == WEFT_REQ_ADD ? fwd_add_ : fwd_).execute(s, args);
    s.wait();
  }

  void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw, int32_t req_w,
                float* gb, int32_t req_b, void* ws) const override {
    dnnl::stream s(Engine());
    char* base = static_cast<char*>(ws);
    memory scratch(Scratch(bwd_scratch_), Engine(), base);
    float* stage_x = reinterpret_cast<float*>(base + bwd_scratch_);
    float* stage_w = reinterpret_cast<float*>(base + bwd_scratch_ + gx_bytes_);
    float* stage_b = reinterpret_cast<float*>(base + bwd_scratch_ + gx_bytes_ + gw_bytes_);
    if (!weft::sdk::IsNull(req_x)) {
      float* out = req_x == WEFT_REQ_ADD ? stage_x : gx;
      bwd_data_.execute(s, {{DNNL_ARG_DIFF_DST, Mem(dst_md_, gy)},
                            {DNNL_ARG_WEIGHTS, Mem(wei_md_, w)},
                            {DNNL_ARG_DIFF_SRC, Mem(src_md_, out)},
                            {DNNL_ARG_SCRATCHPAD, scratch}});
      s.wait();
      if (out != gx) weft::sdk::StoreReq(req_x, gx, out, g_.n * g_.c * g_.in_plane());
    }
    const bool want_w = !weft::sdk::IsNull(req_w), want_b = g_.bias && !weft::sdk::IsNull(req_b);
    if (want_w || want_b) {
      // The weights primitive always produces both; unwanted or add-to results go to staging.
      float* ow = want_w && req_w != WEFT_REQ_ADD ? gw : stage_w;
      float* ob = want_b && req_b != WEFT_REQ_ADD ? gb : stage_b;
      std::unordered_map<int, memory> args = {{DNNL_ARG_DIFF_DST, Mem(dst_md_, gy)},
                                              {DNNL_ARG_SRC, Mem(src_md_, x)},
                                              {DNNL_ARG_DIFF_WEIGHTS, Mem(wei_md_, ow)},
                                              {DNNL_ARG_SCRATCHPAD, scratch}};
      if (g_.bias) args[DNNL_ARG_DIFF_BIAS] = Mem(bias_md_, ob);
      bwd_w_.execute(s, args);
      s.wait();
      if (want_w && ow != gw) weft::sdk::StoreReq(req_w, gw, ow, g_.f * g_.col_rows());
      if (want_b && ob != gb) weft::sdk::StoreReq(req_b, gb, ob, g_.f);
    }
  }

 private:
  static memory Mem(const memory::desc& md, const float* p) {
    return memory(md, Engine(), const_cast<float*>(p));  // oneDNN takes void*; inputs are only read
  }
  static memory::desc Scratch(uint64_t bytes) {
    return memory::desc({static_cast<memory::dim>(std::max<uint64_t>(bytes, 1))}, memory::data_type::u8, tag::x);
  }

  ConvGeom g_;
  memory::desc src_md_, dst_md_, wei_md_, bias_md_;
  dnnl::convolution_forward fwd_, fwd_add_;
  dnnl::convolution_backward_data bwd_data_;
  dnnl::convolution_backward_weights bwd_w_;
  uint64_t fwd_scratch_ = 0, bwd_scratch_ = 0, gx_bytes_ = 0, gw_bytes_ = 0;
};

}  // namespace

std::unique_ptr<ConvAlgo> MakeDnnlConv(const ConvGeom& g, const weft_host_api* host) {
  try {
    return std::make_unique<DnnlConv>(g);
  } catch (const dnnl::error& e) {
    weft::sdk::Log(host, WEFT_LOG_DEBUG, std::string("oneDNN convolution unavailable, using im2col: ") + e.what());
    if (std::getenv("WEFT_DEBUG_DNNL")) std::fprintf(stderr, "dnnl: %s\n", e.what());
    return nullptr;  // no implementation for this geometry: the caller falls back to im2col
  }
}

}  // namespace weft::cpu

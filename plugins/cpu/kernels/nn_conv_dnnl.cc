// Convolution through oneDNN 2.x. Tensors stay in weft's plain layouts (src/dst NCHW, weights
// OIHW or GOIHW, bias X). Layers with one group and at least 16 filters let oneDNN choose its
// layouts (format any) for the forward and the weight gradient: it then picks its blocked
// direct-convolution kernels (nChw16c, jit:avx512_core / avx2) instead of the gemm-based ones it
// must use on plain layouts, and each call reorders operands into and out of the workspace. The
// data gradient is blocked only with at least 16 input channels as well. Measured on LeNet's conv2
// (bench/kernels, batch 128, 1 thread, reorders included): forward 45.4 vs 41.5 GFLOP/s, backward
// 48.1 vs 37.4. On conv1 (1 input channel; batch 100, 1 thread, reorders included) the blocked
// forward took 1.5 ms vs 2.3 ms plain and the blocked weight gradient 1.8 ms vs 7.1 ms plain
// (3.5 ms im2col), but the blocked data gradient 12 ms vs 2.9 ms plain, hence the second bound.
// Primitives are built once per node; scratchpads are user-managed (carved from the kernel
// workspace), so primitives may execute from several threads at once. Forwards with is_train
// false (inference, evaluation) keep the weights reordered between calls, keyed on their content
// stamp (ForwardConstWeights; as FullyConnected does), instead of reordering them on every call.
// Add-to requests use a sum post-op for the plain forward and a staging buffer in the workspace
// otherwise.
// 3x3 stride-1 layers with whole 16-channel blocks (ResNet's bulk) run all three passes as
// Winograd F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512 only; elsewhere weft's own where it pays,
// nn_conv_winograd_train.cc, else the direct kernels):
// batch 32, 2 threads, forward + both gradients of 64 channels on 56x56 took 175 vs 340 ms, 128 on
// 28x28 190 vs 320, 256 on 14x14 200 vs 310, 512 on 7x7 270 vs 320. The transforms round
// differently from the direct sum: 1e-6 of the largest value apart (y, gx, gw) on random data.
// WEFT_CPU_CONV_WINOGRAD=0 (host config / environment) keeps the direct kernels.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "nn_conv_dnnl.h"
#include "nn_conv_winograd.h"

namespace weft::cpu {

DnnlConvDescs::DnnlConvDescs(const ConvGeom& g) : vol(g.spatial == 3) {
  using tag = dnnl::memory::format_tag;
  using dnnl::memory;
  // 1-D and 2-D run as 2-D (h = 1 for 1-D); 3-D adds the depth axis (ncdhw, oidhw).
  auto with = [this](memory::dims lead, int64_t d, int64_t h, int64_t w) {
    if (vol) lead.push_back(d);
    lead.push_back(h);
    lead.push_back(w);
    return lead;
  };
  strides = with({}, g.sd, g.sh, g.sw);
  dilates = with({}, g.dd - 1, g.dh - 1, g.dw - 1);
  pad_l = with({}, g.pd, g.ph, g.pw);
  // Right padding that makes oneDNN's output size equal ours (floor division drops the rest).
  auto right = [](int64_t o, int64_t s, int64_t k, int64_t dl, int64_t in, int64_t pl) {
    return (o - 1) * s + (k - 1) * dl + 1 - in - pl;
  };
  pad_r = with({}, right(g.od, g.sd, g.kd, g.dd, g.d, g.pd), right(g.oh, g.sh, g.kh, g.dh, g.h, g.ph),
               right(g.ow, g.sw, g.kw, g.dw, g.w, g.pw));
  src = memory::desc(with({g.n, g.c}, g.d, g.h, g.w), memory::data_type::f32, vol ? tag::ncdhw : tag::nchw);
  dst = memory::desc(with({g.n, g.f}, g.od, g.oh, g.ow), memory::data_type::f32, vol ? tag::ncdhw : tag::nchw);
  wei = g.groups == 1
            ? memory::desc(with({g.f, g.c}, g.kd, g.kh, g.kw), memory::data_type::f32, vol ? tag::oidhw : tag::oihw)
            : memory::desc(with({g.groups, g.fg(), g.cg()}, g.kd, g.kh, g.kw), memory::data_type::f32,
                           vol ? tag::goidhw : tag::goihw);
  bias = g.bias ? memory::desc({g.f}, memory::data_type::f32, tag::x) : memory::desc();
  blocked = DnnlBlockedConv(g);
  blocked_x = blocked && g.c >= 16;
  // Channel counts that are not multiples of 16 (LeNet conv2: 20 -> 50) run faster with
  // activations in nhwc (oneDNN's brgconv forward, no padding to whole 16-channel blocks) than
  // blocked; the weights stay in the layout oneDNN picks. Batch 100, 1 thread, primitives only:
  // forward 3.3 vs 5.5 ms, data gradient 4.7 vs 5.3, weight gradient 4.3 vs 6.3.
  nhwc = blocked_x && (g.c % 16 != 0 || g.f % 16 != 0);
}

dnnl::memory::desc DnnlConvDescs::Any(const dnnl::memory::desc& md, bool weights) const {
  using tag = dnnl::memory::format_tag;
  if (!blocked) return md;
  return dnnl::memory::desc(md.dims(), dnnl::memory::data_type::f32,
                            nhwc && !weights ? (vol ? tag::ndhwc : tag::nhwc) : tag::any);
}

namespace {

using dnnl::memory;
using tag = memory::format_tag;

class DnnlConv final : public ConvAlgo {
 public:
  DnnlConv(const ConvGeom& g, dnnl::algorithm alg) : g_(g) {
    const DnnlConvDescs dd(g);
    const memory::desc &src_md = dd.src, &dst_md = dd.dst, &wei_md = dd.wei, &bias_md = dd.bias;
    const memory::dims &strides = dd.strides, &dil = dd.dilates, &pad_l = dd.pad_l, &pad_r = dd.pad_r;
    const bool blocked = dd.blocked;
    auto any = [&](const memory::desc& md, bool weights = false) { return dd.Any(md, weights); };
    auto any_x = [&](const memory::desc& md, bool weights = false) { return dd.blocked_x ? any(md, weights) : md; };

    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, alg, any(src_md), any(wei_md, true), bias_md,
                                       any(dst_md), strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc fpd(fd, attr, DnnlEngine());
    fwd_ = dnnl::convolution_forward(fpd);
    fwd_scratch_ = DnnlRoundUp(fpd.scratchpad_desc().get_size());
    if (!blocked) {
      dnnl::primitive_attr attr_sum;  // a fresh object: copies of primitive_attr share one handle
      attr_sum.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr_sum.set_post_ops(ops);
      dnnl::convolution_forward::primitive_desc fpd_add(fd, attr_sum, DnnlEngine());
      fwd_add_ = dnnl::convolution_forward(fpd_add);
      fwd_scratch_ = DnnlRoundUp(std::max<uint64_t>(fwd_scratch_, fpd_add.scratchpad_desc().get_size()));
    }
    uint64_t fcur = fwd_scratch_;
    f_src_ = MakeOperand(src_md, fpd.src_desc(), true, fcur);
    f_wei_ = MakeOperand(wei_md, fpd.weights_desc(), true, fcur);
    f_dst_ = MakeOperand(dst_md, fpd.dst_desc(), false, fcur);
    // Add-to with a reordered output: the plain result is staged, then added.
    fwd_stage_ = fcur;
    fwd_ws_ = fcur + (f_dst_.same() ? 0 : DnnlRoundUp(dst_md.get_size()));

    dnnl::convolution_backward_data::desc bd(alg, any_x(src_md), any_x(wei_md, true), any_x(dst_md), strides, dil,
                                             pad_l, pad_r);
    // The data gradient on plain layouts needs a plain forward as its hint.
    const dnnl::convolution_forward::desc fd_plain(dnnl::prop_kind::forward_training,
                                                   dnnl::algorithm::convolution_direct, src_md, wei_md, bias_md, dst_md,
                                                   strides, dil, pad_l, pad_r);
    dnnl::convolution_backward_data::primitive_desc bpd(
        bd, attr, DnnlEngine(),
        blocked == dd.blocked_x ? fpd : dnnl::convolution_forward::primitive_desc(fd_plain, attr, DnnlEngine()));
    dnnl::convolution_backward_weights::desc wd(alg, any(src_md), any(wei_md, true), bias_md, any(dst_md), strides, dil,
                                                pad_l, pad_r);
    dnnl::convolution_backward_weights::primitive_desc wpd(wd, attr, DnnlEngine(), fpd);
    bwd_data_ = dnnl::convolution_backward_data(bpd);
    bwd_w_ = dnnl::convolution_backward_weights(wpd);
    bwd_scratch_ = DnnlRoundUp(std::max(bpd.scratchpad_desc().get_size(), wpd.scratchpad_desc().get_size()));
    gx_bytes_ = DnnlRoundUp(src_md.get_size());
    gw_bytes_ = DnnlRoundUp(wei_md.get_size());
    uint64_t bcur = bwd_scratch_ + gx_bytes_ + gw_bytes_ + DnnlRoundUp(static_cast<uint64_t>(g_.f) * sizeof(float));
    b_gy_ = MakeOperand(dst_md, bpd.diff_dst_desc(), true, bcur);
    b_wei_ = MakeOperand(wei_md, bpd.weights_desc(), true, bcur);
    b_gx_ = MakeOperand(src_md, bpd.diff_src_desc(), false, bcur);
    // Both gradients read out_grad in one blocked layout (LeNet conv2): reordered once per call.
    share_gy_ = !b_gy_.same() && b_gy_.wanted == wpd.diff_dst_desc();
    w_gy_ = share_gy_ ? b_gy_ : MakeOperand(dst_md, wpd.diff_dst_desc(), true, bcur);
    w_src_ = MakeOperand(src_md, wpd.src_desc(), true, bcur);
    w_gw_ = MakeOperand(wei_md, wpd.diff_weights_desc(), false, bcur);
    bias_md_ = bias_md;
    bwd_ws_ = bcur;
  }

  // Workspaces come with no alignment promise: one kDnnlAlign more lets every call start its
  // buffers on a 64-byte boundary (Aligned), as oneDNN's non-temporal stores need (the Winograd
  // weight gradient's scratchpad faulted on a 16-byte-aligned workspace).
  uint64_t ForwardWorkspace() const override { return fwd_ws_ + kDnnlAlign; }
  // scratchpad | staged gx | staged gW | staged gb (for add-to requests) | reordered operands
  uint64_t BackwardWorkspace() const override { return bwd_ws_ + kDnnlAlign; }

  void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const override {
    dnnl::stream s(DnnlEngine());
    ws = Aligned(ws);
    Run(s, x, In(f_wei_, w, static_cast<char*>(ws), s), b, y, req, ws);
  }

  // The weights reordered once into a kept copy (allocated on the first such call) and again only
  // when `w_stamp` or `w` change, as FullyConnected does (nn_fc_dnnl.h): the same reorder, so the
  // same bits as Forward.
  void ForwardConstWeights(const float* x, const float* w, uint64_t w_stamp, const float* b, float* y, int32_t req,
                           void* ws) const override {
    if (f_wei_.same()) return Forward(x, w, b, y, req, ws);
    ws = Aligned(ws);
    std::lock_guard<std::mutex> lock(wei_mu_);
    dnnl::stream s(DnnlEngine());
    if (wei_cache_ == nullptr) {
      wei_cache_.reset(static_cast<char*>(std::aligned_alloc(kDnnlAlign, DnnlRoundUp(f_wei_.wanted.get_size()))));
      if (wei_cache_ == nullptr) throw dnnl::error(dnnl_out_of_memory, "Convolution: no memory for the weights");
      wei_stamp_ = 0;
    }
    memory kept(f_wei_.wanted, DnnlEngine(), wei_cache_.get());
    if (w_stamp == 0 || w_stamp != wei_stamp_ || w != wei_source_) {
      memory from = Mem(f_wei_.plain, w);
      f_wei_.reorder.execute(s, from, kept);
      wei_stamp_ = w_stamp;
      wei_source_ = w;
    }
    Run(s, x, kept, b, y, req, ws);
  }

  void Run(dnnl::stream& s, const float* x, const memory& wei, const float* b, float* y, int32_t req, void* ws) const {
    char* base = static_cast<char*>(ws);
    const bool add = req == WEFT_REQ_ADD;
    float* out = add && !f_dst_.same() ? reinterpret_cast<float*>(base + fwd_stage_) : y;
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, In(f_src_, x, base, s)},
                                            {DNNL_ARG_WEIGHTS, wei},
                                            {DNNL_ARG_DST, Out(f_dst_, out, base)},
                                            {DNNL_ARG_SCRATCHPAD, memory(Scratch(fwd_scratch_), DnnlEngine(), base)}};
    if (g_.bias) args[DNNL_ARG_BIAS] = Mem(bias_md_, b);
    (add && f_dst_.same() ? fwd_add_ : fwd_).execute(s, args);
    Finish(f_dst_, out, base, s);
    s.wait();
    if (out != y) weft::sdk::StoreReq(req, y, out, g_.n * g_.f * g_.out_plane());
  }

  void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw, int32_t req_w,
                float* gb, int32_t req_b, void* ws) const override {
    dnnl::stream s(DnnlEngine());
    char* base = static_cast<char*>(Aligned(ws));
    memory scratch(Scratch(bwd_scratch_), DnnlEngine(), base);
    float* stage_x = reinterpret_cast<float*>(base + bwd_scratch_);
    float* stage_w = reinterpret_cast<float*>(base + bwd_scratch_ + gx_bytes_);
    float* stage_b = reinterpret_cast<float*>(base + bwd_scratch_ + gx_bytes_ + gw_bytes_);
    bool gy_reordered = false;  // the data gradient left out_grad's blocked copy for the weights pass
    if (!weft::sdk::IsNull(req_x)) {
      float* out = req_x == WEFT_REQ_ADD ? stage_x : gx;
      gy_reordered = share_gy_;
      bwd_data_.execute(s, {{DNNL_ARG_DIFF_DST, In(b_gy_, gy, base, s)},
                            {DNNL_ARG_WEIGHTS, In(b_wei_, w, base, s)},
                            {DNNL_ARG_DIFF_SRC, Out(b_gx_, out, base)},
                            {DNNL_ARG_SCRATCHPAD, scratch}});
      Finish(b_gx_, out, base, s);
      s.wait();
      if (out != gx) weft::sdk::StoreReq(req_x, gx, out, g_.n * g_.c * g_.in_plane());
    }
    const bool want_w = !weft::sdk::IsNull(req_w), want_b = g_.bias && !weft::sdk::IsNull(req_b);
    if (want_w || want_b) {
      // The weights primitive always produces both; unwanted or add-to results go to staging.
      float* ow = want_w && req_w != WEFT_REQ_ADD ? gw : stage_w;
      float* ob = want_b && req_b != WEFT_REQ_ADD ? gb : stage_b;
      memory gy_m = gy_reordered ? memory(w_gy_.wanted, DnnlEngine(), base + w_gy_.offset) : In(w_gy_, gy, base, s);
      std::unordered_map<int, memory> args = {{DNNL_ARG_DIFF_DST, gy_m},
                                              {DNNL_ARG_SRC, In(w_src_, x, base, s)},
                                              {DNNL_ARG_DIFF_WEIGHTS, Out(w_gw_, ow, base)},
                                              {DNNL_ARG_SCRATCHPAD, scratch}};
      if (g_.bias) args[DNNL_ARG_DIFF_BIAS] = Mem(bias_md_, ob);
      bwd_w_.execute(s, args);
      Finish(w_gw_, ow, base, s);
      s.wait();
      if (want_w && ow != gw) weft::sdk::StoreReq(req_w, gw, ow, g_.f * g_.col_rows());
      if (want_b && ob != gb) weft::sdk::StoreReq(req_b, gb, ob, g_.f);
    }
  }

 private:
  static void* Aligned(void* ws) {
    const auto p = reinterpret_cast<uintptr_t>(ws);
    return reinterpret_cast<void*>((p + kDnnlAlign - 1) / kDnnlAlign * kDnnlAlign);
  }

  static memory::desc Scratch(uint64_t bytes) {
    return memory::desc({static_cast<memory::dim>(std::max<uint64_t>(bytes, 1))}, memory::data_type::u8, tag::x);
  }

  struct Free {
    void operator()(char* p) const { std::free(p); }
  };

  ConvGeom g_;
  memory::desc bias_md_;
  mutable std::mutex wei_mu_;  // guards the kept weights
  mutable std::unique_ptr<char, Free> wei_cache_;
  mutable uint64_t wei_stamp_ = 0;
  mutable const float* wei_source_ = nullptr;
  dnnl::convolution_forward fwd_, fwd_add_;
  dnnl::convolution_backward_data bwd_data_;
  dnnl::convolution_backward_weights bwd_w_;
  Operand f_src_, f_wei_, f_dst_, b_gy_, b_wei_, b_gx_, w_gy_, w_src_, w_gw_;
  bool share_gy_ = false;
  uint64_t fwd_scratch_ = 0, fwd_stage_ = 0, fwd_ws_ = 0, bwd_scratch_ = 0, bwd_ws_ = 0, gx_bytes_ = 0, gw_bytes_ = 0;
};

// Blocked layouts cost a reorder of the large operands on every call. Over a whole batch of a
// layer with big planes those buffers leave the cache between the primitive and its reorder
// (LeNet conv1, batch 100: a 7.4 MB blocked output), and the reorder runs at memory speed: 1.5 ms
// of the forward's 2.8 ms, the primitive itself 1.25 ms. Running such layers in chunks of images
// whose blocked operands fit in the L2 cache keeps each chunk there between the primitive and the
// reorder. The weight and bias gradients are sums over the images: the first chunk honours the
// request, later chunks add to it.
class ChunkedConv final : public ConvAlgo {
 public:
  ChunkedConv(const ConvGeom& g, int64_t chunk) : g_(g), chunk_(chunk) {
    ConvGeom part = g;
    part.n = chunk;
    full_ = std::make_unique<DnnlConv>(part, dnnl::algorithm::convolution_direct);
    if (g.n % chunk != 0) {
      part.n = g.n % chunk;
      rest_ = std::make_unique<DnnlConv>(part, dnnl::algorithm::convolution_direct);
    }
  }
  uint64_t ForwardWorkspace() const override {
    return std::max(full_->ForwardWorkspace(), rest_ ? rest_->ForwardWorkspace() : 0);
  }
  uint64_t BackwardWorkspace() const override {
    return std::max(full_->BackwardWorkspace(), rest_ ? rest_->BackwardWorkspace() : 0);
  }
  void Forward(const float* x, const float* w, const float* b, float* y, int32_t req, void* ws) const override {
    for (int64_t n0 = 0; n0 < g_.n; n0 += chunk_)
      Part(n0).Forward(x + n0 * InImage(), w, b, y + n0 * OutImage(), req, ws);
  }
  void ForwardConstWeights(const float* x, const float* w, uint64_t w_stamp, const float* b, float* y, int32_t req,
                           void* ws) const override {
    for (int64_t n0 = 0; n0 < g_.n; n0 += chunk_)
      Part(n0).ForwardConstWeights(x + n0 * InImage(), w, w_stamp, b, y + n0 * OutImage(), req, ws);
  }
  void Backward(const float* gy, const float* x, const float* w, float* gx, int32_t req_x, float* gw, int32_t req_w,
                float* gb, int32_t req_b, void* ws) const override {
    for (int64_t n0 = 0; n0 < g_.n; n0 += chunk_) {
      const int32_t rw = n0 == 0 || weft::sdk::IsNull(req_w) ? req_w : WEFT_REQ_ADD;
      const int32_t rb = n0 == 0 || weft::sdk::IsNull(req_b) ? req_b : WEFT_REQ_ADD;
      Part(n0).Backward(gy + n0 * OutImage(), x + n0 * InImage(), w, gx ? gx + n0 * InImage() : nullptr, req_x, gw, rw,
                        gb, rb, ws);
    }
  }

 private:
  const DnnlConv& Part(int64_t n0) const { return n0 + chunk_ <= g_.n ? *full_ : *rest_; }
  int64_t InImage() const { return g_.c * g_.in_plane(); }
  int64_t OutImage() const { return g_.f * g_.out_plane(); }

  ConvGeom g_;
  int64_t chunk_;
  std::unique_ptr<DnnlConv> full_, rest_;
};

}  // namespace

int64_t DnnlConvChunk(const ConvGeom& g, uint64_t whole_batch_bytes, uint64_t chunk_bytes) {
  if (!DnnlBlockedConv(g)) return 0;
  // Blocked operands pad channels to a multiple of 16; the largest per image decides.
  auto padded = [](int64_t ch) { return static_cast<uint64_t>((ch + 15) / 16 * 16); };
  const uint64_t image = sizeof(float) * std::max(padded(g.f) * g.out_plane(), padded(g.c) * g.in_plane());
  if (image * static_cast<uint64_t>(g.n) <= whole_batch_bytes) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes / image));
}

bool DnnlRunsAvx512() { return DnnlHasIsa(dnnl::cpu_isa::avx512_core); }

bool DnnlWinogradConv(const ConvGeom& g) {
  return g.spatial == 2 && g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.c % 16 == 0 && g.f % 16 == 0;
}

std::unique_ptr<ConvAlgo> MakeDnnlConv(const ConvGeom& g, const weft_host_api* host, bool winograd) {
  // Chunks pay off where the reorders rival the convolution: few multiply-adds per output
  // (LeNet conv1: 25). With hundreds (ResNet's 3x3 layers: 576 and up) each chunk's reorder of
  // the weights and the weight gradient's reorder and sum per chunk cost more than they save:
  // ResNet-18 v1 training at batch 32 (2 threads) took 1.84 s per step unchunked, 2.00 s chunked.
  // Unchunked, those layers still hold blocked copies of the whole batch's activations (and, for
  // Winograd, its transformed tiles, a few times more): past kUnchunkedMaxBytes an operand they
  // run in chunks of about that size, so that a large batch of large images (the VGG-like model
  // test: 32 images of 64 x 300 x 300, 737 MB an operand) needs a few GB, not the 23 GB it took.
  // ResNet-18 at batch 32 and 224 x 224 (102 MB at most) stays whole.
  constexpr int64_t kChunkMaxColRows = 64;
  constexpr uint64_t kUnchunkedMaxBytes = uint64_t{32} << 20;
  try {
    const int64_t chunk =
        g.col_rows() < kChunkMaxColRows ? DnnlConvChunk(g) : DnnlConvChunk(g, kUnchunkedMaxBytes, kUnchunkedMaxBytes);
    const bool chunked = chunk > 0 && chunk < g.n;
    if (!chunked && winograd && DnnlWinogradConv(g)) {
      try {
        return std::make_unique<DnnlConv>(g, dnnl::algorithm::convolution_winograd);
      } catch (const dnnl::error& e) {  // no Winograd kernel on this ISA: weft's, or the direct ones
        weft::sdk::Log(host, WEFT_LOG_DEBUG, std::string("oneDNN Winograd convolution unavailable: ") + e.what());
      }
    }
    // Where oneDNN has no Winograd, weft's: ResNet-18's 3x3 layers on AVX2 (nn_conv_winograd_train.cc).
    if (winograd && WinogradTrainFits(g)) return MakeWinogradTrainConv(g);
    if (chunked) return std::make_unique<ChunkedConv>(g, chunk);
    return std::make_unique<DnnlConv>(g, dnnl::algorithm::convolution_direct);
  } catch (const dnnl::error& e) {
    weft::sdk::Log(host, WEFT_LOG_DEBUG, std::string("oneDNN convolution unavailable, using im2col: ") + e.what());
    if (std::getenv("WEFT_DEBUG_DNNL")) std::fprintf(stderr, "dnnl: %s\n", e.what());
    return nullptr;  // no implementation for this geometry: the caller falls back to im2col
  }
}

}  // namespace weft::cpu

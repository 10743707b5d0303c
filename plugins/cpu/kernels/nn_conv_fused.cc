// _sg_conv, the executor's fused inference convolution (core/executor/fuse_conv.h; attributes
// sdk::SgConvParam): out = act2(act(BatchNorm(conv(data, weight, bias))) + sum), float32.
//
// Inference (is_train false, or a BatchNorm with use_global_stats, or none): one oneDNN
// forward-inference primitive whose weights and bias are the BatchNorm-folded ones
// (W'[f] = W[f]·scale[f], b'[f] = b[f]·scale[f] + shift[f], scale and shift from BatchNorm's own
// code, norm_batch_norm.h) and whose post-ops are the activation, the sum (dst is first filled
// with `sum`, in place when the executor gave the output the sum's memory) and the second
// activation. The folded weights are computed, and reordered into the layout the primitive picked,
// on the first call and again only when the weights' content stamp (SDK input_stamps) or address,
// or any of the small per-channel tensors (bias, gamma, beta, moving statistics: compared by value,
// they are aux states without stamps) changed; later calls only run the primitive. As for
// FullyConnected (nn_fc_dnnl.h), which path a call takes depends only on the node and the call's
// is_train, never on earlier calls, so runs are bit-identical. 3x3 stride-1 layers use oneDNN's
// Winograd kernels where it has them (WinogradFits; they round differently from direct ones), else
// weft's own Winograd F(4x4, 3x3) (nn_conv_winograd.h; OwnWinograd), which applies the same fold
// and epilogue itself; 1xr and rx1 layers use weft's 1-D Winograd (nn_conv_winograd_1d.h;
// OwnWinograd1D) likewise.
//
// Blocked activations (data_format, out_format not plain: values the executor keeps in oneDNN's
// nChw8c / nChw16c between fused convolutions, fuse_conv.h): the primitive is built on exactly
// those layouts, so the activations need no reorder; the plain side of a layer with one blocked
// operand lets oneDNN choose (format any), as blocked layers do. The unfused path converts the
// blocked operands to plain and back. Channels that fill no whole block (MobileNet v2's 24 in
// nChw16c) are padded to one in memory, as oneDNN lays such tensors out (it zeroes the padding
// whenever it wraps the memory); images then lie that padded size apart.
//
// Training mode with a BatchNorm on batch statistics (MXNet's `_sg_mkldnn_conv` ignores it; the
// executor fuses only grad-free binds, but Forward(is_train=true) still means batch statistics),
// any request other than write, and geometries oneDNN cannot run take the unfused path: the
// Convolution algorithm, then BatchNorm's statistics and moving-average update, the activations
// and the sum in one loop.
#include <sys/mman.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu_kernels.h"
#include "nn_blocked_act.h"
#include "nn_conv_dnnl.h"
#include "nn_conv_winograd.h"
#include "nn_conv_winograd_1d.h"
#include "norm_batch_norm.h"
#include "vector_math.h"

namespace weft::cpu {
namespace {

using dnnl::memory;
using weft::sdk::ActFormat;
using weft::sdk::FusedAct;
using weft::sdk::SgConvParam;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

// Buffers of 2 MiB or more (large layers' kept weights) are aligned to 2 MiB and asked to lie on
// transparent huge pages (madvise: a hint, honoured in the kernel's "madvise" and "always" THP
// modes). A pass reads such weights whole once, mostly from memory, and 4 KiB pages cost a TLB
// miss and a hardware prefetcher restart every 4 KiB: MobileNet v2's classifier (1280 -> 1000,
// 5 MB, oneDNN's kernel, batch 1, caches flushed) took 0.36 ms on 4 KiB pages and 0.29 ms on huge
// ones; the whole process on huge pages (glibc.malloc.hugetlb=1) took 2% less CPU time per pass of
// MobileNet v2 and ResNet-18 at batch 1.
Buffer AllocateAligned(uint64_t bytes) {
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  const uint64_t align = bytes >= kHugePage ? kHugePage : kDnnlAlign;
  const uint64_t size = (std::max<uint64_t>(bytes, 1) + align - 1) / align * align;
  Buffer b(static_cast<char*>(std::aligned_alloc(align, size)));
  if (b == nullptr) throw Error(WEFT_ERR_OUT_OF_MEMORY, "_sg_conv: no memory for the folded weights");
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(b.get(), size, MADV_HUGEPAGE);  // on failure the pages stay small
#endif
  return b;
}

// Activation's formulas (nn_activation.cc): vector_math.h's tanh and sigmoid, MXNet's softrelu.
float Activate(FusedAct a, float v, double lo, double hi) {
  switch (a) {
    case FusedAct::kRelu:
      return v > 0.0f ? v : 0.0f;
    case FusedAct::kClip:
      return std::min(std::max(v, static_cast<float>(lo)), static_cast<float>(hi));
    case FusedAct::kTanh:
      return vmath::Tanh(v);
    case FusedAct::kSigmoid:
      return vmath::Sigmoid(v);
    case FusedAct::kSoftrelu:
      return v > 20.0f ? v : std::log1p(std::exp(v));
    case FusedAct::kNone:
      break;
  }
  return v;
}

// oneDNN's eltwise post-op for `a` (none for kNone).
void AppendActivation(dnnl::post_ops& ops, FusedAct a, double lo, double hi) {
  using dnnl::algorithm;
  switch (a) {
    case FusedAct::kRelu:
      ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
      break;
    case FusedAct::kClip:
      ops.append_eltwise(1.0f, algorithm::eltwise_clip, static_cast<float>(lo), static_cast<float>(hi));
      break;
    case FusedAct::kTanh:
      ops.append_eltwise(1.0f, algorithm::eltwise_tanh, 0.0f, 0.0f);
      break;
    case FusedAct::kSigmoid:
      ops.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f);
      break;
    case FusedAct::kSoftrelu:
      ops.append_eltwise(1.0f, algorithm::eltwise_soft_relu, 0.0f, 0.0f);
      break;
    case FusedAct::kNone:
      break;
  }
}

// Activations inside the convolution (weft::sdk::FusedActInside) are oneDNN post-ops or weft's
// Winograd epilogue (WinoAct); tanh, sigmoid and softrelu as the last stage run afterwards
// (TailAct): oneDNN 2.6's eltwise_tanh post-op made LeNet's 5x5 convolutions 4-5x slower on AVX2
// (jit:avx2, 20 filters: 1.6 against 0.3 ms per batch of 100 with a separate pass of weft's tanh).

// The last stage's activation when it runs after the convolution (not FusedActInside), else kNone:
// the post-sum one with a sum, the only one without; with with_dw none (its activations stay
// post-ops).
FusedAct TailAct(const SgConvParam& p) {
  const FusedAct last = p.with_dw ? FusedAct::kNone : p.with_sum ? p.postsum_act_type : p.act_type;
  return weft::sdk::FusedActInside(last) ? FusedAct::kNone : last;
}

// `p` without its TailAct: what runs inside the convolution.
SgConvParam WithoutTail(SgConvParam p) {
  if (TailAct(p) == FusedAct::kNone) return p;
  (p.with_sum ? p.postsum_act_type : p.act_type) = FusedAct::kNone;
  return p;
}

// The folded weights (emptied once every primitive holds them reordered) and bias in weft's plain
// layouts; `generation` changes with every refold.
struct Folded {
  std::vector<float> w, b;
  uint64_t generation = 0;
};

// Whether a layer asks oneDNN for a Winograd convolution: the plain kernel's geometries
// (DnnlWinogradConv: 3x3 at stride 1, one group, whole 16-channel blocks) unless
// WEFT_CPU_CONV_WINOGRAD=0. Its 2x3 and 4x3 tiles take ResNet-18 at batch 1 from 35 to 24 ms of
// CPU time on AVX-512 (oneDNN's convolution_auto never picks them there) and stay within the
// compatibility fixtures' tolerance (bench/results/2026-11-29-zoo_pool_concat.txt); where oneDNN
// has none (AVX2) weft's own runs the layer (OwnWinograd).
bool WinogradFits(const KernelSetup& s, const ConvGeom& g) { return ConvWinogradSetting(s) && DnnlWinogradConv(g); }

// One oneDNN inference primitive for a geometry (a chunk of images) with the post-ops, keeping the
// folded weights reordered into the layout it picked. With `dw` (SgConvParam with_dw: the
// depthwise stage's geometry) the depthwise convolution is a post-op of the 1x1 one (oneDNN's
// append_dw, its input kept in the cache) with its folded weights and bias and its activation
// after it. Not thread-safe: the kernel serialises.
class FusedPrimitive {
 public:
  // `winograd`: ask oneDNN for a Winograd kernel (WinogradFits), else direct.
  FusedPrimitive(const ConvGeom& g, const SgConvParam& p, bool winograd, const ConvGeom* dw = nullptr)
      : g_(g), with_sum_(p.with_sum) {
    ConvGeom biased = g;
    biased.bias = true;  // the fold always has one
    const DnnlConvDescs dd(biased);
    const memory::desc src_md = ActDesc(dd.src, p.data_format);
    const memory::desc dst_md = ActDesc(dw != nullptr ? DnnlConvDescs(*dw).dst : dd.dst, p.out_format);
    const bool any_blocked = p.data_format != ActFormat::kPlain || p.out_format != ActFormat::kPlain;
    // Grouped (depthwise) layers too run on oneDNN's blocked layouts: on plain ones it has only
    // its gemm-based grouped kernel. A blocked tensor is taken as it is; next to one, the plain
    // side is left to oneDNN (not nhwc, which no blocked kernel pairs with).
    auto act = [&](const memory::desc& plain, const memory::desc& md) {
      if (md != plain) return md;
      if (any_blocked || (!dd.blocked && g.groups > 1)) return Any(md);
      return dd.blocked ? dd.Any(md) : md;
    };
    dnnl::post_ops ops;
    AppendActivation(ops, p.act_type, p.act_min, p.act_max);
    if (p.with_sum) ops.append_sum(1.0f);
    AppendActivation(ops, p.postsum_act_type, p.postsum_act_min, p.postsum_act_max);
    // The 1x1 convolution's own output (the depthwise one's input) is then never materialised:
    // its descriptor only names the layout the depthwise kernel reads.
    memory::desc conv_dst = act(dd.dst, dst_md);
    if (dw != nullptr) {
      ops.append_dw(memory::data_type::f32, memory::data_type::f32, memory::data_type::f32, 3, dw->sh, 1, 0, {});
      AppendActivation(ops, p.dw_act_type, p.dw_act_min, p.dw_act_max);
      conv_dst = p.out_format != ActFormat::kPlain ? ActDesc(dd.dst, p.out_format) : Any(dd.dst);
    }
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(ops);
    auto make = [&](dnnl::algorithm alg) {
      dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_inference, alg, act(dd.src, src_md), Any(dd.wei),
                                         dd.bias, conv_dst, dd.strides, dd.dilates, dd.pad_l, dd.pad_r);
      return dnnl::convolution_forward::primitive_desc(fd, attr, DnnlEngine());
    };
    dnnl::convolution_forward::primitive_desc pd;
    try {
      if (!winograd) throw dnnl::error(dnnl_unimplemented, "direct");
      pd = make(dnnl::algorithm::convolution_winograd);
      winograd_ = true;
    } catch (const dnnl::error&) {  // no Winograd kernel for this geometry or ISA
      pd = make(dnnl::algorithm::convolution_direct);
    }
    if (std::getenv("WEFT_DEBUG_DNNL")) std::fprintf(stderr, "dnnl _sg_conv: %s\n", pd.impl_info_str());
    prim_ = dnnl::convolution_forward(pd);
    wei_ = Weights(dd.wei, pd.weights_desc(), dd.bias);
    if (dw != nullptr) {
      ConvGeom dw_biased = *dw;
      dw_biased.bias = true;
      const DnnlConvDescs dwd(dw_biased);
      dw_wei_ = Weights(dwd.wei, pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS),
                        dwd.bias);
    }
    scratch_ = DnnlRoundUp(pd.scratchpad_desc().get_size());
    uint64_t cursor = scratch_;
    src_ = MakeOperand(src_md, pd.src_desc(), true, cursor);
    dst_ = MakeOperand(dst_md, pd.dst_desc(), false, cursor);
    if (p.with_sum && !dst_.same())
      sum_reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), dst_md, DnnlEngine(), pd.dst_desc()));
    ws_ = cursor;
  }

  uint64_t Workspace() const { return ws_; }
  /// Whether oneDNN runs a Winograd kernel.
  bool Winograd() const { return winograd_; }
  /// Whether a call reorders the data or the output (their layouts are not the tensors').
  bool Reorders() const { return !src_.same() || !dst_.same(); }

  // `dw`: the depthwise stage's folded weights (with_dw), else null. The arguments' memory
  // objects are made on the first call and then pointed at each call's buffers: making and
  // destroying them on every call (malloc, and free's malloc_consolidate from dnnl_memory_destroy)
  // took about 1% of MobileNet v2's CPU time at batch 1.
  void Run(const float* x, const Folded& f, const Folded* dw, const float* sum, float* y, char* ws) const {
    dnnl::stream& s = stream_;
    if (args_.empty()) MakeArgs(dw != nullptr, ws);
    void* src = const_cast<float*>(x);
    if (!src_.same()) {
      In(src_, x, ws, s);  // reordered into the workspace
      src = ws + src_.offset;
    }
    args_.at(DNNL_ARG_SRC).set_data_handle(src);
    wei_.Update(f, s);
    args_.at(DNNL_ARG_BIAS).set_data_handle(const_cast<float*>(f.b.data()));
    args_.at(DNNL_ARG_DST).set_data_handle(dst_.same() ? static_cast<void*>(y) : ws + dst_.offset);
    args_.at(DNNL_ARG_SCRATCHPAD).set_data_handle(ws);
    if (dw != nullptr) {
      dw_wei_.Update(*dw, s);
      args_.at(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS).set_data_handle(const_cast<float*>(dw->b.data()));
    }
    if (with_sum_) {  // the sum post-op adds what dst holds
      if (!dst_.same()) {
        memory from = Mem(dst_.plain, sum), to(dst_.wanted, DnnlEngine(), ws + dst_.offset);
        sum_reorder_.execute(s, from, to);
      } else if (sum != y) {
        std::memcpy(y, sum, dst_.plain.get_size());
      }
    }
    prim_.execute(s, args_);
    Finish(dst_, y, ws, s);
    s.wait();
  }

 private:
  static memory::desc Any(const memory::desc& md) {
    return memory::desc(md.dims(), memory::data_type::f32, memory::format_tag::any);
  }

  // A convolution's folded weights reordered into the layout the primitive wants, kept between
  // calls and reordered again when the fold's generation changes.
  struct Weights {
    memory::desc plain, wanted, bias;
    dnnl::reorder reorder;
    Buffer cache;
    mutable uint64_t generation = 0;
    Weights() = default;
    Weights(const memory::desc& p, const memory::desc& w, const memory::desc& b)
        : plain(p),
          wanted(w),
          bias(b),
          reorder(dnnl::reorder::primitive_desc(DnnlEngine(), p, DnnlEngine(), w)),
          cache(AllocateAligned(w.get_size())) {}
    // Reorders `f` into the cache unless it holds f's generation.
    void Update(const Folded& f, dnnl::stream& s) const {
      if (generation == f.generation) return;
      memory from = Mem(plain, f.w.data()), kept(wanted, DnnlEngine(), cache.get());
      reorder.execute(s, from, kept);
      generation = f.generation;
    }
  };

  // The argument memory objects (handles set by each Run; the weights' point at their caches).
  void MakeArgs(bool with_dw, char* ws) const {
    const memory::desc scratch({static_cast<memory::dim>(std::max<uint64_t>(scratch_, 1))}, memory::data_type::u8,
                               memory::format_tag::x);
    args_ = {{DNNL_ARG_SRC, memory(src_.wanted, DnnlEngine(), ws)},
             {DNNL_ARG_WEIGHTS, memory(wei_.wanted, DnnlEngine(), wei_.cache.get())},
             {DNNL_ARG_BIAS, memory(wei_.bias, DnnlEngine(), ws)},
             {DNNL_ARG_DST, memory(dst_.wanted, DnnlEngine(), ws)},
             {DNNL_ARG_SCRATCHPAD, memory(scratch, DnnlEngine(), ws)}};
    if (with_dw) {
      args_[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS] = memory(dw_wei_.wanted, DnnlEngine(), dw_wei_.cache.get());
      args_[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS] = memory(dw_wei_.bias, DnnlEngine(), ws);
    }
  }

  ConvGeom g_;
  bool with_sum_, winograd_ = false;
  mutable dnnl::stream stream_{DnnlEngine()};
  mutable std::unordered_map<int, memory> args_;  // MakeArgs, on the first Run
  dnnl::convolution_forward prim_;
  Weights wei_, dw_wei_;
  dnnl::reorder sum_reorder_;
  Operand src_, dst_;
  uint64_t scratch_ = 0, ws_ = 0;
};

// One convolution stage of an `_sg_conv` node (the node itself, or its 1x1 and depthwise stages
// with with_dw): its attributes (data_format, out_format: its own input's and output's layouts),
// geometry, where its inputs are, and its folded weights. The unfused path runs here.
class Stage {
 public:
  // `weight`: the index of its weight input (bias, gamma and beta follow as present); `aux`: the
  // index of its moving mean (the variance follows).
  Stage(const KernelSetup& s, const SgConvParam& p, const ConvGeom& g, size_t weight, size_t aux)
      : p_(p), g_(g), weight_(weight), aux_(aux), host_(s.host) {
    gamma_ = weight + (g.bias ? 2 : 1);
    bn_ = {g_.n,
           g_.f,
           g_.out_plane(),
           static_cast<float>(p_.bn_eps),
           p_.bn_momentum,
           p_.bn_fix_gamma,
           p_.bn_use_global_stats};
  }

  const ConvGeom& geom() const { return g_; }
  /// The index of the input after this stage's own (the sum, or the depthwise stage's weight).
  size_t next_input() const { return gamma_ + (p_.with_bn ? 2 : 0); }
  /// Whether a call in this mode normalises with the batch's statistics (then unfused).
  bool BatchStats(bool is_train) const { return p_.with_bn && is_train && !p_.bn_use_global_stats; }
  const Folded& folded() const { return folded_; }
  /// Every primitive holds the current generation reordered: the plain copy is not read again
  /// until the next refold rebuilds it (a ResNet-18 holds 45 MB of weights).
  void DropPlainWeights() const { std::vector<float>().swap(folded_.w); }

  // Recomputes the folded weights and bias when their sources changed (under the kernel's lock).
  void Refold(const KernelCall& c) const {
    const float* w = c.inputs[weight_].data<float>();
    const uint64_t stamp = c.InputStamp(weight_);
    if (folded_.generation != 0 && stamp != 0 && stamp == w_stamp_ && w == w_source_ && SmallUnchanged(c)) return;
    std::vector<float> small = SmallInputs(c);
    const int64_t per_filter = g_.col_rows();  // weight (F, C / groups, k...)
    const size_t count = static_cast<size_t>(g_.f * per_filter);
    folded_.w.assign(w, w + count);
    folded_.b.assign(static_cast<size_t>(g_.f), 0.0f);
    if (g_.bias) std::copy(small.begin(), small.begin() + g_.f, folded_.b.begin());
    if (p_.with_bn) {
      const BnScaleShift<float> bn = ScaleShift(c, nullptr, false);
      for (int64_t f = 0; f < g_.f; ++f) {
        const float s = bn.scale[static_cast<size_t>(f)];
        for (int64_t k = 0; k < per_filter; ++k) folded_.w[static_cast<size_t>(f * per_filter + k)] *= s;
        float& b = folded_.b[static_cast<size_t>(f)];
        b = b * s + bn.shift[static_cast<size_t>(f)];
      }
    }
    ++folded_.generation;
    w_stamp_ = stamp;
    w_source_ = w;
    small_ = std::move(small);
  }

  // Convolution, BatchNorm (batch statistics updating the moving ones when `batch`), activation,
  // sum and activation, one stage after another, from `data` (in data_format) to `out` (in
  // out_format) under request `req` (under the kernel's lock). Blocked operands are converted to
  // plain copies first and the output back at the end.
  void Unfused(const KernelCall& c, const float* data, float* out, int32_t req, bool batch) const {
    if (conv_ == nullptr) {
      conv_ = MakeDnnlConv(g_, host_);
      if (conv_ == nullptr) conv_ = MakeIm2colConv(g_);
    }
    const size_t count = static_cast<size_t>(g_.n * g_.f * g_.out_plane());
    const DnnlConvDescs dd(g_);
    const memory::desc src_md = ActDesc(dd.src, p_.data_format), dst_md = ActDesc(dd.dst, p_.out_format);
    std::vector<float> x_plain, sum_plain, y_plain;
    auto plain = [](const memory::desc& md, const memory::desc& plain_md, const float* p, std::vector<float>& copy) {
      if (md == plain_md) return p;
      copy.resize(plain_md.get_size() / sizeof(float));
      Relayout(md, p, plain_md, copy.data());
      return static_cast<const float*>(copy.data());
    };
    const float* x = plain(src_md, dd.src, data, x_plain);
    std::vector<float> t(count);
    Buffer ws = AllocateAligned(conv_->ForwardWorkspace());
    conv_->Forward(x, c.inputs[weight_].data<float>(), g_.bias ? c.inputs[weight_ + 1].data<float>() : nullptr,
                   t.data(), WEFT_REQ_WRITE, ws.get());
    BnScaleShift<float> bn;
    if (p_.with_bn) bn = ScaleShift(c, t.data(), batch);
    const float* sum = p_.with_sum ? plain(dst_md, dd.dst, c.inputs[next_input()].data<float>(), sum_plain) : nullptr;
    // An add-to request adds to the output's current values, so a blocked one is read first.
    float* y = dst_md == dd.dst ? out : const_cast<float*>(plain(dst_md, dd.dst, out, y_plain));
    const int64_t plane = g_.out_plane();
    weft::sdk::WithReq(req, [&](auto assign) {
      for (size_t i = 0; i < count; ++i) {
        const size_t ch = static_cast<size_t>((static_cast<int64_t>(i) / plane) % g_.f);
        float v = p_.with_bn ? t[i] * bn.scale[ch] + bn.shift[ch] : t[i];
        v = Activate(p_.act_type, v, p_.act_min, p_.act_max);
        if (sum != nullptr) v += sum[i];
        assign(y[i], Activate(p_.postsum_act_type, v, p_.postsum_act_min, p_.postsum_act_max));
      }
    });
    if (y != out) Relayout(dd.dst, y, dst_md, out);
  }

 private:
  // Calls `use` with each per-channel tensor the fold depends on (g_.f floats each), in order:
  // bias, gamma, beta, moving statistics.
  template <class Use>
  void ForEachSmall(const KernelCall& c, Use use) const {
    if (g_.bias) use(c.inputs[weight_ + 1].data<float>());
    if (p_.with_bn)
      for (const Tensor* t : {&c.inputs[gamma_], &c.inputs[gamma_ + 1], &c.aux[aux_], &c.aux[aux_ + 1]})
        use(t->data<float>());
  }

  // Those tensors concatenated.
  std::vector<float> SmallInputs(const KernelCall& c) const {
    std::vector<float> v;
    ForEachSmall(c, [&](const float* p) { v.insert(v.end(), p, p + g_.f); });
    return v;
  }

  // Whether they hold the bits of the last fold's, compared in place: every call checks them (aux
  // states have no stamps), and copying them first cost MobileNet v2 at batch 1 about 1% of a pass.
  bool SmallUnchanged(const KernelCall& c) const {
    size_t at = 0;
    bool same = true;
    ForEachSmall(c, [&](const float* p) {
      const size_t n = static_cast<size_t>(g_.f);
      same = same && at + n <= small_.size() && std::memcmp(p, small_.data() + at, n * sizeof(float)) == 0;
      at += n;
    });
    return same && at == small_.size();
  }

  BnScaleShift<float> ScaleShift(const KernelCall& c, const float* x, bool batch) const {
    return BatchNormScaleShift(bn_, x, c.inputs[gamma_].data<float>(), c.inputs[gamma_ + 1].data<float>(),
                               c.aux[aux_].data<float>(), c.aux[aux_ + 1].data<float>(), batch);
  }

  SgConvParam p_;
  ConvGeom g_;
  BnParams bn_;
  size_t weight_, gamma_ = 0, aux_;
  const weft_host_api* host_;
  mutable Folded folded_;
  mutable uint64_t w_stamp_ = 0;
  mutable const float* w_source_ = nullptr;
  mutable std::vector<float> small_;
  mutable std::unique_ptr<ConvAlgo> conv_;  // the unfused path's convolution, made on its first call
};

class SgConvForward {
 public:
  explicit SgConvForward(const KernelSetup& s)
      : p_(s.Params<SgConvParam>()), inner_(WithoutTail(p_)), tail_(TailAct(p_)) {
    RequireFloat32(s);
    const size_t dw_in = p_.with_dw ? 1 + (p_.dw_no_bias ? 0 : 1) + (p_.dw_with_bn ? 2 : 0) : 0;
    const size_t n_in = (p_.conv.no_bias ? 2 : 3) + (p_.with_bn ? 2 : 0) + dw_in + (p_.with_sum ? 1 : 0);
    const int n_aux = (p_.with_bn ? 2 : 0) + (p_.with_dw && p_.dw_with_bn ? 2 : 0);
    s.ExpectCounts(static_cast<int>(n_in), 1, n_aux);
    MakeStages(s);
    const ConvGeom& g = first_->geom();
    if (p_.with_sum && s.inputs[first_->next_input()].size() != s.outputs[0].size())
      Invalid(s, "input 'sum' " + ShapeString(s.inputs[first_->next_input()]) + " must have the output's shape " +
                     ShapeString(s.outputs[0]));
    CheckFormat(s, "data_format", p_.data_format);
    CheckFormat(s, "out_format", p_.out_format);
    out_image_ = OutImageStride(s);
    if (g.n == 0) return;
    try {
      // Chunks of images keep a layer's reordered activations in the cache (DnnlConvChunk); a
      // primitive that takes and writes the tensors as they are (both blocked, or SqueezeNet's and
      // ResNet's stem reading its 3 plain channels directly) has no reorder to serve and runs the
      // whole batch: SqueezeNet's stem at batch 32 took 32 calls of one image before.
      const bool winograd = WinogradFits(s, g);
      full_ = MakePrimitive(g.n, winograd);
      if (OwnWinograd(s)) {
        own_ = std::make_unique<WinogradF4Conv>(g, weft::sdk::ActFormatBlock(p_.data_format),
                                                weft::sdk::ActFormatBlock(p_.out_format), Epilogue(), out_image_);
        full_.reset();
        if (std::getenv("WEFT_DEBUG_DNNL"))
          std::fprintf(stderr, "dnnl _sg_conv: weft winograd F(4x4,3x3)%s\n",
                       own_->StreamsOutput() ? ", output streamed" : "");
        return;
      }
      if (OwnWinograd1D(s)) {
        own1d_ = std::make_unique<Winograd1DConv>(g, weft::sdk::ActFormatBlock(p_.data_format),
                                                  weft::sdk::ActFormatBlock(p_.out_format), Epilogue(), 0, out_image_);
        full_.reset();
        if (std::getenv("WEFT_DEBUG_DNNL")) std::fprintf(stderr, "dnnl _sg_conv: weft winograd 1-D\n");
        return;
      }
      const int64_t chunk = full_->Reorders() ? DnnlConvChunk(g) : 0;
      chunk_ = chunk > 0 && chunk < g.n ? chunk : g.n;
      // The images of a slice lie apart: one call per image, or where oneDNN runs a Winograd
      // kernel (AVX-512; it picks other tiles for one image, which round differently) the chunk
      // into the workspace and then image by image into place.
      if (out_image_ > 0 && full_->Winograd()) scatter_ = true;
      if (out_image_ > 0 && !scatter_) chunk_ = 1;
      if (chunk_ != g.n) full_ = MakePrimitive(chunk_, winograd);
      if (g.n % chunk_ != 0) rest_ = MakePrimitive(g.n % chunk_, winograd);
    } catch (const dnnl::error& e) {
      weft::sdk::Log(s.host, WEFT_LOG_DEBUG, std::string("_sg_conv: oneDNN unavailable, running unfused: ") + e.what());
      full_.reset();
      rest_.reset();
    }
  }

  // weft's Winograd (nn_conv_winograd.h) where oneDNN has none for this geometry and ISA (oneDNN's
  // are AVX-512 only): 3x3 stride-1 layers with enough tiles, unless WEFT_CPU_CONV_WINOGRAD=0.
  bool OwnWinograd(const KernelSetup& s) const {
    const ConvGeom& g = first_->geom();
    return !dw_ && WholeBlocks() && EpilogueFits() && !full_->Winograd() && WinogradF4Fits(g) && WinogradF4Pays(g) &&
           ConvWinogradSetting(s);
  }

  // Whether the data's and the output's channels fill whole blocks of their formats: weft's
  // Winograd transforms take no padded tensors.
  bool WholeBlocks() const {
    const ConvGeom& g = first_->geom();
    return g.c % weft::sdk::ActFormatBlock(p_.data_format) == 0 && g.f % weft::sdk::ActFormatBlock(p_.out_format) == 0;
  }

  // weft's 1-D Winograd (nn_conv_winograd_1d.h) for 1xr and rx1 layers (oneDNN has only direct
  // kernels for them) with enough tiles, on whole channel blocks, unless WEFT_CPU_CONV_WINOGRAD=0.
  bool OwnWinograd1D(const KernelSetup& s) const {
    const ConvGeom& g = first_->geom();
    return !dw_ && WholeBlocks() && EpilogueFits() && Winograd1DFits(g) && Winograd1DPays(g) && ConvWinogradSetting(s);
  }

  // Whether the Winograd epilogue (Epilogue) applies both activations.
  bool EpilogueFits() const {
    return weft::sdk::FusedActInside(inner_.act_type) && weft::sdk::FusedActInside(inner_.postsum_act_type);
  }

  WinoEpilogue Epilogue() const {
    auto act = [](FusedAct a, double lo, double hi) {
      return WinoAct{a == FusedAct::kRelu   ? WinoAct::kRelu
                     : a == FusedAct::kClip ? WinoAct::kClip
                                            : WinoAct::kNone,
                     static_cast<float>(lo), static_cast<float>(hi)};
    };
    return {act(inner_.act_type, inner_.act_min, inner_.act_max),
            act(inner_.postsum_act_type, inner_.postsum_act_min, inner_.postsum_act_max), p_.with_sum};
  }

  // A blocked format needs a 2-D convolution. Channels that fill no whole block are padded to one
  // (the tensor's memory holds the padded size: the executor plans it so, fuse_conv.h).
  void CheckFormat(const KernelSetup& s, const char* attr, ActFormat f) const {
    if (f != ActFormat::kPlain && first_->geom().spatial != 2)
      Invalid(s, std::string(attr) + " " + std::string(weft::sdk::kActFormats[static_cast<size_t>(f)]) +
                     " needs a 2-D convolution; use plain");
  }

  // Floats per image of a tensor of `channels` x `plane` in format f (the last block padded).
  static int64_t ImageFloats(int64_t channels, int64_t plane, ActFormat f) {
    const int64_t block = weft::sdk::ActFormatBlock(f);
    return (channels + block - 1) / block * block * plane;
  }

  // The executor's attribute out_image_stride (core/executor/concat_view.h): floats between the
  // output's images when it is a channel slice of a Concat's output; 0: an output of its own.
  int64_t OutImageStride(const KernelSetup& s) const {
    const int64_t stride = s.attrs.GetInt("out_image_stride", 0);
    const int64_t n = s.outputs[0].shape.empty() ? 0 : s.outputs[0].shape[0];
    const int64_t image = n > 0 ? s.outputs[0].size() / n : 0;
    if (stride != 0 && (stride < image || p_.with_sum || p_.with_dw))
      Invalid(s, "out_image_stride " + std::to_string(stride) + " needs at least the output's " +
                     std::to_string(image) + " floats per image, no sum and no depthwise stage");
    return stride;
  }

  uint64_t WorkspaceBytes() const { return PrimitiveWorkspace() + ScatterBytes(); }
  uint64_t PrimitiveWorkspace() const {
    return full_ ? DnnlRoundUp(std::max(full_->Workspace(), rest_ ? rest_->Workspace() : 0)) : 0;
  }
  // A chunk's output before it goes into the slice (scatter_).
  uint64_t ScatterBytes() const {
    const ConvGeom& g = first_->geom();
    return scatter_ ? static_cast<uint64_t>(chunk_ * g.f * g.out_plane()) * sizeof(float) : 0;
  }

  void Compute(const KernelCall& c) const {
    const ConvGeom& g = first_->geom();
    if (weft::sdk::IsNull(c.req[0]) || g.n == 0) return;
    PrepareMathThread();
    std::lock_guard<std::mutex> lock(mu_);
    const bool batch_stats = first_->BatchStats(c.is_train) || (dw_ && dw_->BatchStats(c.is_train));
    if ((full_ == nullptr && own_ == nullptr && own1d_ == nullptr) || batch_stats || c.req[0] == WEFT_REQ_ADD)
      return Unfused(c);
    first_->Refold(c);
    if (dw_) dw_->Refold(c);
    const float* x = c.inputs[0].data<float>();
    const float* sum = p_.with_sum ? c.inputs[first_->next_input()].data<float>() : nullptr;
    float* y = c.outputs[0].data<float>();
    if (own_ != nullptr || own1d_ != nullptr) {
      const Folded& f = first_->folded();
      if (own_generation_ != f.generation)
        own_ ? own_->SetWeights(f.w.data(), f.b.data()) : own1d_->SetWeights(f.w.data(), f.b.data());
      own_generation_ = f.generation;
      own_ ? own_->Run(x, sum, y) : own1d_->Run(x, sum, y);
      Tail(y, g.n, out_image_ > 0 ? out_image_ : ImageFloats(g.f, g.out_plane(), p_.out_format));
      first_->DropPlainWeights();  // U holds this generation
      return;
    }
    const ConvGeom& last = dw_ ? dw_->geom() : g;
    const int64_t in_image = ImageFloats(g.c, g.in_plane(), p_.data_format),
                  out_image = ImageFloats(last.f, last.out_plane(), p_.out_format);
    const int64_t out_step = out_image_ > 0 ? out_image_ : out_image;
    char* ws = c.Workspace<char>(WorkspaceBytes());
    float* own = reinterpret_cast<float*>(ws + PrimitiveWorkspace());  // scatter_: the chunk's output
    for (int64_t n0 = 0; n0 < g.n; n0 += chunk_) {
      const FusedPrimitive& prim = n0 + chunk_ <= g.n ? *full_ : *rest_;
      prim.Run(x + n0 * in_image, first_->folded(), dw_ ? &dw_->folded() : nullptr,
               sum ? sum + n0 * out_image : nullptr, scatter_ ? own : y + n0 * out_step, ws);
      for (int64_t i = 0; scatter_ && i < std::min(chunk_, g.n - n0); ++i)
        std::copy_n(own + i * out_image, out_image, y + (n0 + i) * out_step);
      Tail(y + n0 * out_step, std::min(chunk_, g.n - n0), out_step);  // while the chunk is in the cache
    }
    first_->DropPlainWeights();
    if (dw_) dw_->DropPlainWeights();
  }

 private:
  // The node's stage, or with with_dw its 1x1 stage (writing a plain intermediate on the unfused
  // path) and its depthwise stage (reading it).
  void MakeStages(const KernelSetup& s) {
    auto geometry = [&](const SgConvParam& p, std::span<const int64_t> x, size_t w, std::span<const int64_t> y,
                        int spatial) {
      const bool bias = !p.conv.no_bias;
      return weft::sdk::ConvolutionGeometry(
          s.op_name, p.conv, x, s.inputs[w].shape,
          bias ? std::span<const int64_t>(s.inputs[w + 1].shape) : std::span<const int64_t>(), bias, y, spatial);
    };
    if (!p_.with_dw) {
      first_ = std::make_unique<Stage>(s, p_, geometry(p_, s.inputs[0].shape, 1, s.outputs[0].shape, 3), 1, 0);
      return;
    }
    const std::vector<int64_t>& x = s.inputs[0].shape;
    if (x.size() != 4) Invalid(s, "with_dw needs 4-D data (got " + ShapeString(s.inputs[0]) + ")");
    const std::vector<int64_t> mid = {x[0], p_.conv.num_filter, x[2], x[3]};
    SgConvParam p1 = p_.FirstStage(), p2 = p_.DwStage();
    p1.out_format = ActFormat::kPlain;
    p2.out_format = p_.out_format;
    first_ = std::make_unique<Stage>(s, p1, geometry(p1, x, 1, mid, 2), 1, 0);
    dw_ = std::make_unique<Stage>(s, p2, geometry(p2, mid, first_->next_input(), s.outputs[0].shape, 2),
                                  first_->next_input(), p_.with_bn ? 2 : 0);
  }

  std::unique_ptr<FusedPrimitive> MakePrimitive(int64_t n, bool winograd) const {
    ConvGeom part = first_->geom(), dw_part;
    part.n = n;
    if (dw_) {
      dw_part = dw_->geom();
      dw_part.n = n;
    }
    return std::make_unique<FusedPrimitive>(part, inner_, winograd, dw_ ? &dw_part : nullptr);
  }

  // Unfused into the output, or for a slice of a Concat's output (out_image_stride) into a tensor
  // of its own, then image by image into place.
  void Unfused(const KernelCall& c) const {
    float* y = c.outputs[0].data<float>();
    if (out_image_ == 0) return UnfusedInto(c, y, c.req[0]);
    if (c.req[0] != WEFT_REQ_WRITE && c.req[0] != WEFT_REQ_WRITE_INPLACE)
      throw Error(WEFT_ERR_INVALID_ARGUMENT, "_sg_conv: out_image_stride takes a write request only");
    const int64_t n = first_->geom().n, image = c.outputs[0].size() / n;
    std::vector<float> own(static_cast<size_t>(n * image));
    UnfusedInto(c, own.data(), WEFT_REQ_WRITE);
    for (int64_t i = 0; i < n; ++i) std::copy_n(own.data() + i * image, image, y + i * out_image_);
  }

  // The stages one after another (under mu_); with with_dw through a plain intermediate.
  void UnfusedInto(const KernelCall& c, float* y, int32_t req) const {
    const float* x = c.inputs[0].data<float>();
    if (!dw_) return first_->Unfused(c, x, y, req, first_->BatchStats(c.is_train));
    const ConvGeom& g = first_->geom();
    std::vector<float> mid(static_cast<size_t>(g.n * g.f * g.out_plane()));
    first_->Unfused(c, x, mid.data(), WEFT_REQ_WRITE, first_->BatchStats(c.is_train));
    dw_->Unfused(c, mid.data(), y, req, dw_->BatchStats(c.is_train));
  }

  // TailAct over `images` images of the output from `y`, `step` floats apart (their channels only:
  // a blocked format's padding stays 0).
  void Tail(float* y, int64_t images, int64_t step) const {
    if (tail_ == FusedAct::kNone) return;
    static constexpr weft::sdk::ActType kType[] = {weft::sdk::ActType::kRelu,    weft::sdk::ActType::kRelu,
                                                   weft::sdk::ActType::kRelu,    weft::sdk::ActType::kTanh,
                                                   weft::sdk::ActType::kSigmoid, weft::sdk::ActType::kSoftRelu};
    const weft::sdk::ActType type = kType[static_cast<int>(tail_)];
    const ConvGeom& g = first_->geom();
    const int64_t block = weft::sdk::ActFormatBlock(p_.out_format), plane = g.out_plane();
    const int64_t whole = g.f / block * block * plane, rest = g.f % block;
    for (int64_t i = 0; i < images; ++i) {
      float* image = y + i * step;
      ActivationInPlace(type, image, whole);
      for (int64_t at = 0; rest > 0 && at < plane; ++at) ActivationInPlace(type, image + whole + at * block, rest);
    }
  }

  SgConvParam p_;
  SgConvParam inner_;                  // p_ without tail_: what runs inside the convolution
  FusedAct tail_;                      // TailAct(p_)
  std::unique_ptr<Stage> first_, dw_;  // dw_: with_dw only
  int64_t chunk_ = 1;
  int64_t out_image_ = 0;                        // OutImageStride
  bool scatter_ = false;                         // with out_image_: chunks computed into the workspace, then copied
  std::unique_ptr<FusedPrimitive> full_, rest_;  // null: oneDNN cannot run it, or own_ runs it
  std::unique_ptr<WinogradF4Conv> own_;          // weft's Winograd runs the layer
  std::unique_ptr<Winograd1DConv> own1d_;        // or weft's 1-D Winograd does
  mutable uint64_t own_generation_ = 0;          // the fold generation own_ holds transformed
  mutable std::mutex mu_;
};

}  // namespace

void RegisterSgConv(KernelTable& t) { t.Add<SgConvForward>("_sg_conv", kF32); }

const char* BlockedActivationFormat() {
  static const char* const format = [] {
    // oneDNN's direct convolutions block channels by the vector width: 16 floats with AVX-512,
    // 8 with AVX2. Both limits a user sets count: WEFT_CPU_ISA (weft's loops) and
    // ONEDNN_MAX_CPU_ISA (oneDNN's effective ISA), so that a process limited to AVX2 either way
    // uses nChw8c. The user's WEFT_CPU_ISA is read here, not isa::Ceiling(): a build without ISA
    // variants (the sanitizer presets) has a baseline ceiling while oneDNN still runs AVX-512.
    const char* limit = std::getenv("WEFT_CPU_ISA");
    const std::string weft_limit = limit != nullptr ? limit : "";
    if (weft_limit != "avx2" && weft_limit != "baseline" && DnnlHasIsa(dnnl::cpu_isa::avx512_core)) return "nChw16c";
    if (weft_limit != "baseline" && DnnlHasIsa(dnnl::cpu_isa::avx2)) return "nChw8c";
    return "";
  }();
  return format;
}

}  // namespace weft::cpu

// _sg_batch_norm, the executor's fused inference BatchNorm (core/executor/fuse_conv.h; attributes
// sdk::SgBatchNormParam): y = act(x·scale + shift) per channel, float32, on plain data (outer, C,
// inner) or on oneDNN's blocked nChw8c / nChw16c (data_format: data and output alike; values the
// executor keeps blocked between fused convolutions, poolings and concats, so that a DenseNet
// block, whose pre-activation BatchNorm and relu read each concat, needs no reorder).
//
// scale and shift come from BatchNorm's own code (norm_batch_norm.h: the moving statistics, or in
// training mode without use_global_stats the batch's, updating the moving ones), and the output
// loop is the plain kernel's x·k + d followed by relu's x > 0 ? x : 0, in the same dispatched ISA:
// the same bits as BatchNorm then Activation relu, on either layout. The batch statistics of
// blocked data are taken from a plain copy (training mode only; the sums' order is the plain
// kernel's).
//
// The data may be a channel slice of a wider array (the executor's attribute in_image_stride,
// core/executor/concat_view.h: DenseNet's joins written in place): per image contiguous, images
// that many floats apart.
#include <algorithm>
#include <string>
#include <vector>

#include "isa_dispatch.h"
#include "nn_blocked_act.h"
#include "nn_common.h"
#include "nn_conv_winograd_chunks.h"
#include "norm_batch_norm.h"
#include "parallel.h"

namespace weft::cpu {
namespace {

using weft::sdk::ActFormat;
using weft::sdk::FusedAct;
using weft::sdk::SgBatchNormParam;

// Stores act(x·k + d) through `assign` (an SDK request: write or add).
template <bool kRelu, typename Assign>
inline void Store(const Assign& assign, float& y, float x, float k, float d) {
  const float v = x * k + d;
  if constexpr (kRelu)
    assign(y, v > 0.0f ? v : 0.0f);
  else
    assign(y, v);
}

class SgBatchNormForward {
 public:
  explicit SgBatchNormForward(const KernelSetup& s) : p_(s.Params<SgBatchNormParam>()) {
    RequireFloat32(s);
    s.ExpectCounts(3, 1, 2);
    g_ = weft::sdk::BatchNormGeometryOf(s.op_name, p_.bn, s.inputs[0].shape);
    weft::sdk::BatchNormParam::CheckPerChannel(s.op_name, g_.c,
                                               std::vector{&s.inputs[1], &s.inputs[2], &s.aux[0], &s.aux[1]});
    if (s.outputs[0].size() != s.inputs[0].size())
      Invalid(s, "output " + ShapeString(s.outputs[0]) + " must have data's shape " + ShapeString(s.inputs[0]));
    block_ = CheckBlockedData(s, s.inputs[0], p_.data_format);
    const int64_t image = g_.c * g_.inner, stride = s.attrs.GetInt("in_image_stride", 0);
    if (stride != 0 && stride < image)
      Invalid(s, "in_image_stride " + std::to_string(stride) + " must be at least the data's " + std::to_string(image) +
                     " floats per image");
    x_image_ = stride != 0 ? stride : image;
  }

  void Compute(const KernelCall& c) const {
    const float* x = c.inputs[0].data<float>();
    const bool batch = c.is_train && !g_.use_global;
    const int64_t image = g_.c * g_.inner;
    int64_t x_image = x_image_;
    std::vector<float> own;  // a slice's images side by side, for the batch statistics
    if (batch && x_image != image) {
      own.resize(static_cast<size_t>(g_.outer * image));
      for (int64_t n = 0; n < g_.outer; ++n) std::copy_n(x + n * x_image, image, own.data() + n * image);
      x = own.data();
      x_image = image;
    }
    std::vector<float> plain;  // blocked data in NCHW, for the batch statistics
    if (batch && block_ > 1) {
      plain.resize(static_cast<size_t>(g_.outer * g_.c * g_.inner));
      const dnnl::memory::desc nchw({g_.outer, g_.c, g_.inner, 1}, dnnl::memory::data_type::f32,
                                    dnnl::memory::format_tag::nchw);
      Relayout(ActDesc(nchw, p_.data_format), x, nchw, plain.data());
    }
    const BnScaleShift<float> b =
        BatchNormScaleShift(g_, plain.empty() ? x : plain.data(), c.inputs[1].data<float>(), c.inputs[2].data<float>(),
                            c.aux[0].data<float>(), c.aux[1].data<float>(), batch);
    float* y = WantedOutput<float>(c, 0);
    if (y == nullptr) return;  // the moving statistics only
    weft::sdk::WithReq(c.req[0], [&](auto assign) {
      if (p_.act_type == FusedAct::kRelu)
        Output<true>(assign, b, x, x_image, y);
      else
        Output<false>(assign, b, x, x_image, y);
    });
  }

 private:
  // y = act(x·scale + shift) over units split across the OpenMP team: a plane (one image's
  // channel) in plain layout, an image's block of channels (inner · block values, channel
  // cb·block + i % block) in a blocked one. x's images lie x_image floats apart.
  template <bool kRelu, typename Assign>
  void Output(const Assign& assign, const BnScaleShift<float>& b, const float* x, int64_t x_image, float* y) const {
    const float* k = b.scale.data();
    const float* d = b.shift.data();
    const int64_t C = g_.c, inner = g_.inner, blk = block_, per_image = C / blk, units = g_.outer * per_image;
    ParallelChunks(units, units * inner * blk, [&](int64_t u0, int64_t u1, int) {
      isa::Dispatch([&] {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t base = u * inner * blk, at = u / per_image * x_image + u % per_image * inner * blk;
          if (blk == 1) {
            const float kc = k[u % C], dc = d[u % C];
            for (int64_t i = 0; i < inner; ++i) Store<kRelu>(assign, y[base + i], x[at + i], kc, dc);
          } else if (blk == 16) {
            Block<16, kRelu>(assign, k + (u % (C / 16)) * 16, d + (u % (C / 16)) * 16, x + at, y + base);
          } else {
            Block<8, kRelu>(assign, k + (u % (C / 8)) * 8, d + (u % (C / 8)) * 8, x + at, y + base);
          }
        }
      });
    });
  }

  // One image's block of B channels: inner pixels of B values, channel j of the block at j, 8
  // channels a vector: the same x·k + d, relu and add as Store. (Written as Store's scalar loop,
  // GCC vectorised it across pixels with a broadcast of each channel's k and d: DenseNet-121's
  // pre-activation BatchNorms took 15 ms of 155 at batch 2, 1 thread, AVX2; about 9.5 now.)
  template <int B, bool kRelu, typename Assign>
  void Block(const Assign&, const float* k, const float* d, const float* x, float* y) const {
    V8 kv[B / 8], dv[B / 8];
    for (int i = 0; i < B / 8; ++i) {
      LoadV8(k + 8 * i, kv[i]);
      LoadV8(d + 8 * i, dv[i]);
    }
    const V8 zero = {};
    for (int64_t p = 0; p < g_.inner; ++p)
      for (int i = 0; i < B / 8; ++i) {
        float* q = y + p * B + 8 * i;
        V8 v;
        LoadV8(x + p * B + 8 * i, v);
        v = v * kv[i] + dv[i];
        if constexpr (kRelu) v = v > zero ? v : zero;
        if constexpr (Assign::kAdd) {
          V8 old;
          LoadV8(q, old);
          v = old + v;
        }
        StoreV8(q, v);
      }
  }

  SgBatchNormParam p_;
  BnParams g_;
  int64_t block_ = 1;
  int64_t x_image_ = 0;  // floats between the data's images
};

}  // namespace

void RegisterSgBatchNorm(KernelTable& t) { t.Add<SgBatchNormForward>("_sg_batch_norm", kF32); }

}  // namespace weft::cpu

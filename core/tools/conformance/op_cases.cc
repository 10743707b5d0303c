#include "op_cases.h"

#include <set>
#include <utility>

namespace wconf {
namespace {

// The cases as per-family tables of CaseRow (op_cases.h). An op's cases keep the order they had
// as hand-written code: RunOpConformance seeds a case's random inputs by its position among its
// op's cases, so the certificates do not change.

const std::vector<Shape> kShapes = {Shape{1}, Shape{7}, Shape{3, 1, 5}, Shape{2, 3, 4}};
const std::vector<Shape> kTwoShapes = {Shape{7}, Shape{3, 1, 5}};
const std::vector<std::pair<Shape, Shape>> kBroadcast = {
    {Shape{2, 3, 4}, Shape{1, 3, 1}}, {Shape{5, 1}, Shape{1, 4}}, {Shape{3}, Shape{1}}, {Shape{2, 3}, Shape{2, 3}}};
const Domain kBool{0, 2, true};
// 3-D (NCDHW) and variational dropout: the cpu (and simdev, which runs its kernels) alone
// implements them; the GPU layer (cuda, hip, gpuhost) and vulkan refuse them by name.
const std::vector<std::string> kCpuOnly = {"vulkan", "cuda", "hip", "gpuhost"};

// One input set per shape: {In(s, d)}.
std::vector<std::vector<Input>> Each(const std::vector<Shape>& shapes, Domain d = kSigned) {
  std::vector<std::vector<Input>> out;
  for (const Shape& s : shapes) out.push_back({In(s, d)});
  return out;
}

// The broadcast pairs, {In(a, da), In(b, db)} each.
std::vector<std::vector<Input>> Pairs(Domain da = kSigned, Domain db = kSigned) {
  std::vector<std::vector<Input>> out;
  for (const auto& [a, b] : kBroadcast) out.push_back({In(a, da), In(b, db)});
  return out;
}

// Two equal-shaped operands per shape, the second in `db`.
std::vector<std::vector<Input>> Same(const std::vector<Shape>& shapes, Domain db = kSigned) {
  std::vector<std::vector<Input>> out;
  for (const Shape& s : shapes) out.push_back({In(s), In(s, db)});
  return out;
}

std::vector<CaseRow> ElementwiseRows() {
  const Domain around_zero{-3, 3};
  return {
      {.ops = {"sin", "cos", "exp", "square", "negative", "sigmoid", "tanh"}, .each = Each(kShapes)},
      {.ops = {"log", "sqrt"}, .each = Each(kShapes, kPositive)},
      {.ops = {"abs", "relu"}, .each = Each(kShapes, kAwayFromZero)},
      {.ops = {"rsqrt"}, .each = Each(kTwoShapes, kPositive)},
      {.ops = {"log1p"}, .each = Each(kTwoShapes, Domain{-0.5, 2.0})},
      {.ops = {"expm1"}, .each = Each(kTwoShapes)},
      {.ops = {"clip"}, .attrs = {{"a_min", "-0.5"}, {"a_max", "0.25"}}, .each = Each(kTwoShapes)},
      {.ops = {"floor", "round", "sign"}, .each = Each(kTwoShapes, around_zero), .flags = kNoGrad},
      {.ops = {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar"},
       .attrs = {{"scalar", "0.75"}},
       .each = Each(kTwoShapes)},
      {.ops = {"_rdiv_scalar", "_power_scalar"}, .attrs = {{"scalar", "1.5"}}, .each = Each(kTwoShapes, kPositive)},
      {.ops = {"elemwise_add", "elemwise_sub", "elemwise_mul"}, .each = Same({Shape{1}, Shape{5, 3}, Shape{2, 1, 3}})},
      {.ops = {"elemwise_div"}, .each = Same({Shape{1}, Shape{5, 3}}, kPositive)},
      // MXNet's scatter ops on dense arrays (their sparse kernels: tests/operator/sparse_ops_test.cc).
      {.ops = {"_scatter_plus_scalar", "_scatter_minus_scalar"},
       .attrs = {{"scalar", "0.75"}},
       .each = Each(kTwoShapes)},
      {.ops = {"_scatter_elemwise_div"}, .each = Same({Shape{5, 3}}, kPositive)},
      {.ops = {"broadcast_add", "broadcast_sub", "broadcast_mul"}, .each = Pairs()},
      {.ops = {"broadcast_div"}, .each = Pairs(kSigned, kPositive)},
      {.ops = {"broadcast_maximum", "broadcast_minimum"}, .each = Pairs(kDistinct, kDistinct)},
      {.ops = {"add_n"}, .attrs = {{"num_args", "3"}}, .in = {In(Shape{3, 5}), In(Shape{3, 5}), In(Shape{3, 5})}},
      {.ops = {"add_n"}, .attrs = {{"num_args", "1"}}, .in = {In(Shape{7})}},
  };
}

std::vector<CaseRow> ActivationRows() {
  std::vector<CaseRow> v;
  for (const char* act : {"sigmoid", "tanh", "softrelu", "softsign"})
    v.push_back({.ops = {"Activation"}, .attrs = {{"act_type", act}}, .in = {In(Shape{3, 5})}});
  const std::vector<CaseRow> rest = {
      {.ops = {"Activation"}, .attrs = {{"act_type", "relu"}}, .in = {In(Shape{2, 1, 3}, kAwayFromZero)}},
      {.ops = {"LeakyReLU"},
       .attrs = {{"act_type", "leaky"}, {"slope", "0.1"}},
       .in = {In(Shape{4, 3}, kAwayFromZero)}},
      {.ops = {"LeakyReLU"}, .attrs = {{"act_type", "elu"}}, .in = {In(Shape{4, 3}, kAwayFromZero)}},
      // MXNet's selu gradient below zero is λ·(y + α), not the derivative y + λ·α: weft reproduces
      // it (tests/compat checks it against MXNet), so finite differences cannot agree.
      {.ops = {"LeakyReLU"}, .attrs = {{"act_type", "selu"}}, .in = {In(Shape{4, 3}, kAwayFromZero)}, .flags = kNoGrad},
      {.ops = {"LeakyReLU"}, .attrs = {{"act_type", "gelu"}}, .in = {In(Shape{2, 3, 2})}},
      {.ops = {"LeakyReLU"},
       .attrs = {{"act_type", "prelu"}},
       .in = {In(Shape{2, 3, 4}, kAwayFromZero), In(Shape{3}, kPositive)}},
      {.ops = {"LeakyReLU"},
       .attrs = {{"act_type", "prelu"}},
       .in = {In(Shape{3, 5}, kAwayFromZero), In(Shape{1}, kPositive)}},
      // Not training: the slope is (lower_bound + upper_bound) / 2.
      {.ops = {"LeakyReLU"},
       .attrs = {{"act_type", "rrelu"}},
       .in = {In(Shape{4, 3}, kAwayFromZero)},
       .flags = kInference},
      // Training: random slopes, a pure function of the call's seed and the element index (the
      // cpu's UniformAt, which the Vulkan shader computes too), so devices must match exactly.
      {.ops = {"LeakyReLU"},
       .attrs = {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.4"}},
       .in = {In(Shape{5, 6}, kAwayFromZero)},
       .flags = kNoGrad},
      {.ops = {"FullyConnected"},
       .attrs = {{"num_hidden", "3"}},
       .in = {In(Shape{4, 5}), In(Shape{3, 5}), In(Shape{3})}},
      {.ops = {"FullyConnected"},
       .attrs = {{"num_hidden", "1"}, {"no_bias", "True"}},
       .in = {In(Shape{1, 5}), In(Shape{1, 5})}},
      {.ops = {"FullyConnected"},
       .attrs = {{"num_hidden", "6"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{6, 12}), In(Shape{6})}},
      {.ops = {"FullyConnected"},
       .attrs = {{"num_hidden", "2"}, {"flatten", "False"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{2, 4}), In(Shape{2})}},
  };
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

// The executor's fused convolution (core/executor/fuse_conv.h): conv + BatchNorm + relu + sum +
// relu on plain layouts, in training mode (batch statistics) and inference (the fold); the other
// activations.
std::vector<CaseRow> FusedConvRows() {
  std::vector<CaseRow> v;
  for (uint32_t mode : {0u, kInference})
    v.push_back({.ops = {"_sg_conv"},
                 .attrs = {{"kernel", "(3, 3)"},
                           {"num_filter", "4"},
                           {"pad", "(1, 1)"},
                           {"with_bn", "True"},
                           {"bn_fix_gamma", "False"},
                           {"act_type", "relu"},
                           {"with_sum", "True"},
                           {"postsum_act_type", "relu"}},
                 .in = {In(Shape{2, 3, 5, 5}), In(Shape{4, 3, 3, 3}), In(Shape{4}), In(Shape{4}, kPositive),
                        In(Shape{4}), In(Shape{2, 4, 5, 5})},
                 .aux = {In(Shape{4}), In(Shape{4}, kPositive)},
                 .flags = kNoGrad | mode,
                 .refused_by = kCpuOnly});
  // LeNet's tanh after a 5x5 convolution, and sigmoid / softrelu around a sum (in inference the
  // sigmoid is a oneDNN post-op, the last activation the kernel's own pass).
  for (uint32_t mode : {0u, kInference}) {
    v.push_back({.ops = {"_sg_conv"},
                 .attrs = {{"kernel", "(5, 5)"}, {"num_filter", "5"}, {"act_type", "tanh"}},
                 .in = {In(Shape{2, 1, 8, 8}), In(Shape{5, 1, 5, 5}), In(Shape{5})},
                 .flags = kNoGrad | mode,
                 .refused_by = kCpuOnly});
    v.push_back({.ops = {"_sg_conv"},
                 .attrs = {{"kernel", "(3, 3)"},
                           {"num_filter", "16"},
                           {"pad", "(1, 1)"},
                           {"act_type", "sigmoid"},
                           {"with_sum", "True"},
                           {"postsum_act_type", "softrelu"}},
                 .in = {In(Shape{2, 3, 5, 5}), In(Shape{16, 3, 3, 3}), In(Shape{16}), In(Shape{2, 16, 5, 5})},
                 .flags = kNoGrad | mode,
                 .refused_by = kCpuOnly});
  }
  return v;
}

std::vector<CaseRow> ConvolutionPoolingRows() {
  std::vector<CaseRow> v = FusedConvRows();
  const std::vector<CaseRow> rows = {
      {.ops = {"Convolution"},
       .attrs = {{"kernel", "(3, 3)"}, {"num_filter", "4"}},
       .in = {In(Shape{2, 3, 7, 6}), In(Shape{4, 3, 3, 3}), In(Shape{4})}},
      {.ops = {"Convolution"},
       .attrs = {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
       .in = {In(Shape{1, 3, 5, 5}), In(Shape{2, 3, 3, 3}), In(Shape{2})}},
      {.ops = {"Convolution"},
       .attrs = {{"kernel", "(1, 3)"}, {"num_filter", "4"}, {"num_group", "2"}, {"no_bias", "True"}},
       .in = {In(Shape{1, 4, 3, 5}), In(Shape{4, 2, 1, 3})}},
      // 16 filters: oneDNN's blocked layouts; no bias, BatchNorm and ReLU6 (clip) only; and a
      // depthwise one with a sum.
      {.ops = {"_sg_conv"},
       .attrs = {{"kernel", "(3, 3)"},
                 {"num_filter", "16"},
                 {"no_bias", "True"},
                 {"with_bn", "True"},
                 {"act_type", "clip"},
                 {"act_min", "0"},
                 {"act_max", "0.5"}},
       .in = {In(Shape{2, 16, 6, 5}), In(Shape{16, 16, 3, 3}), In(Shape{16}), In(Shape{16})},
       .aux = {In(Shape{16}), In(Shape{16}, kPositive)},
       .flags = kNoGrad | kInference,
       .refused_by = kCpuOnly},
      {.ops = {"_sg_conv"},
       .attrs =
           {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"num_group", "8"}, {"pad", "(1, 1)"}, {"with_sum", "True"}},
       .in = {In(Shape{1, 8, 4, 4}), In(Shape{8, 1, 3, 3}), In(Shape{8}), In(Shape{1, 8, 4, 4})},
       .flags = kNoGrad | kInference,
       .refused_by = kCpuOnly},
      {.ops = {"Pooling"},
       .attrs = {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}},
       .in = {In(Shape{2, 3, 7, 6}, kDistinct)}},
      {.ops = {"Pooling"},
       .attrs = {{"kernel", "(2, 2)"}, {"pool_type", "avg"}, {"pad", "(1, 1)"}},
       .in = {In(Shape{1, 2, 5, 5})}},
      {.ops = {"Pooling"}, .attrs = {{"global_pool", "True"}, {"pool_type", "avg"}}, .in = {In(Shape{2, 3, 4, 5})}},
      {.ops = {"Pooling"},
       .attrs = {{"kernel", "(3, 3)"}, {"pool_type", "avg"}, {"pad", "(1, 1)"}, {"count_include_pad", "False"}},
       .in = {In(Shape{1, 2, 4, 5})}},
      {.ops = {"Convolution"},
       .attrs = {{"kernel", "(2, 3, 2)"},
                 {"num_filter", "4"},
                 {"stride", "(1, 2, 1)"},
                 {"pad", "(1, 0, 1)"},
                 {"dilate", "(2, 1, 1)"},
                 {"num_group", "2"}},
       .in = {In(Shape{2, 2, 4, 5, 3}), In(Shape{4, 1, 2, 3, 2}), In(Shape{4})},
       .refused_by = kCpuOnly},
      // 16 filters and 4 channels per group: oneDNN's blocked 3-D forward and backward (nn_conv_dnnl.cc).
      {.ops = {"Convolution"},
       .attrs = {{"kernel", "(2, 2, 2)"}, {"num_filter", "16"}, {"pad", "(0, 1, 1)"}},
       .in = {In(Shape{1, 4, 3, 4, 3}), In(Shape{16, 4, 2, 2, 2}), In(Shape{16})},
       .refused_by = kCpuOnly},
      {.ops = {"Pooling"},
       .attrs = {{"kernel", "(2, 2, 3)"}, {"stride", "(1, 2, 2)"}, {"pool_type", "max"}},
       .in = {In(Shape{2, 2, 3, 5, 6}, kDistinct)},
       .refused_by = kCpuOnly},
      {.ops = {"Pooling"},
       .attrs = {{"kernel", "(2, 2, 2)"},
                 {"stride", "(2, 2, 2)"},
                 {"pad", "(0, 1, 0)"},
                 {"pool_type", "avg"},
                 {"pooling_convention", "full"},
                 {"count_include_pad", "False"}},
       .in = {In(Shape{1, 2, 3, 4, 5})},
       .refused_by = kCpuOnly},
      {.ops = {"Pooling"},
       .attrs = {{"global_pool", "True"}, {"pool_type", "sum"}},
       .in = {In(Shape{2, 3, 2, 3, 4})},
       .refused_by = kCpuOnly},
      {.ops = {"Deconvolution"},
       .attrs = {{"kernel", "(3, 3)"},
                 {"num_filter", "2"},
                 {"stride", "(2, 2)"},
                 {"pad", "(1, 1)"},
                 {"adj", "(1, 1)"},
                 {"no_bias", "False"}},
       .in = {In(Shape{2, 3, 4, 3}), In(Shape{3, 2, 3, 3}), In(Shape{2})}},
      {.ops = {"Deconvolution"},
       .attrs = {{"kernel", "(2, 2)"}, {"num_filter", "4"}, {"num_group", "2"}},
       .in = {In(Shape{1, 4, 3, 3}), In(Shape{4, 2, 2, 2})}},
      {.ops = {"Deconvolution"},
       .attrs = {{"kernel", "(4, 4)"}, {"num_filter", "3"}, {"stride", "(2, 2)"}, {"target_shape", "(8, 7)"}},
       .in = {In(Shape{1, 2, 4, 4}), In(Shape{2, 3, 4, 4})}},
      {.ops = {"Deconvolution"},
       .attrs = {{"kernel", "(3,)"}, {"num_filter", "3"}, {"dilate", "(2,)"}, {"no_bias", "False"}},
       .in = {In(Shape{2, 2, 5}), In(Shape{2, 3, 3}), In(Shape{3})}},
  };
  v.insert(v.end(), rows.begin(), rows.end());
  return v;
}

std::vector<CaseRow> NormRows() {
  std::vector<CaseRow> v = {
      {.ops = {"LayerNorm"}, .in = {In(Shape{3, 5}), In(Shape{5}, kPositive), In(Shape{5})}},
      {.ops = {"LayerNorm"},
       .attrs = {{"axis", "1"}, {"eps", "0.01"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{3}, kPositive), In(Shape{3})}},
      // As MXNet, the backward ignores the mean / std outputs' gradients, which finite differences
      // would include: the forward alone is checked with them visible.
      {.ops = {"LayerNorm"},
       .attrs = {{"axis", "1"}, {"eps", "0.01"}, {"output_mean_var", "True"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{3}, kPositive), In(Shape{3})},
       .flags = kNoGrad},
      {.ops = {"InstanceNorm"}, .in = {In(Shape{2, 3, 2, 3}), In(Shape{3}, kPositive), In(Shape{3})}},
      {.ops = {"InstanceNorm"},
       .attrs = {{"eps", "1e-05"}},
       .in = {In(Shape{1, 2, 5}), In(Shape{2}, kPositive), In(Shape{2})}},
  };
  // The executor's fused BatchNorm + relu (core/executor/fuse_conv.h), plain layout: training mode
  // (batch statistics) and inference.
  for (uint32_t mode : {0u, kInference})
    v.push_back({.ops = {"_sg_batch_norm"},
                 .attrs = {{"fix_gamma", "False"}, {"act_type", "relu"}},
                 .in = {In(Shape{2, 3, 4, 5}), In(Shape{3}, kPositive), In(Shape{3})},
                 .aux = {In(Shape{3}), In(Shape{3}, kPositive)},
                 .flags = kNoGrad | mode,
                 .refused_by = kCpuOnly});
  // Without the relu, fix_gamma (gamma read as 1) and use_global_stats (moving statistics in
  // training mode too).
  v.push_back({.ops = {"_sg_batch_norm"},
               .attrs = {{"use_global_stats", "True"}, {"eps", "0.01"}},
               .in = {In(Shape{1, 4, 3, 3}), In(Shape{4}, kPositive), In(Shape{4})},
               .aux = {In(Shape{4}), In(Shape{4}, kPositive)},
               .flags = kNoGrad,
               .refused_by = kCpuOnly});
  for (const char* mode : {"instance", "channel", "spatial"})
    v.push_back({.ops = {"L2Normalization"}, .attrs = {{"mode", mode}}, .in = {In(Shape{2, 3, 4})}});
  const std::vector<CaseRow> rest = {
      {.ops = {"L2Normalization"}, .in = {In(Shape{3, 5})}},
      {.ops = {"LRN"}, .attrs = {{"nsize", "3"}, {"alpha", "0.3"}, {"knorm", "1.5"}}, .in = {In(Shape{2, 5, 3, 2})}},
      {.ops = {"LRN"}, .attrs = {{"nsize", "5"}}, .in = {In(Shape{1, 4, 3})}},
      {.ops = {"Embedding"},
       .attrs = {{"input_dim", "5"}, {"output_dim", "4"}},
       .in = {In(Shape{2, 3}, Domain{0, 5, true}), In(Shape{5, 4})}},
      {.ops = {"BatchNorm"},
       .attrs = {{"fix_gamma", "False"}},
       .in = {In(Shape{4, 3, 5}), In(Shape{3}, kPositive), In(Shape{3})},
       .aux = {In(Shape{3}), In(Shape{3}, kPositive)}},
      {.ops = {"BatchNorm"},
       .in = {In(Shape{6, 2}), In(Shape{2}, kPositive), In(Shape{2})},
       .aux = {In(Shape{2}), In(Shape{2}, kPositive)}},
      {.ops = {"Dropout"}, .attrs = {{"p", "0.5"}}, .in = {In(Shape{4, 5})}, .flags = kNoGrad | kInference},
      // Training: the mask is a pure function of the call's seed and the element index (the cpu's
      // UniformAt; the Vulkan shader computes the same SplitMix64 stream), so devices must match
      // exactly.
      {.ops = {"Dropout"}, .attrs = {{"p", "0.3"}}, .in = {In(Shape{6, 7})}, .flags = kNoGrad},
      // A mask shared along axes 0 and 2 (variational dropout).
      {.ops = {"Dropout"},
       .attrs = {{"p", "0.4"}, {"axes", "(0, 2)"}},
       .in = {In(Shape{3, 8, 4})},
       .flags = kNoGrad,
       .refused_by = kCpuOnly},
  };
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

std::vector<CaseRow> RnnLossRows() {
  return {
      // RNN on data (T 3, N 2, I 3) with H 2; the parameter lengths are MXNet's GetRnnParamSize:
      // Σ over layers of D·G·H·(I_l + H + 2). state_outputs makes the final states visible, so
      // their gradients (and the initial states') are checked too.
      {.ops = {"RNN"},
       .attrs = {{"mode", "lstm"},
                 {"state_size", "2"},
                 {"num_layers", "2"},
                 {"bidirectional", "True"},
                 {"state_outputs", "True"}},
       .in = {In(Shape{3, 2, 3}), In(Shape{240}), In(Shape{4, 2, 2}), In(Shape{4, 2, 2})}},
      {.ops = {"RNN"},
       .attrs = {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "1"}, {"state_outputs", "True"}},
       .in = {In(Shape{3, 2, 3}), In(Shape{42}), In(Shape{1, 2, 2})}},
      {.ops = {"RNN"},
       .attrs = {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "2"}},
       .in = {In(Shape{3, 2, 3}), In(Shape{26}), In(Shape{2, 2, 2})}},
      {.ops = {"RNN"},
       .attrs = {{"mode", "rnn_relu"}, {"state_size", "2"}, {"num_layers", "1"}, {"bidirectional", "True"}},
       .in = {In(Shape{3, 2, 3}, kAwayFromZero), In(Shape{28}), In(Shape{2, 2, 2})}},
      {.ops = {"SoftmaxOutput"}, .in = {In(Shape{4, 5}), In(Shape{4}, Domain{0, 5, true})}, .flags = kNoGrad},
      // CTCLoss: labels 0..1 with the blank last (class 2); then the blank first with both lengths
      // (labels 1..2, 3 to 5 frames, 0 to 2 labels). Small enough for the reference's enumeration.
      {.ops = {"CTCLoss"},
       .attrs = {{"blank_label", "last"}},
       .in = {In(Shape{5, 2, 3}), In(Shape{2, 2}, Domain{0, 2, true})}},
      {.ops = {"CTCLoss"},
       .attrs = {{"use_data_lengths", "True"}, {"use_label_lengths", "True"}},
       .in = {In(Shape{5, 2, 3}), In(Shape{2, 3}, Domain{1, 3, true}), In(Shape{2}, Domain{3, 6, true}),
              In(Shape{2}, Domain{0, 3, true})}},
      {.ops = {"SoftmaxOutput"},
       .attrs = {{"normalization", "batch"}, {"grad_scale", "2"}},
       .in = {In(Shape{3, 4}), In(Shape{3}, Domain{0, 4, true})},
       .flags = kNoGrad},
      // N-d SoftmaxOutput: Vulkan's kernel does not implement it yet.
      {.ops = {"SoftmaxOutput"},
       .attrs = {{"multi_output", "True"}, {"normalization", "valid"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{2, 4}, Domain{0, 3, true})},
       .flags = kNoGrad,
       .refused_by = {"vulkan"}},
      {.ops = {"SoftmaxOutput"},
       .in = {In(Shape{2, 3, 4}), In(Shape{2, 3}, Domain{0, 4, true})},
       .flags = kNoGrad,
       .refused_by = {"vulkan"}},
      {.ops = {"SoftmaxOutput"},
       .attrs = {{"preserve_shape", "True"}, {"normalization", "batch"}},
       .in = {In(Shape{2, 3, 4}), In(Shape{2, 3}, Domain{0, 4, true})},
       .flags = kNoGrad},
      // A label of the output's shape holds probabilities (MXNet's gradient: output − label).
      {.ops = {"SoftmaxOutput"},
       .attrs = {{"normalization", "batch"}, {"grad_scale", "2"}},
       .in = {In(Shape{3, 4}), In(Shape{3, 4}, Domain{0, 1})},
       .flags = kNoGrad,
       .refused_by = {"vulkan"}},
      {.ops = {"softmax", "log_softmax"}, .in = {In(Shape{3, 7})}},
      {.ops = {"softmax", "log_softmax"}, .attrs = {{"axis", "1"}}, .in = {In(Shape{2, 3, 4})}},
      {.ops = {"LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"},
       .in = {In(Shape{4, 3}), In(Shape{4, 3})},
       .flags = kNoGrad},
      {.ops = {"MakeLoss", "BlockGrad"}, .in = {In(Shape{4, 3})}, .flags = kNoGrad},
  };
}

std::vector<CaseRow> ShapeRows() {
  return {
      {.ops = {"Flatten"}, .in = {In(Shape{2, 3, 4})}},
      {.ops = {"Reshape"}, .attrs = {{"shape", "(4, -1)"}}, .in = {In(Shape{2, 3, 4})}},
      {.ops = {"expand_dims"}, .attrs = {{"axis", "1"}}, .in = {In(Shape{2, 3})}},
      {.ops = {"_copy"}, .in = {In(Shape{3, 1, 5})}},
      {.ops = {"Concat"}, .attrs = {{"num_args", "2"}, {"dim", "1"}}, .in = {In(Shape{2, 3}), In(Shape{2, 5})}},
      {.ops = {"Concat"},
       .attrs = {{"num_args", "3"}, {"dim", "0"}},
       .in = {In(Shape{1, 3}), In(Shape{2, 3}), In(Shape{1, 3})}},
      {.ops = {"_rnn_param_concat"}, .attrs = {{"num_args", "2"}, {"dim", "0"}}, .in = {In(Shape{6}), In(Shape{4})}},
      {.ops = {"SliceChannel"}, .attrs = {{"num_outputs", "3"}}, .in = {In(Shape{2, 6})}},
      {.ops = {"SliceChannel"},
       .attrs = {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "True"}},
       .in = {In(Shape{2, 3})}},
      {.ops = {"transpose"}, .in = {In(Shape{3, 5})}},
      {.ops = {"transpose"}, .attrs = {{"axes", "(2, 0, 1)"}}, .in = {In(Shape{2, 3, 4})}},
      {.ops = {"SwapAxis"}, .attrs = {{"dim1", "0"}, {"dim2", "2"}}, .in = {In(Shape{2, 3, 4})}},
      {.ops = {"SwapAxis"}, .attrs = {{"dim1", "1"}, {"dim2", "-1"}}, .in = {In(Shape{3, 1, 5})}},
      {.ops = {"slice"}, .attrs = {{"begin", "(0, 1)"}, {"end", "(2, None)"}}, .in = {In(Shape{3, 4, 5})}},
      {.ops = {"slice"},
       .attrs = {{"begin", "(None, 3)"}, {"end", "(None, 0)"}, {"step", "(1, -2)"}},
       .in = {In(Shape{2, 5})}},
      {.ops = {"slice"}, .attrs = {{"begin", "(-2,)"}, {"end", "(None,)"}, {"step", "(2,)"}}, .in = {In(Shape{5, 3})}},
      {.ops = {"slice_axis"}, .attrs = {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, .in = {In(Shape{2, 4, 3})}},
      {.ops = {"slice_axis"}, .attrs = {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}}, .in = {In(Shape{3, 5})}},
  };
}

// Selection, replication and shape-borrowing ops (index inputs hold whole numbers).
std::vector<CaseRow> IndexRows() {
  return {
      {.ops = {"where"}, .in = {In(Shape{2, 3}, kBool), In(Shape{2, 3}), In(Shape{2, 3})}},
      {.ops = {"where"}, .in = {In(Shape{3}, kBool), In(Shape{3, 4}), In(Shape{3, 4})}},
      {.ops = {"take"}, .in = {In(Shape{4, 3}), In(Shape{2, 2}, Domain{-1, 6, true})}},
      {.ops = {"take"},
       .attrs = {{"axis", "1"}, {"mode", "wrap"}},
       .in = {In(Shape{2, 5, 3}), In(Shape{4}, Domain{-7, 7, true})}},
      {.ops = {"pick"}, .in = {In(Shape{3, 4}), In(Shape{3}, Domain{0, 4, true})}},
      // _sparse_retain on a dense data: the indexed rows, zero elsewhere (the MXNet binding's graphs).
      {.ops = {"_sparse_retain"}, .in = {In(Shape{5, 3}), In(Shape{3}, Domain{0, 5, true})}},
      {.ops = {"pick"},
       .attrs = {{"axis", "0"}, {"keepdims", "True"}, {"mode", "wrap"}},
       .in = {In(Shape{3, 4}), In(Shape{1, 4}, Domain{-4, 6, true})}},
      {.ops = {"stack"},
       .attrs = {{"num_args", "3"}, {"axis", "1"}},
       .in = {In(Shape{2, 3}), In(Shape{2, 3}), In(Shape{2, 3})}},
      {.ops = {"stack"}, .attrs = {{"num_args", "2"}, {"axis", "-1"}}, .in = {In(Shape{3}), In(Shape{3})}},
      {.ops = {"tile"}, .attrs = {{"reps", "(2, 1, 3)"}}, .in = {In(Shape{2, 3})}},
      {.ops = {"tile"}, .attrs = {{"reps", "(2,)"}}, .in = {In(Shape{3, 1, 2})}},
      {.ops = {"repeat"}, .attrs = {{"repeats", "2"}, {"axis", "1"}}, .in = {In(Shape{2, 3})}},
      {.ops = {"repeat"}, .attrs = {{"repeats", "3"}}, .in = {In(Shape{2, 2})}},
      {.ops = {"broadcast_to"}, .attrs = {{"shape", "(2, 0, 4)"}}, .in = {In(Shape{1, 3, 1})}},
      {.ops = {"broadcast_like"}, .in = {In(Shape{1, 3}), In(Shape{2, 3})}},
      {.ops = {"broadcast_like"},
       .attrs = {{"lhs_axes", "(0,)"}, {"rhs_axes", "(2,)"}},
       .in = {In(Shape{1, 3}), In(Shape{2, 3, 5})}},
      {.ops = {"reshape_like"}, .in = {In(Shape{2, 6}), In(Shape{3, 4})}},
      {.ops = {"reshape_like"},
       .attrs = {{"lhs_begin", "1"}, {"rhs_begin", "0"}, {"rhs_end", "2"}},
       .in = {In(Shape{2, 6}), In(Shape{3, 2, 7})}},
      {.ops = {"slice_like"}, .in = {In(Shape{3, 4, 5}), In(Shape{2, 3, 4})}},
      {.ops = {"slice_like"}, .attrs = {{"axes", "(0, -2)"}}, .in = {In(Shape{3, 4, 5}), In(Shape{2, 3})}},
      {.ops = {"Pad"},
       .attrs = {{"mode", "constant"}, {"pad_width", "(0, 0, 0, 0, 1, 2, 0, 3)"}, {"constant_value", "0.5"}},
       .in = {In(Shape{1, 2, 3, 4})}},
      {.ops = {"Pad"},
       .attrs = {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 2, 1, 1, 1)"}},
       .in = {In(Shape{2, 1, 3, 2})}},
      {.ops = {"Pad"},
       .attrs = {{"mode", "reflect"}, {"pad_width", "(0, 0, 0, 0, 1, 1, 2, 1, 0, 2)"}},
       .in = {In(Shape{1, 2, 2, 3, 3})}},
      {.ops = {"UpSampling"}, .attrs = {{"scale", "2"}, {"sample_type", "nearest"}}, .in = {In(Shape{2, 3, 2, 3})}},
      {.ops = {"UpSampling"},
       .attrs = {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}},
       .in = {In(Shape{1, 2, 2, 2}), In(Shape{1, 1, 4, 4})}},
      {.ops = {"UpSampling"},
       .attrs = {{"scale", "3"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
       .in = {In(Shape{1, 2, 1, 2}), In(Shape{1, 2, 3, 6})}},
      {.ops = {"UpSampling"},
       .attrs = {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "2"}},
       .in = {In(Shape{1, 2, 3, 2}), In(Shape{2, 1, 4, 4})}},
      {.ops = {"UpSampling"},
       .attrs = {{"scale", "3"}, {"sample_type", "bilinear"}, {"num_filter", "1"}},
       .in = {In(Shape{2, 1, 2, 2}), In(Shape{1, 1, 5, 5})}},
  };
}

std::vector<CaseRow> SortRows() {
  std::vector<CaseRow> v;
  for (const char* ret : {"value", "both", "indices", "mask"})
    v.push_back({.ops = {"topk"}, .attrs = {{"k", "2"}, {"ret_typ", ret}}, .in = {In(Shape{3, 5}, kDistinct)}});
  v.push_back({.ops = {"topk"},
               .attrs = {{"axis", "0"}, {"k", "2"}, {"ret_typ", "value"}, {"is_ascend", "True"}},
               .in = {In(Shape{4, 3}, kDistinct)}});
  v.push_back({.ops = {"topk"},
               .attrs = {{"axis", "None"}, {"k", "3"}, {"ret_typ", "both"}, {"dtype", "int32"}},
               .in = {In(Shape{2, 3}, kDistinct)}});
  for (const char* dt : {"int32", "int64"})
    v.push_back({.ops = {"topk"},
                 .attrs = {{"k", "2"}, {"ret_typ", "indices"}, {"dtype", dt}},
                 .in = {In(Shape{2, 4}, kDistinct)},
                 .flags = kNoGrad});
  const std::vector<CaseRow> rest = {
      {.ops = {"sort"}, .in = {In(Shape{3, 4}, kDistinct)}},
      {.ops = {"sort"}, .attrs = {{"axis", "0"}, {"is_ascend", "False"}}, .in = {In(Shape{4, 2, 3}, kDistinct)}},
      {.ops = {"argsort"}, .in = {In(Shape{3, 4}, kDistinct)}, .flags = kNoGrad},
      {.ops = {"argsort"},
       .attrs = {{"axis", "None"}, {"is_ascend", "False"}, {"dtype", "int64"}},
       .in = {In(Shape{2, 3}, kDistinct)},
       .flags = kNoGrad},
  };
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

// Arrays made from attributes alone; products; casts and index outputs.
std::vector<CaseRow> InitMatrixRows() {
  return {
      {.ops = {"_zeros"}, .attrs = {{"shape", "(2, 3)"}}, .flags = kNoGrad},
      {.ops = {"_ones"}, .attrs = {{"shape", "(4,)"}, {"dtype", "int32"}}, .flags = kNoGrad},
      {.ops = {"_ones"}, .attrs = {{"shape", "(2, 2)"}}, .flags = kNoGrad},
      {.ops = {"_full"}, .attrs = {{"shape", "(3, 1, 2)"}, {"value", "2.5"}}, .flags = kNoGrad},
      {.ops = {"_arange"}, .attrs = {{"start", "1"}, {"stop", "7"}, {"step", "2"}, {"repeat", "2"}}, .flags = kNoGrad},
      {.ops = {"_arange"}, .attrs = {{"start", "5"}, {"step", "-0.5"}, {"stop", "2"}}, .flags = kNoGrad},
      {.ops = {"dot"}, .in = {In(Shape{3, 4}), In(Shape{4, 5})}},
      {.ops = {"dot"}, .attrs = {{"transpose_a", "True"}}, .in = {In(Shape{4, 3}), In(Shape{4, 5})}},
      {.ops = {"dot"}, .attrs = {{"transpose_b", "True"}}, .in = {In(Shape{1, 4}), In(Shape{5, 4})}},
      {.ops = {"batch_dot"}, .in = {In(Shape{2, 3, 4}), In(Shape{2, 4, 5})}},
      {.ops = {"batch_dot"}, .attrs = {{"transpose_b", "True"}}, .in = {In(Shape{3, 1, 4}), In(Shape{3, 2, 4})}},
      {.ops = {"_linalg_gelqf"}, .each = Each({Shape{3, 5}, Shape{2, 2, 2}})},
      {.ops = {"Cast"}, .attrs = {{"dtype", "float64"}}, .in = {In(Shape{3, 4})}, .flags = kNoGrad},
      {.ops = {"zeros_like", "ones_like"}, .in = {In(Shape{3, 4})}, .flags = kNoGrad},
      {.ops = {"one_hot"}, .attrs = {{"depth", "4"}}, .in = {In(Shape{5}, Domain{0, 4, true})}, .flags = kNoGrad},
      {.ops = {"argmax"}, .attrs = {{"axis", "1"}}, .in = {In(Shape{3, 5})}, .flags = kNoGrad},
  };
}

std::vector<CaseRow> ReduceRows() {
  // max/min need distinct values (no ties); the distinct grid is symmetric about 0, so sums of it
  // cancel to rounding noise, which devices summing in another order cannot match: sum, mean and
  // nansum get positive values. prod's gradient divides by x and norm's L1 gradient has a kink at
  // 0: keep x away from 0.
  const std::pair<std::vector<std::string>, Domain> kGroups[] = {
      {{"sum", "mean", "nansum", "_square_sum"}, kPositive},
      {{"max", "min"}, kDistinct},
      {{"prod", "norm"}, kAwayFromZero},
  };
  std::vector<CaseRow> v;
  for (const auto& [ops, d] : kGroups) {
    v.push_back({.ops = ops, .attrs = {{"axis", "(1,)"}}, .in = {In(Shape{2, 3, 4}, d)}});
    v.push_back({.ops = ops, .in = {In(Shape{3, 5}, d)}});
    v.push_back({.ops = ops, .attrs = {{"axis", "(0, 2)"}, {"keepdims", "True"}}, .in = {In(Shape{2, 1, 3}, d)}});
  }
  v.push_back({.ops = {"norm"}, .attrs = {{"ord", "1"}, {"axis", "-1"}}, .in = {In(Shape{3, 4}, kAwayFromZero)}});
  return v;
}

// Optimizer updates (states are aux states) and the KVStore's 2-bit compression: random values
// and residuals; random words (every code).
std::vector<CaseRow> UpdateRows() {
  const Shape s{5, 3};
  return {
      {.ops = {"sgd_update"}, .attrs = {{"lr", "0.1"}, {"wd", "0.01"}}, .in = {In(s), In(s)}, .flags = kNoGrad},
      {.ops = {"sgd_mom_update"},
       .attrs = {{"lr", "0.1"}, {"momentum", "0.9"}},
       .in = {In(s), In(s)},
       .aux = {In(s)},
       .flags = kNoGrad},
      {.ops = {"adam_update"},
       .attrs = {{"lr", "0.01"}, {"clip_gradient", "0.5"}},
       .in = {In(Shape{4}), In(Shape{4})},
       .aux = {In(Shape{4}), In(Shape{4}, kPositive)},
       .flags = kNoGrad},
      {.ops = {"nag_mom_update"},
       .attrs = {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
       .in = {In(s), In(s)},
       .aux = {In(s)},
       .flags = kNoGrad},
      {.ops = {"rmsprop_update"},
       .attrs = {{"lr", "0.01"}, {"clip_weights", "0.8"}},
       .in = {In(Shape{7}), In(Shape{7})},
       .aux = {In(Shape{7}, kPositive)},
       .flags = kNoGrad},
      {.ops = {"rmspropalex_update"},
       .attrs = {{"lr", "0.01"}, {"clip_gradient", "0.5"}},
       .in = {In(Shape{2, 3}), In(Shape{2, 3})},
       .aux = {In(Shape{2, 3}, Domain{1.0, 2.0}), In(Shape{2, 3}, Domain{-0.1, 0.1}), In(Shape{2, 3})},
       .flags = kNoGrad},
      {.ops = {"_quantize_2bit"},
       .attrs = {{"threshold", "0.4"}},
       .in = {In(Shape{37})},
       .aux = {In(Shape{37})},
       .flags = kNoGrad | kNoReqAdd},
      {.ops = {"_dequantize_2bit"},
       .attrs = {{"shape", "(5, 7)"}, {"threshold", "0.4"}},
       .in = {In(Shape{3}, Domain{0, 4294967296.0, true, 0, false, DType::kUint32})},
       .flags = kNoGrad},
  };
}

// Ops whose forward is exactly defined (OpCase::exact).
const std::set<std::string> kExact = {"elemwise_add",
                                      "elemwise_sub",
                                      "elemwise_mul",
                                      "broadcast_add",
                                      "broadcast_sub",
                                      "broadcast_mul",
                                      "negative",
                                      "abs",
                                      "relu",
                                      "_copy",
                                      "Flatten",
                                      "Reshape",
                                      "expand_dims",
                                      "Concat",
                                      "_rnn_param_concat",
                                      "SliceChannel",
                                      "transpose",
                                      "SwapAxis",
                                      "slice",
                                      "slice_axis",
                                      "_plus_scalar",
                                      "_minus_scalar",
                                      "_rminus_scalar",
                                      "_mul_scalar",
                                      "broadcast_maximum",
                                      "broadcast_minimum"};

std::vector<OpCase> Build() {
  std::vector<OpCase> v;
  for (auto family : {&ElementwiseRows, &ActivationRows, &ConvolutionPoolingRows, &NormRows, &RnnLossRows, &ShapeRows,
                      &IndexRows, &SortRows, &InitMatrixRows, &ReduceRows, &UpdateRows})
    AddRows(v, family());
  for (OpCase& c : v) c.exact = kExact.count(c.op) > 0;
  AddFrontendCases(v);
  return v;
}

}  // namespace

void AddRows(std::vector<OpCase>& v, const std::vector<CaseRow>& rows, std::source_location where) {
  for (const CaseRow& r : rows) {
    for (const std::string& op : r.ops) {
      const std::vector<std::vector<Input>> sets = r.each.empty() ? std::vector<std::vector<Input>>{r.in} : r.each;
      for (const std::vector<Input>& in : sets) {
        OpCase c = Case(op, r.attrs, in, r.aux, where);
        c.fd_grad = (r.flags & kNoGrad) == 0;
        c.is_train = (r.flags & kInference) == 0;
        c.req_add = (r.flags & kNoReqAdd) == 0;
        c.refused_by = r.refused_by;
        v.push_back(std::move(c));
      }
    }
  }
}

std::string OpCase::Label() const {
  std::string s = op + "(";
  bool first = true;
  for (const auto& [k, val] : attrs) {
    s += (first ? "" : ", ") + k + "=" + val;
    first = false;
  }
  s += ") on ";
  for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + in[i].shape.ToString();
  return s;
}

const std::vector<OpCase>& AllCases() {
  static const std::vector<OpCase> cases = Build();
  return cases;
}

}  // namespace wconf

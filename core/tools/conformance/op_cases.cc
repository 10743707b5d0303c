#include "op_cases.h"

#include <set>
#include <utility>

namespace wconf {
namespace {

// Attribute variants a device's kernels do not implement yet (Vulkan: N-d SoftmaxOutput).
OpCase Refused(OpCase c, std::vector<std::string> devices) {
  c.refused_by = std::move(devices);
  return c;
}

std::vector<OpCase> Build() {
  std::vector<OpCase> v;
  const std::vector<Shape> kShapes = {Shape{1}, Shape{7}, Shape{3, 1, 5}, Shape{2, 3, 4}};
  // Element-wise unary ops.
  for (const char* op : {"sin", "cos", "exp", "square", "negative", "sigmoid", "tanh"})
    for (const Shape& s : kShapes) v.push_back(Case(op, {}, {In(s)}));
  for (const char* op : {"log", "sqrt"})
    for (const Shape& s : kShapes) v.push_back(Case(op, {}, {In(s, kPositive)}));
  for (const char* op : {"abs", "relu"})
    for (const Shape& s : kShapes) v.push_back(Case(op, {}, {In(s, kAwayFromZero)}));
  for (const Shape& s : {Shape{7}, Shape{3, 1, 5}}) {
    v.push_back(Case("rsqrt", {}, {In(s, kPositive)}));
    v.push_back(Case("log1p", {}, {In(s, Domain{-0.5, 2.0})}));
    v.push_back(Case("expm1", {}, {In(s)}));
    v.push_back(Case("clip", {{"a_min", "-0.5"}, {"a_max", "0.25"}}, {In(s)}));
    for (const char* op : {"floor", "round", "sign"}) v.push_back(NoGrad(Case(op, {}, {In(s, Domain{-3, 3})})));
  }
  // Scalar ops.
  for (const char* op : {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar"})
    for (const Shape& s : {Shape{7}, Shape{3, 1, 5}}) v.push_back(Case(op, {{"scalar", "0.75"}}, {In(s)}));
  for (const char* op : {"_rdiv_scalar", "_power_scalar"})
    for (const Shape& s : {Shape{7}, Shape{3, 1, 5}}) v.push_back(Case(op, {{"scalar", "1.5"}}, {In(s, kPositive)}));
  // Binary ops.
  for (const char* op : {"elemwise_add", "elemwise_sub", "elemwise_mul"})
    for (const Shape& s : {Shape{1}, Shape{5, 3}, Shape{2, 1, 3}}) v.push_back(Case(op, {}, {In(s), In(s)}));
  for (const Shape& s : {Shape{1}, Shape{5, 3}}) v.push_back(Case("elemwise_div", {}, {In(s), In(s, kPositive)}));
  const std::vector<std::pair<Shape, Shape>> kBroadcast = {
      {Shape{2, 3, 4}, Shape{1, 3, 1}}, {Shape{5, 1}, Shape{1, 4}}, {Shape{3}, Shape{1}}, {Shape{2, 3}, Shape{2, 3}}};
  for (const char* op : {"broadcast_add", "broadcast_sub", "broadcast_mul"})
    for (const auto& [a, b] : kBroadcast) v.push_back(Case(op, {}, {In(a), In(b)}));
  for (const auto& [a, b] : kBroadcast) v.push_back(Case("broadcast_div", {}, {In(a), In(b, kPositive)}));
  for (const char* op : {"broadcast_maximum", "broadcast_minimum"})
    for (const auto& [a, b] : kBroadcast) v.push_back(Case(op, {}, {In(a, kDistinct), In(b, kDistinct)}));
  v.push_back(Case("add_n", {{"num_args", "3"}}, {In(Shape{3, 5}), In(Shape{3, 5}), In(Shape{3, 5})}));
  v.push_back(Case("add_n", {{"num_args", "1"}}, {In(Shape{7})}));
  // Layers.
  for (const char* act : {"sigmoid", "tanh", "softrelu", "softsign"})
    v.push_back(Case("Activation", {{"act_type", act}}, {In(Shape{3, 5})}));
  v.push_back(Case("Activation", {{"act_type", "relu"}}, {In(Shape{2, 1, 3}, kAwayFromZero)}));
  v.push_back(Case("LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.1"}}, {In(Shape{4, 3}, kAwayFromZero)}));
  v.push_back(Case("LeakyReLU", {{"act_type", "elu"}}, {In(Shape{4, 3}, kAwayFromZero)}));
  // MXNet's selu gradient below zero is λ·(y + α), not the derivative y + λ·α: weft reproduces it
  // (tests/compat checks it against MXNet), so finite differences cannot agree.
  v.push_back(NoGrad(Case("LeakyReLU", {{"act_type", "selu"}}, {In(Shape{4, 3}, kAwayFromZero)})));
  v.push_back(Case("LeakyReLU", {{"act_type", "gelu"}}, {In(Shape{2, 3, 2})}));
  v.push_back(Case("LeakyReLU", {{"act_type", "prelu"}}, {In(Shape{2, 3, 4}, kAwayFromZero), In(Shape{3}, kPositive)}));
  v.push_back(Case("LeakyReLU", {{"act_type", "prelu"}}, {In(Shape{3, 5}, kAwayFromZero), In(Shape{1}, kPositive)}));
  {
    // Not training: the slope is (lower_bound + upper_bound) / 2.
    OpCase c = Case("LeakyReLU", {{"act_type", "rrelu"}}, {In(Shape{4, 3}, kAwayFromZero)});
    c.is_train = false;
    v.push_back(c);
  }
  // Training: random slopes, a pure function of the call's seed and the element index (the cpu's
  // UniformAt, which the Vulkan shader computes too), so devices must match exactly.
  v.push_back(NoGrad(Case("LeakyReLU", {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.4"}},
                          {In(Shape{5, 6}, kAwayFromZero)})));
  v.push_back(Case("FullyConnected", {{"num_hidden", "3"}}, {In(Shape{4, 5}), In(Shape{3, 5}), In(Shape{3})}));
  v.push_back(Case("FullyConnected", {{"num_hidden", "1"}, {"no_bias", "True"}}, {In(Shape{1, 5}), In(Shape{1, 5})}));
  v.push_back(Case("FullyConnected", {{"num_hidden", "6"}}, {In(Shape{2, 3, 4}), In(Shape{6, 12}), In(Shape{6})}));
  v.push_back(Case("FullyConnected", {{"num_hidden", "2"}, {"flatten", "False"}},
                   {In(Shape{2, 3, 4}), In(Shape{2, 4}), In(Shape{2})}));
  v.push_back(Case("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "4"}},
                   {In(Shape{2, 3, 7, 6}), In(Shape{4, 3, 3, 3}), In(Shape{4})}));
  v.push_back(Case("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
                   {In(Shape{1, 3, 5, 5}), In(Shape{2, 3, 3, 3}), In(Shape{2})}));
  v.push_back(Case("Convolution", {{"kernel", "(1, 3)"}, {"num_filter", "4"}, {"num_group", "2"}, {"no_bias", "True"}},
                   {In(Shape{1, 4, 3, 5}), In(Shape{4, 2, 1, 3})}));
  v.push_back(Case("Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}},
                   {In(Shape{2, 3, 7, 6}, kDistinct)}));
  v.push_back(
      Case("Pooling", {{"kernel", "(2, 2)"}, {"pool_type", "avg"}, {"pad", "(1, 1)"}}, {In(Shape{1, 2, 5, 5})}));
  v.push_back(Case("Pooling", {{"global_pool", "True"}, {"pool_type", "avg"}}, {In(Shape{2, 3, 4, 5})}));
  v.push_back(Case("Pooling",
                   {{"kernel", "(3, 3)"}, {"pool_type", "avg"}, {"pad", "(1, 1)"}, {"count_include_pad", "False"}},
                   {In(Shape{1, 2, 4, 5})}));
  // 3-D (NCDHW): the cpu (and simdev, which runs its kernels) alone implements it; the GPU layer
  // (cuda, hip, gpuhost) and vulkan refuse it by name.
  const std::vector<std::string> cpu_only = {"vulkan", "cuda", "hip", "gpuhost"};
  v.push_back(Refused(Case("Convolution",
                           {{"kernel", "(2, 3, 2)"},
                            {"num_filter", "4"},
                            {"stride", "(1, 2, 1)"},
                            {"pad", "(1, 0, 1)"},
                            {"dilate", "(2, 1, 1)"},
                            {"num_group", "2"}},
                           {In(Shape{2, 2, 4, 5, 3}), In(Shape{4, 1, 2, 3, 2}), In(Shape{4})}),
                      cpu_only));
  // 16 filters and 4 channels per group: oneDNN's blocked 3-D forward and backward (nn_conv_dnnl.cc).
  v.push_back(Refused(Case("Convolution", {{"kernel", "(2, 2, 2)"}, {"num_filter", "16"}, {"pad", "(0, 1, 1)"}},
                           {In(Shape{1, 4, 3, 4, 3}), In(Shape{16, 4, 2, 2, 2}), In(Shape{16})}),
                      cpu_only));
  v.push_back(Refused(Case("Pooling", {{"kernel", "(2, 2, 3)"}, {"stride", "(1, 2, 2)"}, {"pool_type", "max"}},
                           {In(Shape{2, 2, 3, 5, 6}, kDistinct)}),
                      cpu_only));
  v.push_back(Refused(Case("Pooling",
                           {{"kernel", "(2, 2, 2)"},
                            {"stride", "(2, 2, 2)"},
                            {"pad", "(0, 1, 0)"},
                            {"pool_type", "avg"},
                            {"pooling_convention", "full"},
                            {"count_include_pad", "False"}},
                           {In(Shape{1, 2, 3, 4, 5})}),
                      cpu_only));
  v.push_back(
      Refused(Case("Pooling", {{"global_pool", "True"}, {"pool_type", "sum"}}, {In(Shape{2, 3, 2, 3, 4})}), cpu_only));
  v.push_back(Case("Deconvolution",
                   {{"kernel", "(3, 3)"},
                    {"num_filter", "2"},
                    {"stride", "(2, 2)"},
                    {"pad", "(1, 1)"},
                    {"adj", "(1, 1)"},
                    {"no_bias", "False"}},
                   {In(Shape{2, 3, 4, 3}), In(Shape{3, 2, 3, 3}), In(Shape{2})}));
  v.push_back(Case("Deconvolution", {{"kernel", "(2, 2)"}, {"num_filter", "4"}, {"num_group", "2"}},
                   {In(Shape{1, 4, 3, 3}), In(Shape{4, 2, 2, 2})}));
  v.push_back(Case("Deconvolution",
                   {{"kernel", "(4, 4)"}, {"num_filter", "3"}, {"stride", "(2, 2)"}, {"target_shape", "(8, 7)"}},
                   {In(Shape{1, 2, 4, 4}), In(Shape{2, 3, 4, 4})}));
  v.push_back(Case("Deconvolution", {{"kernel", "(3,)"}, {"num_filter", "3"}, {"dilate", "(2,)"}, {"no_bias", "False"}},
                   {In(Shape{2, 2, 5}), In(Shape{2, 3, 3}), In(Shape{3})}));
  v.push_back(Case("LayerNorm", {}, {In(Shape{3, 5}), In(Shape{5}, kPositive), In(Shape{5})}));
  v.push_back(
      Case("LayerNorm", {{"axis", "1"}, {"eps", "0.01"}}, {In(Shape{2, 3, 4}), In(Shape{3}, kPositive), In(Shape{3})}));
  // As MXNet, the backward ignores the mean / std outputs' gradients, which finite differences
  // would include: the forward alone is checked with them visible.
  v.push_back(NoGrad(Case("LayerNorm", {{"axis", "1"}, {"eps", "0.01"}, {"output_mean_var", "True"}},
                          {In(Shape{2, 3, 4}), In(Shape{3}, kPositive), In(Shape{3})})));
  v.push_back(Case("InstanceNorm", {}, {In(Shape{2, 3, 2, 3}), In(Shape{3}, kPositive), In(Shape{3})}));
  v.push_back(Case("InstanceNorm", {{"eps", "1e-05"}}, {In(Shape{1, 2, 5}), In(Shape{2}, kPositive), In(Shape{2})}));
  for (const char* mode : {"instance", "channel", "spatial"})
    v.push_back(Case("L2Normalization", {{"mode", mode}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("L2Normalization", {}, {In(Shape{3, 5})}));
  v.push_back(Case("LRN", {{"nsize", "3"}, {"alpha", "0.3"}, {"knorm", "1.5"}}, {In(Shape{2, 5, 3, 2})}));
  v.push_back(Case("LRN", {{"nsize", "5"}}, {In(Shape{1, 4, 3})}));
  v.push_back(Case("Embedding", {{"input_dim", "5"}, {"output_dim", "4"}},
                   {In(Shape{2, 3}, Domain{0, 5, true}), In(Shape{5, 4})}));
  v.push_back(Case("BatchNorm", {{"fix_gamma", "False"}}, {In(Shape{4, 3, 5}), In(Shape{3}, kPositive), In(Shape{3})},
                   {In(Shape{3}), In(Shape{3}, kPositive)}));
  v.push_back(Case("BatchNorm", {}, {In(Shape{6, 2}), In(Shape{2}, kPositive), In(Shape{2})},
                   {In(Shape{2}), In(Shape{2}, kPositive)}));
  {
    OpCase c = NoGrad(Case("Dropout", {{"p", "0.5"}}, {In(Shape{4, 5})}));
    c.is_train = false;
    v.push_back(c);
  }
  // Training: the mask is a pure function of the call's seed and the element index (the cpu's
  // UniformAt; the Vulkan shader computes the same SplitMix64 stream), so devices must match exactly.
  v.push_back(NoGrad(Case("Dropout", {{"p", "0.3"}}, {In(Shape{6, 7})})));
  // A mask shared along axes 0 and 2 (variational dropout): the cpu alone implements it.
  v.push_back(Refused(NoGrad(Case("Dropout", {{"p", "0.4"}, {"axes", "(0, 2)"}}, {In(Shape{3, 8, 4})})), cpu_only));
  // RNN on data (T 3, N 2, I 3) with H 2; the parameter lengths are MXNet's GetRnnParamSize:
  // Σ over layers of D·G·H·(I_l + H + 2). state_outputs makes the final states visible, so their
  // gradients (and the initial states') are checked too.
  v.push_back(Case("RNN",
                   {{"mode", "lstm"},
                    {"state_size", "2"},
                    {"num_layers", "2"},
                    {"bidirectional", "True"},
                    {"state_outputs", "True"}},
                   {In(Shape{3, 2, 3}), In(Shape{240}), In(Shape{4, 2, 2}), In(Shape{4, 2, 2})}));
  v.push_back(Case("RNN", {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "1"}, {"state_outputs", "True"}},
                   {In(Shape{3, 2, 3}), In(Shape{42}), In(Shape{1, 2, 2})}));
  v.push_back(Case("RNN", {{"mode", "rnn_tanh"}, {"state_size", "2"}, {"num_layers", "2"}},
                   {In(Shape{3, 2, 3}), In(Shape{26}), In(Shape{2, 2, 2})}));
  v.push_back(Case("RNN", {{"mode", "rnn_relu"}, {"state_size", "2"}, {"num_layers", "1"}, {"bidirectional", "True"}},
                   {In(Shape{3, 2, 3}, kAwayFromZero), In(Shape{28}), In(Shape{2, 2, 2})}));
  v.push_back(NoGrad(Case("SoftmaxOutput", {}, {In(Shape{4, 5}), In(Shape{4}, Domain{0, 5, true})})));
  // CTCLoss: labels 0..1 with the blank last (class 2); then the blank first with both lengths
  // (labels 1..2, 3 to 5 frames, 0 to 2 labels). Small enough for the reference's enumeration.
  v.push_back(Case("CTCLoss", {{"blank_label", "last"}}, {In(Shape{5, 2, 3}), In(Shape{2, 2}, Domain{0, 2, true})}));
  v.push_back(Case("CTCLoss", {{"use_data_lengths", "True"}, {"use_label_lengths", "True"}},
                   {In(Shape{5, 2, 3}), In(Shape{2, 3}, Domain{1, 3, true}), In(Shape{2}, Domain{3, 6, true}),
                    In(Shape{2}, Domain{0, 3, true})}));
  v.push_back(NoGrad(Case("SoftmaxOutput", {{"normalization", "batch"}, {"grad_scale", "2"}},
                          {In(Shape{3, 4}), In(Shape{3}, Domain{0, 4, true})})));
  v.push_back(Refused(NoGrad(Case("SoftmaxOutput", {{"multi_output", "True"}, {"normalization", "valid"}},
                                  {In(Shape{2, 3, 4}), In(Shape{2, 4}, Domain{0, 3, true})})),
                      {"vulkan"}));
  v.push_back(Refused(NoGrad(Case("SoftmaxOutput", {}, {In(Shape{2, 3, 4}), In(Shape{2, 3}, Domain{0, 4, true})})),
                      {"vulkan"}));
  for (const char* op : {"softmax", "log_softmax"}) {
    v.push_back(Case(op, {}, {In(Shape{3, 7})}));
    v.push_back(Case(op, {{"axis", "1"}}, {In(Shape{2, 3, 4})}));
  }
  v.push_back(NoGrad(Case("LinearRegressionOutput", {}, {In(Shape{4, 3}), In(Shape{4, 3})})));
  v.push_back(NoGrad(Case("MakeLoss", {}, {In(Shape{4, 3})})));
  v.push_back(NoGrad(Case("BlockGrad", {}, {In(Shape{4, 3})})));
  // Shapes and copies.
  v.push_back(Case("Flatten", {}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("Reshape", {{"shape", "(4, -1)"}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("expand_dims", {{"axis", "1"}}, {In(Shape{2, 3})}));
  v.push_back(Case("_copy", {}, {In(Shape{3, 1, 5})}));
  v.push_back(Case("Concat", {{"num_args", "2"}, {"dim", "1"}}, {In(Shape{2, 3}), In(Shape{2, 5})}));
  v.push_back(Case("Concat", {{"num_args", "3"}, {"dim", "0"}}, {In(Shape{1, 3}), In(Shape{2, 3}), In(Shape{1, 3})}));
  v.push_back(Case("_rnn_param_concat", {{"num_args", "2"}, {"dim", "0"}}, {In(Shape{6}), In(Shape{4})}));
  v.push_back(Case("SliceChannel", {{"num_outputs", "3"}}, {In(Shape{2, 6})}));
  v.push_back(Case("SliceChannel", {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "True"}}, {In(Shape{2, 3})}));
  v.push_back(Case("transpose", {}, {In(Shape{3, 5})}));
  v.push_back(Case("transpose", {{"axes", "(2, 0, 1)"}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}, {In(Shape{2, 3, 4})}));
  v.push_back(Case("SwapAxis", {{"dim1", "1"}, {"dim2", "-1"}}, {In(Shape{3, 1, 5})}));
  v.push_back(Case("slice", {{"begin", "(0, 1)"}, {"end", "(2, None)"}}, {In(Shape{3, 4, 5})}));
  v.push_back(Case("slice", {{"begin", "(None, 3)"}, {"end", "(None, 0)"}, {"step", "(1, -2)"}}, {In(Shape{2, 5})}));
  v.push_back(Case("slice", {{"begin", "(-2,)"}, {"end", "(None,)"}, {"step", "(2,)"}}, {In(Shape{5, 3})}));
  v.push_back(Case("slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, {In(Shape{2, 4, 3})}));
  v.push_back(Case("slice_axis", {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}}, {In(Shape{3, 5})}));
  // Selection, replication and shape-borrowing ops (index inputs hold whole numbers).
  const Domain kBool{0, 2, true};
  v.push_back(Case("where", {}, {In(Shape{2, 3}, kBool), In(Shape{2, 3}), In(Shape{2, 3})}));
  v.push_back(Case("where", {}, {In(Shape{3}, kBool), In(Shape{3, 4}), In(Shape{3, 4})}));
  v.push_back(Case("take", {}, {In(Shape{4, 3}), In(Shape{2, 2}, Domain{-1, 6, true})}));
  v.push_back(Case("take", {{"axis", "1"}, {"mode", "wrap"}}, {In(Shape{2, 5, 3}), In(Shape{4}, Domain{-7, 7, true})}));
  v.push_back(Case("pick", {}, {In(Shape{3, 4}), In(Shape{3}, Domain{0, 4, true})}));
  v.push_back(Case("pick", {{"axis", "0"}, {"keepdims", "True"}, {"mode", "wrap"}},
                   {In(Shape{3, 4}), In(Shape{1, 4}, Domain{-4, 6, true})}));
  v.push_back(Case("stack", {{"num_args", "3"}, {"axis", "1"}}, {In(Shape{2, 3}), In(Shape{2, 3}), In(Shape{2, 3})}));
  v.push_back(Case("stack", {{"num_args", "2"}, {"axis", "-1"}}, {In(Shape{3}), In(Shape{3})}));
  v.push_back(Case("tile", {{"reps", "(2, 1, 3)"}}, {In(Shape{2, 3})}));
  v.push_back(Case("tile", {{"reps", "(2,)"}}, {In(Shape{3, 1, 2})}));
  v.push_back(Case("repeat", {{"repeats", "2"}, {"axis", "1"}}, {In(Shape{2, 3})}));
  v.push_back(Case("repeat", {{"repeats", "3"}}, {In(Shape{2, 2})}));
  v.push_back(Case("broadcast_to", {{"shape", "(2, 0, 4)"}}, {In(Shape{1, 3, 1})}));
  v.push_back(Case("broadcast_like", {}, {In(Shape{1, 3}), In(Shape{2, 3})}));
  v.push_back(
      Case("broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(2,)"}}, {In(Shape{1, 3}), In(Shape{2, 3, 5})}));
  v.push_back(Case("reshape_like", {}, {In(Shape{2, 6}), In(Shape{3, 4})}));
  v.push_back(Case("reshape_like", {{"lhs_begin", "1"}, {"rhs_begin", "0"}, {"rhs_end", "2"}},
                   {In(Shape{2, 6}), In(Shape{3, 2, 7})}));
  v.push_back(Case("slice_like", {}, {In(Shape{3, 4, 5}), In(Shape{2, 3, 4})}));
  v.push_back(Case("slice_like", {{"axes", "(0, -2)"}}, {In(Shape{3, 4, 5}), In(Shape{2, 3})}));
  v.push_back(Case("Pad", {{"mode", "constant"}, {"pad_width", "(0, 0, 0, 0, 1, 2, 0, 3)"}, {"constant_value", "0.5"}},
                   {In(Shape{1, 2, 3, 4})}));
  v.push_back(Case("Pad", {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 2, 1, 1, 1)"}}, {In(Shape{2, 1, 3, 2})}));
  v.push_back(
      Case("Pad", {{"mode", "reflect"}, {"pad_width", "(0, 0, 0, 0, 1, 1, 2, 1, 0, 2)"}}, {In(Shape{1, 2, 2, 3, 3})}));
  v.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}}, {In(Shape{2, 3, 2, 3})}));
  v.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}},
                   {In(Shape{1, 2, 2, 2}), In(Shape{1, 1, 4, 4})}));
  v.push_back(Case("UpSampling",
                   {{"scale", "3"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
                   {In(Shape{1, 2, 1, 2}), In(Shape{1, 2, 3, 6})}));
  v.push_back(Case("UpSampling", {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "2"}},
                   {In(Shape{1, 2, 3, 2}), In(Shape{2, 1, 4, 4})}));
  v.push_back(Case("UpSampling", {{"scale", "3"}, {"sample_type", "bilinear"}, {"num_filter", "1"}},
                   {In(Shape{2, 1, 2, 2}), In(Shape{1, 1, 5, 5})}));
  for (const char* ret : {"value", "both", "indices", "mask"})
    v.push_back(Case("topk", {{"k", "2"}, {"ret_typ", ret}}, {In(Shape{3, 5}, kDistinct)}));
  v.push_back(Case("topk", {{"axis", "0"}, {"k", "2"}, {"ret_typ", "value"}, {"is_ascend", "True"}},
                   {In(Shape{4, 3}, kDistinct)}));
  v.push_back(Case("topk", {{"axis", "None"}, {"k", "3"}, {"ret_typ", "both"}, {"dtype", "int32"}},
                   {In(Shape{2, 3}, kDistinct)}));
  for (const char* dt : {"int32", "int64"})
    v.push_back(
        NoGrad(Case("topk", {{"k", "2"}, {"ret_typ", "indices"}, {"dtype", dt}}, {In(Shape{2, 4}, kDistinct)})));
  v.push_back(Case("sort", {}, {In(Shape{3, 4}, kDistinct)}));
  v.push_back(Case("sort", {{"axis", "0"}, {"is_ascend", "False"}}, {In(Shape{4, 2, 3}, kDistinct)}));
  v.push_back(NoGrad(Case("argsort", {}, {In(Shape{3, 4}, kDistinct)})));
  v.push_back(NoGrad(
      Case("argsort", {{"axis", "None"}, {"is_ascend", "False"}, {"dtype", "int64"}}, {In(Shape{2, 3}, kDistinct)})));
  // Arrays made from attributes alone.
  v.push_back(NoGrad(Case("_zeros", {{"shape", "(2, 3)"}}, {})));
  v.push_back(NoGrad(Case("_ones", {{"shape", "(4,)"}, {"dtype", "int32"}}, {})));
  v.push_back(NoGrad(Case("_ones", {{"shape", "(2, 2)"}}, {})));
  v.push_back(NoGrad(Case("_full", {{"shape", "(3, 1, 2)"}, {"value", "2.5"}}, {})));
  v.push_back(NoGrad(Case("_arange", {{"start", "1"}, {"stop", "7"}, {"step", "2"}, {"repeat", "2"}}, {})));
  v.push_back(NoGrad(Case("_arange", {{"start", "5"}, {"step", "-0.5"}, {"stop", "2"}}, {})));
  v.push_back(Case("dot", {}, {In(Shape{3, 4}), In(Shape{4, 5})}));
  v.push_back(Case("dot", {{"transpose_a", "True"}}, {In(Shape{4, 3}), In(Shape{4, 5})}));
  v.push_back(Case("dot", {{"transpose_b", "True"}}, {In(Shape{1, 4}), In(Shape{5, 4})}));
  v.push_back(Case("batch_dot", {}, {In(Shape{2, 3, 4}), In(Shape{2, 4, 5})}));
  v.push_back(Case("batch_dot", {{"transpose_b", "True"}}, {In(Shape{3, 1, 4}), In(Shape{3, 2, 4})}));
  v.push_back(Case("_linalg_gelqf", {}, {In(Shape{3, 5})}));
  v.push_back(Case("_linalg_gelqf", {}, {In(Shape{2, 2, 2})}));
  v.push_back(NoGrad(Case("Cast", {{"dtype", "float64"}}, {In(Shape{3, 4})})));
  v.push_back(NoGrad(Case("zeros_like", {}, {In(Shape{3, 4})})));
  v.push_back(NoGrad(Case("ones_like", {}, {In(Shape{3, 4})})));
  v.push_back(NoGrad(Case("one_hot", {{"depth", "4"}}, {In(Shape{5}, Domain{0, 4, true})})));
  v.push_back(NoGrad(Case("argmax", {{"axis", "1"}}, {In(Shape{3, 5})})));
  for (const char* op : {"sum", "mean", "max", "min", "nansum", "prod", "norm", "_square_sum"}) {
    // max/min need distinct values (no ties); the distinct grid is symmetric about 0, so sums of
    // it cancel to rounding noise, which devices summing in another order cannot match: sum,
    // mean and nansum get positive values. prod's gradient divides by x and norm's L1 gradient
    // has a kink at 0: keep x away from 0.
    const std::string name = op;
    const Domain d = name == "max" || name == "min"     ? kDistinct
                     : name == "prod" || name == "norm" ? kAwayFromZero
                                                        : kPositive;
    v.push_back(Case(op, {{"axis", "(1,)"}}, {In(Shape{2, 3, 4}, d)}));
    v.push_back(Case(op, {}, {In(Shape{3, 5}, d)}));
    v.push_back(Case(op, {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {In(Shape{2, 1, 3}, d)}));
  }
  v.push_back(Case("norm", {{"ord", "1"}, {"axis", "-1"}}, {In(Shape{3, 4}, kAwayFromZero)}));
  // Optimizer updates.
  v.push_back(NoGrad(Case("sgd_update", {{"lr", "0.1"}, {"wd", "0.01"}}, {In(Shape{5, 3}), In(Shape{5, 3})})));
  v.push_back(NoGrad(Case("sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}}, {In(Shape{5, 3}), In(Shape{5, 3})},
                          {In(Shape{5, 3})})));
  v.push_back(NoGrad(Case("adam_update", {{"lr", "0.01"}, {"clip_gradient", "0.5"}}, {In(Shape{4}), In(Shape{4})},
                          {In(Shape{4}), In(Shape{4}, kPositive)})));
  v.push_back(NoGrad(Case("nag_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
                          {In(Shape{5, 3}), In(Shape{5, 3})}, {In(Shape{5, 3})})));
  v.push_back(NoGrad(Case("rmsprop_update", {{"lr", "0.01"}, {"clip_weights", "0.8"}}, {In(Shape{7}), In(Shape{7})},
                          {In(Shape{7}, kPositive)})));
  v.push_back(
      NoGrad(Case("rmspropalex_update", {{"lr", "0.01"}, {"clip_gradient", "0.5"}}, {In(Shape{2, 3}), In(Shape{2, 3})},
                  {In(Shape{2, 3}, Domain{1.0, 2.0}), In(Shape{2, 3}, Domain{-0.1, 0.1}), In(Shape{2, 3})})));
  // The KVStore's 2-bit compression: random values and residuals; random words (every code).
  OpCase quantize = NoGrad(Case("_quantize_2bit", {{"threshold", "0.4"}}, {In(Shape{37})}, {In(Shape{37})}));
  quantize.req_add = false;
  v.push_back(quantize);
  v.push_back(NoGrad(Case("_dequantize_2bit", {{"shape", "(5, 7)"}, {"threshold", "0.4"}},
                          {In(Shape{3}, Domain{0, 4294967296.0, true, 0, false, DType::kUint32})})));
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
  for (OpCase& c : v) c.exact = kExact.count(c.op) > 0;
  AddFrontendCases(v);
  return v;
}

}  // namespace

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

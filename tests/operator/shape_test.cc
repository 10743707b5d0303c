// Shape inference. Expected shapes come from MXNet 1.9.1 (pip mxnet==1.9.1):
// mx.sym.<op>(...).infer_shape(...) / infer_shape_partial(...), where MXNet's unknown extent 0
// is weft's -1. Cases where weft infers more than MXNet say so.
#include "test_util.h"

namespace weft {
namespace {

using test::Attrs;
using test::ErrorOf;
using test::ExpectContains;
using test::Infer;
using Slots = std::vector<ShapeSlot>;
const ShapeSlot U = std::nullopt;

struct Case {
  std::string label;
  std::string op;
  Attrs attrs;
  Slots in;
  Slots want_in, want_out, want_aux;
  Slots out = {};  // given output shapes (partial inference backwards)
};

std::string Str(const Slots& s) {
  std::string r;
  for (const ShapeSlot& x : s) r += (x ? x->ToString() : std::string("?")) + " ";
  return r;
}

void Check(const Case& c) {
  SCOPED_TRACE(c.label);
  test::Inferred r;
  try {
    r = Infer(c.op, c.attrs, c.in, c.out);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  EXPECT_EQ(r.in, c.want_in) << "inputs: " << Str(r.in);
  EXPECT_EQ(r.out, c.want_out) << "outputs: " << Str(r.out);
  EXPECT_EQ(r.aux, c.want_aux) << "aux: " << Str(r.aux);
}

// clang-format off
const Case kNn[] = {
  {"fc flatten", "FullyConnected", {{"num_hidden", "10"}}, {Shape{5, 3, 4}},
   {Shape{5, 3, 4}, Shape{10, 12}, Shape{10}}, {Shape{5, 10}}, {}},
  {"fc flatten=False", "FullyConnected", {{"num_hidden", "10"}, {"flatten", "False"}}, {Shape{5, 3, 4}},
   {Shape{5, 3, 4}, Shape{10, 4}, Shape{10}}, {Shape{5, 3, 10}}, {}},
  {"fc no_bias", "FullyConnected", {{"num_hidden", "10"}, {"no_bias", "True"}}, {Shape{5, 20}},
   {Shape{5, 20}, Shape{10, 20}}, {Shape{5, 10}}, {}},
  // MXNet: data (0, 20) -> weight (10, 20), bias (10,), output (0, 10).
  {"fc partial batch", "FullyConnected", {{"num_hidden", "10"}}, {Shape{-1, 20}},
   {Shape{-1, 20}, Shape{10, 20}, Shape{10}}, {Shape{-1, 10}}, {}},
  // MXNet infers nothing without data.
  {"fc weight only", "FullyConnected", {{"num_hidden", "10"}}, {U, Shape{10, 20}},
   {U, Shape{10, 20}, U}, {U}, {}},
  // The batch size flows back from a known output (MXNet's oshape[0] rule).
  {"fc batch from output", "FullyConnected", {{"num_hidden", "10"}}, {Shape{-1, 20}},
   {Shape{7, 20}, Shape{10, 20}, Shape{10}}, {Shape{7, 10}}, {}, {Shape{7, 10}}},
  {"fc bias (n, 1)", "FullyConnected", {{"num_hidden", "10"}}, {Shape{5, 20}, U, Shape{10, 1}},
   {Shape{5, 20}, Shape{10, 20}, Shape{10, 1}}, {Shape{5, 10}}, {}},

  {"conv", "Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}}, {Shape{2, 3, 32, 32}},
   {Shape{2, 3, 32, 32}, Shape{8, 3, 3, 3}, Shape{8}}, {Shape{2, 8, 30, 30}}, {}},
  {"conv stride pad dilate", "Convolution",
   {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"dilate", "(2, 2)"}},
   {Shape{2, 4, 33, 31}}, {Shape{2, 4, 33, 31}, Shape{8, 4, 3, 3}, Shape{8}}, {Shape{2, 8, 16, 15}}, {}},
  {"conv groups", "Convolution",
   {{"kernel", "(5, 3)"}, {"num_filter", "8"}, {"num_group", "2"}, {"stride", "(1, 2)"}, {"pad", "(2, 0)"}},
   {Shape{2, 4, 20, 21}}, {Shape{2, 4, 20, 21}, Shape{8, 2, 5, 3}, Shape{8}}, {Shape{2, 8, 20, 10}}, {}},
  {"conv no_bias", "Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"no_bias", "True"}},
   {Shape{2, 3, 32, 32}}, {Shape{2, 3, 32, 32}, Shape{8, 3, 3, 3}}, {Shape{2, 8, 30, 30}}, {}},
  {"conv 1-d", "Convolution", {{"kernel", "(3,)"}, {"num_filter", "8"}, {"stride", "(2,)"}}, {Shape{2, 3, 32}},
   {Shape{2, 3, 32}, Shape{8, 3, 3}, Shape{8}}, {Shape{2, 8, 15}}, {}},
  {"conv 3-d", "Convolution", {{"kernel", "(3, 3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1, 1)"}},
   {Shape{2, 3, 8, 9, 10}}, {Shape{2, 3, 8, 9, 10}, Shape{8, 3, 3, 3, 3}, Shape{8}}, {Shape{2, 8, 8, 9, 10}}, {}},
  // Channels-last layouts (Gluon builds such layers; no kernel runs them): weight (F, k..., C).
  {"conv NHWC", "Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "16"}, {"layout", "NHWC"}},
   {Shape{1, 10, 10, 4}}, {Shape{1, 10, 10, 4}, Shape{16, 3, 3, 4}, Shape{16}}, {Shape{1, 8, 8, 16}}, {}},
  {"conv NDHWC partial", "Convolution", {{"kernel", "(3, 3, 3)"}, {"num_filter", "16"}, {"layout", "NDHWC"}},
   {Shape{-1, -1, -1, -1, 4}}, {Shape{-1, -1, -1, -1, 4}, Shape{16, 3, 3, 3, 4}, Shape{16}},
   {Shape{-1, -1, -1, -1, 16}}, {}},
  // MXNet: data (0, 3, 0, 0) -> weight (8, 3, 3, 3), output (0, 8, 0, 0).
  {"conv partial", "Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"}},
   {Shape{-1, 3, -1, -1}}, {Shape{-1, 3, -1, -1}, Shape{8, 3, 3, 3}, Shape{8}}, {Shape{-1, 8, -1, -1}}, {}},
  // MXNet 2-d rule: batch, and height/width where stride is 1, come back from the output.
  {"conv data from output", "Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"},
   {"stride", "(1, 2)"}}, {Shape{-1, 3, -1, -1}}, {Shape{4, 3, 10, -1}, Shape{8, 3, 3, 3}, Shape{8}},
   {Shape{4, 8, 10, 6}}, {}, {Shape{4, 8, 10, 6}}},

  {"pool valid", "Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}}, {Shape{1, 2, 10, 11}},
   {Shape{1, 2, 10, 11}}, {Shape{1, 2, 4, 5}}, {}},
  {"pool full", "Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}},
   {Shape{1, 2, 10, 11}}, {Shape{1, 2, 10, 11}}, {Shape{1, 2, 5, 5}}, {}},
  {"pool pad avg", "Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"pool_type", "avg"}},
   {Shape{1, 2, 10, 11}}, {Shape{1, 2, 10, 11}}, {Shape{1, 2, 5, 6}}, {}},
  {"pool default stride 1", "Pooling", {{"kernel", "(3, 3)"}}, {Shape{1, 2, 10, 11}},
   {Shape{1, 2, 10, 11}}, {Shape{1, 2, 8, 9}}, {}},
  {"pool global", "Pooling", {{"kernel", "(2, 2)"}, {"global_pool", "True"}, {"pool_type", "avg"}},
   {Shape{4, 5, 7, 9}}, {Shape{4, 5, 7, 9}}, {Shape{4, 5, 1, 1}}, {}},
  {"pool global 1-d", "Pooling", {{"global_pool", "True"}}, {Shape{1, 2, 10}}, {Shape{1, 2, 10}}, {Shape{1, 2, 1}}, {}},
  {"pool 3-d full", "Pooling", {{"kernel", "(2, 2, 2)"}, {"stride", "(2, 2, 2)"}, {"pooling_convention", "full"}},
   {Shape{1, 2, 5, 6, 7}}, {Shape{1, 2, 5, 6, 7}}, {Shape{1, 2, 3, 3, 4}}, {}},
  {"pool partial", "Pooling", {{"kernel", "(3, 3)"}}, {Shape{-1, 2, 10, 11}}, {Shape{-1, 2, 10, 11}},
   {Shape{-1, 2, 8, 9}}, {}},

  {"activation", "Activation", {{"act_type", "tanh"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"activation backwards", "Activation", {{"act_type", "tanh"}}, {U}, {Shape{2, 3}}, {Shape{2, 3}}, {}, {Shape{2, 3}}},
  {"prelu", "LeakyReLU", {{"act_type", "prelu"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}, Shape{3}}, {Shape{2, 3, 4}}, {}},
  {"rrelu", "LeakyReLU", {{"act_type", "rrelu"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}, Shape{2, 3}}, {}},

  {"batchnorm", "BatchNorm", {}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}, Shape{3}, Shape{3}},
   {Shape{2, 3, 4, 5}, Shape{3}, Shape{3}}, {Shape{3}, Shape{3}}},
  {"batchnorm axis -1", "BatchNorm", {{"axis", "-1"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}, Shape{5}, Shape{5}},
   {Shape{2, 3, 4, 5}, Shape{5}, Shape{5}}, {Shape{5}, Shape{5}}},
  {"dropout", "Dropout", {{"p", "0.3"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}, Shape{2, 3}}, {}},
  // The hidden mask has extent 1 on `axes` (MXNet's DropoutOpInferShape).
  {"dropout axes", "Dropout", {{"p", "0.3"}, {"axes", "(0, -1)"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}},
   {Shape{2, 3, 4}, Shape{1, 3, 1}}, {}},
  // MXNet: parameters (704,) = Σ_l D·G·H·(I_l + H + 2); states (L·D, N, H); output (T, N, D·H).
  // weft's hidden reserve: per layer T·N·D·H + D·(T·N·G·H + T·N·H).
  {"rnn lstm 2 layers bidirectional", "RNN",
   {{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "2"}, {"bidirectional", "True"}, {"state_outputs", "True"}},
   {Shape{5, 3, 2}}, {Shape{5, 3, 2}, Shape{704}, Shape{4, 3, 4}, Shape{4, 3, 4}},
   {Shape{5, 3, 8}, Shape{4, 3, 4}, Shape{4, 3, 4}, Shape{1440}}, {}},
  {"rnn gru", "RNN", {{"mode", "gru"}, {"state_size", "3"}, {"num_layers", "1"}}, {Shape{2, 1, 5}},
   {Shape{2, 1, 5}, Shape{90}, Shape{1, 1, 3}}, {Shape{2, 1, 3}, Shape{1, 1, 3}, Shape{30}}, {}},
};

const Case kLoss[] = {
  {"softmax output", "SoftmaxOutput", {}, {Shape{8, 10}}, {Shape{8, 10}, Shape{8}}, {Shape{8, 10}}, {}},
  {"softmax output 4-d", "SoftmaxOutput", {}, {Shape{8, 10, 3, 3}}, {Shape{8, 10, 3, 3}, Shape{8, 10, 3}},
   {Shape{8, 10, 3, 3}}, {}},
  {"softmax output prob labels", "SoftmaxOutput", {}, {Shape{8, 10}, Shape{8, 10}}, {Shape{8, 10}, Shape{8, 10}},
   {Shape{8, 10}}, {}},
  {"softmax", "softmax", {{"axis", "1"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"log_softmax", "log_softmax", {}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"linreg (n, 1)", "LinearRegressionOutput", {}, {Shape{8, 1}}, {Shape{8, 1}, Shape{8}}, {Shape{8, 1}}, {}},
  {"linreg", "LinearRegressionOutput", {}, {Shape{8, 3}}, {Shape{8, 3}, Shape{8, 3}}, {Shape{8, 3}}, {}},
  {"logreg (n, 1)", "LogisticRegressionOutput", {}, {Shape{8, 1}}, {Shape{8, 1}, Shape{8}}, {Shape{8, 1}}, {}},
  {"maereg", "MAERegressionOutput", {}, {Shape{8, 3}}, {Shape{8, 3}, Shape{8, 3}}, {Shape{8, 3}}, {}},
  {"makeloss", "MakeLoss", {}, {Shape{4}}, {Shape{4}}, {Shape{4}}, {}},
  {"blockgrad", "BlockGrad", {}, {Shape{4, 1}}, {Shape{4, 1}}, {Shape{4, 1}}, {}},
};

const Case kLayout[] = {
  {"flatten", "Flatten", {}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {Shape{2, 60}}, {}},
  {"flatten 1-d", "Flatten", {}, {Shape{7}}, {Shape{7}}, {Shape{7, 1}}, {}},
  {"reshape 0 -1", "Reshape", {{"shape", "(0, -1)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {Shape{2, 60}}, {}},
  {"reshape -1", "Reshape", {{"shape", "(-1,)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {Shape{120}}, {}},
  {"reshape 2 -1 0", "Reshape", {{"shape", "(2, -1, 0)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}},
   {Shape{2, 15, 4}}, {}},
  {"reshape -2", "Reshape", {{"shape", "(-2,)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {}},
  {"reshape -3 -2", "Reshape", {{"shape", "(-3, -2)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}}, {Shape{6, 4, 5}}, {}},
  {"reshape -4 1 2 -2", "Reshape", {{"shape", "(-4, 1, 2, -2)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}},
   {Shape{1, 2, 3, 4, 5}}, {}},
  {"reshape -4 -1 2 -2", "Reshape", {{"shape", "(-4, -1, 2, -2)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}},
   {Shape{1, 2, 3, 4, 5}}, {}},
  {"reshape reverse 0 0 -1", "Reshape", {{"shape", "(0, 0, -1)"}, {"reverse", "True"}}, {Shape{2, 3, 4, 5}},
   {Shape{2, 3, 4, 5}}, {Shape{3, 4, 10}}, {}},
  {"reshape reverse -1 5", "Reshape", {{"shape", "(-1, 5)"}, {"reverse", "True"}}, {Shape{2, 3, 4, 5}},
   {Shape{2, 3, 4, 5}}, {Shape{24, 5}}, {}},
  {"reshape 6 1 -1", "Reshape", {{"shape", "(6, 1, -1)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}},
   {Shape{6, 1, 20}}, {}},
  {"reshape 0 -3", "Reshape", {{"shape", "(0, -3)"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{2, 12}}, {}},
  // MXNet: data (0, 3, 4), shape (-1, 12) -> (0, 12).
  {"reshape partial", "Reshape", {{"shape", "(-1, 12)"}}, {Shape{-1, 3, 4}}, {Shape{-1, 3, 4}}, {Shape{-1, 12}}, {}},
  // ...and with the output known the missing input extent follows (MXNet's reverse inference).
  {"reshape backwards", "Reshape", {{"shape", "(-1, 12)"}}, {Shape{-1, 3, 4}}, {Shape{5, 3, 4}}, {Shape{5, 12}}, {},
   {Shape{5, 12}}},
  {"reshape legacy target_shape", "Reshape", {{"target_shape", "(0, 20)"}}, {Shape{2, 3, 4, 5}}, {Shape{2, 3, 4, 5}},
   {Shape{6, 20}}, {}},
  {"expand_dims", "expand_dims", {{"axis", "1"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 1, 3}}, {}},
  {"expand_dims -1", "expand_dims", {{"axis", "-1"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3, 1}}, {}},
  {"expand_dims backwards", "expand_dims", {{"axis", "0"}}, {U}, {Shape{2, 3}}, {Shape{1, 2, 3}}, {}, {Shape{1, 2, 3}}},
  {"copy", "_copy", {}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"concat", "Concat", {{"num_args", "3"}, {"dim", "1"}}, {Shape{2, 3, 4}, Shape{2, 5, 4}, Shape{2, 1, 4}},
   {Shape{2, 3, 4}, Shape{2, 5, 4}, Shape{2, 1, 4}}, {Shape{2, 9, 4}}, {}},
  {"concat dim 0", "Concat", {{"num_args", "2"}, {"dim", "0"}}, {Shape{2, 3}, Shape{4, 3}}, {Shape{2, 3}, Shape{4, 3}},
   {Shape{6, 3}}, {}},
  // MXNet 1.9.1 answers b = (2, 0) and output (2, 3) here (it counts the unknown length as 0);
  // weft keeps the length unknown.
  {"concat partial", "Concat", {{"num_args", "2"}}, {Shape{2, 3}, U}, {Shape{2, 3}, Shape{2, -1}}, {Shape{2, -1}}, {}},
  {"concat length from output", "Concat", {{"num_args", "2"}}, {Shape{2, 3}, U}, {Shape{2, 3}, Shape{2, 4}},
   {Shape{2, 7}}, {}, {Shape{2, 7}}},
  // Gluon's bidirectional RNN: the two first-layer input weights (reshaped to (-1,)) are unknown
  // until the RNN's parameter size comes back; they share the rest (MXNet's RNNParamConcatShape).
  {"rnn param concat", "_rnn_param_concat", {{"num_args", "3"}, {"dim", "0"}}, {Shape{-1}, Shape{6}, U},
   {Shape{5}, Shape{6}, Shape{5}}, {Shape{16}}, {}, {Shape{16}}},
  {"slice", "SliceChannel", {{"num_outputs", "3"}}, {Shape{2, 6, 4}}, {Shape{2, 6, 4}},
   {Shape{2, 2, 4}, Shape{2, 2, 4}, Shape{2, 2, 4}}, {}},
  {"slice squeeze", "SliceChannel", {{"num_outputs", "3"}, {"squeeze_axis", "True"}}, {Shape{2, 3, 4}},
   {Shape{2, 3, 4}}, {Shape{2, 4}, Shape{2, 4}, Shape{2, 4}}, {}},
  {"slice axis -1", "SliceChannel", {{"num_outputs", "2"}, {"axis", "-1"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}},
   {Shape{2, 3, 2}, Shape{2, 3, 2}}, {}},
  {"slice backwards", "SliceChannel", {{"num_outputs", "2"}}, {U}, {Shape{2, 6}}, {Shape{2, 3}, Shape{2, 3}}, {},
   {Shape{2, 3}, U}},
  {"transpose", "transpose", {}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{4, 3, 2}}, {}},
  {"transpose axes", "transpose", {{"axes", "(1, 2, 0)"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{3, 4, 2}}, {}},
  {"transpose backwards", "transpose", {{"axes", "(1, 2, 0)"}}, {U}, {Shape{2, 3, 4}}, {Shape{3, 4, 2}}, {},
   {Shape{3, 4, 2}}},
};

const Case kTensor[] = {
  {"dot", "dot", {}, {Shape{2, 3}, Shape{3, 4}}, {Shape{2, 3}, Shape{3, 4}}, {Shape{2, 4}}, {}},
  {"dot transpose_a", "dot", {{"transpose_a", "True"}}, {Shape{3, 2}, Shape{3, 4}}, {Shape{3, 2}, Shape{3, 4}},
   {Shape{2, 4}}, {}},
  {"dot transpose_b", "dot", {{"transpose_b", "True"}}, {Shape{2, 3}, Shape{4, 3}}, {Shape{2, 3}, Shape{4, 3}},
   {Shape{2, 4}}, {}},
  {"dot vectors", "dot", {}, {Shape{3}, Shape{3}}, {Shape{3}, Shape{3}}, {Shape{1}}, {}},
  {"dot n-d", "dot", {}, {Shape{2, 3, 4}, Shape{4, 5, 6}}, {Shape{2, 3, 4}, Shape{4, 5, 6}}, {Shape{2, 3, 5, 6}}, {}},
  {"dot vector matrix", "dot", {}, {Shape{3}, Shape{3, 4}}, {Shape{3}, Shape{3, 4}}, {Shape{4}}, {}},
  {"batch_dot", "batch_dot", {}, {Shape{7, 2, 3}, Shape{7, 3, 4}}, {Shape{7, 2, 3}, Shape{7, 3, 4}},
   {Shape{7, 2, 4}}, {}},
  {"batch_dot transposed", "batch_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
   {Shape{7, 3, 2}, Shape{7, 4, 3}}, {Shape{7, 3, 2}, Shape{7, 4, 3}}, {Shape{7, 2, 4}}, {}},
  {"cast", "Cast", {{"dtype", "int32"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"zeros_like", "zeros_like", {}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"ones_like", "ones_like", {}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"one_hot", "one_hot", {{"depth", "5"}}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{2, 3, 5}}, {}},
  {"sum all", "sum", {}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{1}}, {}},
  {"sum axis 1", "sum", {{"axis", "1"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{2, 4}}, {}},
  {"sum axes (0, 2)", "sum", {{"axis", "(0, 2)"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{3}}, {}},
  {"sum axes keepdims", "sum", {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}},
   {Shape{1, 3, 1}}, {}},
  {"sum -1 keepdims", "sum", {{"axis", "-1"}, {"keepdims", "True"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}},
   {Shape{2, 3, 1}}, {}},
  {"sum all keepdims", "sum", {{"keepdims", "True"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{1, 1, 1}}, {}},
  {"mean", "mean", {{"axis", "0"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{3, 4}}, {}},
  {"max", "max", {{"axis", "(1,)"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{2, 4}}, {}},
  {"argmax", "argmax", {{"axis", "1"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}}, {Shape{2, 4}}, {}},
  {"argmax keepdims", "argmax", {{"axis", "1"}, {"keepdims", "True"}}, {Shape{2, 3, 4}}, {Shape{2, 3, 4}},
   {Shape{2, 1, 4}}, {}},
  {"argmax 1-d", "argmax", {{"axis", "0"}}, {Shape{5}}, {Shape{5}}, {Shape{1}}, {}},
  {"argmax all", "argmax", {}, {Shape{2, 3}}, {Shape{2, 3}}, {Shape{1}}, {}},
  {"add_n partial", "add_n", {{"num_args", "3"}}, {U, Shape{4, 5}, U}, {Shape{4, 5}, Shape{4, 5}, Shape{4, 5}},
   {Shape{4, 5}}, {}},
  {"elemwise partial", "elemwise_add", {}, {Shape{2, 3}, U}, {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"elemwise merges extents", "elemwise_mul", {}, {Shape{-1, 3}, Shape{2, -1}}, {Shape{2, 3}, Shape{2, 3}},
   {Shape{2, 3}}, {}},
  {"broadcast", "broadcast_add", {}, {Shape{2, 1, 4}, Shape{3, 1}}, {Shape{2, 1, 4}, Shape{3, 1}}, {Shape{2, 3, 4}}, {}},
  {"broadcast same", "broadcast_div", {}, {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}}, {}},
  {"scalar", "_power_scalar", {{"scalar", "2"}}, {Shape{3}}, {Shape{3}}, {Shape{3}}, {}},
  {"unary", "sigmoid", {}, {Shape{3, 1}}, {Shape{3, 1}}, {Shape{3, 1}}, {}},
  {"sgd", "sgd_update", {{"lr", "0.1"}}, {U, Shape{3, 4}}, {Shape{3, 4}, Shape{3, 4}}, {Shape{3, 4}}, {}},
  {"sgd_mom", "sgd_mom_update", {{"lr", "0.1"}}, {Shape{3, 4}}, {Shape{3, 4}, Shape{3, 4}}, {Shape{3, 4}},
   {Shape{3, 4}}},
  {"adam", "adam_update", {{"lr", "0.1"}}, {Shape{3, 4}}, {Shape{3, 4}, Shape{3, 4}}, {Shape{3, 4}},
   {Shape{3, 4}, Shape{3, 4}}},
  {"rmspropalex", "rmspropalex_update", {{"lr", "0.1"}}, {U, Shape{5}}, {Shape{5}, Shape{5}}, {Shape{5}},
   {Shape{5}, Shape{5}, Shape{5}}},
  {"quantize 2bit", "_quantize_2bit", {}, {Shape{3, 7}}, {Shape{3, 7}}, {Shape{2}}, {Shape{3, 7}}},
  {"dequantize 2bit", "_dequantize_2bit", {{"shape", "(17,)"}}, {U}, {Shape{2}}, {Shape{17}}, {}},
};
// clang-format on

TEST(ShapeInference, NnOps) {
  for (const Case& c : kNn) Check(c);
}
TEST(ShapeInference, LossOps) {
  for (const Case& c : kLoss) Check(c);
}
TEST(ShapeInference, LayoutOps) {
  for (const Case& c : kLayout) Check(c);
}
TEST(ShapeInference, TensorReduceElemwiseOps) {
  for (const Case& c : kTensor) Check(c);
}

TEST(ShapeInference, EveryScalarAndUnaryOpKeepsTheShape) {
  for (const char* op : {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
                         "_rdiv_scalar", "_power_scalar"}) {
    Check({op, op, {{"scalar", "1.5"}}, {Shape{2, 5}}, {Shape{2, 5}}, {Shape{2, 5}}, {}});
  }
  for (const char* op : {"sin", "cos", "exp", "log", "sqrt", "square", "abs", "negative", "relu", "sigmoid", "tanh"}) {
    Check({op, op, {}, {Shape{4}}, {Shape{4}}, {Shape{4}}, {}});
  }
}

TEST(ShapeInference, NothingKnownInfersNothing) {
  test::Inferred r = Infer("FullyConnected", {{"num_hidden", "3"}}, {});
  EXPECT_EQ(r.in, (Slots{U, U, U}));
  EXPECT_EQ(r.out, (Slots{U}));
  r = Infer("BatchNorm", {}, {});
  EXPECT_EQ(r.aux, (Slots{U, U}));
}

// Inconsistent shapes: the message names the op, the slot and both shapes.
TEST(ShapeInference, InconsistentShapesNameOpInputAndShapes) {
  // MXNet: "Shape inconsistent, Provided = [10,5], inferred shape=(10,20)".
  ExpectContains(ErrorOf([] {
                   Infer("FullyConnected", {{"num_hidden", "10"}}, {Shape{5, 20}, Shape{10, 5}});
                 }),
                 {"FullyConnected", "'weight'", "(10, 5)", "(10, 20)"});
  ExpectContains(ErrorOf([] {
                   Infer("FullyConnected", {{"num_hidden", "10"}}, {Shape{5, 20}, U, Shape{3}});
                 }),
                 {"FullyConnected", "'bias'", "(3,)", "(10,)"});
  ExpectContains(
      ErrorOf([] {
        Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}}, {Shape{2, 3, 9, 9}, Shape{8, 4, 3, 3}});
      }),
      {"Convolution", "'weight'", "(8, 4, 3, 3)", "(8, 3, 3, 3)"});
  ExpectContains(ErrorOf([] {
                   Infer("BatchNorm", {}, {Shape{2, 3, 4}, Shape{4}});
                 }),
                 {"BatchNorm", "'gamma'", "(4,)", "(3,)"});
  ExpectContains(ErrorOf([] {
                   Infer("elemwise_add", {}, {Shape{2, 3}, Shape{3, 2}});
                 }),
                 {"elemwise_add", "'rhs'", "(3, 2)", "(2, 3)"});
  ExpectContains(ErrorOf([] {
                   Infer("Concat", {{"num_args", "2"}}, {Shape{2, 3, 4}, Shape{2, 5, 5}});
                 }),
                 {"Concat", "'arg1'", "(2, 5, 5)", "(2, -1, 4)"});
  ExpectContains(ErrorOf([] {
                   Infer("broadcast_add", {}, {Shape{2, 3}, Shape{4, 3}});
                 }),
                 {"broadcast_add", "'lhs'", "(2, 3)", "'rhs'", "(4, 3)"});
  ExpectContains(ErrorOf([] {
                   Infer("dot", {}, {Shape{2, 3}, Shape{4, 5}});
                 }),
                 {"dot", "'lhs'", "(2, 3)", "'rhs'", "(4, 5)"});
  ExpectContains(ErrorOf([] {
                   Infer("batch_dot", {}, {Shape{7, 2, 3}, Shape{6, 3, 4}});
                 }),
                 {"batch_dot", "(7, 2, 3)", "(6, 3, 4)"});
  // MXNet: "Shape inconsistent, Provided=[7,3], inferred shape=[8,3]".
  ExpectContains(ErrorOf([] {
                   Infer("LinearRegressionOutput", {}, {Shape{8, 3}, Shape{7, 3}});
                 }),
                 {"LinearRegressionOutput", "'label'", "(7, 3)", "(8, 3)"});
  ExpectContains(ErrorOf([] {
                   Infer("SoftmaxOutput", {}, {Shape{8, 10}, Shape{7}});
                 }),
                 {"SoftmaxOutput", "'label'", "(7,)", "(8,)"});
  ExpectContains(ErrorOf([] {
                   Infer("Reshape", {{"shape", "(4, 2)"}}, {Shape{2, 3}});
                 }),
                 {"Reshape", "'data'", "(2, 3)", "(4, 2)"});
  // MXNet 1.9.1's infer_shape answers (2, 12) here (and fails only when run); weft rejects it.
  ExpectContains(ErrorOf([] {
                   Infer("Reshape", {{"shape", "(0, -3)"}}, {Shape{2, 3, 4, 5}});
                 }),
                 {"Reshape", "'data'", "(2, 3, 4, 5)", "(2, 12)"});
  ExpectContains(ErrorOf([] { Infer("Pooling", {}, {Shape{1, 2, 3, 3}}); }), {"Pooling", "kernel", "required"});
  ExpectContains(ErrorOf([] {
                   Infer("SliceChannel", {{"num_outputs", "4"}}, {Shape{2, 6}});
                 }),
                 {"SliceChannel", "'data'", "(2, 6)", "4"});
  ExpectContains(ErrorOf([] {
                   Infer("Activation", {{"act_type", "relu"}}, {Shape{2, 3}}, {Shape{2, 4}});
                 }),
                 {"Activation", "'output'", "(2, 4)", "(2, 3)"});
  ExpectContains(ErrorOf([] {
                   Infer("sgd_mom_update", {{"lr", "1"}}, {Shape{2, 3}}, {}, {Shape{3, 2}});
                 }),
                 {"sgd_mom_update", "'mom'", "(3, 2)", "(2, 3)"});
}

TEST(ShapeInference, InvalidGeometryIsAnError) {
  // MXNet: "kernel size (3) exceeds input (2 padded to 2)".
  ExpectContains(ErrorOf([] {
                   Infer("Pooling", {{"kernel", "(3, 3)"}}, {Shape{1, 2, 2, 11}});
                 }),
                 {"Pooling", "kernel", "(1, 2, 2, 11)"});
  ExpectContains(ErrorOf([] {
                   Infer("Pooling", {{"kernel", "(3, 3)"}}, {Shape{1, 2, 10}});
                 }),
                 {"Pooling", "'data'", "4-d", "(1, 2, 10)"});
  ExpectContains(ErrorOf([] {
                   Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}}, {Shape{2, 3, 9}});
                 }),
                 {"Convolution", "'data'", "4-d", "(2, 3, 9)"});
  ExpectContains(
      ErrorOf([] {
        Infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"num_group", "2"}}, {Shape{2, 3, 9, 9}});
      }),
      {"Convolution", "num_group"});
  ExpectContains(ErrorOf([] { Infer("Reshape", {{"shape", "(-1, -1)"}}, {Shape{2, 3}}); }), {"Reshape", "-1"});
  ExpectContains(ErrorOf([] {
                   Infer("transpose", {{"axes", "(0, 0)"}}, {Shape{2, 3}});
                 }),
                 {"transpose", "permutation"});
  ExpectContains(ErrorOf([] { Infer("sum", {{"axis", "3"}}, {Shape{2, 3}}); }), {"sum", "axis=3", "2-d"});
  ExpectContains(ErrorOf([] { Infer("expand_dims", {{"axis", "4"}}, {Shape{2, 3}}); }), {"expand_dims", "axis=4"});
  ExpectContains(ErrorOf([] {
                   Infer("Concat", {{"num_args", "2"}, {"dim", "2"}}, {Shape{2, 3}});
                 }),
                 {"Concat", "dim=2"});
  // MXNet: broadcast_like(lhs_axes=(), rhs_axes=()) is "Empty axes tuple is not allowed"; None
  // (the default) broadcasts every axis.
  ExpectContains(ErrorOf([] {
                   Infer("broadcast_like", {{"lhs_axes", "()"}, {"rhs_axes", "()"}}, {Shape{1}, Shape{5}});
                 }),
                 {"broadcast_like", "lhs_axes is an empty tuple"});
  EXPECT_EQ(Infer("broadcast_like", {}, {Shape{1}, Shape{5}}).out[0], ShapeSlot(Shape{5}));
  EXPECT_EQ(Infer("broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(-1,)"}}, {Shape{1}, Shape{5}}).out[0],
            ShapeSlot(Shape{5}));
}

TEST(ShapeInference, WrongSlotCountsAreErrors) {
  const OpDef& def = OpRegistry::Get().Lookup("FullyConnected");
  AttrMap a = def.Normalize(AttrMap(test::Attrs{{"num_hidden", "2"}, {"no_bias", "True"}}));
  std::vector<ShapeSlot> in(3), out(1), aux;
  ExpectContains(ErrorOf([&] { InferShapes(def, a, in, out, aux); }), {"FullyConnected", "3 inputs", "2"});
}

}  // namespace
}  // namespace weft

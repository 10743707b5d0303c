// cuDNN descriptor building of the CUDA plugin's Convolution (plugins/cuda/cudnn_conv.h), on the
// host: cuDNN creates and fills descriptors without a GPU, so every geometry MXNet's attributes
// describe is checked against what cuDNN reads back — shapes, packed NCHW strides, padding, stride,
// dilation, groups, the cross-correlation mode — and cuDNN's own output shape against MXNet's.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "cudnn_conv.h"

namespace {

using weft::cuda::ConvGeometry;
using weft::cuda::CudnnConvDescriptors;

struct Case {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<int64_t> data;
  std::vector<int64_t> out;  // MXNet's output shape
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

ConvGeometry Parse(const Case& c) {
  weft::sdk::KernelSetup s;
  s.op_name = "Convolution";
  s.attrs = weft::sdk::AttrMap(c.attrs);
  const int64_t f = std::stoll(c.attrs.at("num_filter"));
  const int64_t groups = c.attrs.count("num_group") ? std::stoll(c.attrs.at("num_group")) : 1;
  std::vector<int64_t> kernel = s.attrs.GetTuple("kernel");
  std::vector<int64_t> w = {f, c.data[1] / groups};
  w.insert(w.end(), kernel.begin(), kernel.end());
  s.inputs = {{WEFT_DTYPE_FLOAT32, c.data}, {WEFT_DTYPE_FLOAT32, w}, {WEFT_DTYPE_FLOAT32, {f}}};
  s.outputs = {{WEFT_DTYPE_FLOAT32, c.out}};
  return weft::cuda::ParseConvolution(s, s.inputs[0], s.inputs[1], &s.inputs[2], s.outputs[0]);
}

class CudnnDescriptors : public ::testing::TestWithParam<Case> {};

TEST_P(CudnnDescriptors, MatchMxnetGeometry) {
  const ConvGeometry g = Parse(GetParam());
  const CudnnConvDescriptors d(g);

  cudnnDataType_t type{};
  int n, c, h, w, ns, cs, hs, ws;
  ASSERT_EQ(cudnnGetTensor4dDescriptor(d.x(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(type, CUDNN_DATA_FLOAT);
  EXPECT_EQ((std::array<int64_t, 4>{n, c, h, w}), (std::array<int64_t, 4>{g.n, g.c, g.h, g.w}));
  EXPECT_EQ((std::array<int, 4>{ns, cs, hs, ws}), (std::array<int, 4>{c * h * w, h * w, w, 1})) << "packed NCHW";

  ASSERT_EQ(cudnnGetTensor4dDescriptor(d.y(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ((std::array<int64_t, 4>{n, c, h, w}), (std::array<int64_t, 4>{g.n, g.f, g.oh, g.ow}));
  EXPECT_EQ((std::array<int, 4>{ns, cs, hs, ws}), (std::array<int, 4>{c * h * w, h * w, w, 1}));

  ASSERT_EQ(cudnnGetTensor4dDescriptor(d.bias(), &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ((std::array<int64_t, 4>{n, c, h, w}), (std::array<int64_t, 4>{1, g.f, 1, 1}));

  cudnnTensorFormat_t format{};
  int k, fc, kh, kw;
  ASSERT_EQ(cudnnGetFilter4dDescriptor(d.w(), &type, &format, &k, &fc, &kh, &kw), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(format, CUDNN_TENSOR_NCHW);
  EXPECT_EQ((std::array<int64_t, 4>{k, fc, kh, kw}), (std::array<int64_t, 4>{g.f, g.c / g.groups, g.kh, g.kw}));

  int ph, pw, sh, sw, dh, dw, groups;
  cudnnConvolutionMode_t mode{};
  ASSERT_EQ(cudnnGetConvolution2dDescriptor(d.conv(), &ph, &pw, &sh, &sw, &dh, &dw, &mode, &type),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ((std::array<int64_t, 6>{ph, pw, sh, sw, dh, dw}),
            (std::array<int64_t, 6>{g.ph, g.pw, g.sh, g.sw, g.dh, g.dw}));
  EXPECT_EQ(mode, CUDNN_CROSS_CORRELATION) << "MXNet does not flip the kernel";
  ASSERT_EQ(cudnnGetConvolutionGroupCount(d.conv(), &groups), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(groups, g.groups);

  // cuDNN's shape arithmetic agrees with MXNet's (the expected output of the case).
  std::vector<int64_t> expect = GetParam().out;
  if (expect.size() == 3) expect.insert(expect.begin() + 2, 1);  // 1-D: h = 1
  const std::array<int, 4> out = d.OutputDims();
  EXPECT_EQ((std::vector<int64_t>{out[0], out[1], out[2], out[3]}), expect);
}

// Output extents follow MXNet: (in + 2·pad − dilate·(k − 1) − 1) / stride + 1.
INSTANTIATE_TEST_SUITE_P(
    Geometries, CudnnDescriptors,
    ::testing::Values(
        Case{"lenet_conv1", {{"kernel", "(5, 5)"}, {"num_filter", "20"}}, {2, 1, 28, 28}, {2, 20, 24, 24}},
        Case{"stride_pad",
             {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}},
             {3, 4, 9, 7},
             {3, 8, 5, 4}},
        Case{"dilate_asymmetric",
             {{"kernel", "(3, 2)"}, {"dilate", "(2, 3)"}, {"pad", "(2, 0)"}, {"num_filter", "5"}},
             {1, 3, 10, 11},
             {1, 5, 10, 8}},
        Case{"groups",
             {{"kernel", "(3, 3)"}, {"num_group", "2"}, {"num_filter", "6"}, {"pad", "(1, 1)"}},
             {2, 4, 6, 6},
             {2, 6, 6, 6}},
        Case{"depthwise",
             {{"kernel", "(3, 3)"}, {"num_group", "4"}, {"num_filter", "4"}, {"stride", "(2, 1)"}},
             {1, 4, 8, 8},
             {1, 4, 3, 6}},
        Case{"conv1d", {{"kernel", "(3,)"}, {"num_filter", "4"}, {"stride", "(2,)"}}, {2, 3, 11}, {2, 4, 5}}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(CudnnDescriptorsLimits, SizesBeyondCudnnAreRejectedAsUnsupported) {
  ConvGeometry g;
  g.n = 1ll << 31;  // cuDNN's descriptors take int
  g.c = g.f = 1;
  try {
    CudnnConvDescriptors d(g);
    FAIL() << "a batch of 2^31 was accepted";
  } catch (const weft::sdk::Error& e) {
    EXPECT_EQ(e.code(), WEFT_ERR_UNSUPPORTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch"), std::string::npos) << e.what();
  }
}

}  // namespace

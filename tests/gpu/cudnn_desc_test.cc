// cuDNN descriptor building of the CUDA plugin (plugins/cuda/cudnn_conv.h, cudnn_desc.h), on the
// host: cuDNN creates and fills descriptors without a GPU, so every geometry MXNet's attributes
// describe is checked against what cuDNN reads back — shapes, packed NCHW strides, padding, stride,
// dilation, groups, the cross-correlation mode, pooling windows and modes, activation modes, the
// BatchNorm parameter tensor — and cuDNN's own output shapes against MXNet's. The attribute
// combinations cuDNN cannot express must come back as "use the layer's kernel". Also the
// convolution algorithm cache (per device, direction and geometry).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cudnn_conv.h"
#include "cudnn_desc.h"

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

// ---- Pooling ------------------------------------------------------------------------------------

using weft::cuda::Dims4;
using weft::cuda::DnnTensor;

weft::sdk::KernelSetup MakeSetup(const std::string& op, const std::map<std::string, std::string>& attrs,
                                 const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  weft::sdk::KernelSetup s;
  s.op_name = op;
  s.attrs = weft::sdk::AttrMap(attrs);
  s.inputs = {{WEFT_DTYPE_FLOAT32, in}};
  s.outputs = {{WEFT_DTYPE_FLOAT32, out}};
  return s;
}

Dims4 ReadTensor(const DnnTensor& t) {
  cudnnDataType_t type{};
  Dims4 d;
  int ns, cs, hs, ws;
  EXPECT_EQ(cudnnGetTensor4dDescriptor(t.get(), &type, &d.n, &d.c, &d.h, &d.w, &ns, &cs, &hs, &ws),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(type, CUDNN_DATA_FLOAT);
  EXPECT_EQ((std::array<int, 4>{ns, cs, hs, ws}), (std::array<int, 4>{d.c * d.h * d.w, d.h * d.w, d.w, 1}))
      << "packed NCHW";
  return d;
}

struct PoolCase {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<int64_t> data, out;  // MXNet's shapes
  bool cudnn;                      // false: cuDNN cannot express it, the layer's kernel runs
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  std::array<int, 6> window{};  // kh, kw, ph, pw, sh, sw as cuDNN must read them back
};
void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

class CudnnPoolingDescriptors : public ::testing::TestWithParam<PoolCase> {};

TEST_P(CudnnPoolingDescriptors, MatchMxnetWindowsOrFallBack) {
  const PoolCase& pc = GetParam();
  const weft::sdk::KernelSetup s = MakeSetup("Pooling", pc.attrs, pc.data, pc.out);
  const weft::cuda::PoolGeometry g = weft::cuda::ParsePooling(s, s.inputs[0], s.outputs[0]);
  std::string why;
  const std::optional<weft::cuda::PoolParams> p = weft::cuda::PoolParamsFor(g, &why);
  ASSERT_EQ(p.has_value(), pc.cudnn) << why;
  if (!p) {
    EXPECT_FALSE(why.empty()) << "a fallback names its reason";
    return;
  }
  const weft::cuda::DnnPooling pool(*p);
  cudnnPoolingMode_t mode{};
  cudnnNanPropagation_t nan{};
  std::array<int, 6> w{};
  ASSERT_EQ(cudnnGetPooling2dDescriptor(pool.get(), &mode, &nan, &w[0], &w[1], &w[2], &w[3], &w[4], &w[5]),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(mode, pc.mode);
  EXPECT_EQ(nan, CUDNN_NOT_PROPAGATE_NAN) << "the layer's max ignores NaN";
  EXPECT_EQ(w, pc.window);
  const DnnTensor x(p->x), y(p->y);
  std::vector<int64_t> data = pc.data, out = pc.out;
  if (data.size() == 3) data.insert(data.begin() + 2, 1), out.insert(out.begin() + 2, 1);  // 1-D: h = 1
  const Dims4 xd = ReadTensor(x), yd = ReadTensor(y);
  EXPECT_EQ((std::vector<int64_t>{xd.n, xd.c, xd.h, xd.w}), data);
  EXPECT_EQ((std::vector<int64_t>{yd.n, yd.c, yd.h, yd.w}), out);
  const Dims4 o = pool.OutputDims(x);  // cuDNN's own shape arithmetic
  EXPECT_EQ((std::vector<int64_t>{o.n, o.c, o.h, o.w}), out);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, CudnnPoolingDescriptors,
    ::testing::Values(
        PoolCase{"lenet_max",
                 {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}},
                 {2, 20, 24, 24},
                 {2, 20, 12, 12},
                 true,
                 CUDNN_POOLING_MAX_DETERMINISTIC,
                 {2, 2, 0, 0, 2, 2}},
        PoolCase{"avg_include_pad",
                 {{"kernel", "(3, 3)"}, {"pool_type", "avg"}, {"pad", "(1, 1)"}},
                 {1, 2, 4, 5},
                 {1, 2, 4, 5},
                 true,
                 CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                 {3, 3, 1, 1, 1, 1}},
        PoolCase{"avg_exclude_pad",
                 {{"kernel", "(3, 2)"},
                  {"pool_type", "avg"},
                  {"pad", "(1, 0)"},
                  {"stride", "(2, 1)"},
                  {"count_include_pad", "False"}},
                 {2, 3, 7, 5},
                 {2, 3, 4, 4},
                 true,
                 CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                 {3, 2, 1, 0, 2, 1}},
        PoolCase{"global_max",
                 {{"global_pool", "True"}},
                 {1, 2, 5, 7},
                 {1, 2, 1, 1},
                 true,
                 CUDNN_POOLING_MAX_DETERMINISTIC,
                 {5, 7, 0, 0, 1, 1}},
        PoolCase{"pool1d",
                 {{"kernel", "(3,)"}, {"stride", "(2,)"}},
                 {2, 3, 11},
                 {2, 3, 5},
                 true,
                 CUDNN_POOLING_MAX_DETERMINISTIC,
                 {1, 3, 0, 0, 1, 2}},
        PoolCase{"full_same_as_valid",
                 {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}},
                 {1, 1, 4, 4},
                 {1, 1, 2, 2},
                 true,
                 CUDNN_POOLING_MAX_DETERMINISTIC,
                 {2, 2, 0, 0, 2, 2}},
        PoolCase{"full_extra_window",
                 {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}},
                 {1, 1, 5, 5},
                 {1, 1, 3, 3},
                 false,
                 {},
                 {}},
        PoolCase{"sum", {{"kernel", "(2, 2)"}, {"pool_type", "sum"}}, {1, 1, 4, 4}, {1, 1, 3, 3}, false, {}, {}},
        PoolCase{"pad_not_below_kernel",
                 {{"kernel", "(2, 2)"}, {"pad", "(2, 2)"}},
                 {1, 1, 3, 3},
                 {1, 1, 6, 6},
                 false,
                 {},
                 {}}),
    [](const ::testing::TestParamInfo<PoolCase>& i) { return i.param.name; });

// ---- Activation, softmax ------------------------------------------------------------------------

TEST(CudnnActivationDescriptors, ReluSigmoidTanhThroughCudnnOthersOnTheLayer) {
  using weft::cuda::Act;
  const std::map<Act, cudnnActivationMode_t> expect = {{Act::kRelu, CUDNN_ACTIVATION_RELU},
                                                       {Act::kSigmoid, CUDNN_ACTIVATION_SIGMOID},
                                                       {Act::kTanh, CUDNN_ACTIVATION_TANH}};
  for (const char* t : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    const weft::sdk::KernelSetup s = MakeSetup("Activation", {{"act_type", t}}, {2, 3}, {2, 3});
    const Act act = weft::cuda::ParseAct(s);
    const std::optional<cudnnActivationMode_t> mode = weft::cuda::ActModeFor(act);
    ASSERT_EQ(mode.has_value(), expect.count(act) == 1) << t;
    if (!mode) continue;
    EXPECT_EQ(*mode, expect.at(act)) << t;
    const weft::cuda::DnnActivation d(*mode);
    cudnnActivationMode_t got{};
    cudnnNanPropagation_t nan{};
    double coef = -1;
    ASSERT_EQ(cudnnGetActivationDescriptor(d.get(), &got, &nan, &coef), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(got, *mode) << t;
  }
  for (Act a : {Act::kLeaky, Act::kElu, Act::kSelu, Act::kGelu}) EXPECT_FALSE(weft::cuda::ActModeFor(a).has_value());
}

TEST(CudnnActivationDescriptors, ElementwiseTensorIsFirstAxisByTheRest) {
  const std::optional<Dims4> d = weft::cuda::FlatDims({4, 3, 5, 2});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, (Dims4{4, 30, 1, 1}));
  EXPECT_EQ(ReadTensor(DnnTensor(*d)), (Dims4{4, 30, 1, 1}));
  EXPECT_EQ(weft::cuda::FlatDims({7}), (Dims4{7, 1, 1, 1}));
  EXPECT_FALSE(weft::cuda::FlatDims({}).has_value()) << "0-d";
  EXPECT_FALSE(weft::cuda::FlatDims({3, 0}).has_value()) << "empty";
  EXPECT_FALSE(weft::cuda::FlatDims({1ll << 31, 1}).has_value()) << "beyond int";
}

TEST(CudnnSoftmaxDescriptors, AxisBecomesTheChannelAxis) {
  struct C {
    std::vector<int64_t> shape;
    std::string axis;
    Dims4 dims;
  };
  for (const C& c : {C{{2, 3, 4, 5}, "1", {2, 3, 20, 1}}, C{{6, 7}, "-1", {6, 7, 1, 1}}, C{{5}, "0", {1, 5, 1, 1}},
                     C{{2, 3, 4}, "0", {1, 2, 12, 1}}}) {
    const weft::sdk::KernelSetup s = MakeSetup("softmax", {{"axis", c.axis}}, c.shape, c.shape);
    const weft::cuda::AxisView v = weft::cuda::ViewAround(s, s.inputs[0], s.attrs.GetInt("axis", -1));
    const std::optional<Dims4> d = weft::cuda::SoftmaxDimsFor(v, weft::cuda::InverseTemperature(s));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, c.dims) << "axis " << c.axis;
    EXPECT_EQ(ReadTensor(DnnTensor(*d)), c.dims);
  }
  const weft::sdk::KernelSetup t = MakeSetup("softmax", {{"temperature", "2.0"}}, {2, 3}, {2, 3});
  EXPECT_FALSE(weft::cuda::SoftmaxDimsFor(weft::cuda::ViewAround(t, t.inputs[0], -1), weft::cuda::InverseTemperature(t))
                   .has_value())
      << "cuDNN cannot scale the input by 1/temperature";
}

// ---- BatchNorm ----------------------------------------------------------------------------------

TEST(CudnnBatchNormDescriptors, ChannelAxisViewAndDerivedParameterTensor) {
  struct C {
    std::vector<int64_t> shape;
    std::map<std::string, std::string> attrs;
    std::optional<Dims4> dims;
  };
  const std::vector<C> cases = {
      {{4, 3, 5}, {}, Dims4{4, 3, 5, 1}},
      {{2, 8, 6, 6}, {{"eps", "1e-5"}}, Dims4{2, 8, 36, 1}},
      {{6, 2}, {{"axis", "-1"}}, Dims4{6, 2, 1, 1}},
      {{3, 4, 5}, {{"axis", "2"}}, Dims4{12, 5, 1, 1}},
      {{1, 3}, {}, std::nullopt},  // one value per channel
      // cuDNN's lower bound on eps (1e-5 before cuDNN 9, 0 since): below it, the layer's kernel.
      {{4, 3, 5},
       {{"eps", "1e-6"}},
       1e-6f >= CUDNN_BN_MIN_EPSILON ? std::optional<Dims4>(Dims4{4, 3, 5, 1}) : std::nullopt},
      {{4, 3, 5}, {{"eps", "-1"}}, std::nullopt},
  };
  for (const C& c : cases) {
    const weft::sdk::KernelSetup s = MakeSetup("BatchNorm", c.attrs, c.shape, c.shape);
    const std::optional<Dims4> d = weft::cuda::BnDimsFor(weft::cuda::ParseBatchNorm(s, s.inputs[0]));
    ASSERT_EQ(d.has_value(), c.dims.has_value()) << weft::sdk::FormatTuple(c.shape);
    if (!d) continue;
    EXPECT_EQ(*d, *c.dims);
    const DnnTensor x(*d);
    const weft::cuda::DnnBnParams bn(x);
    Dims4 p;
    cudnnDataType_t type{};
    int ns, cs, hs, ws;
    ASSERT_EQ(cudnnGetTensor4dDescriptor(bn.get(), &type, &p.n, &p.c, &p.h, &p.w, &ns, &cs, &hs, &ws),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(p, (Dims4{1, d->c, 1, 1})) << "one value per channel";
  }
}

// ---- convolution algorithm cache ------------------------------------------------------------------

TEST(ConvAlgoCache, ChoosesOncePerDeviceDirectionAndGeometry) {
  weft::cuda::ConvAlgoCache cache;
  ConvGeometry a = Parse(Case{"a", {{"kernel", "(3, 3)"}, {"num_filter", "4"}}, {2, 3, 8, 8}, {2, 4, 6, 6}});
  ConvGeometry b = a;
  b.n = 4, b.c = 3;  // another batch size: another shape
  int calls = 0;
  auto choose = [&](int algo) {
    return [&calls, algo] {
      ++calls;
      return weft::cuda::ConvAlgoChoice{algo, 0, 1024u * static_cast<unsigned>(algo)};
    };
  };
  using Cache = weft::cuda::ConvAlgoCache;
  EXPECT_EQ(cache.Get(Cache::KeyOf(0, false, a), choose(1)).first, 1);
  EXPECT_EQ(cache.Get(Cache::KeyOf(0, false, a), choose(9)).first, 1) << "a seen shape is not chosen again";
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.Get(Cache::KeyOf(0, true, a), choose(2)).first, 2) << "backward is its own entry";
  EXPECT_EQ(cache.Get(Cache::KeyOf(1, false, a), choose(3)).first, 3) << "another device";
  EXPECT_EQ(cache.Get(Cache::KeyOf(0, false, b), choose(4)).workspace, 4096u) << "another shape";
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(cache.size(), 4u);
  EXPECT_THROW(cache.Get(Cache::KeyOf(2, false, a),
                         []() -> weft::cuda::ConvAlgoChoice { throw weft::sdk::Error(WEFT_ERR_UNSUPPORTED, "no"); }),
               weft::sdk::Error);
  EXPECT_EQ(cache.size(), 4u) << "a failed choice is not cached";
}

TEST(ConvAlgoCache, ConcurrentNodesAgreeOnOneChoice) {
  weft::cuda::ConvAlgoCache cache;
  const ConvGeometry g = Parse(Case{"g", {{"kernel", "(1, 1)"}, {"num_filter", "2"}}, {1, 2, 3, 3}, {1, 2, 3, 3}});
  std::atomic<int> next{1};
  std::vector<int> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      got[i] = cache
                   .Get(weft::cuda::ConvAlgoCache::KeyOf(0, false, g),
                        [&] {
                          return weft::cuda::ConvAlgoChoice{next.fetch_add(1), 0, 0};
                        })
                   .first;
    });
  for (std::thread& t : threads) t.join();
  for (int v : got) EXPECT_EQ(v, got[0]) << "every node runs the algorithm the cache kept";
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace

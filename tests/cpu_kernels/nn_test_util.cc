#include "nn_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wtest {

void CheckReqModes(const std::string& op, const Attrs& attrs, const std::vector<Buf>& inputs,
                   const std::vector<std::vector<int64_t>>& out_shapes, const std::vector<Buf>& aux, bool is_train,
                   uint64_t seed, int inplace_input) {
  SCOPED_TRACE("req modes of " + op);
  std::vector<Buf> outs;
  for (const auto& s : out_shapes) outs.push_back(Buf::F(s));
  Kernel k(op, attrs, inputs, outs, aux);
  ASSERT_TRUE(k.ok()) << k.error();
  auto run = [&](std::vector<Buf>& o, const std::vector<int32_t>& req, std::vector<std::pair<int, int>> alias,
                 std::vector<Buf>& in) {
    std::vector<Buf> ax = aux;
    Call c;
    for (Buf& b : in) c.inputs.push_back(&b);
    for (Buf& b : o) c.outputs.push_back(&b);
    for (Buf& b : ax) c.aux.push_back(&b);
    c.req = req;
    c.alias = std::move(alias);
    c.is_train = is_train;
    c.seed = seed;
    EXPECT_EQ(k.Run(c, op), "");
  };
  std::vector<Buf> in = inputs;
  std::vector<Buf> written = outs;
  run(written, std::vector<int32_t>(outs.size(), WEFT_REQ_WRITE), {}, in);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (size_t o = 0; o < outs.size(); ++o) {
    std::vector<Buf> prev = outs;
    for (Buf& b : prev) b = Buf::F(b.shape, Random(rng, b.size()));
    std::vector<int32_t> req(outs.size(), WEFT_REQ_WRITE);
    // add
    req[o] = WEFT_REQ_ADD;
    std::vector<Buf> got = prev;
    run(got, req, {}, in);
    std::vector<float> want = prev[o].floats();
    for (size_t i = 0; i < want.size(); ++i) want[i] += written[o].as<float>()[i];
    EXPECT_LE(Nmse(want, got[o].floats()), 1e-10) << "add-to output " << o;
    // null
    req[o] = WEFT_REQ_NULL;
    got = prev;
    run(got, req, {}, in);
    EXPECT_EQ(got[o].bytes, prev[o].bytes) << "req null modified output " << o;
  }
  if (inplace_input >= 0) {
    std::vector<Buf> in2 = inputs;
    std::vector<Buf> got = outs;
    std::vector<int32_t> req(outs.size(), WEFT_REQ_WRITE);
    req[0] = WEFT_REQ_WRITE_INPLACE;
    run(got, req, {{0, inplace_input}}, in2);
    EXPECT_LE(Nmse(written[0].floats(), got[0].floats()), 1e-12) << "in-place output 0";
  }
}

std::vector<Buf> CheckGradient(const GradCase& c) {
  SCOPED_TRACE("gradient of " + c.fwd + " (seed " + std::to_string(c.seed) + ")");
  // Not the test's own stream: an out-grad drawn like the inputs would be an affine function of
  // them, which some gradients (BatchNorm's) are blind to.
  std::mt19937 rng(static_cast<unsigned>(c.seed * 2654435761u + 12345u));
  std::vector<Buf> aux0 = c.aux;
  std::vector<Buf> fwd_aux = aux0;
  std::vector<Buf> outs = RunOp(c.fwd, c.attrs, c.inputs, c.out_shapes, &fwd_aux, true, c.seed);
  std::vector<float> w = Random(rng, Prod(c.out_shapes[0]));
  // Backward inputs per the SDK convention.
  std::vector<Buf> bin;
  bin.push_back(Buf::F(c.out_shapes[0], w));
  for (size_t i = 1; i < outs.size(); ++i) bin.push_back(Buf::F(c.out_shapes[i]));
  if (c.uses_inputs)
    for (const Buf& b : c.inputs) bin.push_back(b);
  if (c.uses_outputs)
    for (const Buf& b : outs) bin.push_back(b);
  if (c.uses_aux)
    for (const Buf& b : fwd_aux) bin.push_back(b);  // the states after the forward, as the executor has them
  std::vector<std::vector<int64_t>> gshapes;
  for (const Buf& b : c.inputs) gshapes.push_back(b.shape);
  std::vector<Buf> grads = RunOp(c.bwd, c.attrs, bin, gshapes);
  std::vector<int> check = c.check;
  if (check.empty())
    for (size_t i = 0; i < c.inputs.size(); ++i) check.push_back(static_cast<int>(i));
  for (int i : check) {
    auto f = [&](const std::vector<float>& x) {
      std::vector<Buf> in = c.inputs;
      in[static_cast<size_t>(i)] = Buf::F(in[static_cast<size_t>(i)].shape, x);
      std::vector<Buf> ax = aux0;
      return RunOp(c.fwd, c.attrs, in, c.out_shapes, &ax, true, c.seed)[0].floats();
    };
    std::vector<float> num = NumericGrad(f, c.inputs[static_cast<size_t>(i)].floats(), w, c.h);
    std::vector<float> got = grads[static_cast<size_t>(i)].floats();
    EXPECT_TRUE(AllFinite(got)) << "gradient of input " << i;
    EXPECT_LE(Nmse(num, got), c.tol) << "gradient of input " << i << " vs finite differences\nnumeric "
                                     << ::testing::PrintToString(num) << "\nkernel  " << ::testing::PrintToString(got);
  }
  CheckReqModes(c.bwd, c.attrs, bin, gshapes);
  return grads;
}

void AvoidKinks(std::vector<float>& v, const std::vector<float>& kinks, float gap) {
  for (float& x : v)
    for (float t : kinks)
      if (std::fabs(x - t) < gap) x = x < t ? t - gap - std::fabs(x - t) : t + gap + std::fabs(x - t);
}

std::vector<float> ToBlocked(const std::vector<float>& x, int64_t n, int64_t c, int64_t hw, int64_t block) {
  std::vector<float> b(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        b[static_cast<size_t>(((i * (c / block) + ch / block) * hw + p) * block + ch % block)] =
            x[static_cast<size_t>((i * c + ch) * hw + p)];
  return b;
}

}  // namespace wtest

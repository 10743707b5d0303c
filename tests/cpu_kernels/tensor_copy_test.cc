// Data movement kernels: copies (_copy, Flatten, Reshape, expand_dims, _backward_copy),
// zeros_like / ones_like, Cast, Concat / SliceChannel and transpose, with their backward ops.
// References are plain loops over flat indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "tensor_test_util.h"

namespace ttest {
namespace {

const int32_t kAllDTypes[] = {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_FLOAT64, WEFT_DTYPE_FLOAT16, WEFT_DTYPE_UINT8,
                              WEFT_DTYPE_INT8,    WEFT_DTYPE_INT32,   WEFT_DTYPE_INT64};

// Small integers are exact in every dtype.
std::vector<double> SmallInts(std::mt19937& rng, int64_t n) {
  std::uniform_int_distribution<int> u(0, 100);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

TEST(TensorCopy, CopyFamilyEveryDType) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int32_t dt : kAllDTypes) {
    for (int trial = 0; trial < 3; ++trial) {
      Shape s = RandomShape(rng, 1, 4);
      Buf x = Make(dt, s, SmallInts(rng, Prod(s)));
      Shape flat = {Prod(s)};
      Shape expanded = s;
      expanded.insert(expanded.begin(), 1);
      ExpectOp("_copy", {}, {x}, {Make(dt, s, Values(x))});
      ExpectOp("_backward_copy", {}, {x}, {Make(dt, s, Values(x))});
      ExpectOp("BlockGrad", {}, {x}, {Make(dt, s, Values(x))});
      ExpectOp("Flatten", {}, {x}, {Make(dt, flat, Values(x))});
      ExpectOp("Reshape", {{"shape", "(-1,)"}}, {x}, {Make(dt, flat, Values(x))});
      ExpectOp("expand_dims", {{"axis", "0"}}, {x}, {Make(dt, expanded, Values(x))});
    }
  }
}

TEST(TensorCopy, InPlaceCopyLeavesDataAndRejectsBadCounts) {
  Buf x = Make(WEFT_DTYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {6})};
  ASSERT_EQ(RunKernel("Reshape", {}, {x}, out, {WEFT_REQ_WRITE_INPLACE}, {{0, 0}}), "");
  EXPECT_EQ(Values(out[0]), Values(x));
  // Element counts differ: a setup error naming the op.
  std::vector<Buf> bad = {Buf::Of(WEFT_DTYPE_FLOAT32, {5})};
  std::string err = RunKernel("Flatten", {}, {x}, bad);
  EXPECT_NE(err.find("Flatten"), std::string::npos) << err;
  EXPECT_NE(err.find("elements"), std::string::npos) << err;
}

TEST(TensorCopy, ZerosAndOnesLike) {
  for (int32_t dt : kAllDTypes) {
    Buf x = Make(dt, {3, 1, 5}, std::vector<double>(15, 7));
    ExpectOp("zeros_like", {}, {x}, {Make(dt, {3, 1, 5}, std::vector<double>(15, 0))});
    ExpectOp("ones_like", {}, {x}, {Make(dt, {3, 1, 5}, std::vector<double>(15, 1))});
  }
}

// Reference conversion for Cast: C++ conversions through double for the exact cases the test
// feeds (values representable in every target or checked separately below).
TEST(TensorCast, EveryPairOnExactValues) {
  std::mt19937 rng(static_cast<uint32_t>(wtest::TestSeed()));
  for (int32_t from : kAllDTypes) {
    for (int32_t to : kAllDTypes) {
      SCOPED_TRACE(std::to_string(from) + " -> " + std::to_string(to));
      Shape s = RandomShape(rng, 0, 3);
      std::vector<double> v = SmallInts(rng, Prod(s));  // 0..100: exact everywhere
      ExpectOp("Cast", {}, {Make(from, s, v)}, {Make(to, s, v)});
      ExpectOp("_backward_Cast", {}, {Make(to, s, v)}, {Make(from, s, v)});
    }
  }
}

TEST(TensorCast, FloatToIntegerTruncatesAndSaturates) {
  Buf x = Make(WEFT_DTYPE_FLOAT32, {7}, {2.9, -2.9, 300.0, -300.0, 1e20, -1e20, NAN});
  ExpectOp("Cast", {}, {x}, {Make(WEFT_DTYPE_UINT8, {7}, {2, 0, 255, 0, 255, 0, 0})});
  ExpectOp("Cast", {}, {x}, {Make(WEFT_DTYPE_INT8, {7}, {2, -2, 127, -128, 127, -128, 0})});
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_INT32, {7})};
  ASSERT_EQ(RunKernel("Cast", {}, {x}, out), "");
  EXPECT_EQ(out[0].as<int32_t>()[4], INT32_MAX);
  EXPECT_EQ(out[0].as<int32_t>()[5], INT32_MIN);
  std::vector<Buf> out64 = {Buf::Of(WEFT_DTYPE_INT64, {7})};
  ASSERT_EQ(RunKernel("Cast", {}, {x}, out64), "");
  EXPECT_EQ(out64[0].as<int64_t>()[0], 2);
  EXPECT_EQ(out64[0].as<int64_t>()[4], INT64_MAX);
  EXPECT_EQ(out64[0].as<int64_t>()[6], 0);
}

// float16 against the compiler's _Float16: every half value widens exactly, and random floats
// (normal, subnormal, overflowing, ties) narrow with round-to-nearest-even.
TEST(TensorCast, HalfConversionsMatchTheCompiler) {
  Buf all = Buf::Of(WEFT_DTYPE_FLOAT16, {65536});
  for (int i = 0; i < 65536; ++i) {
    const uint16_t bits = static_cast<uint16_t>(i);
    std::memcpy(all.bytes.data() + 2 * i, &bits, 2);
  }
  std::vector<Buf> wide = {Buf::Of(WEFT_DTYPE_FLOAT32, {65536})};
  ASSERT_EQ(RunKernel("Cast", {}, {all}, wide), "");
  int bad = 0;
  for (int i = 0; i < 65536; ++i) {
    const float want = static_cast<float>(all.as<_Float16>()[i]);
    const float got = wide[0].as<float>()[i];
    if (std::isnan(want) ? !std::isnan(got) : std::memcmp(&want, &got, 4) != 0) ++bad;
  }
  EXPECT_EQ(bad, 0) << "half -> float mismatches";

  std::mt19937 rng(static_cast<uint32_t>(wtest::TestSeed()));
  std::vector<double> v;
  std::uniform_real_distribution<double> exp(-27, 17), mant(1, 2);
  for (int i = 0; i < 20000; ++i) v.push_back((i % 2 ? -1 : 1) * mant(rng) * std::exp2(std::floor(exp(rng))));
  // Exact ties between two halves: 1 + k/2048 for odd k (halfway at the 11th bit).
  for (int k = 1; k < 2048; k += 2) v.push_back(1.0 + k / 2048.0);
  for (double t : {65504.0, 65519.0, 65520.0, 1e9, std::exp2(-25), std::exp2(-24) * 1.5, 0.0, -0.0}) v.push_back(t);
  Buf f = Make(WEFT_DTYPE_FLOAT32, {static_cast<int64_t>(v.size())}, v);
  std::vector<Buf> narrow = {Buf::Of(WEFT_DTYPE_FLOAT16, f.shape)};
  ASSERT_EQ(RunKernel("Cast", {}, {f}, narrow), "");
  bad = 0;
  for (int64_t i = 0; i < f.size(); ++i) {
    const _Float16 want = static_cast<_Float16>(f.as<float>()[i]);
    if (std::memcmp(&want, narrow[0].as<_Float16>() + i, 2) != 0) ++bad;
  }
  EXPECT_EQ(bad, 0) << "float -> half mismatches";
}

// ---- Concat / SliceChannel ----------------------------------------------------------------

// Reference: element (outer o, position p along axis, inner i) of the joined tensor.
Buf JoinRef(const std::vector<Buf>& parts, int axis, int32_t dt) {
  Shape whole = parts[0].shape;
  whole[static_cast<size_t>(axis)] = 0;
  for (const Buf& p : parts) whole[static_cast<size_t>(axis)] += p.shape[static_cast<size_t>(axis)];
  Buf out = Buf::Of(dt, whole);
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= whole[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(axis) + 1; a < whole.size(); ++a) inner *= whole[a];
  int64_t start = 0;
  for (const Buf& p : parts) {
    const int64_t len = p.shape[static_cast<size_t>(axis)];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < inner; ++i)
          Set(out, (o * whole[static_cast<size_t>(axis)] + start + k) * inner + i, Get(p, (o * len + k) * inner + i));
    start += len;
  }
  return out;
}

TEST(TensorConcat, ConcatAndSliceChannelRandom) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 24; ++trial) {
    const int32_t dt = kAllDTypes[trial % 7];
    Shape base = RandomShape(rng, 1, 4, 64);
    const int nd = static_cast<int>(base.size());
    const int axis = std::uniform_int_distribution<int>(0, nd - 1)(rng);
    const int n = std::uniform_int_distribution<int>(1, 4)(rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + " base " + Str(base) + " axis " + std::to_string(axis));
    // Concat: parts of different lengths along the axis.
    std::vector<Buf> parts;
    for (int k = 0; k < n; ++k) {
      Shape s = base;
      s[static_cast<size_t>(axis)] = std::uniform_int_distribution<int>(1, 3)(rng);
      parts.push_back(Make(dt, s, SmallInts(rng, Prod(s))));
    }
    const std::string dim = std::to_string(axis - (trial % 2 ? nd : 0));  // negative axes too
    Attrs ca = {{"num_args", std::to_string(n)}, {"dim", dim}};
    Buf joined = JoinRef(parts, axis, dt);
    ExpectOp("Concat", ca, parts, {joined});
    ExpectOp("_backward_Concat", ca, {joined}, parts);
    // SliceChannel: equal parts, optionally squeezed.
    Shape whole = base;
    whole[static_cast<size_t>(axis)] *= n;
    std::vector<Buf> eq;
    for (int k = 0; k < n; ++k) eq.push_back(Make(dt, base, SmallInts(rng, Prod(base))));
    Buf w = JoinRef(eq, axis, dt);
    const bool squeeze = base[static_cast<size_t>(axis)] == 1 && trial % 3 == 0;
    Attrs sa = {{"num_outputs", std::to_string(n)}, {"axis", dim}, {"squeeze_axis", squeeze ? "True" : "False"}};
    if (squeeze)
      for (Buf& b : eq) b.shape.erase(b.shape.begin() + axis);
    ExpectOp("SliceChannel", sa, {w}, eq);
    ExpectOp("_backward_SliceChannel", sa, eq, {w});
  }
}

// Joins and splits past ParallelChunks' threshold run over the OpenMP team in ranges of the whole
// that start and end inside the parts' blocks (the test process has a team of every core).
TEST(TensorConcat, LargeJoinsAndSplitsSplitOverThreads) {
  std::mt19937 rng(7);
  for (int32_t dt : {WEFT_DTYPE_FLOAT32, WEFT_DTYPE_INT8}) {
    std::vector<Buf> parts;
    for (int64_t len : {100, 37, 1}) parts.push_back(Make(dt, {3, len, 501}, SmallInts(rng, 3 * len * 501)));
    Buf joined = JoinRef(parts, 1, dt);
    const Attrs ca = {{"num_args", "3"}, {"dim", "1"}};
    ExpectOp("Concat", ca, parts, {joined});
    ExpectOp("_backward_Concat", ca, {joined}, parts);
  }
}

TEST(TensorConcat, MismatchedPartsAreRejected) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 5})};
  std::string err = RunKernel("Concat", {{"num_args", "2"}, {"dim", "1"}},
                              {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2}), Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2})}, out);
  EXPECT_NE(err.find("Concat"), std::string::npos) << err;
  err = RunKernel("Concat", {{"num_args", "2"}, {"dim", "3"}},
                  {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 2}), Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})}, out);
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
}

// ---- transpose --------------------------------------------------------------------------------

Buf TransposeRef(const Buf& x, const std::vector<int>& perm) {
  const size_t nd = x.shape.size();
  Shape os(nd);
  for (size_t k = 0; k < nd; ++k) os[k] = x.shape[static_cast<size_t>(perm[k])];
  Buf out = Buf::Of(x.dtype, os);
  std::vector<int64_t> in_stride(nd, 1);
  for (int a = static_cast<int>(nd) - 2; a >= 0; --a) in_stride[a] = in_stride[a + 1] * x.shape[a + 1];
  for (int64_t f = 0; f < out.size(); ++f) {
    int64_t rem = f, src = 0;
    for (int k = static_cast<int>(nd) - 1; k >= 0; --k) {
      src += (rem % os[static_cast<size_t>(k)]) * in_stride[static_cast<size_t>(perm[static_cast<size_t>(k)])];
      rem /= os[static_cast<size_t>(k)];
    }
    Set(out, f, Get(x, src));
  }
  return out;
}

TEST(TensorTranspose, RandomPermutationsEveryDType) {
  const uint64_t seed = wtest::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t dt = kAllDTypes[trial % 7];
    Shape s = RandomShape(rng, 1, 5, 300);
    std::vector<int> perm(s.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Attrs attrs;
    if (trial % 5 == 0) {
      std::iota(perm.rbegin(), perm.rend(), 0);  // the default: reversed axes
    } else {
      std::vector<int64_t> axes(perm.begin(), perm.end());
      attrs["axes"] = "(";
      for (size_t k = 0; k < axes.size(); ++k) attrs["axes"] += (k ? ", " : "") + std::to_string(axes[k]);
      attrs["axes"] += ")";
    }
    SCOPED_TRACE("shape " + Str(s) + " axes " + (attrs.count("axes") ? attrs["axes"] : "()"));
    Buf x = Make(dt, s, SmallInts(rng, Prod(s)));
    Buf y = TransposeRef(x, perm);
    ExpectOp("transpose", attrs, {x}, {y});
    ExpectOp("_backward_transpose", attrs, {y}, {x});
  }
}

// A large 2-D and a 3-D case exercise the tiled path with partial tiles.
TEST(TensorTranspose, LargeTiles) {
  std::mt19937 rng(3);
  for (Shape s : {Shape{67, 45}, Shape{3, 33, 17}, Shape{17, 1, 19, 2}}) {
    std::vector<int> perm(s.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
    Buf x = Make(WEFT_DTYPE_FLOAT32, s, UniformF(rng, Prod(s)));
    ExpectOp("transpose", {}, {x}, {TransposeRef(x, perm)}, 0.0);
  }
}

TEST(TensorTranspose, BadAxesAreRejected) {
  std::vector<Buf> out = {Buf::Of(WEFT_DTYPE_FLOAT32, {3, 2})};
  std::string err = RunKernel("transpose", {{"axes", "(0, 0)"}}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})}, out);
  EXPECT_NE(err.find("repeats"), std::string::npos) << err;
  err = RunKernel("transpose", {{"axes", "(1,)"}}, {Buf::Of(WEFT_DTYPE_FLOAT32, {2, 3})}, out);
  EXPECT_NE(err.find("axes"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttest

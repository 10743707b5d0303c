// Imperative calls of the ops that take oneDNN's blocked activation layouts (data_format /
// out_format): a value whose channels fill no whole block is padded to whole blocks in memory only
// an executor plans (core/executor/fuse_conv.h), so an imperative call, whose arrays have the plain
// size, must be refused before the kernel reads or writes past them; whole blocks still run.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "weft/imperative.h"
#include "weft/ndarray.h"

namespace {

using namespace weft;
using Params = std::map<std::string, std::string>;
using test::ErrorOf;
using test::ExpectContains;

NDArray Filled(const Shape& s, float v) { return NDArray(std::vector<float>(s.Size(), v), s, Context::cpu(0)); }

// A 1x1 `_sg_conv` of `channels` to `channels` with the given layouts.
std::vector<NDArray> Conv(int64_t channels, const std::string& data_format, const std::string& out_format) {
  const Params p{{"kernel", "(1, 1)"},
                 {"num_filter", std::to_string(channels)},
                 {"data_format", data_format},
                 {"out_format", out_format}};
  ImperativeCall call;
  call.op = "_sg_conv";
  call.params = p;
  call.inputs = {Filled(Shape(1, channels, 4, 4), 1.0f), Filled(Shape(channels, channels, 1, 1), 0.5f),
                 Filled(Shape{channels}, 0.0f)};
  return Invoke(call);
}

TEST(BlockedInvoke, PartialBlocksAreRefusedWithTheFix) {
  ExpectContains(ErrorOf([] { Conv(24, "plain", "nChw16c"); }),
                 {"_sg_conv", "an output of shape (1, 24, 4, 4)", "block of 16", "plain"});
  ExpectContains(ErrorOf([] { Conv(12, "nChw8c", "plain"); }), {"_sg_conv", "an input", "block of 8"});
  ExpectContains(ErrorOf([] {
                   InvokeOne("Concat", {Filled(Shape(1, 12, 2, 2), 1.0f), Filled(Shape(1, 4, 2, 2), 1.0f)},
                             {{"num_args", "2"}, {"dim", "1"}, {"data_format", "nChw8c"}});
                 }),
                 {"Concat", "block of 8"});
}

TEST(BlockedInvoke, WholeBlocksRun) {
  // All-ones data through 0.5 weights over 16 channels: every output is 8 in any layout.
  const NDArray y = Conv(16, "nChw8c", "nChw8c").at(0);
  std::vector<float> v;
  y.SyncCopyToCPU(&v);
  ASSERT_EQ(v.size(), 16u * 16u);
  for (float x : v) EXPECT_EQ(x, 8.0f);
}

}  // namespace

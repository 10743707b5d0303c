// Hostile symbol JSON (issue 19): deep nesting and huge counts taken from attributes end in a
// short, clear weft::Error, fast and without a large allocation.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "weft/symbol.h"

namespace weft {
namespace {

struct Outcome {
  std::string message;
  double seconds = 0;
};

Outcome Load(const std::string& json) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome out{"no error"};
  try {
    Symbol::LoadJSON(json);
  } catch (const Error& e) {
    out.message = e.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// `levels` nested arrays around `inner`.
std::string Nested(size_t levels, const std::string& inner = "0") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

void ExpectQuickError(const std::string& json, const std::string& fragment) {
  const Outcome o = Load(json);
  EXPECT_NE(o.message.find(fragment), std::string::npos) << "message: " << o.message.substr(0, 2000);
  EXPECT_LT(o.message.size(), 1000u) << "error messages quote input in bounded excerpts";
  std::printf("refused in %.3f s\n", o.seconds);  // reported, not asserted
}

constexpr size_t kDeep = 100000;  // used to overflow the stack in a recursive dump()

TEST(SymbolHostile, DeepNestingAnywhereIsRefused) {
  const std::string var = R"({"op": "null", "name": "x", "inputs": [])";
  const std::string deep = Nested(kDeep);
  ExpectQuickError(R"({"nodes": [)" + var + R"(, "attrs": {"a": )" + deep + R"(}}], "heads": [[0, 0]]})",
                   "nests deeper than");
  ExpectQuickError(R"({"nodes": [{"op": "null", "name": "x", "inputs": )" + deep + R"(}], "heads": [[0, 0]]})",
                   "nests deeper than");
  ExpectQuickError(R"({"nodes": [)" + var + R"(}], "heads": )" + deep + "}", "nests deeper than");
  ExpectQuickError(R"({"nodes": [)" + var + R"(}], "heads": [[0, 0]], "attrs": {"mxnet_version": )" + deep + "}}",
                   "nests deeper than");
  // Objects nest the same way.
  std::string objects;
  for (size_t i = 0; i < kDeep; ++i) objects += R"({"a":)";
  objects += "0" + std::string(kDeep, '}');
  ExpectQuickError(R"({"nodes": [)" + var + R"(}], "heads": [[0, 0]], "x": )" + objects + "}", "nests deeper than");
}

TEST(SymbolHostile, ModestNestingStillGetsTheUsualMessage) {
  // 20 levels is inside the limit: the reader's own check reports the bad value, in an excerpt.
  const Outcome o = Load(R"({"nodes": [{"op": "null", "name": "x", "inputs": [], "attrs": {"a": )" + Nested(20) +
                         R"(}}], "heads": [[0, 0]]})");
  EXPECT_NE(o.message.find("attribute 'a' must be a string, got [[[["), std::string::npos) << o.message;
}

TEST(SymbolHostile, LongValuesAreQuotedInExcerpts) {
  const std::string huge(1 << 20, 'n');
  ExpectQuickError(R"({"nodes": [{"op": "null", "name": "x", "inputs": [], "attrs": {"a": [")" + huge +
                       R"("]}}], "heads": [[0, 0]]})",
                   "more characters");
  ExpectQuickError(R"({"nodes": [{"op": "null", "name": ")" + huge + R"(", "inputs": [1]}], "heads": [[0, 0]]})",
                   "more characters");
}

std::string OneOp(const std::string& op, const std::string& attrs) {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": ")" + op + R"(", "name": "y", "attrs": )" +
         attrs + R"(, "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})";
}

TEST(SymbolHostile, HugeCountsFromAttributesAreRefusedBeforeBuildingNames) {
  // 169 bytes that used to take 29 s, 5.7 GB and print a 1.29 GB message.
  ExpectQuickError(OneOp("Concat", R"({"num_args": "100000000"})"), "num_args=100000000 is out of range (0..65536)");
  ExpectQuickError(OneOp("Concat", R"({"num_args": "4000000000"})"), "num_args");
  ExpectQuickError(OneOp("add_n", R"({"num_args": "-3"})"), "num_args");
  ExpectQuickError(OneOp("SliceChannel", R"({"num_outputs": "2000000000"})"),
                   "num_outputs=2000000000 is out of range (0..65536)");
}

TEST(SymbolHostile, ManyInputNamesAreListedShortly) {
  // Inside the limit, a wrong input count lists the first names only.
  const Outcome o = Load(OneOp("Concat", R"({"num_args": "60000"})"));
  EXPECT_NE(o.message.find("takes 60000 (arg0, arg1,"), std::string::npos) << o.message.substr(0, 2000);
  EXPECT_NE(o.message.find("(59984 more)"), std::string::npos) << o.message.substr(0, 2000);
  EXPECT_LT(o.message.size(), 1000u);
  std::printf("refused in %.3f s\n", o.seconds);  // reported, not asserted
}

}  // namespace
}  // namespace weft

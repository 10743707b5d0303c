// Malformed symbol JSON: every case is a weft::Error whose message names the problem.
#include <gtest/gtest.h>

#include "weft/operator.h"
#include "weft/symbol.h"

namespace weft {
namespace {

std::string LoadError(const std::string& json) {
  try {
    Symbol::LoadJSON(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_LOAD_ERROR(json, fragment)                                   \
  do {                                                                      \
    std::string msg = LoadError(json);                                      \
    EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg; \
  } while (0)

const char* kVar = R"({"op": "null", "name": "x", "inputs": []})";

TEST(SymbolJsonErrors, NotJsonOrWrongShape) {
  EXPECT_LOAD_ERROR("", "not valid JSON");
  EXPECT_LOAD_ERROR("{\"nodes\": [", "not valid JSON");
  EXPECT_LOAD_ERROR("[]", "top level must be an object");
  EXPECT_LOAD_ERROR(R"({"heads": [[0, 0]]})", "missing key \"nodes\"");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar + "]}", "missing key \"heads\"");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar + R"(], "heads": []})", "non-empty");
  EXPECT_LOAD_ERROR(R"({"nodes": {}, "heads": [[0, 0]]})", "\"nodes\" must be an array");
}

TEST(SymbolJsonErrors, NodeProblemsNameTheNode) {
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "null", "inputs": []}], "heads": [[0, 0]]})", "node #0: missing key \"name\"");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"name": "x", "inputs": []}], "heads": [[0, 0]]})",
                    "node #0 'x': missing key \"op\"");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "null", "name": "x"}], "heads": [[0, 0]]})", "missing key \"inputs\"");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "Frobnicate", "name": "f", "inputs": []}], "heads": [[0, 0]]})",
                    "node #0 'f'");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "Frobnicate", "name": "f", "inputs": []}], "heads": [[0, 0]]})", "Frobnicate");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "null", "name": "x", "attrs": {"a": 1}, "inputs": []}], "heads": [[0, 0]]})",
                    "attribute 'a' must be a string");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar +
                        R"(, {"op": "sin", "name": "s", "inputs": [[5, 0, 0]]}], "heads": [[1, 0]]})",
                    "node #1 's' input: entry [5,0,0] refers to node #5, but the file has 2 nodes");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar +
                        R"(, {"op": "sin", "name": "s", "inputs": [[0, 3, 0]]}], "heads": [[1, 0]]})",
                    "uses output 3 of node #0 'x', which has 1 output");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar +
                        R"(, {"op": "sin", "name": "s", "inputs": [[0, -1, 0]]}], "heads": [[1, 0]]})",
                    "non-negative integer");
  EXPECT_LOAD_ERROR(
      std::string(R"({"nodes": [)") + kVar + R"(, {"op": "sin", "name": "s", "inputs": [[0]]}], "heads": [[1, 0]]})",
      "[node, output]");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar +
                        R"(, {"op": "elemwise_add", "name": "p", "inputs": [[0, 0, 0]]}], "heads": [[1, 0]]})",
                    "node #1 'p': has 1 inputs, but elemwise_add with these attributes takes 2 (lhs, rhs)");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar +
                        R"(, {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "x"},
                          "inputs": [[0, 0, 0]]}], "heads": [[1, 0]]})",
                    "node 'fc' (FullyConnected)");
  EXPECT_LOAD_ERROR(std::string(R"({"nodes": [)") + kVar + R"(], "heads": [[0, 1]]})",
                    "head [0,1] uses output 1 of node #0 'x'");
  EXPECT_LOAD_ERROR(R"({"nodes": [{"op": "null", "name": "x", "inputs": [[0, 0]]}], "heads": [[0, 0]]})",
                    "cannot have inputs");
}

// Issue 13: a user fixing a file needs every problem at once — each unknown op and each bad
// attribute, naming node, op and attribute — not just the first.
TEST(SymbolJsonErrors, EveryProblemIsReportedTogether) {
  const std::string json = R"J({"nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "FancyOp", "name": "a", "inputs": [[0, 0, 0]]},
    {"op": "Activation", "name": "b", "attrs": {"act_type": "swishy"}, "inputs": [[1, 0, 0]]},
    {"op": "OtherOp", "name": "c", "inputs": [[2, 0, 0]]},
    {"op": "Pooling", "name": "d", "attrs": {"kernel": "(2, 2)", "bogus": "1"}, "inputs": [[3, 0, 0]]},
    {"op": "FancyOp", "name": "e", "inputs": [[4, 0, 0]]}],
    "heads": [[5, 0, 0]]})J";
  const std::string msg = LoadError(json);
  EXPECT_NE(msg.find("5 problems"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown operators: FancyOp, OtherOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #1 'a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #3 'c'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #5 'e'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #2: node 'b' (Activation): operator 'Activation': attribute 'act_type' = 'swishy'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("node #4: node 'd' (Pooling): operator 'Pooling' has no attribute 'bogus'"), std::string::npos)
      << msg;
  // One problem keeps the plain single-line message.
  EXPECT_EQ(LoadError(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
      {"op": "FancyOp", "name": "a", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})")
                .find("problems"),
            std::string::npos);
}

TEST(SymbolJsonErrors, CyclesAreRejected) {
  const char* self = R"({"nodes": [{"op": "sin", "name": "s", "inputs": [[0, 0, 0]]}], "heads": [[0, 0]]})";
  EXPECT_LOAD_ERROR(self, "cycle");
  const char* two = R"({"nodes": [
      {"op": "sin", "name": "a", "inputs": [[1, 0, 0]]},
      {"op": "cos", "name": "b", "inputs": [[0, 0, 0]]}], "heads": [[1, 0]]})";
  EXPECT_LOAD_ERROR(two, "cycle");
  // Forward references without a cycle are fine (nnvm links nodes after reading them all).
  const char* forward = R"({"nodes": [
      {"op": "sin", "name": "a", "inputs": [[1, 0, 0]]},
      {"op": "null", "name": "x", "inputs": []}], "heads": [[0, 0]]})";
  EXPECT_EQ(Symbol::LoadJSON(forward).ListArguments(), std::vector<std::string>{"x"});
}

TEST(SymbolJsonErrors, LoadNamesTheFile) {
  try {
    Symbol::Load("/nonexistent/weft.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/weft.json"), std::string::npos);
  }
}

TEST(SymbolJsonErrors, DeepGraphsDoNotOverflowTheStack) {
  // A chain of 100000 nodes: listing, saving, loading and destruction must not recurse per node.
  Symbol s = Symbol::Variable("x");
  for (int i = 0; i < 100000; ++i) s = Operator("sin")(s).CreateSymbol("s" + std::to_string(i));
  EXPECT_EQ(s.ListArguments(), std::vector<std::string>{"x"});
  std::string json = s.ToJSON();
  Symbol back = Symbol::LoadJSON(json);
  EXPECT_EQ(back.GetName(), "s99999");
  EXPECT_EQ(back.InferShapePartial({{"x", Shape(2)}}).out_shapes[0], Shape(2));
}

}  // namespace
}  // namespace weft

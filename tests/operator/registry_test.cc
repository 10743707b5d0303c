// OpRegistry: built-ins come from core's families, aliases, unknown names, duplicates, concurrent use.
#include <atomic>
#include <set>
#include <thread>

#include "operator/defs/builtin.h"
#include "operator/op_util.h"
#include "test_util.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;

// Every built-in op comes from one of core's definition families (core/operator/defs/builtin.h),
// which names its file: the generated OPS.md lists them all from there (ops_md_current keeps it
// current), so no list of names is kept by hand here.
TEST(OpRegistry, EveryBuiltinComesFromAFamily) {
  size_t builtins = 0;
  for (const std::string& name : OpRegistry::Get().ListNames()) {
    const OpDef& def = OpRegistry::Get().Lookup(name);
    if (def.source != "core") continue;
    ++builtins;
    EXPECT_EQ(def.name, name);
    EXPECT_NE(opdef::BuiltinDefinitionFile(name), "") << name << " is built in but no family in builtin.h defines it";
  }
  EXPECT_GT(builtins, 0u);
  for (const char* name : {"FullyConnected", "Convolution", "BatchNorm", "SoftmaxOutput", "sgd_update"})
    EXPECT_EQ(OpRegistry::Get().Lookup(name).source, "core") << name;
}

TEST(OpRegistry, AliasesResolve) {
  const OpRegistry& r = OpRegistry::Get();
  EXPECT_EQ(r.Find("ElementWiseSum"), r.Find("add_n"));
  EXPECT_EQ(&r.Lookup("ElementWiseSum"), &r.Lookup("add_n"));
  EXPECT_EQ(r.ResolveAlias("ElementWiseSum"), "add_n");
  EXPECT_EQ(r.ResolveAlias("add_n"), "add_n");
  // MXNet 0.x spellings found in old symbol files.
  EXPECT_EQ(r.Find("_Plus"), r.Find("elemwise_add"));
  EXPECT_EQ(r.Find("_MulScalar"), r.Find("_mul_scalar"));
  EXPECT_EQ(r.Find("Softmax"), r.Find("SoftmaxOutput"));
  EXPECT_EQ(r.Find("flatten"), r.Find("Flatten"));
  bool listed = false;
  for (const auto& [alias, target] : r.ListAliases()) listed |= alias == "ElementWiseSum" && target == "add_n";
  EXPECT_TRUE(listed);
}

TEST(OpRegistry, UnknownOpNamesCloseOnes) {
  EXPECT_EQ(OpRegistry::Get().Find("FullyConected"), nullptr);
  std::string msg = ErrorOf([] { OpRegistry::Get().Lookup("FullyConected"); });
  ExpectContains(msg, {"unknown operator 'FullyConected'", "FullyConnected"});
  msg = ErrorOf([] { OpRegistry::Get().Lookup("batchnorm"); });
  ExpectContains(msg, {"unknown operator 'batchnorm'", "BatchNorm"});
  msg = ErrorOf([] { OpRegistry::Get().Lookup("Qqqqqqqqqqqqqqqq"); });
  ExpectContains(msg, {"unknown operator 'Qqqqqqqqqqqqqqqq'"});
}

OpDef TestOp(const std::string& name, const std::string& source) {
  OpDef d;
  d.name = name;
  d.source = source;
  d.list_inputs = opdef::Fixed({"data"});
  d.list_outputs = opdef::Fixed({"output"});
  opdef::SetShapeFn(d, opdef::SameShapeAll);
  return d;
}

TEST(OpRegistry, DuplicateRegistrationNamesBothSources) {
  OpRegistry& r = OpRegistry::Get();
  r.Register(TestOp("opdef_test_dup", "plugin_a"));
  std::string msg = ErrorOf([&] { r.Register(TestOp("opdef_test_dup", "plugin_b")); });
  ExpectContains(msg, {"opdef_test_dup", "plugin_a", "plugin_b"});
  EXPECT_EQ(r.Lookup("opdef_test_dup").source, "plugin_a");

  msg = ErrorOf([&] { r.Register(TestOp("FullyConnected", "plugin_c")); });
  ExpectContains(msg, {"FullyConnected", "core", "plugin_c"});
  msg = ErrorOf([&] { r.Register(TestOp("ElementWiseSum", "plugin_d")); });
  ExpectContains(msg, {"ElementWiseSum", "alias", "add_n"});
}

TEST(OpRegistry, AliasErrors) {
  OpRegistry& r = OpRegistry::Get();
  ExpectContains(ErrorOf([&] { r.AddAlias("opdef_test_alias", "no_such_op"); }), {"no_such_op", "not registered"});
  ExpectContains(ErrorOf([&] { r.AddAlias("Convolution", "Pooling"); }), {"Convolution", "core"});
  ExpectContains(ErrorOf([&] { r.AddAlias("ElementWiseSum", "Pooling"); }), {"ElementWiseSum", "add_n"});
}

TEST(OpRegistry, RejectsIncompleteDefinitions) {
  OpDef d = TestOp("opdef_test_incomplete", "t");
  d.infer_shape = nullptr;
  ExpectContains(ErrorOf([&] { OpRegistry::Get().Register(d); }), {"opdef_test_incomplete", "infer_shape"});
  d = TestOp("opdef_test_incomplete", "t");
  d.grad = GradKind::kOp;
  ExpectContains(ErrorOf([&] { OpRegistry::Get().Register(d); }), {"opdef_test_incomplete", "backward_op"});
}

TEST(OpRegistry, ConcurrentLookupsAndRegistrations) {
  OpRegistry& r = OpRegistry::Get();
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t == 0 && i % 10 == 0) r.Register(TestOp("opdef_test_conc_" + std::to_string(i), "t"));
        if (r.Find("Convolution") && r.Find("ElementWiseSum")) found.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(found.load(), 800);
  for (int i = 0; i < 200; i += 10) EXPECT_NE(r.Find("opdef_test_conc_" + std::to_string(i)), nullptr);
}

}  // namespace
}  // namespace weft

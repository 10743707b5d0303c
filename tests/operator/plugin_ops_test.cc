// Plugin op definitions (weft_op_def) adapted into OpDef and registered.
#include <cstring>
#include <filesystem>

#include "operator/gradient.h"
#include "operator/plugin_ops.h"
#include "require.h"
#include "test_util.h"
#include "weft/internal/runtime.h"

namespace weft {
namespace {

using test::ErrorOf;
using test::ExpectContains;

int g_state_seen = 0;

// output = input 0 with its last axis doubled; fails when attribute "fail" is "1".
weft_error* DoubleLastInfer(void* state, weft_infer_args* a) {
  g_state_seen = *static_cast<int*>(state);
  for (int i = 0; i < a->num_attrs; ++i) {
    if (std::strcmp(a->attrs[i].key, "fail") == 0 && std::strcmp(a->attrs[i].value, "1") == 0) {
      return CreateError(WEFT_ERR_INVALID_ARGUMENT, "input 'x' has a shape the plugin rejects");
    }
  }
  const weft_shape& in = a->input_shapes[0];
  if (in.ndim < 1) return nullptr;
  a->output_shapes[0] = in;
  if (in.dims[in.ndim - 1] >= 0) a->output_shapes[0].dims[in.ndim - 1] *= 2;
  a->aux_shapes[0].ndim = 1;
  a->aux_shapes[0].dims[0] = in.dims[0];
  return nullptr;
}

weft_error* Int32Out(void*, weft_infer_args* a) {
  a->output_dtypes[0] = WEFT_DTYPE_INT32;
  return nullptr;
}

const char* const kIn[] = {"x", "y"};
const char* const kOut[] = {"z"};
const char* const kAux[] = {"state"};
const weft_attr_def kAttrs[] = {
    {WEFT_STRUCT_SIZE(weft_attr_def, doc), "scale", "float", "2", "a factor"},
    {WEFT_STRUCT_SIZE(weft_attr_def, doc), "fail", "bool", "0", "make inference fail"},
    {WEFT_STRUCT_SIZE(weft_attr_def, doc), "mode", "string", nullptr, "required"},
};
const int32_t kInplace[] = {0, 0};

weft_op_def MakeDef(const char* name) {
  weft_op_def d{};
  d.struct_size = WEFT_STRUCT_SIZE(weft_op_def, inplace_pairs);
  d.name = name;
  d.description = "test op";
  d.num_inputs = 2;
  d.input_names = kIn;
  d.num_outputs = 1;
  d.output_names = kOut;
  d.num_aux = 1;
  d.aux_names = kAux;
  d.num_attrs = 3;
  d.attrs = kAttrs;
  d.flags = WEFT_OP_FLAG_LOSS;
  d.resources = WEFT_OP_RESOURCE_TEMP_SPACE;
  d.infer_shape = DoubleLastInfer;
  d.infer_type = Int32Out;
  d.backward_op = "_backward_plugtest";
  d.backward_uses = WEFT_OP_BACKWARD_USES_INPUTS;
  d.num_inplace = 1;
  d.inplace_pairs = kInplace;
  return d;
}

int g_state = 42;

TEST(PluginOps, AdaptsTheCDefinition) {
  weft_op_def c = MakeDef("plugtest_adapt");
  OpDef d = opdef::AdaptPluginOpDef(c, &g_state, "plugA");
  EXPECT_EQ(d.name, "plugtest_adapt");
  EXPECT_EQ(d.source, "plugA");
  ASSERT_EQ(d.attrs.size(), 3u);
  EXPECT_EQ(d.attrs[0].default_value, std::optional<std::string>("2"));
  EXPECT_FALSE(d.attrs[2].default_value);
  AttrMap a = d.Normalize(AttrMap(test::Attrs{{"mode", "x"}}));
  EXPECT_EQ(OpInputNames(d, a), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(OpOutputNames(d, a), (std::vector<std::string>{"z"}));
  EXPECT_EQ(OpAuxNames(d, a), (std::vector<std::string>{"state"}));
  EXPECT_EQ(d.grad, GradKind::kOp);
  EXPECT_EQ(d.backward_op, "_backward_plugtest");
  EXPECT_EQ(d.backward_uses, kUsesInputs);
  EXPECT_TRUE(d.is_loss);
  EXPECT_EQ(d.resources, kResourceTempSpace);
  EXPECT_EQ(OpInplacePairs(d, a), (std::vector<std::pair<int, int>>{{0, 0}}));
  ExpectContains(ErrorOf([&] { d.Normalize(AttrMap(test::Attrs{})); }), {"plugtest_adapt", "mode", "required"});

  std::vector<ShapeSlot> in{Shape{3, 5}, std::nullopt}, out(1), aux(1);
  InferShapes(d, a, in, out, aux);
  EXPECT_EQ(g_state_seen, 42);
  EXPECT_EQ(out[0], ShapeSlot(Shape{3, 10}));
  EXPECT_EQ(aux[0], ShapeSlot(Shape{3}));
  EXPECT_EQ(in[1], std::nullopt);

  std::vector<int> ti{0, 0}, to{-1}, ta{-1};
  InferTypes(d, a, ti, to, ta);
  EXPECT_EQ(to[0], WEFT_DTYPE_INT32);

  auto node = DescribeBackward(d, a, 2, 1, 1);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->inputs.size(), 3u);
}

TEST(PluginOps, InferenceErrorsBecomeWeftErrors) {
  weft_op_def c = MakeDef("plugtest_err");
  OpDef d = opdef::AdaptPluginOpDef(c, &g_state, "plugA");
  AttrMap a = d.Normalize(AttrMap(test::Attrs{{"mode", "x"}, {"fail", "1"}}));
  std::vector<ShapeSlot> in{Shape{3, 5}, std::nullopt}, out(1), aux(1);
  ExpectContains(ErrorOf([&] { InferShapes(d, a, in, out, aux); }),
                 {"plugtest_err", "plugA", "input 'x' has a shape the plugin rejects"});
  // A plugin answer that contradicts a known slot is caught like a core op's.
  a = d.Normalize(AttrMap(test::Attrs{{"mode", "x"}}));
  std::vector<ShapeSlot> out2{Shape{3, 7}};
  ExpectContains(ErrorOf([&] { InferShapes(d, a, in, out2, aux); }), {"plugtest_err", "'z'", "(3, 7)", "(3, 10)"});
  // More axes than the C ABI carries.
  std::vector<ShapeSlot> big{Shape(std::vector<int64_t>(9, 1)), std::nullopt};
  ExpectContains(ErrorOf([&] { InferShapes(d, a, big, out, aux); }), {"plugtest_err", "9 axes"});
}

TEST(PluginOps, DuplicateNamesAreSkippedNamingBothPlugins) {
  OpRegistry& r = OpRegistry::Get();
  weft_op_def c = MakeDef("plugtest_dup");
  std::vector<const weft_op_def*> defs{&c};
  EXPECT_EQ(opdef::RegisterPluginOpDefs(r, defs, &g_state, "plugA"), (std::vector<std::string>{"plugtest_dup"}));
  testing::internal::CaptureStderr();
  EXPECT_TRUE(opdef::RegisterPluginOpDefs(r, defs, &g_state, "plugB").empty());
  std::string log = testing::internal::GetCapturedStderr();
  ExpectContains(log, {"plugtest_dup", "plugA", "plugB"});
  EXPECT_EQ(r.Lookup("plugtest_dup").source, "plugA");

  weft_op_def builtin = MakeDef("Convolution");
  testing::internal::CaptureStderr();
  EXPECT_TRUE(opdef::RegisterPluginOpDefs(r, {&builtin}, &g_state, "plugC").empty());
  ExpectContains(testing::internal::GetCapturedStderr(), {"Convolution", "core", "plugC"});
  EXPECT_EQ(r.Lookup("Convolution").source, "core");
}

TEST(PluginOps, MalformedDefinitionsAreRejected) {
  weft_op_def c = MakeDef("plugtest_bad");
  c.input_names = nullptr;
  ExpectContains(ErrorOf([&] { opdef::AdaptPluginOpDef(c, &g_state, "plugA"); }), {"plugtest_bad", "inputs"});
  c = MakeDef("plugtest_bad");
  const int32_t bad_pairs[] = {5, 0};
  c.inplace_pairs = bad_pairs;
  ExpectContains(ErrorOf([&] { opdef::AdaptPluginOpDef(c, &g_state, "plugA"); }), {"plugtest_bad", "in-place"});
}

TEST(PluginOps, LoadedPluginsDefinitionsAreRegistered) {
  // The loader's fixture plugin defines op "fixture_scale"; loading it after the registry is
  // connected registers the op under the plugin's name.
  OpRegistry& r = OpRegistry::Get();
  const std::string path = std::string(WEFT_TEST_FIXTURE_DIR) + "/plugins/libfixture_good.so";
  if (!std::filesystem::exists(path)) WEFT_SKIP_UNLESS_REQUIRED() << path << " is not built";
  PluginRecord rec = Runtime::Get().LoadPlugin(path);
  ASSERT_NE(rec.plugin, nullptr) << path;
  const OpDef* def = r.Find("fixture_scale");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->source, rec.plugin->name());
  AttrMap a = def->Normalize(AttrMap());
  EXPECT_EQ(a.GetString("factor"), "2");
  std::vector<ShapeSlot> in{Shape{2, 3}}, out(1), aux;
  InferShapes(*def, a, in, out, aux);
  EXPECT_EQ(out[0], ShapeSlot(Shape{2, 3}));
  // Every definition of every loaded plugin is findable (from it, or from whoever had the name).
  for (const PluginOpDef& p : internal::OpDefs(Runtime::Get())) EXPECT_NE(r.Find(p.def->name), nullptr) << p.def->name;
}

}  // namespace
}  // namespace weft
